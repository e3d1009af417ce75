//! A cell's time relative to the baseline cell's: the ratio of means, its 95% interval and a
//! verdict.
//!
//! # Method: log-ratio Welch t-interval
//!
//! The ratio `r = mean(cell) / mean(baseline)` is estimated on the log scale, where a ratio
//! becomes a difference and its sampling distribution is close to symmetric. By the delta method
//! the standard error of `ln r` is
//!
//! ```text
//! se = sqrt( s_c² / (n_c · m_c²)  +  s_b² / (n_b · m_b²) )
//! ```
//!
//! (the squared coefficients of variation of the two means), with Welch–Satterthwaite degrees of
//! freedom because the two cells need not have the same variance. The interval is
//! `exp(ln r ± t(0.975, df) · se)`, so it is never negative and is symmetric in `ln r`: cell A
//! being 2× slower than B has the mirrored interval of B being 2× faster than A. Fieller's
//! interval is equivalent for small coefficients of variation but can become unbounded; the
//! bootstrap of the ratio needs more runs than a storage benchmark usually has.
//!
//! The verdict is "faster" when the whole interval lies below 1, "slower" when it lies above 1,
//! and "no significant difference" when it contains 1. With fewer than two runs on either side
//! there is no interval and the verdict says so.

use crate::analysis::stats::{t_quantile, Interval, Summary, CONFIDENCE};
use serde::{Deserialize, Serialize};

/// How a cell's elapsed time compares with the baseline's.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// The cell is significantly faster (the whole interval of the ratio is below 1).
    Faster,
    /// The cell is significantly slower (the whole interval is above 1).
    Slower,
    /// The interval contains 1: the difference is within the noise.
    NoSignificantDifference,
    /// One side has fewer than two runs, so there is no interval to judge by.
    TooFewRuns,
    /// This is the baseline itself.
    Baseline,
    /// Some runs on either side were measured while the machine was busy with other work
    /// ([`crate::model::interference`]): whatever the interval says, it may be the neighbours'.
    Inconclusive {
        /// Disturbed runs, both sides.
        disturbed: u32,
        /// Runs, both sides.
        runs: u32,
    },
    /// The two sides were measured on machines whose calibrations differ
    /// ([`crate::model::calibration`]): their times cannot be compared.
    NotComparable,
}

impl Verdict {
    /// The verdict in words, as tables show it.
    pub fn describe(&self) -> String {
        match self {
            Verdict::Faster => "faster".into(),
            Verdict::Slower => "slower".into(),
            Verdict::NoSignificantDifference => "no significant difference".into(),
            Verdict::TooFewRuns => "too few runs to judge".into(),
            Verdict::Baseline => "baseline".into(),
            Verdict::Inconclusive { disturbed, runs } => crate::model::interference::Busy {
                disturbed: *disturbed,
                runs: *runs,
            }
            .inconclusive(),
            Verdict::NotComparable => "not comparable".into(),
        }
    }
}

/// The ratio of a cell's mean to the baseline's, with its interval and verdict.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Ratio {
    /// `mean(cell) / mean(baseline)`: below 1 is faster.
    pub ratio: f64,
    /// 95% interval of the ratio; `None` with fewer than two runs on either side.
    pub ci: Option<Interval>,
    /// What the interval says.
    pub verdict: Verdict,
}

impl Ratio {
    /// Compares `cell` with `baseline`; `None` when either mean is not positive (a ratio of times
    /// needs positive times).
    pub fn of(cell: &Summary, baseline: &Summary) -> Option<Ratio> {
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
        let verdict = match ci {
            None => Verdict::TooFewRuns,
            Some(ci) if ci.high < 1.0 => Verdict::Faster,
            Some(ci) if ci.low > 1.0 => Verdict::Slower,
            Some(_) => Verdict::NoSignificantDifference,
        };
        Some(Ratio { ratio, ci, verdict })
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
        }
    }
}

