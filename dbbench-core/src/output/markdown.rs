//! The comparison with a baseline as a GitHub-flavoured Markdown table, ready to post as a pull
//! request comment (`compare --format markdown`): per cell the readable configuration, each run's
//! ratio to the baseline cell, the current run's ratio over the baseline run's with its interval
//! and the verdict ([`crate::analysis::compare`]), and the seconds for the reader; with a line
//! saying what was compared and why the seconds were not (another machine), marks where runs
//! were measured on a busy machine (inconclusive), and where the load driver saturated the client
//! (client-bound).

use crate::analysis::compare::Comparison;
use crate::analysis::notation;
use crate::analysis::ratio::Verdict;
use std::fmt::Write;

/// Text read as plain words: every character Markdown gives a meaning to (emphasis, links,
/// images, headings, HTML, code) is escaped, and a line break, which would end a table row or
/// start a block, is a space. A benchmark's name, a cell's, a server's version or a host name
/// from another machine's store must not make a link or a fake row in a pull request's comment.
fn plain(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '\\' | '`' | '*' | '_' | '{' | '}' | '[' | ']' | '<' | '>' | '(' | ')' | '#' | '+'
            | '!' | '|' | '~' | '&' => {
                out.push('\\');
                out.push(c);
            }
            c if c.is_control() => out.push(' '),
            c => out.push(c),
        }
    }
    out
}

/// `text` as a code span: no backtick or line break inside to end it, and `|`, which ends a
/// table cell even there, escaped.
fn code(text: &str) -> String {
    let inner: String = text
        .chars()
        .map(|c| match c {
            '`' => '\'',
            c if c.is_control() => ' ',
            c => c,
        })
        .collect();
    format!("`{}`", inner.replace('|', "\\|"))
}

/// A sentence with code spans (a change between runs, `scale: `default` → `full``): the words
/// outside the spans as [`plain`], the spans as [`code`] (their values carry no backtick:
/// `analysis::compare` replaces it).
fn with_spans(text: &str) -> String {
    text.split('`')
        .enumerate()
        .map(|(i, part)| if i % 2 == 0 { plain(part) } else { code(part) })
        .collect()
}

/// A table cell of dbbench's own words (a verdict with its interval): `|` would end it.
fn cell(text: &str) -> String {
    text.replace('|', "\\|")
        .replace(|c: char| c.is_control(), " ")
}

/// The comparisons as one Markdown document.
pub fn comparisons(all: &[Comparison]) -> String {
    let mut out = String::new();
    for c in all {
        out.push_str(&comparison(c));
        out.push('\n');
    }
    let _ = writeln!(
        out,
        "<sub>{}. Made by dbbench.</sub>",
        crate::analysis::compare::method_note()
    );
    out
}

