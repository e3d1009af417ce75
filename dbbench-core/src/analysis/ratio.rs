//! A cell's time relative to the baseline cell's: the ratio, its 95% interval, the method that
//! produced it, and a verdict. `docs/statistics.md` has the methods, their assumptions and the
//! simulations that check them.
//!
//! # Paired rounds (interleaved order)
//!
//! With interleaved order each round runs every cell once, one after another, so the cells of a
//! round share that round's conditions (what the OS still writes back, the host's neighbours).
//! Those conditions move every cell of the round together, which the per-round ratio cancels:
//! with `d_i = ln(cell_i / baseline_i)` over the `n` rounds both cells have,
//!
//! ```text
//! ratio = exp(mean(d)),   interval = exp(mean(d) ± t(0.975, n - 1) · sd(d) / √n)
//! ```
//!
//! (the geometric mean of the per-round ratios and a one-sample t interval on the log scale).
//! The log makes the interval symmetric in the ratio's direction and never negative; t rather
//! than a bootstrap because storage benchmarks have 3 to 20 rounds, too few for resampling.
//!
//! # Two stages (a precision target)
//!
//! A precision target decides how many rounds to run from the data, and an interval computed as
//! above after a data-dependent stop is too narrow: the rule stops when the spread *happens* to
//! be small (simulated: 90% coverage, 9% false positives). So a benchmark with a target uses
//! Stein's two-stage interval: the spread is estimated once, from the first `n₀` rounds (the
//! target's `min_repeat`), and
//!
//! ```text
//! interval = exp(mean(d over all N rounds) ± t(0.975, n₀ - 1) · sd(d over the first n₀) / √N)
//! ```
//!
//! which is exact for normal noise whatever `N` the spread of the first rounds led to (Stein,
//! 1945). Its width depends on the first rounds and `N` only, so stopping on it biases nothing.
//!
//! # Welch (blocked order, cells of other invocations)
//!
//! Where runs do not pair (blocked order, cells from different invocations; `compare` is not
//! this but a ratio of the two runs' ratios, [`Ratio::of_ratios_drifting`]),
//! `ratio = mean(cell) / mean(baseline)` with a log-ratio Welch interval: by the
//! delta method the standard error of `ln r` is `sqrt(s_c² / (n_c m_c²) + s_b² / (n_b m_b²))`,
//! with Welch–Satterthwaite degrees of freedom.
//!
//! # Verdicts
//!
//! *faster* / *slower* when the interval lies wholly below / above 1; *equivalent* when it lies
//! inside the equivalence margin `[1 − m, 1 + m]` (two one-sided tests at 2.5% each, Schuirmann's
//! TOST with the 95% interval); *inconclusive* otherwise: the interval contains 1 but is wider
//! than the margin, so the runs cannot tell "no difference" from "a difference we could not
//! resolve". The margin is read from the same variable as the snapshot comparator's relative
//! tolerance (`DBBENCH_TOLERANCE`, default 10%); a passing snapshot check means less: its ratio
//! check also allows for the drift between machines, so it passes moves a table would call
//! slower (it says on the console how far a ratio must move to fail). The busy-machine and
//! calibration verdicts overrule these ([`Ratio::judged`]).

use crate::analysis::stats::{t_quantile, Interval, Summary, CONFIDENCE};
use crate::model::results::CellResult;
use serde::{Deserialize, Serialize};

mod forks;
mod verdict;

use forks::rounds_of;
pub use forks::{components, fork_means, forks_of};
pub use verdict::{Margin, Verdict};

/// The runs a [`Method::Pooled`] ratio stands on.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct PooledRuns {
    /// Runs pooled, this one included.
    pub runs: usize,
    /// The drift between runs beyond their own intervals (DerSimonian–Laird's τ).
    pub tau: f64,
    /// This run's own ratio, from its forks alone.
    pub own: f64,
}

