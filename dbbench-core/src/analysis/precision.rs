//! The analysis side of a precision target: each cell's interval width, computed exactly as the
//! results table computes the interval ([`Ratio::between`]: over the forks' means, Stein's two
//! stages at the fork level), for the runner's stopping rule ([`crate::run::target`]), and the
//! variance components the allocation of rounds to forks weighs.
//!
//! Where a run has no baseline to compare with (nextest runs each cell in its own process; a
//! filtered `cargo test` may leave the baseline out), the width of the cell's own mean interval
//! stands in: it is what a later comparison's Welch interval is made of, so a cell measured alone
//! still stops once its own time is known to the target.

use crate::analysis::ratio::{components, forks_of, Margin, Ratio};
use crate::analysis::stats::Summary;
use crate::model::earlier::EarlierRun;
use crate::model::results::{CellResult, CellStatus};
use crate::run::target::Judge;

/// The [`Judge`] the front ends hand to the runner: the forks' intervals, pooled with the
/// earlier runs of the experiment it knows where there are enough (`analysis::drift`),
/// as the tables pool them.
#[derive(Debug, Default, Clone)]
pub struct IntervalJudge {
    earlier: Vec<EarlierRun>,
    /// This run's start, from which the earlier runs apart in time are counted.
    started_at_unix_s: u64,
}

impl IntervalJudge {
    /// The baseline cell, when it runs.
    fn base<'a>(cells: &'a [CellResult], baseline: &str) -> Option<&'a CellResult> {
        cells
            .iter()
            .find(|c| c.name == baseline && c.status == CellStatus::Ok)
    }

    /// The running cells other than the baseline.
    fn compared<'a>(
        cells: &'a [CellResult],
        base: &'a CellResult,
    ) -> impl Iterator<Item = &'a CellResult> {
        cells
            .iter()
            .filter(move |c| c.status == CellStatus::Ok && c.name != base.name)
    }
}

impl Judge for IntervalJudge {
    fn widths(
        &self,
        cells: &[CellResult],
        baseline: &str,
        paired_order: bool,
        pilot: usize,
    ) -> Vec<(String, Option<f64>)> {
        match IntervalJudge::base(cells, baseline) {
            Some(base) => IntervalJudge::compared(cells, base)
                .map(|c| {
                    let r = Ratio::between(c, base, paired_order, Some(pilot), Margin::DEFAULT)
                        .map(|r| {
                            crate::analysis::drift::pooled(
                                &c.name,
                                r,
                                self.started_at_unix_s,
                                &self.earlier,
                            )
                        });
                    (c.name.clone(), r.and_then(|r| r.relative_half_width()))
                })
                .collect(),
            None => cells
                .iter()
                .filter(|c| c.status == CellStatus::Ok)
                .map(|c| (c.name.clone(), own_width(c, pilot)))
                .collect(),
        }
    }

    fn knowing(&self, started_at_unix_s: u64, earlier: &[EarlierRun]) -> Option<Box<dyn Judge>> {
        (!earlier.is_empty()).then(|| {
            Box::new(IntervalJudge {
                earlier: earlier.to_vec(),
                started_at_unix_s,
            }) as Box<dyn Judge>
        })
    }

    fn components(
        &self,
        cells: &[CellResult],
        baseline: &str,
        pilot: usize,
    ) -> Vec<(String, f64, f64)> {
        let Some(base) = IntervalJudge::base(cells, baseline) else {
            return Vec::new();
        };
        IntervalJudge::compared(cells, base)
            .filter_map(|c| {
                let (within, between) = components(&forks_of(c, base)?, pilot)?;
                Some((c.name.clone(), within, between))
            })
            .collect()
    }
}

/// The half-width of the cell's two-stage mean interval relative to its mean: the spread of the
/// first `pilot` runs, scaled to all of them (as [`Ratio::two_stage`] does for ratios).
fn own_width(cell: &CellResult, pilot: usize) -> Option<f64> {
    let mut runs: Vec<(u32, f64)> = cell.measured().map(|r| (r.index, r.elapsed_s)).collect();
    runs.sort_by_key(|r| r.0);
    let all: Vec<f64> = runs.iter().map(|r| r.1).collect();
    let first = Summary::of(&all[..pilot.clamp(2, all.len().max(2)).min(all.len())])?;
    let mean = Summary::of(&all)?.mean;
    let ci = first.ci?;
    let scaled = ci.half_width() * (first.n as f64 / all.len() as f64).sqrt();
    (mean > 0.0).then(|| scaled / mean)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn widths_are_the_table_s_intervals() {
        let result = crate::model::sample::vlf();
        let widths = IntervalJudge::default().widths(&result.cells, "test_1", true, 3);
        let names: Vec<&str> = widths.iter().map(|(n, _)| n.as_str()).collect();
        assert!(
            !names.contains(&"test_1"),
            "the baseline has no ratio: {names:?}"
        );
        assert_eq!(names.len(), result.cells.len() - 1);
        for (name, width) in &widths {
            let cell = result.cells.iter().find(|c| &c.name == name).unwrap();
            let r = Ratio::between(cell, &result.cells[0], true, Some(3), Margin::DEFAULT).unwrap();
            assert_eq!(*width, r.relative_half_width(), "{name}");
        }
        // Without the baseline, each cell's own interval.
        let alone = IntervalJudge::default().widths(&result.cells[1..2], "test_1", true, 3);
        assert_eq!(alone.len(), 1);
        assert!(alone[0].1.is_some_and(|w| w > 0.0), "{alone:?}");
    }
}
