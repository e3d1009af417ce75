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

/// `|` would end a table cell.
fn cell(text: &str) -> String {
    text.replace('|', "\\|")
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
    let mut out = format!("### `{}`: current run against baseline\n\n", c.benchmark);
    // A new commit is what a pull request is about; a new machine moves the seconds, which are
    // not judged, but not the ratios, which are; a new scale, backend or build is another
    // experiment.
    let (code, environment): (Vec<&String>, Vec<&String>) =
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
            let _ = writeln!(out, "> - {change}");
        }
        out.push('\n');
    }
    if !machine.is_empty() {
        let changes: Vec<&str> = machine.iter().map(|c| c.as_str()).collect();
        let _ = writeln!(
            out,
            "Another machine ({}): the ratios are compared, the seconds are not.\n",
            changes.join(", ")
        );
    }
    if !code.is_empty() {
        let changes: Vec<&str> = code.iter().map(|c| c.as_str()).collect();
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
        let _ = write!(out, "| `{}` |", cell(&row.cell));
        if configured {
            let configuration = match row.configuration.as_str() {
                "" => "defaults",
                other => other,
            };
            let _ = write!(out, " {} |", cell(configuration));
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