/// Which interval a ratio carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Method {
    /// Paired over the rounds both cells ran (interleaved order, one invocation).
    Paired,
    /// Paired, with the spread of the first rounds (a precision target: Stein's two stages).
    TwoStage,
    /// Log-ratio Welch over the two cells' runs.
    Welch,
    /// Paired within each fork, a t interval over the forks' mean log-ratios (each fork on a
    /// fresh work area, so the interval covers what one invocation shares).
    Forks,
    /// As [`Method::Forks`], with the spread of the first forks (a precision target: Stein's two
    /// stages at the fork level).
    TwoStageForks,
    /// This run's forks' interval pooled with the earlier runs of the same experiment on this
    /// host (random effects, Hartung–Knapp–Sidik–Jonkman): it covers the drift between runs
    /// that one run's forks cannot re-draw (`analysis::drift`).
    Pooled,
    /// A ratio to the baseline in one run over the same ratio in another (`compare`): the two
    /// ratios' log-scale variances added, Welch–Satterthwaite degrees of freedom.
    RatioOfRatios,
}

impl Method {
    /// How tables name the method.
    pub fn describe(&self) -> &'static str {
        match self {
            Method::Paired => "paired rounds, 95% log-ratio t",
            Method::TwoStage => "paired rounds, 95% two-stage log-ratio t (Stein)",
            Method::Welch => "95% log-ratio Welch t",
            Method::Forks => {
                "forks, each on a fresh work area: 95% log-ratio t over the forks' means"
            }
            Method::TwoStageForks => {
                "forks, each on a fresh work area: 95% two-stage log-ratio t over the forks' \
                 means (Stein)"
            }
            Method::Pooled => {
                "this run's forks pooled with the earlier runs of this experiment on this host: \
                 95% random-effects interval over the runs (Hartung–Knapp), covering the drift \
                 between runs"
            }
            Method::RatioOfRatios => {
                "ratio to the baseline cell in each run, the two runs' ratios over each other: \
                 t with both runs' interval variances (Welch–Satterthwaite), at 95% over all \
                 cells compared (Bonferroni)"
            }
        }
    }
}

/// The ratio of a cell's time to the baseline's, with its interval, method and verdict.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Ratio {
    /// The cell's time over the baseline's: below 1 is faster.
    pub ratio: f64,
    /// 95% interval of the ratio; `None` with fewer than two runs on either side.
    pub ci: Option<Interval>,
    /// What the interval says.
    pub verdict: Verdict,
    /// Which interval this is.
    pub method: Method,
    /// The equivalence margin the verdict used.
    pub margin: Margin,
    /// Degrees of freedom of the interval's t quantile (`n − 1` paired, `n₀ − 1` two-stage,
    /// Welch–Satterthwaite), which the pooling across runs ([`crate::analysis::between`]) needs
    /// to turn the interval back into a variance. Not written to results: it is recomputed.
    #[serde(skip)]
    pub df: Option<f64>,
    /// For a [`Method::Pooled`] ratio: the runs pooled (this one included) and the drift
    /// between them beyond their own intervals, τ on the log scale (`analysis::drift`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pooled: Option<PooledRuns>,
}

impl Ratio {
    /// The ratio of `cell` to `baseline`: paired over their rounds when `paired_order` (the
    /// benchmark ran interleaved), both come from one invocation and both ran the same rounds
    /// (at least two), in two stages when a precision target chose the count after a `pilot` of
    /// rounds; Welch otherwise. `None` without positive measured times on both sides.
    pub fn between(
        cell: &CellResult,
        baseline: &CellResult,
        paired_order: bool,
        pilot: Option<usize>,
        margin: Margin,
    ) -> Option<Ratio> {
        if let Some(forks) = paired_order.then(|| forks_of(cell, baseline)).flatten() {
            return Ratio::forked(&forks, pilot, margin);
        }
        let pairs = paired_order
            .then(|| rounds_of(cell, baseline))
            .flatten()
            .filter(|p| p.len() >= 2);
        match (pairs, pilot) {
            (Some(pairs), Some(n0)) if n0 >= 2 && pairs.len() >= n0 => {
                Ratio::two_stage(&pairs, n0, margin)
            }
            (Some(pairs), _) => Ratio::paired(&pairs, margin),
            (None, _) => {
                let c = Summary::of(&crate::analysis::metrics::elapsed_of(cell))?;
                let b = Summary::of(&crate::analysis::metrics::elapsed_of(baseline))?;
                Ratio::welch(&c, &b, margin)
            }
        }
    }

