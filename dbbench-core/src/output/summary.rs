//! The human summary printed after a benchmark: a header naming the benchmark, backend, scale and
//! repetitions, the `BenchmarkTable`, the errors of failed cells and a line on how the ratio's
//! interval was computed.

use crate::analysis::table::BenchmarkTable;
use crate::model::results::{BenchmarkResult, CellStatus};
use std::fmt::Write;

/// The summary of `result` as plain text.
pub fn render(result: &BenchmarkResult) -> String {
    let mut out = String::new();
    let title = if result.title.is_empty() {
        String::new()
    } else {
        format!(" — {}", result.title)
    };
    let _ = writeln!(out, "dbbench › {}{title}", result.benchmark);
    let _ = writeln!(
        out,
        "  {} ({}), scale {}, {} + {} warm-up per cell, {} order",
        result.backend.kind,
        result.backend.version,
        result.scale,
        result.run.rounds_text(),
        result.run.warmup,
        result.run.order
    );
    if let Some(calibration) = &result.calibration {
        let _ = writeln!(out, "  machine calibration: {}", calibration.line());
    }
    if let Some(server) = &result.server_on_host {
        let _ = writeln!(
            out,
            "  server processes on this host: {}",
            server.describe()
        );
    }
    if let Some(line) = not_applicable_line(result) {
        let _ = writeln!(out, "  {line}");
        return out;
    }
    let table = BenchmarkTable::of(result);
    out.push_str(&table.to_grid().to_text("  "));
    if let Some(line) = elsewhere_line(result) {
        let _ = writeln!(out, "  {line}");
    }
    for note in &table.notes {
        let _ = writeln!(out, "  {note}");
    }
    for (i, line) in table.settings.lines().iter().enumerate() {
        let indent = if i == 0 { "  " } else { "    " };
        let _ = writeln!(out, "{indent}{line}");
    }
    for cell in &result.cells {
        match &cell.status {
            CellStatus::Failed(e) => {
                let _ = writeln!(out, "  {} failed: {e}", cell.name);
            }
            CellStatus::Skipped(why) => {
                let _ = writeln!(out, "  {} skipped: {why}", cell.name);
            }
            CellStatus::Ok => {}
        }
    }
    let _ = writeln!(out, "  {}", table.method_line());
    if let Some(pooling) = &table.pooling {
        let _ = writeln!(out, "  {pooling}");
    }
    if let Some(stopping) = &result.stopping {
        let _ = writeln!(out, "  {}", stopping.line(result.run.precision.as_ref()));
        if let Some(design) = stopping.design_line() {
            let _ = writeln!(out, "  {design}");
        }
    }
    if let Some(check) = crate::analysis::position::PositionCheck::of(result) {
        let _ = writeln!(out, "  {}", check.line());
    }
    let between = crate::analysis::between::lines(result);
    if !between.is_empty() {
        let _ = writeln!(out, "  between runs:");
        for line in between {
            let _ = writeln!(out, "    {line}");
        }
    }
    if let Some(note) = reference_note(&table) {
        let _ = writeln!(out, "  {note}");
    }
    for note in case_notes(result) {
        let _ = writeln!(out, "  {note}");
    }
    out
}

/// "pg_test_5: expected … — measured against pg_test_4: 0.98 [0.93, 1.04], …", the suite's note on
/// each case of the reference that ran here, with an A/A pair's measured ratio.
pub fn case_notes(result: &BenchmarkResult) -> Vec<String> {
    let Some(reference) = &result.reference else {
        return Vec::new();
    };
    let checks = crate::analysis::control::checks(result);
    reference
        .cases
        .iter()
        .filter(|case| !case.note.is_empty() && result.cells.iter().any(|c| c.name == case.cell))
        .map(|case| {
            // An A/A pair carries its measured ratio: the note says what to expect, the check
            // what was found.
            let measured = checks
                .iter()
                .find(|check| check.cell == case.cell)
                .map(|check| format!(" — {}", check.describe()))
                .unwrap_or_default();
            format!("{}: {}{measured}", case.cell, case.note)
        })
        .collect()
}

/// "does not apply on postgres: …", for a benchmark whose question has no counterpart on the
/// backend (`#[not_on]`): the whole of its table.
pub fn not_applicable_line(result: &BenchmarkResult) -> Option<String> {
    let why = result.not_applicable.as_ref()?;
    Some(format!("does not apply on {}: {why}", result.backend.kind))
}

