//! Whether a cell's place in its round changed its time: the check that goes with the balanced
//! order (`run::williams`). Each cell runs in every position equally often, so a position effect
//! (the first repetition of a round paying for write-back the round before left, the last for a
//! warm cache) falls on every cell alike and the ratios stay fair; this check says whether there
//! was one, and how large, so that a reader knows what the balance absorbed.
//!
//! The model on the log scale is additive: `ln t = round + cell + position + e`. The round and
//! cell effects are taken out (each run's log time less its round's mean and its cell's mean,
//! plus the grand mean); in a balanced design what remains at each position is its effect plus
//! noise. Each position's mean residual gets a t interval, Bonferroni-corrected over the
//! positions; an effect is reported where an interval excludes 0.

use crate::analysis::stats::{t_quantile, Interval, CONFIDENCE};
use crate::model::results::{BenchmarkResult, CellStatus};
use std::collections::BTreeMap;

/// One position's effect on a repetition's time, as a ratio (1.05: 5% slower there).
#[derive(Debug, Clone, PartialEq)]
pub struct PositionEffect {
    /// The position in the round, from 0.
    pub position: u32,
    /// Its effect on the time, as a ratio.
    pub ratio: f64,
    /// The corrected 95% interval of that ratio.
    pub interval: Interval,
}

/// What the check found: every position's effect, and whether any is beyond noise.
#[derive(Debug, Clone, PartialEq)]
pub struct PositionCheck {
    /// Each position's effect, in order.
    pub effects: Vec<PositionEffect>,
}

impl PositionCheck {
    /// The check over `result`'s complete rounds (every running cell once, each with its
    /// position); `None` where the runs record no positions or fewer than two complete rounds
    /// of two cells ran.
    pub fn of(result: &BenchmarkResult) -> Option<PositionCheck> {
        let cells: Vec<_> = result
            .cells
            .iter()
            .filter(|c| c.status == CellStatus::Ok)
            .collect();
        if cells.len() < 2 {
            return None;
        }
        // Per round: each cell's (position, log time).
        let mut rounds: BTreeMap<u32, Vec<(usize, u32, f64)>> = BTreeMap::new();
        for (c, cell) in cells.iter().enumerate() {
            for run in cell.measured() {
                let (Some(p), true) = (run.position, run.elapsed_s > 0.0) else {
                    return None;
                };
                rounds
                    .entry(run.index)
                    .or_default()
                    .push((c, p, run.elapsed_s.ln()));
            }
        }
        let complete: Vec<&Vec<(usize, u32, f64)>> =
            rounds.values().filter(|r| r.len() == cells.len()).collect();
        if complete.len() < 2 {
            return None;
        }
        let n = complete.len() as f64;
        let k = cells.len() as f64;
        let grand = complete
            .iter()
            .flat_map(|r| r.iter().map(|x| x.2))
            .sum::<f64>()
            / (n * k);
        let mut cell_mean = vec![0.0; cells.len()];
        for round in &complete {
            for &(c, _, x) in round.iter() {
                cell_mean[c] += x / n;
            }
        }
        let mut by_position: BTreeMap<u32, Vec<f64>> = BTreeMap::new();
        for round in &complete {
            let round_mean = round.iter().map(|x| x.2).sum::<f64>() / k;
            for &(c, p, x) in round.iter() {
                by_position
                    .entry(p)
                    .or_default()
                    .push(x - round_mean - cell_mean[c] + grand);
            }
        }
        let positions = by_position.len();
        // Blocked order runs every repetition at position 0: nothing to compare.
        if positions < 2 {
            return None;
        }
        let effects = by_position
            .into_iter()
            .filter(|(_, e)| e.len() >= 2)
            .map(|(position, e)| {
                let m = e.len() as f64;
                let mean = e.iter().sum::<f64>() / m;
                let sd = (e.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (m - 1.0)).sqrt();
                let q = t_quantile(1.0 - (1.0 - CONFIDENCE) / 2.0 / positions as f64, m - 1.0);
                let half = q * sd / m.sqrt();
                PositionEffect {
                    position,
                    ratio: mean.exp(),
                    interval: Interval {
                        low: (mean - half).exp(),
                        high: (mean + half).exp(),
                    },
                }
            })
            .collect();
        Some(PositionCheck { effects })
    }

