//! The precision target's stopping rule: after each round (every cell once), run another unless
//! every ratio's 95% interval is within the target, the round limit is reached, or another round
//! would overrun the budget.
//!
//! The rule looks at the intervals' **widths** only. Stopping when an interval first excludes 1
//! would be a sequential test without correction and inflate false positives. Stopping on an
//! ordinary interval's width is biased too (it stops when the spread happens to look small), so
//! the widths are those of Stein's two-stage interval (`analysis::ratio`): the spread of the
//! first `min_repeat` rounds, divided by the square root of the rounds so far. They depend on the
//! first rounds and the count only, so the rule chooses a count and biases nothing.
//! `docs/statistics.md` has the simulation that checks this.
//!
//! Between runs: a judge that knows the spread between invocations (`analysis::between`) gives
//! the widths of this run's interval widened by it, and the floor that spread alone sets. When
//! the floor is wider than the target, no number of rounds can meet it: the rule runs rounds
//! until the within-run part is no larger than the between-run one ([`reach`]), then stops and
//! says so ([`StopReason::BetweenRuns`]); the round limit and the budget still apply.
//!
//! The intervals themselves are the analysis layer's ([`Judge`] is implemented there and handed
//! to the runner by the front ends), so the runner and the tables use one computation.

use crate::model::config::Precision;
use crate::model::results::{CellResult, StopReason};
use std::time::Duration;

/// Computes, for the cells so far, each compared cell's interval half-width as a fraction of its
/// ratio (`None` where there is no interval yet).
pub trait Judge {
    /// The half-width of each cell's ratio to `baseline`, by cell name; the baseline itself is
    /// left out. `paired_order` is whether the rounds pair (interleaved order); `pilot` the
    /// rounds whose spread a two-stage interval uses (the target's minimum).
    fn widths(
        &self,
        cells: &[CellResult],
        baseline: &str,
        paired_order: bool,
        pilot: usize,
    ) -> Vec<(String, Option<f64>)>;

    /// The narrowest half-width the spread between runs leaves each cell's ratio, as a fraction
    /// (no number of rounds within this run gets below it); empty where the judge knows nothing
    /// of other runs.
    fn floors(
        &self,
        _cells: &[CellResult],
        _baseline: &str,
        _paired_order: bool,
        _pilot: usize,
    ) -> Vec<(String, f64)> {
        Vec::new()
    }
}

/// A judge that computes nothing: a precision target then runs its minimum rounds and says why.
#[derive(Debug, Default)]
pub struct NoJudge;

impl Judge for NoJudge {
    fn widths(&self, _: &[CellResult], _: &str, _: bool, _: usize) -> Vec<(String, Option<f64>)> {
        Vec::new()
    }
}

/// What the rule decided after a round.
#[derive(Debug, Clone, PartialEq)]
pub enum Decision {
    /// Run another round.
    Continue,
    /// Stop, for this reason.
    Stop(StopReason),
}

/// The widest of `widths` (`None` counts as infinitely wide), with its cell.
pub fn widest(widths: &[(String, Option<f64>)]) -> Option<(String, f64)> {
    widths
        .iter()
        .map(|(cell, w)| (cell.clone(), w.unwrap_or(f64::INFINITY)))
        .max_by(|a, b| a.1.total_cmp(&b.1))
}

/// The rule, after `rounds` rounds in `elapsed` (each round took `elapsed / rounds` on average).
/// `widths` empty means nothing could be judged (no compared cell in this run); `floors` are the
/// between-run floors ([`Judge::floors`]).
pub fn decide(
    target: &Precision,
    rounds: u32,
    elapsed: Duration,
    widths: &[(String, Option<f64>)],
    floors: &[(String, f64)],
) -> Decision {
    if rounds < target.min_rounds {
        return Decision::Continue;
    }
    if let Some((cell, floor)) = floors.iter().max_by(|a, b| a.1.total_cmp(&b.1)) {
        if let (Some((_, w)), true) = (widest(widths), *floor > target.target()) {
            if w <= reach(*floor) {
                return Decision::Stop(StopReason::BetweenRuns {
                    cell: cell.clone(),
                    floor: *floor,
                });
            }
            // Not there yet: the target cannot be met, so only the limits below stop it.
            return limits(target, rounds, elapsed);
        }
    }
    match widest(widths) {
        None => {
            return Decision::Stop(StopReason::Unjudged(
                "no cell of this run has a ratio to judge (the baseline or the other cells did \
                 not run with it)"
                    .into(),
            ))
        }
        Some((_, w)) if w <= target.target() => return Decision::Stop(StopReason::TargetMet),
        Some(_) => {}
    }
    limits(target, rounds, elapsed)
}

