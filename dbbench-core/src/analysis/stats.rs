//! Descriptive statistics of repeated measurements and their confidence intervals.
//!
//! Benchmarks of storage configurations run few, long repetitions (3 to 10 is typical), so the
//! 95% interval of the mean uses Student's t with its exact quantile for `n - 1` degrees of freedom
//! rather than the normal approximation, which would be far too narrow for n = 3 (1.96 instead of
//! 4.30). A percentile bootstrap interval is added once there are enough runs for resampling to
//! mean something ([`BOOTSTRAP_MIN_N`]); its seed is fixed so a report is reproducible.

use serde::{Deserialize, Serialize};
use statrs::distribution::{ContinuousCDF, Normal, StudentsT};

/// Confidence level of every interval dbbench reports.
pub const CONFIDENCE: f64 = 0.95;

/// Fewest runs for which a bootstrap interval is computed: below this the resamples take too few
/// distinct values for their percentiles to be an interval worth showing.
pub const BOOTSTRAP_MIN_N: usize = 8;

/// Resamples drawn for a bootstrap interval.
pub const BOOTSTRAP_RESAMPLES: usize = 4000;

/// Seed of the bootstrap's generator: the same data always gives the same interval.
pub const BOOTSTRAP_SEED: u64 = 0x6462_6265_6e63_6821;

/// A closed interval `[low, high]`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Interval {
    /// Lower bound.
    pub low: f64,
    /// Upper bound.
    pub high: f64,
}

impl Interval {
    /// Half the width, the `±` of `mean ± half_width`.
    pub fn half_width(&self) -> f64 {
        (self.high - self.low) / 2.0
    }

    /// Whether `x` lies in the interval.
    pub fn contains(&self, x: f64) -> bool {
        self.low <= x && x <= self.high
    }

    /// Whether the two intervals share at least one point.
    pub fn overlaps(&self, other: &Interval) -> bool {
        self.low <= other.high && other.low <= self.high
    }
}

/// Descriptive statistics of a sample of measurements.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    /// Number of values.
    pub n: usize,
    /// Arithmetic mean.
    pub mean: f64,
    /// Median (mean of the middle two for even n).
    pub median: f64,
    /// Smallest value.
    pub min: f64,
    /// Largest value.
    pub max: f64,
    /// Sample standard deviation (n - 1 in the denominator); `None` for a single value.
    pub sd: Option<f64>,
    /// Coefficient of variation, `sd / mean`; `None` without `sd` or for a zero mean.
    pub cv: Option<f64>,
    /// 95% interval of the mean from Student's t; `None` for a single value.
    pub ci: Option<Interval>,
    /// 95% percentile-bootstrap interval of the mean; `None` below [`BOOTSTRAP_MIN_N`] values.
    pub bootstrap_ci: Option<Interval>,
}

impl Summary {
    /// The statistics of `values`; `None` when there are none or one is not finite.
    pub fn of(values: &[f64]) -> Option<Summary> {
        if values.is_empty() || values.iter().any(|v| !v.is_finite()) {
            return None;
        }
        let n = values.len();
        let mut sorted = values.to_vec();
        sorted.sort_by(f64::total_cmp);
        let mean = mean(values);
        let median = if n % 2 == 1 {
            sorted[n / 2]
        } else {
            (sorted[n / 2 - 1] + sorted[n / 2]) / 2.0
        };
        let sd = (n >= 2).then(|| {
            let ss: f64 = values.iter().map(|v| (v - mean).powi(2)).sum();
            (ss / (n - 1) as f64).sqrt()
        });
        let cv = sd.filter(|_| mean != 0.0).map(|sd| sd / mean.abs());
        let ci = sd.map(|sd| {
            let half = t_quantile(0.5 + CONFIDENCE / 2.0, (n - 1) as f64) * sd / (n as f64).sqrt();
            Interval {
                low: mean - half,
                high: mean + half,
            }
        });
        let bootstrap_ci = (n >= BOOTSTRAP_MIN_N).then(|| bootstrap_mean_ci(values));
        Some(Summary {
            n,
            mean,
            median,
            min: sorted[0],
            max: sorted[n - 1],
            sd,
            cv,
            ci,
            bootstrap_ci,
        })
    }
}

/// The arithmetic mean of a non-empty slice.
fn mean(values: &[f64]) -> f64 {
    values.iter().sum::<f64>() / values.len() as f64
}

/// Percentile bootstrap interval of the mean with [`BOOTSTRAP_RESAMPLES`] resamples.
fn bootstrap_mean_ci(values: &[f64]) -> Interval {
    let mut rng = fastrand::Rng::with_seed(BOOTSTRAP_SEED);
    let n = values.len();
    let mut means: Vec<f64> = (0..BOOTSTRAP_RESAMPLES)
        .map(|_| (0..n).map(|_| values[rng.usize(..n)]).sum::<f64>() / n as f64)
        .collect();
    means.sort_by(f64::total_cmp);
    let tail = (1.0 - CONFIDENCE) / 2.0;
    Interval {
        low: percentile(&means, tail),
        high: percentile(&means, 1.0 - tail),
    }
}

/// The `p` quantile of sorted values with linear interpolation between order statistics.
fn percentile(sorted: &[f64], p: f64) -> f64 {
    let pos = p * (sorted.len() - 1) as f64;
    let below = pos.floor() as usize;
    let above = pos.ceil() as usize;
    sorted[below] + (sorted[above] - sorted[below]) * (pos - below as f64)
}

