//! Where the variance of a ratio lives: Kalibera and Jones's dimensioning experiment (*Rigorous
//! Benchmarking in Reasonable Time*, ISMM 2013) over several invocations of the same experiment,
//! each of several forks of several rounds. A nested (hierarchical) analysis of variance of the
//! rounds' log-ratios `d` gives three components:
//!
//! - `σ²`, between rounds within a fork: `MS_within`;
//! - `τ_f²`, between forks within an invocation: `(MS_fork − MS_within) / R`;
//! - `τ_i²`, between invocations beyond their forks: `(MS_inv − MS_fork) / (F · R)`
//!
//! (method-of-moments estimates, not below 0; `R` rounds per fork and `F` forks per invocation,
//! their means where unequal). `F = MS_inv / MS_fork` tests whether invocations differ more than
//! their forks say: where they do not, forks capture the invocation effect and the interval over
//! forks covers it; where they do, a part remains (drift over hours) that only the store's
//! history of earlier runs shows (`analysis::between`).

use crate::analysis::ratio::forks_of;
use crate::model::results::{BenchmarkResult, CellStatus};
use statrs::distribution::{ContinuousCDF, FisherSnedecor};

/// One ratio's components over invocations.
#[derive(Debug, Clone, PartialEq)]
pub struct Components {
    /// The compared cell.
    pub cell: String,
    /// Invocations that had it.
    pub invocations: usize,
    /// Forks per invocation, on average.
    pub forks: f64,
    /// Rounds per fork, on average.
    pub rounds: f64,
    /// σ: a round's log-ratio within its fork.
    pub within_fork: f64,
    /// τ_f: between forks of one invocation.
    pub between_forks: f64,
    /// τ_i: between invocations beyond their forks.
    pub between_invocations: f64,
    /// `MS_inv / MS_fork`, its degrees of freedom, and the chance of one as large where
    /// invocations differ only as their forks do.
    pub f_test: Option<(f64, f64, f64, f64)>,
    /// The cell's and the baseline's windows over those invocations, and how many of them the
    /// busy-machine guard found disturbed (other work inflates every component).
    pub busy: crate::model::interference::Busy,
}

impl Components {
    /// The components of every compared cell's ratio over `runs` (invocations of one experiment),
    /// each cell against `baseline`; a cell needs two invocations with two forks of two rounds.
    pub fn of(runs: &[BenchmarkResult], baseline: &str) -> Vec<Components> {
        let Some(first) = runs.first() else {
            return Vec::new();
        };
        first
            .cells
            .iter()
            .filter(|c| c.name != baseline && c.status == CellStatus::Ok)
            .filter_map(|c| {
                let mut busy = crate::model::interference::Busy::default();
                let data: Vec<Vec<Vec<f64>>> = runs
                    .iter()
                    .filter_map(|r| {
                        let base = r.cells.iter().find(|x| x.name == baseline)?;
                        let cell = r.cells.iter().find(|x| x.name == c.name)?;
                        let forks = forks_of(cell, base)?;
                        busy = busy
                            .plus(crate::model::interference::Busy::of(cell.measured()))
                            .plus(crate::model::interference::Busy::of(base.measured()));
                        Some(
                            forks
                                .iter()
                                .map(|f| f.iter().map(|&(a, b)| (a / b).ln()).collect())
                                .collect(),
                        )
                    })
                    .collect();
                Components::nested(&c.name, &data).map(|n| Components { busy, ..n })
            })
            .collect()
    }

    /// The nested analysis of `data[invocation][fork][round]`.
    pub fn nested(cell: &str, data: &[Vec<Vec<f64>>]) -> Option<Components> {
        let mean = |xs: &[f64]| xs.iter().sum::<f64>() / xs.len() as f64;
        let usable: Vec<&Vec<Vec<f64>>> = data
            .iter()
            .filter(|i| i.len() >= 2 && i.iter().all(|f| !f.is_empty()))
            .collect();
        let all: Vec<f64> = usable
            .iter()
            .flat_map(|i| i.iter().flatten())
            .copied()
            .collect();
        if usable.len() < 2 || all.iter().any(|d| !d.is_finite()) {
            return None;
        }
        let grand = mean(&all);
        let (mut ss_w, mut df_w, mut ss_f, mut df_f, mut ss_i) = (0.0, 0.0, 0.0, 0.0, 0.0);
        let (mut forks, mut rounds) = (0usize, 0usize);
        for inv in &usable {
            let flat: Vec<f64> = inv.iter().flatten().copied().collect();
            let m_i = mean(&flat);
            ss_i += flat.len() as f64 * (m_i - grand).powi(2);
            df_f += (inv.len() - 1) as f64;
            forks += inv.len();
            for fork in inv.iter() {
                let m_f = mean(fork);
                ss_w += fork.iter().map(|d| (d - m_f).powi(2)).sum::<f64>();
                df_w += (fork.len() - 1) as f64;
                ss_f += fork.len() as f64 * (m_f - m_i).powi(2);
                rounds += fork.len();
            }
        }
        let invocations = usable.len();
        let df_i = (invocations - 1) as f64;
        if df_w == 0.0 {
            return None;
        }
        let (ms_w, ms_f, ms_i) = (ss_w / df_w, ss_f / df_f, ss_i / df_i);
        let per_fork = rounds as f64 / forks as f64;
        let per_inv = forks as f64 / invocations as f64;
        let f_test = (ms_f > 0.0).then(|| {
            let f = ms_i / ms_f;
            let p = FisherSnedecor::new(df_i, df_f).map_or(f64::NAN, |d| 1.0 - d.cdf(f));
            (f, df_i, df_f, p)
        });
        Some(Components {
            cell: cell.to_string(),
            invocations,
            forks: per_inv,
            rounds: per_fork,
            within_fork: ms_w.sqrt(),
            between_forks: ((ms_f - ms_w) / per_fork).max(0.0).sqrt(),
            between_invocations: ((ms_i - ms_f) / (per_inv * per_fork)).max(0.0).sqrt(),
            f_test,
            busy: Default::default(),
        })
    }

