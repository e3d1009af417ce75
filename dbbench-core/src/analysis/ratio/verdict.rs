//! What a ratio says: the [`Verdict`] and the equivalence [`Margin`] it is judged against. Apart
//! from the ratio's arithmetic because tables, charts and the snapshot read verdicts alone.

use serde::{Deserialize, Serialize};

/// The equivalence margin: a ratio within `[1 − m, 1 + m]` is no difference worth reporting.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Margin(pub f64);

impl Margin {
    /// The default: the snapshot comparator's default relative tolerance, 10%.
    pub const DEFAULT: Margin = Margin(0.10);

    /// The margin from `DBBENCH_TOLERANCE` (`10%` or `0.1`), the default when it is unset or
    /// unreadable (the comparator reports an unreadable value before anything runs).
    pub fn from_env() -> Margin {
        std::env::var("DBBENCH_TOLERANCE")
            .ok()
            .and_then(|v| Margin::parse(&v))
            .unwrap_or(Margin::DEFAULT)
    }

    /// `10%` or `0.1`; `None` for anything else or a negative value.
    pub fn parse(text: &str) -> Option<Margin> {
        let text = text.trim();
        match text.strip_suffix('%') {
            Some(pct) => pct.trim().parse::<f64>().ok().map(|p| p / 100.0),
            None => text.parse::<f64>().ok(),
        }
        .filter(|v| v.is_finite() && *v >= 0.0)
        .map(Margin)
    }

    /// `±10%`.
    pub fn describe(&self) -> String {
        format!("±{}%", crate::model::units::percent_text(self.0))
    }
}

/// How a cell's elapsed time compares with the baseline's.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// The cell is significantly faster (the whole interval of the ratio is below 1).
    Faster,
    /// The cell is significantly slower (the whole interval is above 1).
    Slower,
    /// The interval lies inside the equivalence margin: no difference larger than the margin.
    Equivalent,
    /// The interval contains 1 and reaches beyond the margin: the runs cannot tell.
    Imprecise,
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
    /// The verdict in a word or two, as narrow places (charts, the Markdown comment's emoji
    /// column) show it; [`Ratio::verdict_text`](super::Ratio::verdict_text) says it whole.
    pub fn describe(&self) -> String {
        match self {
            Verdict::Faster => "faster".into(),
            Verdict::Slower => "slower".into(),
            Verdict::Equivalent => "equivalent".into(),
            Verdict::Imprecise => "inconclusive".into(),
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
