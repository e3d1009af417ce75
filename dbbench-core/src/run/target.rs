//! The precision target's stopping rule: after each fork (its rounds, every cell once a round),
//! run another unless every ratio's 95% interval is within the target, the fork limit is
//! reached, or another fork would overrun the budget.
//!
//! The rule looks at the intervals' **widths** only. Stopping when an interval first excludes 1
//! would be a sequential test without correction and inflate false positives. Stopping on an
//! ordinary interval's width is biased too (it stops when the spread happens to look small), so
//! the widths are those of Stein's two-stage interval over the forks' means
//! (`analysis::ratio`): the spread of the first `min_repeat` forks, divided by the square root of
//! the forks so far. They depend on the pilot forks and the count only, so the rule chooses a
//! count and biases nothing. `docs/statistics.md` has the simulation that checks this.
//!
//! The forks draw the invocation's own conditions anew (`run::schedule`), so the interval covers
//! them and needs no assumed spread between runs.
//!
//! The intervals themselves are the analysis layer's ([`Judge`] is implemented there and handed
//! to the runner by the front ends), so the runner and the tables use one computation.

use crate::model::config::Precision;
use crate::model::earlier::EarlierRun;
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

    /// Each compared cell's variance components on the log scale from the first `pilot` forks,
    /// `(cell, within-fork variance of a round, variance between forks)`: what the allocation of
    /// rounds to forks weighs. Empty where the judge cannot tell them apart.
    fn components(
        &self,
        _cells: &[CellResult],
        _baseline: &str,
        _pilot: usize,
    ) -> Vec<(String, f64, f64)> {
        Vec::new()
    }

    /// This judge knowing the `earlier` runs of the same experiment on this host, with which it
    /// pools the intervals of this run (started at `started_at_unix_s`) as the tables pool them
    /// (covering the drift between runs); `None` where it makes no difference (no earlier run,
    /// or a judge that computes nothing).
    fn knowing(&self, _started_at_unix_s: u64, _earlier: &[EarlierRun]) -> Option<Box<dyn Judge>> {
        None
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

/// The rule, after `forks` forks in `elapsed`, another of which would take `next_fork_s`.
/// `widths` empty means nothing could be judged (no compared cell in this run).
pub fn decide(
    target: &Precision,
    forks: u32,
    elapsed: Duration,
    widths: &[(String, Option<f64>)],
    next_fork_s: f64,
) -> Decision {
    if forks < target.min_rounds {
        return Decision::Continue;
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
    if forks >= target.max_rounds {
        return Decision::Stop(StopReason::RoundLimit);
    }
    if elapsed.as_secs_f64() + next_fork_s > target.budget.as_secs_f64() {
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
        fork_rounds: 2,
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
            decide(&TARGET, 2, s, &w(&[Some(0.01)]), 1.0),
            Decision::Continue
        );
        assert_eq!(
            decide(&TARGET, 3, s, &w(&[Some(0.01), Some(0.05)]), 1.0),
            Decision::Stop(StopReason::TargetMet)
        );
    }

    #[test]
    fn the_widest_interval_decides() {
        let s = Duration::from_secs(3);
        assert_eq!(
            decide(&TARGET, 3, s, &w(&[Some(0.01), Some(0.051)]), 1.0),
            Decision::Continue
        );
        assert_eq!(
            decide(&TARGET, 3, s, &w(&[Some(0.01), None]), 1.0),
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
            decide(&TARGET, 10, Duration::from_secs(10), &wide, 1.0),
            Decision::Stop(StopReason::RoundLimit)
        );
        // Forks of 10 s against 60 s: at 50 s another would end at 60 s, within the budget; at
        // 52 s it would not.
        assert_eq!(
            decide(&TARGET, 5, Duration::from_secs(50), &wide, 10.0),
            Decision::Continue
        );
        assert_eq!(
            decide(&TARGET, 5, Duration::from_secs(52), &wide, 10.0),
            Decision::Stop(StopReason::Budget)
        );
        assert!(matches!(
            decide(&TARGET, 3, Duration::from_secs(1), &[], 1.0),
            Decision::Stop(StopReason::Unjudged(_))
        ));
    }
}
