//! The analysis side of a precision target: each cell's interval width, computed exactly as the
//! results table computes the interval ([`Ratio::between`]), for the runner's stopping rule
//! ([`crate::run::target`]).
//!
//! Where a run has no baseline to compare with (nextest runs each cell in its own process; a
//! filtered `cargo test` may leave the baseline out), the width of the cell's own mean interval
//! stands in: it is what a later comparison's Welch interval is made of, so a cell measured alone
//! still stops once its own time is known to the target.
//!
//! A judge made [`IntervalJudge::with_earlier`] (the front ends make it with the store's earlier
//! runs, possibly none) widens each ratio's interval by the spread between runs
//! ([`crate::analysis::between`]) and reports the floor that spread sets, so the target is judged
//! on the interval the run will report across runs.

use crate::analysis::between::{widened, BetweenRuns, Estimate, Spread};
use crate::analysis::ratio::{Margin, Ratio};
use crate::analysis::stats::Summary;
use crate::model::earlier::EarlierRun;
use crate::model::results::{CellResult, CellStatus};
use crate::run::target::Judge;

/// The [`Judge`] the front ends hand to the runner: within-run intervals by default, widened by
/// the between-run spread once made [`IntervalJudge::with_earlier`].
#[derive(Debug, Default)]
pub struct IntervalJudge {
    /// The earlier runs the spread is judged from; `None`: judge within the run only.
    earlier: Option<Vec<EarlierRun>>,
}

impl IntervalJudge {
    /// A judge that widens by the spread between runs, estimated from `earlier` (the floor
    /// [`crate::analysis::between::TAU_FLOOR`] where they are fewer than
    /// [`crate::analysis::between::MIN_EARLIER_FOR_TAU`]).
    pub fn with_earlier(earlier: Vec<EarlierRun>) -> IntervalJudge {
        IntervalJudge {
            earlier: Some(earlier),
        }
    }

    /// The spread of `cell` given `ratio` in this run.
    fn spread(&self, cell: &str, ratio: &Ratio) -> Option<(Estimate, Spread)> {
        let earlier = self.earlier.as_ref()?;
        let this = Estimate::of_ratio(ratio)?;
        let theirs: Vec<Estimate> = earlier
            .iter()
            .filter_map(|run| run.of(cell))
            .filter_map(|r| Estimate::of(r.ratio, r.low, r.high, r.df))
            .collect();
        Some((this, Spread::of(&this, &theirs)))
    }

    /// The ratios of the compared cells to the baseline.
    fn ratios(
        cells: &[CellResult],
        baseline: &str,
        paired_order: bool,
        pilot: Option<usize>,
    ) -> Vec<(String, Option<Ratio>)> {
        let Some(base) = cells
            .iter()
            .find(|c| c.name == baseline && c.status == CellStatus::Ok)
        else {
            return Vec::new();
        };
        cells
            .iter()
            .filter(|c| c.status == CellStatus::Ok && c.name != base.name)
            .map(|c| {
                let r = Ratio::between(c, base, paired_order, pilot, Margin::DEFAULT);
                (c.name.clone(), r)
            })
            .collect()
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
        let ok = cells.iter().filter(|c| c.status == CellStatus::Ok);
        let base = cells
            .iter()
            .find(|c| c.name == baseline && c.status == CellStatus::Ok);
        match base {
            Some(base) => IntervalJudge::ratios(cells, &base.name, paired_order, Some(pilot))
                .into_iter()
                .map(|(name, r)| {
                    let width = r.and_then(|r| match self.spread(&name, &r) {
                        Some((this, spread)) => {
                            let (ci, _) = widened(&this, &spread);
                            (Ratio { ci: Some(ci), ..r }).relative_half_width()
                        }
                        None => r.relative_half_width(),
                    });
                    (name, width)
                })
                .collect(),
            None => ok.map(|c| (c.name.clone(), own_width(c, pilot))).collect(),
        }
    }

    fn floors(
        &self,
        cells: &[CellResult],
        baseline: &str,
        paired_order: bool,
        pilot: usize,
    ) -> Vec<(String, f64)> {
        let Some(earlier) = &self.earlier else {
            return Vec::new();
        };
        IntervalJudge::ratios(cells, baseline, paired_order, Some(pilot))
            .into_iter()
            .filter_map(|(name, r)| {
                let r = r.as_ref()?;
                let b = BetweenRuns::of(&name, r, earlier)?;
                // At the interval's own degrees of freedom: the widths judged against it are.
                Some((name, b.spread.floor_at(r.df.unwrap_or(f64::INFINITY))))
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

    #[test]
    fn with_earlier_runs_the_widths_are_widened_and_the_floor_reported() {
        let result = crate::model::sample::vlf();
        let within = IntervalJudge::default().widths(&result.cells, "test_1", true, 3);
        let judge = IntervalJudge::with_earlier(Vec::new());
        let widened = judge.widths(&result.cells, "test_1", true, 3);
        for ((name, w), (_, wide)) in within.iter().zip(&widened) {
            assert!(wide.unwrap() > w.unwrap(), "{name}: {wide:?} vs {w:?}");
        }
        let floors = judge.floors(&result.cells, "test_1", true, 3);
        assert_eq!(floors.len(), widened.len());
        let floor = crate::analysis::between::Spread {
            tau: crate::analysis::between::TAU_FLOOR,
            estimated_from: None,
        }
        .floor_at(f64::INFINITY);
        // Each at its interval's degrees of freedom: no narrower than the normal floor (10.3%).
        assert!(
            floors.iter().all(|(_, f)| *f >= floor && *f < 0.5),
            "{floors:?}"
        );
        assert!(IntervalJudge::default()
            .floors(&result.cells, "test_1", true, 3)
            .is_empty());
    }
}
