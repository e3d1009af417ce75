//! How a backend's results are shown: what its log segments are called and the evidence columns
//! of its own the results table adds. A backend's profile holds these facts, and every result
//! records them ([`crate::model::evidence::BackendInfo::presentation`]), so that a result renders
//! alike in any build of dbbench, with or without that backend's feature.
//!
//! The texts are `Cow`s so that one type serves both: a profile's `static` borrows them, a result
//! read from a file owns them.

use serde::{Deserialize, Serialize};
use std::borrow::Cow;

/// The presentation facts of one backend.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Presentation {
    /// What its log segments are called in tables (`VLFs` on SQL Server, `WAL segments` on
    /// PostgreSQL, `log segments` on the embedded engine).
    pub segments_label: Cow<'static, str>,
    /// Evidence of its own the results table shows beside the storage metrics, in this order
    /// (PostgreSQL's WAL segments created and recycled, zero-filled bytes, …).
    pub evidence_columns: Cow<'static, [EvidenceColumn]>,
}

impl Presentation {
    /// The facts of a backend that names nothing of its own: `log segments` and no evidence
    /// columns (what a result shows when neither it nor this build knows better).
    pub const PLAIN: Presentation = Presentation {
        segments_label: Cow::Borrowed("log segments"),
        evidence_columns: Cow::Borrowed(&[]),
    };
}

/// A column of the results table made from one named value of the engine's evidence (a key of
/// `RunResult::values`), as the mean over a cell's measured runs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct EvidenceColumn {
    /// The column's title.
    pub title: Cow<'static, str>,
    /// The value's name in the evidence.
    pub value: Cow<'static, str>,
    /// How it is written.
    pub unit: EvidenceUnit,
}

impl EvidenceColumn {
    /// The column `title` of the value `value`, written as `unit` (for a profile's `static`).
    pub const fn new(title: &'static str, value: &'static str, unit: EvidenceUnit) -> Self {
        EvidenceColumn {
            title: Cow::Borrowed(title),
            value: Cow::Borrowed(value),
            unit,
        }
    }
}

/// How an evidence column is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EvidenceUnit {
    /// A count, with thousands separators.
    Count,
    /// Bytes, as MiB.
    Bytes,
    /// Milliseconds.
    Millis,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn facts_read_back_as_written() {
        static COLUMNS: [EvidenceColumn; 1] = [EvidenceColumn::new(
            "WAL written",
            "pg_wal_bytes",
            EvidenceUnit::Bytes,
        )];
        let facts = Presentation {
            segments_label: Cow::Borrowed("WAL segments"),
            evidence_columns: Cow::Borrowed(&COLUMNS),
        };
        let json = serde_json::to_string(&facts).unwrap();
        assert_eq!(
            json,
            r#"{"segments_label":"WAL segments","evidence_columns":[{"title":"WAL written","value":"pg_wal_bytes","unit":"bytes"}]}"#
        );
        assert_eq!(serde_json::from_str::<Presentation>(&json).unwrap(), facts);
    }
}
