//! The drift between the two invocations `compare` sets side by side: what moves a ratio between
//! two runs of one machine minutes or hours apart beyond what either run's forks can see.
//!
//! Each side's interval is its own forks', which re-draw what one invocation shares (its files'
//! places, its fixture) but not the machine's state between invocations. On our VM that part was
//! τ_i ≈ 0.014–0.017 on the log scale for three of five VLF ratios between invocations minutes
//! apart (`docs/statistics.md`, "Where the variance lives"), and two unchanged invocations
//! compared without it said faster or slower for at least one of five cells in 69% of simulated
//! pairs (the statistics review, §6). So each ratio of ratios carries `2τ²` in its variance, one
//! τ² per side:
//!
//! - **measured** where the current run's store holds earlier runs of the same experiment on this
//!   host (from [`MIN_RUNS_FOR_DRIFT`] runs with this one): τ by DerSimonian–Laird over them, per
//!   cell (`analysis::between`);
//! - **assumed** elsewhere, and said so: `DBBENCH_COMPARE_DRIFT`, by default [`DEFAULT_TAU`], our
//!   VM's largest measured τ_i rounded up. A CI job with a fresh work dir always assumes it.

use crate::analysis::between::{BetweenRuns, MIN_RUNS_FOR_DRIFT};
use crate::analysis::ratio::Ratio;
use crate::model::earlier::EarlierRun;
use crate::model::error::{Error, Result};

/// τ assumed between two invocations when it is not measured: our VM's largest τ_i between
/// invocations minutes apart (0.017, `docs/statistics.md`), rounded up.
pub const DEFAULT_TAU: f64 = 0.02;

/// The environment variable that sets the assumed τ.
pub const VAR: &str = "DBBENCH_COMPARE_DRIFT";

/// Where one cell's τ came from.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Source {
    /// Estimated from this many runs of the experiment on this host, this one included.
    Measured(usize),
    /// The assumption: [`DEFAULT_TAU`], or the user's `DBBENCH_COMPARE_DRIFT`.
    Assumed,
}

/// The drift `compare` allows for between its two invocations.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct InvocationDrift {
    /// τ assumed where none is measured.
    pub assumed: f64,
    /// Whether the user set it (`DBBENCH_COMPARE_DRIFT`).
    pub set: bool,
}

impl InvocationDrift {
    /// The default assumption.
    pub const DEFAULT: InvocationDrift = InvocationDrift {
        assumed: DEFAULT_TAU,
        set: false,
    };

    /// From `DBBENCH_COMPARE_DRIFT`; the default when it is unset, an error naming the variable
    /// when it is not a τ.
    pub fn from_env() -> Result<InvocationDrift> {
        match std::env::var(VAR) {
            Err(_) => Ok(InvocationDrift::DEFAULT),
            Ok(text) => InvocationDrift::parse(&text),
        }
    }

    /// `0.02`: τ on the log scale, from 0 to 1.
    pub fn parse(text: &str) -> Result<InvocationDrift> {
        match text.trim().parse::<f64>() {
            Ok(t) if t.is_finite() && (0.0..1.0).contains(&t) => Ok(InvocationDrift {
                assumed: t,
                set: true,
            }),
            _ => Err(Error::Config(format!(
                "{VAR} must be the standard deviation of a ratio's logarithm between two \
                 invocations, from 0 to 1 (`0.02`: a ratio drifting by about 2%); found `{}`",
                text.trim()
            ))),
        }
    }

    /// τ for `cell`, whose ratio in the current run is `now`, with the current run's `earlier`
    /// runs of the same experiment: measured where there are enough, else assumed.
    pub fn of(&self, cell: &str, now: &Ratio, earlier: &[EarlierRun]) -> (f64, Source) {
        let measured = BetweenRuns::of(cell, now, earlier)
            .and_then(|b| Some((b.drift?, b.earlier + 1)))
            .filter(|(_, runs)| *runs >= MIN_RUNS_FOR_DRIFT);
        match measured {
            Some((tau, runs)) => (tau, Source::Measured(runs)),
            None => (self.assumed, Source::Assumed),
        }
    }

    /// The note under the comparison that says what drift its intervals carry: `measured` the
    /// cells with a measured τ (name, τ, runs), `assumed` how many cells took the assumption.
    pub fn note(&self, measured: &[(String, f64, usize)], assumed: usize) -> Option<String> {
        let mut parts = Vec::new();
        if assumed > 0 {
            let why = if self.set {
                format!("set by {VAR}")
            } else {
                format!(
                    "assumed: our VM's largest drift between invocations minutes apart, \
                     0.017, rounded up; set {VAR} to your machine's"
                )
            };
            parts.push(format!(
                "τ = {} for {assumed} cell{} ({why})",
                self.assumed,
                if assumed == 1 { "" } else { "s" }
            ));
        }
        if !measured.is_empty() {
            let cells: Vec<String> = measured
                .iter()
                .map(|(cell, tau, runs)| format!("{cell} {tau:.3} ({runs} runs)"))
                .collect();
            parts.push(format!(
                "measured from this host's runs of the experiment: {}",
                cells.join(", ")
            ));
        }
        (!parts.is_empty()).then(|| {
            format!(
                "each ratio of ratios allows for the drift between the two invocations, 2τ² in \
                 its variance: {}",
                parts.join("; ")
            )
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_assumption_is_read_checked_and_said() {
        assert_eq!(
            InvocationDrift::parse("0.05").unwrap(),
            InvocationDrift {
                assumed: 0.05,
                set: true
            }
        );
        for bad in ["5%", "-0.1", "1.5", "NaN", ""] {
            let err = InvocationDrift::parse(bad).unwrap_err().to_string();
            assert!(
                err.contains("DBBENCH_COMPARE_DRIFT must be"),
                "{bad}: {err}"
            );
        }
        let note = InvocationDrift::DEFAULT.note(&[], 5).unwrap();
        assert!(
            note.contains("τ = 0.02 for 5 cells (assumed: our VM's"),
            "{note}"
        );
        let note = InvocationDrift::DEFAULT
            .note(&[("test_2".into(), 0.0123, 4)], 0)
            .unwrap();
        assert!(note.contains("test_2 0.012 (4 runs)"), "{note}");
        assert_eq!(InvocationDrift::DEFAULT.note(&[], 0), None);
    }
}