    /// The paired ratio over `(cell, baseline)` times of the same rounds; `None` when a time is
    /// not positive.
    pub fn paired(pairs: &[(f64, f64)], margin: Margin) -> Option<Ratio> {
        if pairs.is_empty()
            || pairs
                .iter()
                .any(|&(c, b)| c <= 0.0 || b <= 0.0 || !c.is_finite())
        {
            return None;
        }
        let logs: Vec<f64> = pairs.iter().map(|&(c, b)| (c / b).ln()).collect();
        let n = logs.len();
        let mean = logs.iter().sum::<f64>() / n as f64;
        let ci = (n >= 2).then(|| {
            let ss: f64 = logs.iter().map(|d| (d - mean).powi(2)).sum();
            let se = (ss / (n - 1) as f64).sqrt() / (n as f64).sqrt();
            let half = if se == 0.0 {
                0.0
            } else {
                t_quantile(0.5 + CONFIDENCE / 2.0, (n - 1) as f64) * se
            };
            Interval {
                low: (mean - half).exp(),
                high: (mean + half).exp(),
            }
        });
        let mut r = Ratio::judge(mean.exp(), ci, Method::Paired, margin);
        r.df = (n >= 2).then(|| (n - 1) as f64);
        Some(r)
    }

    /// Stein's two-stage ratio over `pairs` in round order: the centre from every round, the
    /// spread from the first `pilot` (at least 2) only.
    pub fn two_stage(pairs: &[(f64, f64)], pilot: usize, margin: Margin) -> Option<Ratio> {
        let pilot = pilot.clamp(2, pairs.len().max(2));
        let all = Ratio::paired(pairs, margin)?;
        let first = Ratio::paired(&pairs[..pilot.min(pairs.len())], margin)?;
        let (Some(first_ci), true) = (first.ci, pairs.len() >= pilot) else {
            return Some(all);
        };
        // The pilot's half-width on the log scale is t(n₀-1) · s₀ / √n₀; rescale it to √N.
        let half = (first_ci.high / first.ratio).ln() * (pilot as f64 / pairs.len() as f64).sqrt();
        let centre = all.ratio.ln();
        let ci = Interval {
            low: (centre - half).exp(),
            high: (centre + half).exp(),
        };
        let mut r = Ratio::judge(all.ratio, Some(ci), Method::TwoStage, margin);
        r.df = Some((pilot - 1) as f64);
        Some(r)
    }

    /// The ratio over forks: `forks` holds each fork's `(cell, baseline)` times of the same
    /// rounds, in fork order. Each fork's mean log-ratio is one observation; the interval is
    /// their t interval, with the spread of the first `pilot` forks where a precision target
    /// chose the count after them (Stein's two stages), of all forks otherwise. `None` when a
    /// time is not positive or a fork has no round.
    pub fn forked(
        forks: &[Vec<(f64, f64)>],
        pilot: Option<usize>,
        margin: Margin,
    ) -> Option<Ratio> {
        let means = fork_means(forks)?;
        let f = means.len();
        let centre = means.iter().sum::<f64>() / f as f64;
        let (spread_of, method) = match pilot {
            Some(p) if p >= 2 && f >= p => (&means[..p], Method::TwoStageForks),
            _ => (&means[..], Method::Forks),
        };
        let ci = (spread_of.len() >= 2).then(|| {
            let half = t_half(spread_of, f);
            Interval {
                low: (centre - half).exp(),
                high: (centre + half).exp(),
            }
        });
        let mut r = Ratio::judge(centre.exp(), ci, method, margin);
        r.df = ci.map(|_| (spread_of.len() - 1) as f64);
        Some(r)
    }

