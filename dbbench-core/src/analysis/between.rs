//! Between runs: this run against the earlier runs of the same experiment on this host
//! (`output::earlier`), as history, not as the verdict. The verdict's interval comes from this
//! run's forks, which draw the invocation's own conditions anew (`analysis::ratio`), so it needs
//! no assumed spread between runs; what the store adds is whether earlier runs agree with it and
//! how large a drift beyond the forks the host's own history shows.
//!
//! The model is the random-effects one of meta-analysis. Run `i` estimates the log-ratio
//! `y_i = μ + u_i + e_i`, with `e_i` the run's own error whose variance `v_i` its interval states
//! (`v = (ln(high / low) / 2 / t(0.975, df))²`, the forks' spread included) and `u_i ~ N(0, τ²)`
//! what moves between runs beyond that (drift over hours: the machine, its neighbours).
//!
//! - **Drift τ²** is DerSimonian–Laird's moment estimate over this run and the earlier ones,
//!   from [`MIN_RUNS_FOR_DRIFT`] runs, labelled as this host's history; never assumed.
//! - **Agreement**: an earlier run disagrees when `|y_i − y₀|` is beyond the 95% prediction bound
//!   `t · √(v_i + v₀ + 2τ²)`, Bonferroni-corrected over the earlier runs compared (the
//!   quantile at `1 − 0.025 / k`, on the smaller of the two runs' degrees of freedom): under the
//!   model, any "disagrees" line at all is printed in at most 5% of runs.
//! - **The pooled estimate** over `k ≥ 3` runs is the Hartung–Knapp–Sidik–Jonkman
//!   random-effects interval: weights `1 / (v_i + τ²)`, the weighted mean, and
//!   `t(0.975, k − 1) · √(max(1, Σ w_i (y_i − μ)² / (k − 1)) / Σ w_i)` (the factor kept at
//!   1 or more, as Röver, Knapp and Friede advise).

use crate::analysis::stats::{t_quantile, Interval, CONFIDENCE};
use crate::model::earlier::EarlierRun;

/// Fewest runs (this one included) from which the drift between runs is estimated and shown.
pub const MIN_RUNS_FOR_DRIFT: usize = 3;

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

/// The Hartung–Knapp–Sidik–Jonkman random-effects estimate over `runs` (at least
/// [`MIN_RUNS_POOLED`]): the ratio and its 95% interval.
pub fn pooled(runs: &[Estimate]) -> Option<(f64, Interval)> {
    pooled_with(runs, dl_tau2(runs))
}

/// [`pooled`] with the drift's variance `tau2` given rather than estimated.
pub fn pooled_with(runs: &[Estimate], tau2: f64) -> Option<(f64, Interval)> {
    let k = runs.len();
    if k < MIN_RUNS_POOLED {
        return None;
    }
    let Weighted { sw, mean, q, .. } = Weighted::of(runs, tau2);
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
    /// This run's interval (the table's).
    pub interval: Interval,
    /// Earlier runs that have this ratio.
    pub earlier: usize,
    /// The earlier runs beyond the corrected prediction bound: invocation and ratio.
    pub disagreeing: Vec<(i64, f64)>,
    /// The drift between runs beyond their own intervals, τ, from this host's history (from
    /// [`MIN_RUNS_FOR_DRIFT`] runs).
    pub drift: Option<f64>,
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
        let mut all = vec![estimate];
        all.extend(theirs.iter().map(|t| t.2));
        let drift = (all.len() >= MIN_RUNS_FOR_DRIFT).then(|| dl_tau2(&all));
        let k = theirs.len();
        Some(BetweenRuns {
            cell: cell.to_string(),
            ratio: this.ratio,
            interval: this.ci?,
            earlier: k,
            disagreeing: theirs
                .iter()
                .filter(|t| disagrees(&estimate, &t.2, drift.unwrap_or(0.0), k))
                .map(|t| (t.0, t.1))
                .collect(),
            drift: drift.map(f64::sqrt),
            pooled: pooled(&all),
        })
    }

    /// The lines the outputs show under "between runs:" for this cell.
    pub fn lines(&self) -> Vec<String> {
        let mut lines = vec![format!(
            "{}: {:.2} [{:.2}, {:.2}] in this run",
            self.cell, self.ratio, self.interval.low, self.interval.high
        )];
        if self.earlier > 0 {
            lines.push(if self.disagreeing.is_empty() {
                format!(
                    "  agrees with the {} earlier run{} of this experiment (95% prediction bound, \
                     corrected for {} comparison{})",
                    self.earlier,
                    plural(self.earlier),
                    self.earlier,
                    plural(self.earlier)
                )
            } else {
                format!(
                    "  disagrees with {} of {} earlier runs beyond the 95% prediction bound \
                     (corrected for {} comparison{}): {}",
                    self.disagreeing.len(),
                    self.earlier,
                    self.earlier,
                    plural(self.earlier),
                    self.disagreeing
                        .iter()
                        .map(|(id, r)| format!("invocation {id} at {r:.2}"))
                        .collect::<Vec<_>>()
                        .join(", ")
                )
            });
        }
        if let Some((r, ci)) = self.pooled {
            let drift = self.drift.map_or(String::new(), |t| {
                format!("; drift between runs beyond their intervals τ = {t:.3}")
            });
            lines.push(format!(
                "  pooled across {} runs of this host (random effects): {r:.2} [{:.2}, {:.2}]{drift}",
                self.earlier + 1,
                ci.low,
                ci.high
            ));
        }
        lines
    }
}

fn plural(n: usize) -> &'static str {
    if n == 1 {
        ""
    } else {
        "s"
    }
}

/// Whether `other` lies beyond `this`'s 95% prediction bound with drift `tau2`, Bonferroni-
/// corrected over `k` comparisons.
pub fn disagrees(this: &Estimate, other: &Estimate, tau2: f64, k: usize) -> bool {
    let sd = (this.v + other.v + 2.0 * tau2).sqrt();
    let df = this.df.min(other.df);
    let q = t_quantile(1.0 - (1.0 - CONFIDENCE) / 2.0 / k.max(1) as f64, df);
    (other.y - this.y).abs() > q * sd
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

/// The "between runs:" lines of a result: shown where the store holds earlier runs of the same
/// experiment; empty otherwise, so a run alone shows its table and nothing more.
pub fn lines(result: &crate::model::results::BenchmarkResult) -> Vec<String> {
    if result.earlier.is_empty() {
        return Vec::new();
    }
    // This run's own interval (its forks'), as the earlier runs' are: the drift is what the
    // lines estimate, so it must not be in the intervals they start from.
    let own = crate::model::results::BenchmarkResult {
        earlier: Vec::new(),
        ..result.clone()
    };
    let table = crate::analysis::table::BenchmarkTable::of(&own);
    of_table(&table, &result.earlier)
        .iter()
        .flat_map(BetweenRuns::lines)
        .collect()
}

#[cfg(test)]
mod tests;
