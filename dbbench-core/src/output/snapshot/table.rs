//! The compact table a snapshot opens with, so a pull request's diff reads like the article's
//! table ("test_3: 12 → 9 log segments") before the detailed fields.
//!
//! It is made from the snapshot's own view, so it holds exactly what the view holds: the readable
//! configuration, the outcome, the deterministic growth and segment counts (left out, as in the
//! view, for concurrent loads whose page order varies), and, only where the view keeps timings,
//! each cell's ratio to the baseline with its interval (so a diff reads `test_3 … 0.742 → 0.758`)
//! and the elapsed mean with its interval. Being derived, the comparator leaves it out of the
//! comparison ([`crate::output::comparator`]): the fields it summarises are compared below it.

use super::{CellView, Measurement};
use crate::analysis::label;
use crate::model::results::BenchmarkResult;
use crate::util::grid::{Align, Grid};

/// The table's lines for `cells`, the view of `result`'s cells.
pub(super) fn lines(result: &BenchmarkResult, cells: &[CellView], segments: &str) -> Vec<String> {
    let keys = label::differing_options(result);
    let labels: Vec<String> = cells
        .iter()
        .map(|view| {
            result
                .cells
                .iter()
                .find(|c| c.name == view.name)
                .map(|c| label::label(c, &keys))
                .unwrap_or_default()
        })
        .collect();
    fn layout(v: &CellView) -> Option<&super::DeterministicView> {
        v.results
            .as_ref()
            .filter(|r| r.files.iter().any(|f| f.layout.is_some()))
    }
    let has_layout = cells.iter().any(|v| layout(v).is_some());
    let has_log = cells
        .iter()
        .any(|v| v.results.as_ref().is_some_and(|r| r.log.is_some()));
    let has_timing = cells.iter().any(|v| v.timing.is_some());
    let baseline = cells
        .iter()
        .find_map(|v| v.ratio.as_ref().map(|r| r.baseline.clone()));
    let mut grid = Grid::default();
    grid.column("cell", Align::Left);
    if labels.iter().any(|l| !l.is_empty()) {
        grid.column("configuration", Align::Left);
    }
    grid.column("status", Align::Left);
    grid.column("runs", Align::Right);
    if has_layout {
        grid.column("data growths", Align::Right);
    }
    if has_log {
        grid.column("log growths", Align::Right);
        grid.column(segments, Align::Right);
    }
    if let Some(baseline) = &baseline {
        grid.column(format!("ratio to {baseline} [95% CI]"), Align::Right);
    }
    if has_timing {
        grid.column("elapsed (mean [95% CI])", Align::Right);
    }
    let dash = || "–".to_string();
    for (view, config) in cells.iter().zip(&labels) {
        let mut row = vec![view.name.clone()];
        if labels.iter().any(|l| !l.is_empty()) {
            row.push(if config.is_empty() {
                "defaults".into()
            } else {
                config.clone()
            });
        }
        // The status's detail (an error, why it was skipped) is in the cell's fields below.
        row.push(
            view.status
                .split(':')
                .next()
                .unwrap_or_default()
                .to_string(),
        );
        // The table is not compared (it repeats the fields below it), so a chosen count may show.
        let runs = view
            .runs
            .or_else(|| view.timing.as_ref().and_then(|t| t.runs));
        row.push(runs.map_or_else(dash, |n| n.to_string()));
        if has_layout {
            row.push(layout(view).map_or_else(dash, |r| {
                let data = r.files.iter().filter(|f| f.kind == "data");
                data.filter_map(|f| f.layout.as_ref().map(|l| l.growth_events))
                    .sum::<u64>()
                    .to_string()
            }));
        }
        if has_log {
            let log = view.results.as_ref().and_then(|r| r.log.as_ref());
            row.push(log.map_or_else(dash, |l| l.growths.to_string()));
            row.push(log.map_or_else(dash, |l| l.segments_after.to_string()));
        }
        if let Some(baseline) = &baseline {
            row.push(match &view.ratio {
                Some(r) => super::ratio::text(r),
                None if &view.name == baseline => "baseline".into(),
                None => dash(),
            });
        }
        if has_timing {
            row.push(
                view.timing
                    .as_ref()
                    .map_or_else(dash, |t| elapsed(&t.elapsed)),
            );
        }
        grid.row(row);
    }
    // The rule under the header is noise in a diff.
    grid.to_text("")
        .lines()
        .enumerate()
        .filter(|(i, _)| *i != 1)
        .map(|(_, l)| l.trim_end().to_string())
        .collect()
}

/// `10.74 s [10.2, 11.3]`, or the mean alone for one run.
fn elapsed(m: &Measurement) -> String {
    match m.ci95_s {
        Some([low, high]) => format!("{} s [{low}, {high}]", m.mean_s),
        None => format!("{} s", m.mean_s),
    }
}

#[cfg(test)]
mod tests {
    use super::super::SnapshotView;

    #[test]
    fn the_table_opens_the_snapshot_with_a_row_per_cell() {
        let result = crate::model::sample::vlf();
        let view = SnapshotView::of(&result, std::path::Path::new("/w"));
        assert_eq!(view.table.len(), 1 + result.cells.len());
        assert!(view.table[0].starts_with("cell") && view.table[0].contains("log segments"));
        let test_3 = &view.table[2];
        assert!(
            test_3.starts_with("test_3  1024MB growth · IFI on"),
            "{test_3}"
        );
        assert!(
            test_3.contains(" 24 ") && test_3.contains("7.71 s ["),
            "{test_3}"
        );
        // The ratio column, so a diff reads `test_3 … 0.719 → …`.
        assert!(view.table[0].contains("ratio to test_1 [95% CI]"));
        assert!(view.table[1].contains(" baseline "), "{}", view.table[1]);
        assert!(test_3.contains(" 0.719 [0.668, 0.774] "), "{test_3}");
        let json = serde_json::to_string(&view).unwrap();
        assert!(
            json.starts_with("{\"table\":"),
            "the table comes first: {json}"
        );
    }

    #[test]
    fn smoke_tables_have_no_timings() {
        let mut result = crate::model::sample::vlf();
        result.scale = "smoke".into();
        let view = SnapshotView::of(&result, std::path::Path::new("/w"));
        assert!(!view.table[0].contains("elapsed"), "{}", view.table[0]);
        // Nor ratios: millisecond runs measure the scheduler, and a smoke check never fails on
        // a timing.
        assert!(!view.table[0].contains("ratio to"), "{}", view.table[0]);
        assert!(view.cells.iter().all(|c| c.ratio.is_none()));
    }
}