    /// `current / earlier`, two ratios of one cell to its baseline measured in two invocations:
    /// on the log scale the difference of the two, its variance the sum of each interval's
    /// (`se = ln(high / low) / (2 t(0.975, df))`: the forks' spread within each run, not the
    /// drift between the two invocations, which [`Ratio::of_ratios_drifting`] adds), with
    /// Welch–Satterthwaite degrees of freedom. The machines cancel: each ratio
    /// is of two cells measured on one. No interval when either side has none.
    pub fn of_ratios(current: &Ratio, earlier: &Ratio, margin: Margin) -> Option<Ratio> {
        Ratio::of_ratios_at(current, earlier, margin, CONFIDENCE)
    }

    /// [`Ratio::of_ratios`] with its interval at `confidence` (each side's standard error still
    /// read from its own 95% interval): `compare` asks for `1 − 0.05 / k` over its `k` cells, so
    /// that the chance of any false faster or slower among them stays within 5% (Bonferroni).
    pub fn of_ratios_at(
        current: &Ratio,
        earlier: &Ratio,
        margin: Margin,
        confidence: f64,
    ) -> Option<Ratio> {
        Ratio::of_ratios_drifting(current, earlier, margin, confidence, 0.0)
    }

    /// [`Ratio::of_ratios_at`] with the drift between the two invocations in the variance: `tau2`
    /// (τ² on the log scale) for each side, `2τ²` in all, taken as known (it adds nothing to the
    /// Welch–Satterthwaite denominator).
    pub fn of_ratios_drifting(
        current: &Ratio,
        earlier: &Ratio,
        margin: Margin,
        confidence: f64,
        tau2: f64,
    ) -> Option<Ratio> {
        if !(current.ratio > 0.0 && earlier.ratio > 0.0) {
            return None;
        }
        let se = |r: &Ratio| {
            let (ci, df) = (r.ci?, r.df?);
            let q = t_quantile(0.5 + CONFIDENCE / 2.0, df);
            Some(((ci.high / ci.low).ln() / (2.0 * q), df))
        };
        let ratio = current.ratio / earlier.ratio;
        let (ci, df) = match (se(current), se(earlier)) {
            (Some((a, da)), Some((b, db))) => {
                let (va, vb) = (a * a, b * b);
                let var = va + vb + 2.0 * tau2;
                let df = if va + vb == 0.0 {
                    da + db
                } else {
                    var * var / (va * va / da + vb * vb / db)
                };
                let half = if var == 0.0 {
                    0.0
                } else {
                    t_quantile(0.5 + confidence / 2.0, df) * var.sqrt()
                };
                let centre = ratio.ln();
                (
                    Some(Interval {
                        low: (centre - half).exp(),
                        high: (centre + half).exp(),
                    }),
                    Some(df),
                )
            }
            _ => (None, None),
        };
        let mut r = Ratio::judge(ratio, ci, Method::RatioOfRatios, margin);
        r.df = df;
        Some(r)
    }

    /// The Welch ratio of the two samples' means; `None` when either mean is not positive.
    pub fn welch(cell: &Summary, baseline: &Summary, margin: Margin) -> Option<Ratio> {
        if cell.mean <= 0.0 || baseline.mean <= 0.0 {
            return None;
        }
        let ratio = cell.mean / baseline.mean;
        let ci = match (cell.sd, baseline.sd) {
            (Some(sd_c), Some(sd_b)) => Some(log_ratio_interval(
                ratio,
                squared_cv_of_mean(sd_c, cell),
                squared_cv_of_mean(sd_b, baseline),
                cell.n,
                baseline.n,
            )),
            _ => None,
        };
        let mut r = Ratio::judge(ratio, ci.map(|c| c.0), Method::Welch, margin);
        r.df = ci.map(|c| c.1);
        Some(r)
    }

    /// A ratio with interval `ci` made by `method`, its verdict judged on `ci` and `margin`.
    pub fn judged_interval(
        ratio: f64,
        ci: Option<Interval>,
        method: Method,
        margin: Margin,
    ) -> Ratio {
        Ratio::judge(ratio, ci, method, margin)
    }