/// `s² / (n · m²)`: the variance of the log of the mean by the delta method.
fn squared_cv_of_mean(sd: f64, s: &Summary) -> f64 {
    sd * sd / (s.n as f64 * s.mean * s.mean)
}

fn log_ratio_interval(ratio: f64, a: f64, b: f64, n_a: usize, n_b: usize) -> Interval {
    let var = a + b;
    if var == 0.0 {
        // Both samples are constant: the ratio is known exactly.
        return Interval {
            low: ratio,
            high: ratio,
        };
    }
    let df = var * var / (a * a / (n_a - 1) as f64 + b * b / (n_b - 1) as f64);
    let half = t_quantile(0.5 + CONFIDENCE / 2.0, df) * var.sqrt();
    Interval {
        low: (ratio.ln() - half).exp(),
        high: (ratio.ln() + half).exp(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ratio(cell: &[f64], baseline: &[f64]) -> Ratio {
        Ratio::of(&Summary::of(cell).unwrap(), &Summary::of(baseline).unwrap()).unwrap()
    }

    #[test]
    fn doubled_time_with_equal_cv_has_the_textbook_interval() {
        // Equal squared CVs of the means and n = 3 on both sides give Welch df = 2(n-1) = 4, so
        // the interval is exp(ln 2 ± 2.7764451 · sqrt(1/300 + 4/1200)).
        let r = ratio(&[18.0, 20.0, 22.0], &[9.0, 10.0, 11.0]);
        assert!((r.ratio - 2.0).abs() < 1e-12);
        let ci = r.ci.unwrap();
        assert!((ci.low - 1.594_326_5).abs() < 1e-6, "{ci:?}");
        assert!((ci.high - 2.508_896_4).abs() < 1e-6, "{ci:?}");
        assert_eq!(r.verdict, Verdict::Slower);
    }

    #[test]
    fn the_interval_is_mirrored_when_the_roles_swap() {
        let ab = ratio(&[18.0, 20.0, 22.0], &[9.0, 10.0, 11.0]);
        let ba = ratio(&[9.0, 10.0, 11.0], &[18.0, 20.0, 22.0]);
        let (ab, ba) = (ab.ci.unwrap(), ba.ci.unwrap());
        assert!((ab.low * ba.high - 1.0).abs() < 1e-12);
        assert!((ab.high * ba.low - 1.0).abs() < 1e-12);
        assert_eq!(
            ratio(&[9.0, 10.0, 11.0], &[18.0, 20.0, 22.0]).verdict,
            Verdict::Faster
        );
    }

    #[test]
    fn overlapping_noise_is_no_significant_difference() {
        let r = ratio(&[11.0, 9.0, 10.5], &[10.0, 12.0, 8.0]);
        assert_eq!(r.verdict, Verdict::NoSignificantDifference);
        assert!(r.ci.unwrap().contains(1.0));
    }

    #[test]
    fn constant_samples_give_an_exact_ratio() {
        let r = ratio(&[5.0, 5.0], &[10.0, 10.0]);
        assert_eq!(
            r.ci,
            Some(Interval {
                low: 0.5,
                high: 0.5
            })
        );
        assert_eq!(r.verdict, Verdict::Faster);
    }

    #[test]
    fn a_single_run_cannot_be_judged() {
        let r = ratio(&[5.0], &[10.0, 11.0]);
        assert_eq!(r.ci, None);
        assert_eq!(r.verdict, Verdict::TooFewRuns);
        assert!((r.ratio - 5.0 / 10.5).abs() < 1e-12);
    }

    #[test]
    fn non_positive_means_have_no_ratio() {
        let zero = Summary::of(&[0.0, 0.0]).unwrap();
        let one = Summary::of(&[1.0, 1.0]).unwrap();
        assert!(Ratio::of(&one, &zero).is_none());
        assert!(Ratio::of(&zero, &one).is_none());
    }
}
