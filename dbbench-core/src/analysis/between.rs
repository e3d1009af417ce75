//! Between runs: the spread of a ratio from one invocation to the next, which no number of rounds
//! within one run measures, and what it does to this run's interval (issue 33;
//! `docs/statistics.md`, "Between runs").
//!
//! The model is the random-effects one of meta-analysis. Run `i` estimates the log-ratio
//! `y_i = μ + u_i + e_i`, with `u_i ~ N(0, τ²)` the invocation's own condition (where the files
//! landed, the virtual disk's state) and `e_i` the within-run error whose variance `v_i` the run's
//! interval states: `v = (ln(high / low) / 2 / t(0.975, df))²`.
//!
//! - **τ²** is DerSimonian–Laird's moment estimate over this run and the earlier ones when there
//!   are at least [`MIN_EARLIER_FOR_TAU`] earlier runs; with fewer, the prior [`TAU_FLOOR`]
//!   (measured, see there) stands in, so a run never claims more than the spread between runs
//!   allows before the store can say what that spread is.
//! - **This run's widened interval** is `exp(y₀ ± t · √(v₀ + τ²))`, with Satterthwaite degrees
//!   of freedom from the run's `df` and, for an estimated τ², `k − 1` (a prior τ² counts as
//!   known), but no more than the run's own `df`, so it is never narrower than the run's interval.
//! - **The pooled estimate** over `k ≥ 3` runs is the Hartung–Knapp–Sidik–Jonkman
//!   random-effects interval: weights `1 / (v_i + τ²)`, the weighted mean, and
//!   `t(0.975, k − 1) · √(max(1, Σ w_i (y_i − μ)² / (k − 1)) / Σ w_i)` (the factor kept at
//!   1 or more, as Röver, Knapp and Friede advise).
//! - **Agreement**: each earlier ratio inside this run's widened interval, or not.

use crate::analysis::stats::{t_quantile, Interval, CONFIDENCE};
use crate::model::earlier::EarlierRun;

/// The between-run spread of a log-ratio assumed when the store holds fewer than
/// [`MIN_EARLIER_FOR_TAU`] earlier runs to estimate it from. DerSimonian–Laird's τ over the four runs of issue 33's table (one 2-core
/// VM, minutes apart; each interval read as two-stage on 4 degrees of freedom, `min_repeat` 5) is
/// 0.062, 0.046 and 0.052 for VLF tests 3, 4 and 5: 0.05. On its own it makes an interval ±10%
/// wide, so a ±5% target cannot be met within one run.
pub const TAU_FLOOR: f64 = 0.05;

/// Fewest earlier runs from which τ² is estimated rather than taken from [`TAU_FLOOR`].
///
/// Why five, not two: DerSimonian–Laird over three runs is 0 more often than not even where the
/// runs do differ. Three consecutive main jobs on one 2-core VM gave VLF test 5 ratios of 0.62,
/// 0.62 and 0.59; from two earlier runs the third estimated τ = 0, claimed [0.56, 0.62], and so
/// excluded both earlier estimates. With six runs the moment estimate is no longer mostly zero.
pub const MIN_EARLIER_FOR_TAU: usize = 5;

/// Fewest runs (this one included) for a pooled estimate.
pub const MIN_RUNS_POOLED: usize = 3;

/// One run's estimate of a log-ratio.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Estimate {
    /// The log of the ratio.
    pub y: f64,
    /// Its within-run variance.
    pub v: f64,
    /// Degrees of freedom of the run's interval.
    pub df: f64,
}

impl Estimate {
    /// The estimate behind a `ratio` with 95% interval `[low, high]` on `df` degrees of freedom;
    /// `None` for a non-positive or non-finite value.
    pub fn of(ratio: f64, low: f64, high: f64, df: f64) -> Option<Estimate> {
        let ok = |x: f64| x.is_finite() && x > 0.0;
        if !(ok(ratio) && ok(low) && ok(high) && ok(df)) {
            return None;
        }
        let half = (high / low).ln() / 2.0;
        let se = half / t_quantile(0.5 + CONFIDENCE / 2.0, df);
        Some(Estimate {
            y: ratio.ln(),
            v: se * se,
            df,
        })
    }

    /// The estimate of a [`crate::analysis::ratio::Ratio`] that has an interval.
    pub fn of_ratio(r: &crate::analysis::ratio::Ratio) -> Option<Estimate> {
        let ci = r.ci?;
        Estimate::of(r.ratio, ci.low, ci.high, r.df?)
    }
}

/// The inverse-variance weighted mean of `runs` with `tau2` added to each run's variance, and
/// Cochran's Q about it: what both τ² and the pooled interval are computed from.
struct Weighted {
    /// Each run's weight, `1 / (v + τ²)`.
    w: Vec<f64>,
    /// The weights' sum.
    sw: f64,
    /// The weighted mean of the log ratios.
    mean: f64,
    /// `Σ w (y − mean)²`.
    q: f64,
}