/// The `p` quantile of Student's t distribution with `df` degrees of freedom (`df` may be
/// fractional, as Welch's approximation gives), from `statrs`.
///
/// Above [`NORMAL_DF`] degrees of freedom the normal quantile is used: it differs from t's by less
/// than 2e-5 there, and statrs' t inversion loses accuracy for huge `df` (1.83 instead of 1.96
/// at 10⁷).
pub fn t_quantile(p: f64, df: f64) -> f64 {
    assert!(p > 0.0 && p < 1.0, "t quantile of p = {p}");
    assert!(df > 0.0, "t quantile with {df} degrees of freedom");
    if df > NORMAL_DF {
        return Normal::standard().inverse_cdf(p);
    }
    let t = StudentsT::new(0.0, 1.0, df).expect("df > 0 was checked");
    t.inverse_cdf(p)
}

/// Degrees of freedom above which t is replaced by the normal distribution.
const NORMAL_DF: f64 = 1e5;

#[cfg(test)]
mod tests {
    use super::*;

    fn close(actual: f64, expected: f64, tolerance: f64) {
        assert!(
            (actual - expected).abs() <= tolerance,
            "{actual} is not within {tolerance} of {expected}"
        );
    }

    #[test]
    fn t_quantiles_match_published_tables() {
        // Two-sided 95% (p = 0.975), as in every t table.
        for (df, expected) in [
            (1.0, 12.706_204_7),
            (2.0, 4.302_652_7),
            (3.0, 3.182_446_3),
            (4.0, 2.776_445_1),
            (5.0, 2.570_581_8),
            (9.0, 2.262_157_2),
            (10.0, 2.228_138_9),
            (30.0, 2.042_272_5),
            (100.0, 1.983_971_5),
        ] {
            close(t_quantile(0.975, df), expected, 1e-6);
        }
        close(t_quantile(0.95, 5.0), 2.015_048_4, 1e-6);
        close(t_quantile(0.995, 3.0), 5.840_909_3, 1e-6);
        close(t_quantile(0.025, 4.0), -2.776_445_1, 1e-6);
        // Large df approaches the normal quantile.
        close(t_quantile(0.975, 1000.0), 1.962_339_1, 1e-6);
        close(t_quantile(0.975, 5e4), 1.960_011, 2e-5);
        close(t_quantile(0.975, 1e7), 1.959_964_0, 1e-5);
    }

    #[test]
    fn fractional_degrees_of_freedom_lie_between_their_neighbours() {
        // Welch's df is rarely whole: its quantile falls between those of the whole numbers.
        let q = t_quantile(0.975, 4.5);
        assert!(
            t_quantile(0.975, 5.0) < q && q < t_quantile(0.975, 4.0),
            "{q}"
        );
    }

    #[test]
    fn summary_of_one_to_five() {
        let s = Summary::of(&[3.0, 1.0, 5.0, 2.0, 4.0]).unwrap();
        assert_eq!(s.n, 5);
        close(s.mean, 3.0, 1e-15);
        close(s.median, 3.0, 1e-15);
        assert_eq!((s.min, s.max), (1.0, 5.0));
        close(s.sd.unwrap(), 1.581_138_83, 1e-8);
        close(s.cv.unwrap(), 0.527_046_28, 1e-8);
        // 3 ± 2.7764451 · 1.5811388 / √5
        let ci = s.ci.unwrap();
        close(ci.low, 1.036_757_0, 1e-6);
        close(ci.high, 4.963_243_0, 1e-6);
        close(s.ci.unwrap().half_width(), 1.963_243_0, 1e-6);
        assert!(
            s.bootstrap_ci.is_none(),
            "5 values are too few to bootstrap"
        );
    }

    #[test]
    fn one_value_has_no_spread() {
        let s = Summary::of(&[7.5]).unwrap();
        assert_eq!((s.mean, s.median, s.min, s.max), (7.5, 7.5, 7.5, 7.5));
        assert_eq!((s.sd, s.cv, s.ci), (None, None, None));
    }

    #[test]
    fn even_count_median_is_the_middle_mean() {
        let s = Summary::of(&[4.0, 1.0, 3.0, 2.0]).unwrap();
        close(s.median, 2.5, 1e-15);
    }

    #[test]
    fn empty_or_non_finite_samples_have_no_summary() {
        assert!(Summary::of(&[]).is_none());
        assert!(Summary::of(&[1.0, f64::NAN]).is_none());
    }

    #[test]
    fn bootstrap_interval_is_reproducible_and_close_to_t() {
        let values = [10.1, 9.8, 10.4, 10.0, 9.7, 10.3, 10.2, 9.9, 10.0, 10.1];
        let a = Summary::of(&values).unwrap();
        let b = Summary::of(&values).unwrap();
        let boot = a.bootstrap_ci.unwrap();
        assert_eq!(Some(boot), b.bootstrap_ci, "fixed seed");
        assert!(boot.contains(a.mean));
        let t = a.ci.unwrap();
        // With symmetric data both intervals agree to within a third of the t half-width; the
        // percentile bootstrap is a little narrower for small n, as expected.
        close(boot.low, t.low, t.half_width() / 3.0);
        close(boot.high, t.high, t.half_width() / 3.0);
        assert!(boot.half_width() <= t.half_width());
    }

    #[test]
    fn intervals_overlap_and_contain() {
        let a = Interval {
            low: 1.0,
            high: 2.0,
        };
        let b = Interval {
            low: 2.0,
            high: 3.0,
        };
        let c = Interval {
            low: 2.5,
            high: 3.0,
        };
        assert!(a.overlaps(&b) && b.overlaps(&a));
        assert!(!a.overlaps(&c));
        assert!(a.contains(1.5) && !a.contains(2.5));
    }
}