/// The widest interval worth rounds when the between-run `floor` (at the interval's degrees of
/// freedom) is above the target: √2 times the floor on the log scale, where the within-run
/// variance has come down to the between-run one, so that further rounds could narrow the interval
/// across runs by at most 29% of its width.
///
/// Why not stop at the minimum rounds: the first runs of the main job did, and its population and
/// data-file suites then read ±17–41% where their budget would have halved that.
pub fn reach(floor: f64) -> f64 {
    (1.0 + floor).powf(std::f64::consts::SQRT_2) - 1.0
}

/// The round limit and the budget.
fn limits(target: &Precision, rounds: u32, elapsed: Duration) -> Decision {
    if rounds >= target.max_rounds {
        return Decision::Stop(StopReason::RoundLimit);
    }
    let per_round = elapsed.as_secs_f64() / f64::from(rounds.max(1));
    if elapsed.as_secs_f64() + per_round > target.budget.as_secs_f64() {
        return Decision::Stop(StopReason::Budget);
    }
    Decision::Continue
}

#[cfg(test)]
mod tests {
    use super::*;

    const TARGET: Precision = Precision {
        hundredths_of_percent: 500,
        min_rounds: 3,
        max_rounds: 10,
        budget: Duration::from_secs(60),
    };

    fn w(values: &[Option<f64>]) -> Vec<(String, Option<f64>)> {
        values
            .iter()
            .enumerate()
            .map(|(i, v)| (format!("c{i}"), *v))
            .collect()
    }

    #[test]
    fn the_minimum_runs_whatever_the_widths() {
        let s = Duration::from_secs(3);
        assert_eq!(
            decide(&TARGET, 2, s, &w(&[Some(0.01)]), &[]),
            Decision::Continue
        );
        assert_eq!(
            decide(&TARGET, 3, s, &w(&[Some(0.01), Some(0.05)]), &[]),
            Decision::Stop(StopReason::TargetMet)
        );
    }

    #[test]
    fn the_widest_interval_decides() {
        let s = Duration::from_secs(3);
        assert_eq!(
            decide(&TARGET, 3, s, &w(&[Some(0.01), Some(0.051)]), &[]),
            Decision::Continue
        );
        assert_eq!(
            decide(&TARGET, 3, s, &w(&[Some(0.01), None]), &[]),
            Decision::Continue
        );
        assert_eq!(
            widest(&w(&[Some(0.02), None])),
            Some(("c1".into(), f64::INFINITY))
        );
    }

    #[test]
    fn limits_stop_a_target_not_yet_met() {
        let wide = w(&[Some(0.2)]);
        assert_eq!(
            decide(&TARGET, 10, Duration::from_secs(10), &wide, &[]),
            Decision::Stop(StopReason::RoundLimit)
        );
        // Five rounds in 50 s: a sixth would end at 60 s, within the budget; at 52 s it would not.
        assert_eq!(
            decide(&TARGET, 5, Duration::from_secs(50), &wide, &[]),
            Decision::Continue
        );
        assert_eq!(
            decide(&TARGET, 5, Duration::from_secs(52), &wide, &[]),
            Decision::Stop(StopReason::Budget)
        );
        assert!(matches!(
            decide(&TARGET, 3, Duration::from_secs(1), &[], &[]),
            Decision::Stop(StopReason::Unjudged(_))
        ));
    }

    #[test]
    fn a_between_run_floor_above_the_target_stops_at_the_minimum() {
        let s = Duration::from_secs(3);
        let narrow = w(&[Some(0.12)]);
        let floors = vec![("c0".to_string(), 0.103)];
        assert_eq!(decide(&TARGET, 2, s, &narrow, &floors), Decision::Continue);
        assert_eq!(
            decide(&TARGET, 3, s, &narrow, &floors),
            Decision::Stop(StopReason::BetweenRuns {
                cell: "c0".into(),
                floor: 0.103
            })
        );
        // Wider than √2 times the floor (14.9%): rounds go on, to the limits, never TargetMet.
        let wide = w(&[Some(0.30)]);
        assert_eq!(decide(&TARGET, 3, s, &wide, &floors), Decision::Continue);
        assert_eq!(
            decide(&TARGET, 10, s, &wide, &floors),
            Decision::Stop(StopReason::RoundLimit)
        );
        assert_eq!(
            decide(&TARGET, 5, Duration::from_secs(55), &wide, &floors),
            Decision::Stop(StopReason::Budget)
        );
        // A floor under the target leaves the widths to decide.
        let low = vec![("c0".to_string(), 0.03)];
        assert_eq!(
            decide(&TARGET, 3, s, &w(&[Some(0.02)]), &low),
            Decision::Stop(StopReason::TargetMet)
        );
        assert_eq!(
            decide(&TARGET, 3, s, &w(&[Some(0.07)]), &low),
            Decision::Continue
        );
    }
}