/// "cases for other backends, not run here: test_6 (mssql)", under a table whose benchmark has
/// cases restricted to other backends.
pub fn elsewhere_line(result: &BenchmarkResult) -> Option<String> {
    (!result.elsewhere.is_empty()).then(|| {
        format!(
            "cases for other backends, not run on {}: {}",
            result.backend.kind,
            result.elsewhere.join(", ")
        )
    })
}

/// Where the article columns come from, printed under tables that have them.
pub fn reference_note(table: &BenchmarkTable) -> Option<String> {
    let (source, baseline) = table.reference.as_ref()?;
    Some(format!(
        "article columns: {source}; its hardware's seconds are not ours, so compare the ratios \
         (article ratio = its elapsed / its {baseline})"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn summary_is_the_article_table() {
        insta::assert_snapshot!(render(&crate::model::sample::vlf()));
    }

    #[test]
    fn the_article_is_named_under_its_columns() {
        use crate::model::reference::{Reference, ReferenceCase};
        let mut result = crate::model::sample::vlf();
        assert!(!render(&result).contains("article"));
        result.reference = Some(
            Reference::new("vlf::doubling", "Berry 2013, Table 7", "test_1")
                .case(ReferenceCase::cell("test_1").elapsed_s(1074.0)),
        );
        let text = render(&result);
        assert!(
            text.contains("article columns: Berry 2013, Table 7"),
            "{text}"
        );
    }

    #[test]
    fn a_case_note_is_shown_for_a_cell_that_ran() {
        use crate::model::reference::{Reference, ReferenceCase};
        let mut result = crate::model::sample::vlf();
        let ran = result.cells[1].name.clone();
        result.reference = Some(
            Reference::new("vlf::doubling", "Berry 2013", "test_1")
                .case(ReferenceCase::cell(&ran).note("inherited"))
                .case(ReferenceCase::cell("not_run").note("never shown"))
                .note(&ran, "expected equivalent"),
        );
        let text = render(&result);
        assert!(
            text.contains(&format!("  {ran}: expected equivalent\n")),
            "{text}"
        );
        assert!(!text.contains("never shown") && !text.contains("inherited"));
    }

    #[test]
    fn a_question_that_does_not_apply_is_one_line() {
        let mut result = crate::model::sample::vlf();
        result.backend.kind = "postgres".into();
        result.cells.clear();
        result.not_applicable = Some("PostgreSQL has no filegroups".into());
        let text = render(&result);
        assert!(
            text.contains("  does not apply on postgres: PostgreSQL has no filegroups\n"),
            "{text}"
        );
        assert!(!text.contains("ratio to"), "{text}");
    }

    #[test]
    fn cells_of_other_backends_are_one_line_under_the_table() {
        let mut result = crate::model::sample::vlf();
        result.elsewhere = vec!["test_6 (mssql)".into()];
        let text = render(&result);
        assert!(
            text.contains("cases for other backends, not run on embedded: test_6 (mssql)"),
            "{text}"
        );
    }

    #[test]
    fn a_server_on_this_host_is_named_under_the_header() {
        let mut result = crate::model::sample::vlf();
        assert!(!render(&result).contains("server processes"));
        result.server_on_host = Some(crate::model::interference::ServerOnHost {
            name: "postgres".into(),
            pid: 7778,
            children: 7,
            found_by: "the postmaster, parent of this session's backend, @@SPID 16773 on Babelfish"
                .into(),
        });
        let text = render(&result);
        assert!(
            text.contains(
                "\n  server processes on this host: postgres (pid 7778) and its 7 children, \
                 counted as the workload, not as neighbours (the postmaster"
            ),
            "{text}"
        );
    }

    #[test]
    fn failed_cells_show_their_error() {
        let mut result = crate::model::sample::vlf();
        result.cells[1].status = CellStatus::Failed("disk full".into());
        result.cells[1].runs.clear();
        let text = render(&result);
        assert!(text.contains("test_3 failed: disk full"), "{text}");
        let row = text
            .lines()
            .find(|l| l.trim_start().starts_with("test_3"))
            .unwrap();
        assert!(row.contains("failed") && row.contains('–'), "{row}");
    }
}
