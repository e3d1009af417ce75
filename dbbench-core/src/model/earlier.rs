//! Earlier runs of the same benchmark, as this run's results carry them: each earlier
//! invocation's ratio of every cell to the baseline, with its 95% interval and degrees of
//! freedom. The results store is where they come from (`output::history::earlier_runs`); the
//! analysis layer pools them with this run's (`analysis::between`). Kept in the results so that
//! a report made later from the JSON says what the summary said.

use serde::{Deserialize, Serialize};

/// One earlier invocation's ratios.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EarlierRun {
    /// Its id in the results store.
    pub invocation: i64,
    /// When it started, seconds since the Unix epoch.
    pub started_at_unix_s: u64,
    /// One entry per compared cell that ran in it with an interval.
    pub ratios: Vec<EarlierRatio>,
}

/// One cell's ratio to the baseline in an earlier run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EarlierRatio {
    /// The cell's name.
    pub cell: String,
    /// Its time over the baseline's.
    pub ratio: f64,
    /// Lower end of the run's 95% interval.
    pub low: f64,
    /// Upper end.
    pub high: f64,
    /// Degrees of freedom of the interval's t quantile.
    pub df: f64,
}

impl EarlierRun {
    /// The ratio of `cell` in this run, if it has one.
    pub fn of(&self, cell: &str) -> Option<&EarlierRatio> {
        self.ratios.iter().find(|r| r.cell == cell)
    }
}
