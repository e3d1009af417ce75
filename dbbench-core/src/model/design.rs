//! How a benchmark's rounds were spread over forks, and why: the rounds per fork that Kalibera
//! and Jones's allocation chose from the costs and variance components measured in the pilot
//! forks (*Rigorous Benchmarking in Reasonable Time*, ISMM 2013, §4; Cochran's two-stage
//! sampling). Recorded with the results, so a reader sees what the design rested on.
//!
//! With a round costing `c₁`, a fork's setup `c₂`, the within-fork variance of a round's
//! log-ratio `σ²` and the variance between forks `τ²`, the variance of the mean over `F` forks of
//! `n` rounds is `(τ² + σ²/n) / F` and a fork costs `c₂ + n·c₁`; their product is least at
//! `n* = √(c₂·σ² / (c₁·τ²))`.

use serde::{Deserialize, Serialize};

/// The forks a precision target ran and the allocation that sized them.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default)]
pub struct Design {
    /// Forks that ran.
    pub forks: u32,
    /// Measured rounds that ran, over all forks.
    pub rounds: u32,
    /// Rounds in each pilot fork.
    pub pilot_rounds_per_fork: u32,
    /// Rounds in each fork after the pilot.
    pub rounds_per_fork: u32,
    /// Seconds a round took that reused what its fork made (`c₁`), when measured.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub round_s: Option<f64>,
    /// Seconds a fork's setup took (`c₂`), when measured.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fork_setup_s: Option<f64>,
    /// The ratio whose components decided (the widest after the pilot).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cell: Option<String>,
    /// `σ`: the standard deviation of a round's log-ratio within a fork.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub within_fork_sd: Option<f64>,
    /// `τ`: the standard deviation of the log-ratio between forks, beyond what the rounds'
    /// spread explains (0 where the pilot showed none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub between_fork_sd: Option<f64>,
    /// `n*` before it was rounded and kept within the pilot's rounds and the most a fork gets.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub optimal_rounds: Option<f64>,
}

impl Design {
    /// The allocation from the pilot: `round_s` (`c₁`), `setup_s` (`c₂`) and the components
    /// `(cell, σ², τ²)` of the ratio that decides; rounds per fork `n*` rounded, at least `pilot`
    /// (so the pilot's spread, which the two-stage interval uses, is never smaller than a later
    /// fork's) and at most `max`. Without costs or components the pilot's rounds go on.
    pub fn allocate(
        round_s: Option<f64>,
        setup_s: Option<f64>,
        components: Option<(String, f64, f64)>,
        pilot: u32,
        max: u32,
    ) -> Design {
        let optimal = match (round_s, setup_s, &components) {
            (Some(c1), Some(c2), Some((_, sigma2, tau2))) if c1 > 0.0 => Some(if *tau2 <= 0.0 {
                f64::INFINITY
            } else {
                (c2 * sigma2 / (c1 * tau2)).sqrt()
            }),
            _ => None,
        };
        let rounds = optimal.map_or(pilot, |n| {
            (n.round().min(f64::from(max)) as u32).clamp(pilot, max)
        });
        Design {
            forks: 0,
            rounds: 0,
            pilot_rounds_per_fork: pilot,
            rounds_per_fork: rounds,
            round_s,
            fork_setup_s: setup_s,
            cell: components.as_ref().map(|c| c.0.clone()),
            within_fork_sd: components.as_ref().map(|c| c.1.max(0.0).sqrt()),
            between_fork_sd: components.as_ref().map(|c| c.2.max(0.0).sqrt()),
            optimal_rounds: optimal.filter(|n| n.is_finite()),
        }
    }

    /// "9 forks (20 rounds): 2 rounds per fork in the pilot, then 2 (Kalibera–Jones: n* = 1.4 from
    /// a round of 11.5 s, a fork's setup of 5.2 s, σ 0.140 and τ 0.052 of test_5)".
    pub fn line(&self) -> String {
        let why = match (
            self.round_s,
            self.fork_setup_s,
            &self.cell,
            self.within_fork_sd,
            self.between_fork_sd,
        ) {
            (Some(c1), Some(c2), Some(cell), Some(s), Some(t)) => {
                let n = match self.optimal_rounds {
                    Some(n) => format!("n* = {n:.1}"),
                    None => "n* unbounded, no spread between forks".to_string(),
                };
                format!(
                    " (Kalibera–Jones: {n} from a round of {c1:.1} s, a fork's setup of {c2:.1} s, \
                     σ {s:.3} and τ {t:.3} of {cell})"
                )
            }
            _ => " (the pilot's: its costs or spreads could not be measured)".to_string(),
        };
        let forks = format!(
            "{} fork{} ({} rounds)",
            self.forks,
            if self.forks == 1 { "" } else { "s" },
            self.rounds
        );
        if self.pilot_rounds_per_fork == 1 && self.rounds_per_fork == 1 {
            // One round a fork: no spread within forks, so no allocation to explain.
            return format!(
                "{forks} of one round each (`fork_rounds = 1`: a fork has no spread of its own to \
                 allocate rounds by)"
            );
        }
        if self.rounds == self.forks * self.pilot_rounds_per_fork {
            // No fork ran after the pilot: say what the allocation would have given.
            return format!(
                "{forks}, the pilot's, of {} each; forks after it would have had {}{why}",
                rounds(self.pilot_rounds_per_fork),
                self.rounds_per_fork
            );
        }
        format!(
            "{forks}: {} per fork in the pilot, then {}{why}",
            rounds(self.pilot_rounds_per_fork),
            self.rounds_per_fork
        )
    }
}

/// "1 round", "2 rounds".
fn rounds(n: u32) -> String {
    format!("{n} round{}", if n == 1 { "" } else { "s" })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_allocation_is_kalibera_and_jones_s_optimum_kept_in_bounds() {
        // n* = √(6 · 0.0196 / (11.5 · 0.0025)) = 2.02.
        let d = Design::allocate(
            Some(11.5),
            Some(6.0),
            Some(("t".into(), 0.0196, 0.0025)),
            2,
            4,
        );
        assert!((d.optimal_rounds.unwrap() - 2.023).abs() < 0.01, "{d:?}");
        assert_eq!(d.rounds_per_fork, 2);
        // A costly setup and a large within-fork spread: more rounds, at most 4.
        let d = Design::allocate(
            Some(1.0),
            Some(50.0),
            Some(("t".into(), 0.04, 0.0025)),
            2,
            4,
        );
        assert_eq!(d.rounds_per_fork, 4);
        // A cheap setup: one round would do, but never fewer than the pilot's.
        let d = Design::allocate(Some(15.0), Some(1.0), Some(("t".into(), 0.01, 0.01)), 2, 4);
        assert!(d.optimal_rounds.unwrap() < 1.0);
        assert_eq!(d.rounds_per_fork, 2);
        // No spread between forks: as many rounds as allowed.
        let d = Design::allocate(Some(10.0), Some(5.0), Some(("t".into(), 0.01, 0.0)), 2, 4);
        assert_eq!((d.rounds_per_fork, d.optimal_rounds), (4, None));
        // Nothing measured: the pilot's.
        let d = Design::allocate(None, None, None, 2, 4);
        assert_eq!(d.rounds_per_fork, 2);
        assert!(d.line().contains("could not be measured"), "{}", d.line());
    }
}