/// One benchmark's comparison.
pub fn comparison(c: &Comparison) -> String {
    let mut out = format!(
        "### {}: current run against baseline\n\n",
        code(&c.benchmark)
    );
    // A new commit is what a pull request is about; a new machine moves the seconds, which are
    // not judged, but not the ratios, which are; a new scale, backend or build is another
    // experiment.
    let (changed_code, environment): (Vec<&String>, Vec<&String>) =
        c.environment_changes.iter().partition(|change| {
            change.starts_with("git commit") || change.starts_with("dbbench version")
        });
    let experiment = ["scale", "backend", "server version", "build profile"];
    let (other_experiment, machine): (Vec<&String>, Vec<&String>) = environment
        .into_iter()
        .partition(|change| experiment.iter().any(|e| change.starts_with(e)));
    if !other_experiment.is_empty() {
        out.push_str("> ⚠️ **Not comparable as measured:** the experiment changed\n");
        for change in &other_experiment {
            let _ = writeln!(out, "> - {}", with_spans(change));
        }
        out.push('\n');
    }
    if !machine.is_empty() {
        let changes: Vec<String> = machine.iter().map(|c| with_spans(c)).collect();
        let _ = writeln!(
            out,
            "Another machine ({}): the ratios are compared, the seconds are not.\n",
            changes.join(", ")
        );
    }
    if !changed_code.is_empty() {
        let changes: Vec<String> = changed_code.iter().map(|c| with_spans(c)).collect();
        let _ = writeln!(out, "Changed since the baseline: {}\n", changes.join(", "));
    }
    let configured = c.rows.iter().any(|r| !r.configuration.is_empty());
    let to = &c.baseline_cell;
    out.push_str("| cell |");
    if configured {
        out.push_str(" configuration |");
    }
    let _ = write!(
        out,
        " baseline: ratio to `{to}` | current: ratio to `{to}` | current/baseline [CI, 95% over all cells] | \
         verdict | baseline s | current s |\n|---|"
    );
    if configured {
        out.push_str("---|");
    }
    out.push_str("---:|---:|---:|---|---:|---:|\n");
    let show = |s: &Option<crate::analysis::stats::Summary>| {
        s.as_ref().map_or_else(|| "–".into(), notation::mean_pm)
    };
    for row in &c.rows {
        let mut verdict = match (&row.ratio, &row.baseline, &row.current) {
            (Some(r), _, _) => match r.verdict {
                Verdict::Slower => "🔴 **slower**".to_string(),
                Verdict::Faster => "🟢 **faster**".to_string(),
                Verdict::Equivalent => format!("⚪ {}", r.verdict_text()),
                _ => r.verdict_text(),
            },
            _ => c.verdict(row),
        };
        if !row.saturated.is_empty() {
            let _ = write!(verdict, " ⚠️ client-bound: {}", row.saturated.join("; "));
        }
        let _ = write!(out, "| {} |", code(&row.cell));
        if configured {
            let configuration = match row.configuration.as_str() {
                "" => "defaults",
                other => other,
            };
            let _ = write!(out, " {} |", plain(configuration));
        }
        let within = |r: &Option<crate::analysis::ratio::Ratio>| match r {
            Some(r) => notation::ratio(r),
            None if row.cell == *to => "baseline".into(),
            None => "–".into(),
        };
        let _ = writeln!(
            out,
            " {} | {} | {} | {} | {} | {} |",
            within(&row.baseline_ratio),
            within(&row.current_ratio),
            row.ratio
                .as_ref()
                .filter(|r| r.verdict != Verdict::Baseline)
                .map_or_else(|| "–".into(), notation::ratio),
            cell(&verdict),
            show(&row.baseline),
            show(&row.current),
        );
    }
    if let Some(note) = &c.seconds_note {
        let _ = writeln!(out, "\n{note}.");
    }
    for note in &c.notes {
        let _ = writeln!(out, "\n> ⚠️ {note}");
    }
    if !c.between_runs.is_empty() {
        out.push_str("\nBetween runs (the current run against its earlier runs):\n\n");
        for line in &c.between_runs {
            let _ = writeln!(out, "- {}", line.trim());
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::compare::compare;

    #[test]
    fn names_and_changes_from_a_store_cannot_make_links_rows_or_spans() {
        let baseline = crate::model::sample::vlf();
        let mut current = baseline.clone();
        current.benchmark = "b`](http://evil)\n| fake | row |".into();
        current.backend.version = "10.11`![x](http://evil/i.png)`\n| 🟢 faster |".into();
        current.host.hostname = "h[click](http://evil)".into();
        current.cells[1].name = "t`|x\n|".into();
        let text = comparison(&compare(&current, &baseline));
        // Every link or image stays text: no `](` outside a code span, no new line of a row.
        for line in text.lines() {
            let prose: String = line.split('`').step_by(2).collect::<Vec<_>>().join("");
            assert!(!prose.contains("](") && !prose.contains("!["), "{line}");
        }
        assert!(
            !text
                .lines()
                .any(|l| l.starts_with("| fake") || l.starts_with("| 🟢")),
            "{text}"
        );
        assert!(
            text.starts_with("### `b'](http://evil) \\| fake \\| row \\|`:"),
            "{text}"
        );
        assert!(text.contains("`h[click](http://evil)`"), "{text}");
    }

    #[test]
    fn a_pull_request_comment_marks_changes_and_client_bound_runs() {
        let baseline = crate::model::sample::vlf();
        let mut current = baseline.clone();
        for run in &mut current.cells[1].runs {
            run.elapsed_s *= 2.0;
        }
        let text = comparison(&compare(&current, &baseline));
        assert!(
            text.contains(
                "| cell | configuration | baseline: ratio to `test_1` | current: ratio to \
                 `test_1` | current/baseline [CI, 95% over all cells] | verdict | baseline s | current s |"
            ),
            "{text}"
        );
        let row = text.lines().find(|l| l.starts_with("| `test_3`")).unwrap();
        assert!(
            row.contains("1024MB growth · IFI on") && row.contains("🔴 **slower**"),
            "{row}"
        );
        assert!(!text.contains("Not comparable"), "{text}");
        current.host.git_commit = Some("abc".into());
        let text = comparison(&compare(&current, &baseline));
        assert!(
            !text.contains("Not comparable"),
            "a new commit is the point: {text}"
        );
        assert!(
            text.contains("Changed since the baseline: git commit"),
            "{text}"
        );

        current.scale = "full".into();
        let mut load = crate::model::sample::load(&[100.0, 100.0]);
        load.cells[1].runs[1].loads[0]
            .saturation
            .warnings
            .push("the driver used 95% of a core".into());
        let text = comparisons(&[compare(&current, &baseline), compare(&load, &load)]);
        assert!(
            text.contains("⚠️ **Not comparable as measured:**"),
            "{text}"
        );
        assert!(text.contains("scale: `default` → `full`"), "{text}");
        assert!(
            text.contains("⚠️ client-bound: the driver used 95% of a core"),
            "{text}"
        );
        let rules = text.lines().filter(|l| l.starts_with("|---|")).count();
        assert_eq!(rules, 2, "a table per benchmark");
        let mut elsewhere = baseline.clone();
        elsewhere.host.cpu_model = "Other CPU".into();
        let text = comparison(&compare(&elsewhere, &baseline));
        assert!(
            text.contains(
                "Another machine (CPU: `Test CPU` → `Other CPU`): the ratios are compared, the \
                 seconds are not."
            ),
            "{text}"
        );
    }
}