    /// The positions whose interval excludes no effect (1).
    pub fn found(&self) -> Vec<&PositionEffect> {
        self.effects
            .iter()
            .filter(|e| !e.interval.contains(1.0))
            .collect()
    }

    /// "position in the round: no effect found (largest: 1st, +1.2% [−1.0%, +3.4%]); the order
    /// was balanced", or the effects found.
    pub fn line(&self) -> String {
        let pct = |r: f64| format!("{:+.1}%", (r - 1.0) * 100.0);
        let describe = |e: &PositionEffect| {
            format!(
                "{} in the round {} [{}, {}]",
                ordinal(e.position + 1),
                pct(e.ratio),
                pct(e.interval.low),
                pct(e.interval.high)
            )
        };
        let found = self.found();
        if found.is_empty() {
            let largest = self
                .effects
                .iter()
                .max_by(|a, b| (a.ratio.ln().abs()).total_cmp(&b.ratio.ln().abs()));
            return match largest {
                Some(e) => format!(
                    "position in the round (balanced order): no effect found (largest: {})",
                    describe(e)
                ),
                None => "position in the round (balanced order): no effect found".to_string(),
            };
        }
        format!(
            "position in the round: an effect, {}; the balanced order spreads it over every \
             cell alike",
            found
                .iter()
                .map(|e| describe(e))
                .collect::<Vec<_>>()
                .join(", ")
        )
    }
}

fn ordinal(n: u32) -> String {
    let suffix = match (n % 10, n % 100) {
        (1, 11) | (2, 12) | (3, 13) => "th",
        (1, _) => "st",
        (2, _) => "nd",
        (3, _) => "rd",
        _ => "th",
    };
    format!("{n}{suffix}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::results::RunResult;
    use crate::run::williams::williams;

    /// A result of `cells` cells and `rounds` Williams-ordered rounds whose times carry cell
    /// effects, round effects, noise and `first` extra on the log scale in the first position.
    fn result(cells: usize, rounds: u32, first: f64, seed: u64) -> BenchmarkResult {
        let mut rng = fastrand::Rng::with_seed(seed);
        let mut normal = || {
            let (u, v) = (1.0 - rng.f64(), rng.f64());
            (-2.0 * u.ln()).sqrt() * (2.0 * std::f64::consts::PI * v).cos()
        };
        let mut r = crate::model::sample::vlf();
        let template = r.cells[0].clone();
        r.cells = (0..cells)
            .map(|i| crate::model::results::CellResult {
                name: format!("c{i}"),
                runs: Vec::new(),
                ..template.clone()
            })
            .collect();
        let order = williams(cells);
        for round in 0..rounds {
            let shared = 0.2 * normal();
            for (p, &c) in order[round as usize % order.len()].iter().enumerate() {
                let x =
                    0.1 * c as f64 + shared + 0.02 * normal() + if p == 0 { first } else { 0.0 };
                r.cells[c].runs.push(RunResult {
                    index: round,
                    position: Some(p as u32),
                    elapsed_s: x.exp(),
                    ..RunResult::default()
                });
            }
        }
        r
    }

    #[test]
    fn a_first_position_that_is_slower_is_found_and_none_is_not_invented() {
        let slow_first = PositionCheck::of(&result(5, 20, 0.06, 1)).unwrap();
        let found = slow_first.found();
        assert_eq!(found.len().min(1), 1, "{slow_first:?}");
        assert_eq!(found[0].position, 0, "{slow_first:?}");
        assert!(
            (found[0].ratio - 0.06f64.exp()).abs() < 0.03,
            "{slow_first:?}"
        );
        assert!(
            slow_first.line().contains("1st in the round +"),
            "{}",
            slow_first.line()
        );
        // No effect: over many seeds, one is reported in at most about 5% of results.
        let false_alarms = (0..200)
            .filter(|seed| {
                !PositionCheck::of(&result(5, 10, 0.0, 100 + seed))
                    .unwrap()
                    .found()
                    .is_empty()
            })
            .count();
        assert!(false_alarms <= 18, "{false_alarms} of 200");
        // Without positions (results written before the balanced order) there is no check.
        let mut old = result(5, 4, 0.0, 3);
        for c in &mut old.cells {
            for r in &mut c.runs {
                r.position = None;
            }
        }
        assert!(PositionCheck::of(&old).is_none());
    }
}