    fn judge(ratio: f64, ci: Option<Interval>, method: Method, margin: Margin) -> Ratio {
        let verdict = match ci {
            None => Verdict::TooFewRuns,
            Some(ci) if ci.high < 1.0 => Verdict::Faster,
            Some(ci) if ci.low > 1.0 => Verdict::Slower,
            Some(ci) if ci.low >= 1.0 - margin.0 && ci.high <= 1.0 + margin.0 => {
                Verdict::Equivalent
            }
            Some(_) => Verdict::Imprecise,
        };
        Ratio {
            ratio,
            ci,
            verdict,
            method,
            margin,
            df: None,
            pooled: None,
        }
    }

    /// How far the interval reaches from the ratio, as a fraction of it: `max(high / r − 1,
    /// 1 − low / r)`, 0.05 for "±5%". `None` without an interval. A precision target stops on
    /// this width, never on the verdict.
    pub fn relative_half_width(&self) -> Option<f64> {
        self.ci
            .map(|ci| (ci.high / self.ratio - 1.0).max(1.0 - ci.low / self.ratio))
    }

    /// The verdict in words, with what it rests on: "faster", "equivalent (within ±10%)",
    /// "inconclusive: [0.88, 1.15] is wider than ±10%", or the overruling verdict's sentence.
    pub fn verdict_text(&self) -> String {
        match (self.verdict, self.ci) {
            (Verdict::Equivalent, _) => format!("equivalent (within {})", self.margin.describe()),
            (Verdict::Imprecise, Some(ci)) => format!(
                "inconclusive: [{:.2}, {:.2}] is wider than {}",
                ci.low,
                ci.high,
                self.margin.describe()
            ),
            (v, _) => v.describe(),
        }
    }

    /// The ratio with its verdict overruled where the runs cannot carry one: not comparable when
    /// `comparable` says why not, inconclusive when `busy` counts disturbed runs. The ratio and
    /// its interval stay, for the reader.
    pub fn judged(
        mut self,
        busy: crate::model::interference::Busy,
        comparable: &std::result::Result<(), String>,
    ) -> Ratio {
        if self.verdict == Verdict::Baseline {
            return self;
        }
        if comparable.is_err() {
            self.verdict = Verdict::NotComparable;
        } else if busy.any() {
            self.verdict = Verdict::Inconclusive {
                disturbed: busy.disturbed,
                runs: busy.runs,
            };
        }
        self
    }

    /// The ratio of the baseline to itself.
    pub fn baseline() -> Ratio {
        Ratio {
            ratio: 1.0,
            ci: None,
            verdict: Verdict::Baseline,
            method: Method::Paired,
            margin: Margin::DEFAULT,
            df: None,
            pooled: None,
        }
    }
}

/// `t(0.975, m − 1) · sd(xs) / √n` for the `m` values `xs`: the half-width of a t interval whose
/// spread comes from `xs` and whose mean is over `n` values.
fn t_half(xs: &[f64], n: usize) -> f64 {
    let m = xs.len();
    let mean = xs.iter().sum::<f64>() / m as f64;
    let var = xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (m - 1) as f64;
    if var == 0.0 {
        return 0.0;
    }
    t_quantile(0.5 + CONFIDENCE / 2.0, (m - 1) as f64) * (var / n as f64).sqrt()
}

/// `s² / (n · m²)`: the variance of the log of the mean by the delta method.
fn squared_cv_of_mean(sd: f64, s: &Summary) -> f64 {
    sd * sd / (s.n as f64 * s.mean * s.mean)
}

/// The interval and its Welch–Satterthwaite degrees of freedom.
fn log_ratio_interval(ratio: f64, a: f64, b: f64, n_a: usize, n_b: usize) -> (Interval, f64) {
    let var = a + b;
    if var == 0.0 {
        // Both samples are constant: the ratio is known exactly.
        let df = (n_a + n_b - 2) as f64;
        return (
            Interval {
                low: ratio,
                high: ratio,
            },
            df,
        );
    }
    let df = var * var / (a * a / (n_a - 1) as f64 + b * b / (n_b - 1) as f64);
    let half = t_quantile(0.5 + CONFIDENCE / 2.0, df) * var.sqrt();
    (
        Interval {
            low: (ratio.ln() - half).exp(),
            high: (ratio.ln() + half).exp(),
        },
        df,
    )
}

#[cfg(test)]
mod tests;