impl Weighted {
    fn of(runs: &[Estimate], tau2: f64) -> Weighted {
        // A zero variance (constant rounds, τ² = 0) would get infinite weight: bound it.
        let w: Vec<f64> = runs.iter().map(|e| 1.0 / (e.v + tau2).max(1e-12)).collect();
        let sw: f64 = w.iter().sum();
        let mean = runs.iter().zip(&w).map(|(e, w)| w * e.y).sum::<f64>() / sw;
        let q = runs
            .iter()
            .zip(&w)
            .map(|(e, w)| w * (e.y - mean).powi(2))
            .sum();
        Weighted { w, sw, mean, q }
    }
}

/// DerSimonian–Laird's τ² over `runs` (0 for fewer than two).
pub fn dl_tau2(runs: &[Estimate]) -> f64 {
    if runs.len() < 2 {
        return 0.0;
    }
    let Weighted { w, sw, q, .. } = Weighted::of(runs, 0.0);
    let c = sw - w.iter().map(|w| w * w).sum::<f64>() / sw;
    ((q - (runs.len() - 1) as f64) / c).max(0.0)
}

/// The between-run variance this run is judged with, and where it came from.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Spread {
    /// τ, on the log scale.
    pub tau: f64,
    /// Estimated from this many runs (this one included); `None` when [`TAU_FLOOR`] stood in.
    pub estimated_from: Option<usize>,
}

impl Spread {
    /// The spread for `this` run given `earlier` runs' estimates of the same ratio.
    pub fn of(this: &Estimate, earlier: &[Estimate]) -> Spread {
        if earlier.len() < MIN_EARLIER_FOR_TAU {
            return Spread {
                tau: TAU_FLOOR,
                estimated_from: None,
            };
        }
        let mut all = vec![*this];
        all.extend_from_slice(earlier);
        Spread {
            tau: dl_tau2(&all).sqrt(),
            estimated_from: Some(all.len()),
        }
    }

    /// The narrowest half-width, as a fraction of the ratio, that any number of rounds could
    /// reach with this spread, for an interval on `df` degrees of freedom: `exp(t(df) · τ) − 1`
    /// (a two-stage interval keeps its pilot's `n₀ − 1`, so its floor is wider than the normal
    /// one, 10.3% for the prior). A precision target below it cannot be met.
    pub fn floor_at(&self, df: f64) -> f64 {
        (t_quantile(0.5 + CONFIDENCE / 2.0, df) * self.tau).exp_m1()
    }
}

/// This run's interval with the between-run variance added.
pub fn widened(this: &Estimate, spread: &Spread) -> (Interval, f64) {
    let tau2 = spread.tau * spread.tau;
    let total = this.v + tau2;
    let df = if tau2 == 0.0 {
        this.df
    } else {
        let tau_part = match spread.estimated_from {
            Some(k) => tau2 * tau2 / (k - 1) as f64,
            None => 0.0,
        };
        let within = this.v * this.v / this.df;
        // Never more than the run's own: Satterthwaite's df for a known τ² exceeds it, and would
        // make the interval across runs narrower than the run's own where its df is small.
        if within + tau_part == 0.0 {
            this.df
        } else {
            (total * total / (within + tau_part)).min(this.df)
        }
    };
    let half = t_quantile(0.5 + CONFIDENCE / 2.0, df) * total.sqrt();
    (
        Interval {
            low: (this.y - half).exp(),
            high: (this.y + half).exp(),
        },
        df,
    )
}

/// The Hartung–Knapp–Sidik–Jonkman random-effects estimate over `runs` (at least
/// [`MIN_RUNS_POOLED`]): the ratio and its 95% interval.
pub fn pooled(runs: &[Estimate]) -> Option<(f64, Interval)> {
    let k = runs.len();
    if k < MIN_RUNS_POOLED {
        return None;
    }
    let Weighted { sw, mean, q, .. } = Weighted::of(runs, dl_tau2(runs));
    let q = q / (k - 1) as f64;
    // The Hartung–Knapp factor `q` is not let below 1 (Röver, Knapp & Friede 2015): where the
    // runs agree better than their own errors say, plain HKSJ is narrower than the fixed-effect
    // interval, and undercovered with τ = 0 in our simulation (91%).
    let half = t_quantile(0.5 + CONFIDENCE / 2.0, (k - 1) as f64) * (q.max(1.0) / sw).sqrt();
    Some((
        mean.exp(),
        Interval {
            low: (mean - half).exp(),
            high: (mean + half).exp(),
        },
    ))
}