    /// "test_3: σ 0.090 between rounds of a fork, τ 0.041 between forks, 0.012 between
    /// invocations beyond their forks (F = 1.30 on 7 and 16 df, p = 0.29: forks capture the
    /// invocation effect)".
    pub fn line(&self) -> String {
        let test = match self.f_test {
            Some((f, d1, d2, p)) => format!(
                " (F = {f:.2} on {d1:.0} and {d2:.0} df, p = {p:.3}: {})",
                if p < 0.05 {
                    "invocations differ beyond their forks, a part the forks do not capture"
                } else {
                    "no difference between invocations beyond their forks"
                }
            ),
            None => String::new(),
        };
        format!(
            "{}: σ {:.3} between rounds of a fork, τ {:.3} between forks, {:.3} between \
             invocations beyond their forks{test} — {} invocations × {:.1} forks × {:.1} rounds{}",
            self.cell,
            self.within_fork,
            self.between_forks,
            self.between_invocations,
            self.invocations,
            self.forks,
            self.rounds,
            if self.busy.any() {
                format!(
                    "; {} of {} windows disturbed by other work",
                    self.busy.disturbed, self.busy.runs
                )
            } else {
                String::new()
            }
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn normal(rng: &mut fastrand::Rng) -> f64 {
        let (u, v) = (1.0 - rng.f64(), rng.f64());
        (-2.0 * u.ln()).sqrt() * (2.0 * std::f64::consts::PI * v).cos()
    }

    /// `i` invocations × `f` forks × `r` rounds with components `(σ, τ_f, τ_i)`.
    fn draw(
        seed: u64,
        (i, f, r): (usize, usize, usize),
        (s, tf, ti): (f64, f64, f64),
    ) -> Vec<Vec<Vec<f64>>> {
        let mut rng = fastrand::Rng::with_seed(seed);
        (0..i)
            .map(|_| {
                let u = ti * normal(&mut rng);
                (0..f)
                    .map(|_| {
                        let v = tf * normal(&mut rng);
                        (0..r).map(|_| u + v + s * normal(&mut rng)).collect()
                    })
                    .collect()
            })
            .collect()
    }

    #[test]
    fn a_balanced_design_by_hand() {
        // Two invocations of two forks of two rounds.
        let data = vec![
            vec![vec![0.0, 0.2], vec![0.4, 0.6]],
            vec![vec![1.0, 1.2], vec![1.4, 1.6]],
        ];
        let c = Components::nested("c", &data).unwrap();
        // MS_w = 4·0.02/4 = 0.02; MS_f = 2·4·0.04/2 = 0.16; MS_i = 4·2·0.25/1 = 2.
        assert!((c.within_fork - 0.02f64.sqrt()).abs() < 1e-12);
        assert!((c.between_forks - ((0.16 - 0.02) / 2.0f64).sqrt()).abs() < 1e-12);
        assert!((c.between_invocations - ((2.0 - 0.16) / 4.0f64).sqrt()).abs() < 1e-12);
        let (f, d1, d2, _) = c.f_test.unwrap();
        assert!((f - 12.5).abs() < 1e-9, "{f}");
        assert_eq!((d1, d2), (1.0, 2.0));
    }

    #[test]
    fn the_components_are_recovered_and_the_test_tells_them_apart() {
        // Forks capture everything: τ_i = 0.
        let (mut captured, mut remains) = (0, 0);
        for seed in 0..200 {
            let none = Components::nested("c", &draw(seed, (8, 3, 2), (0.15, 0.05, 0.0))).unwrap();
            captured += usize::from(none.f_test.unwrap().3 < 0.05);
            let some =
                Components::nested("c", &draw(seed + 1000, (8, 3, 2), (0.05, 0.02, 0.10))).unwrap();
            remains += usize::from(some.f_test.unwrap().3 < 0.05);
        }
        // The test's size about 5%, and its power against τ_i = 0.10 high.
        assert!(captured <= 20, "{captured} of 200 false alarms");
        assert!(remains >= 150, "found in only {remains} of 200");
        let big = Components::nested("c", &draw(7, (40, 6, 4), (0.15, 0.05, 0.03))).unwrap();
        assert!((big.within_fork - 0.15).abs() < 0.01, "{big:?}");
        assert!((big.between_forks - 0.05).abs() < 0.015, "{big:?}");
        assert!((big.between_invocations - 0.03).abs() < 0.02, "{big:?}");
        assert!(big.line().starts_with("c: σ 0.1"), "{}", big.line());
    }
}