/// One cell's ratio judged across runs.
#[derive(Debug, Clone, PartialEq)]
pub struct BetweenRuns {
    /// The cell.
    pub cell: String,
    /// This run's ratio.
    pub ratio: f64,
    /// The spread between runs it was judged with.
    pub spread: Spread,
    /// This run's interval widened by the spread.
    pub widened: Interval,
    /// Earlier runs that have this ratio.
    pub earlier: usize,
    /// The earlier runs whose ratio lies outside the widened interval: invocation and ratio.
    pub disagreeing: Vec<(i64, f64)>,
    /// The random-effects estimate over this and the earlier runs, from [`MIN_RUNS_POOLED`].
    pub pooled: Option<(f64, Interval)>,
}

impl BetweenRuns {
    /// `cell`'s ratio `this` (with interval and df) judged against `earlier` runs.
    pub fn of(
        cell: &str,
        this: &crate::analysis::ratio::Ratio,
        earlier: &[EarlierRun],
    ) -> Option<BetweenRuns> {
        let estimate = Estimate::of_ratio(this)?;
        let theirs: Vec<(i64, f64, Estimate)> = earlier
            .iter()
            .filter_map(|run| {
                let r = run.of(cell)?;
                Some((
                    run.invocation,
                    r.ratio,
                    Estimate::of(r.ratio, r.low, r.high, r.df)?,
                ))
            })
            .collect();
        let estimates: Vec<Estimate> = theirs.iter().map(|t| t.2).collect();
        let spread = Spread::of(&estimate, &estimates);
        let (interval, _) = widened(&estimate, &spread);
        let mut all = vec![estimate];
        all.extend_from_slice(&estimates);
        Some(BetweenRuns {
            cell: cell.to_string(),
            ratio: this.ratio,
            spread,
            widened: interval,
            earlier: theirs.len(),
            disagreeing: theirs
                .iter()
                .filter(|t| !interval.contains(t.1))
                .map(|t| (t.0, t.1))
                .collect(),
            pooled: pooled(&all),
        })
    }

    /// The lines the outputs show under "between runs:" for this cell.
    pub fn lines(&self) -> Vec<String> {
        let spread = match self.spread.estimated_from {
            Some(k) => format!(
                "τ = {:.3} (DerSimonian–Laird over {k} runs)",
                self.spread.tau
            ),
            None => format!(
                "τ = {:.3} (prior floor; fewer than {MIN_EARLIER_FOR_TAU} earlier runs)",
                self.spread.tau
            ),
        };
        let mut lines = vec![format!(
            "{}: {:.2}, with the between-run spread [{:.2}, {:.2}], {spread}",
            self.cell, self.ratio, self.widened.low, self.widened.high
        )];
        if self.earlier > 0 {
            lines.push(if self.disagreeing.is_empty() {
                format!(
                    "  agrees with the {} earlier run{}: every earlier ratio is inside",
                    self.earlier,
                    if self.earlier == 1 { "" } else { "s" }
                )
            } else {
                format!(
                    "  disagrees with {} of {} earlier runs: {}",
                    self.disagreeing.len(),
                    self.earlier,
                    self.disagreeing
                        .iter()
                        .map(|(id, r)| format!("invocation {id} at {r:.2}"))
                        .collect::<Vec<_>>()
                        .join(", ")
                )
            });
        }
        if let Some((r, ci)) = self.pooled {
            lines.push(format!(
                "  pooled across {} runs (random effects): {r:.2} [{:.2}, {:.2}]",
                self.earlier + 1,
                ci.low,
                ci.high
            ));
        }
        lines
    }
}

/// Every compared cell of `table` judged across runs against `earlier`.
pub fn of_table(
    table: &crate::analysis::table::BenchmarkTable,
    earlier: &[EarlierRun],
) -> Vec<BetweenRuns> {
    table
        .rows
        .iter()
        .filter(|row| row.name != table.baseline)
        .filter_map(|row| BetweenRuns::of(&row.name, row.ratio.as_ref()?, earlier))
        .collect()
}

/// The "between runs:" lines of a result: shown where there are earlier runs to check against,
/// or where a precision target stopped on the between-run floor (so the reader sees the interval
/// the stop was judged on). Empty otherwise, which keeps the outputs of a run alone unchanged.
pub fn lines(result: &crate::model::results::BenchmarkResult) -> Vec<String> {
    let floored = matches!(
        result.stopping.as_ref().map(|s| &s.reason),
        Some(crate::model::results::StopReason::BetweenRuns { .. })
    );
    if result.earlier.is_empty() && !floored {
        return Vec::new();
    }
    let table = crate::analysis::table::BenchmarkTable::of(result);
    of_table(&table, &result.earlier)
        .iter()
        .flat_map(BetweenRuns::lines)
        .collect()
}

#[cfg(test)]
mod tests;
