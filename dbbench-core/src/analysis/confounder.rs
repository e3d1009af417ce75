//! The confounder check: every engine setting that differs between a cell and the benchmark's
//! baseline cell although no declared option set it, and every setting that changed between the
//! measured repetitions of one cell.
//!
//! A verdict says "this option made it faster"; that holds only if the option is all that
//! differed. Engines read their settings back for every window ([`crate::model::setting`]); a
//! setting marked `set_by` a declared option is the declared difference itself and is not
//! listed. The list for each seed suite is meant to be empty, or each entry explained in the
//! suite's docs.

use crate::model::results::{BenchmarkResult, CellResult};
use crate::model::setting::{Setting, Settings};
use serde::{Deserialize, Serialize};

/// One setting that differs where nothing declared says it should.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Confounder {
    /// The cell it was found in.
    pub cell: String,
    /// The setting's name, as the engine reports it.
    pub setting: String,
    /// What kind of difference.
    pub kind: ConfounderKind,
}

/// Where a setting differed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum ConfounderKind {
    /// The cell's value is not the baseline cell's (`None`: the setting was not reported there).
    FromBaseline {
        /// The baseline cell's value.
        baseline: Option<String>,
        /// This cell's value.
        cell: Option<String>,
    },
    /// The value changed between the measured repetitions of the cell: every distinct value, in
    /// the order first seen.
    BetweenRepetitions {
        /// The values seen.
        values: Vec<String>,
    },
}

impl Confounder {
    /// One line a reader takes in: `wal_buffers: 1MB in test_1 (baseline), 4MB in test_3`.
    pub fn describe(&self, baseline: &str) -> String {
        let shown = |v: &Option<String>| v.clone().unwrap_or_else(|| "(not reported)".into());
        match &self.kind {
            ConfounderKind::FromBaseline {
                baseline: b,
                cell: c,
            } => format!(
                "{}: {} in {baseline} (baseline), {} in {}",
                self.setting,
                shown(b),
                shown(c),
                self.cell
            ),
            ConfounderKind::BetweenRepetitions { values } => format!(
                "{}: changed between repetitions of {} ({})",
                self.setting,
                self.cell,
                values.join(" → ")
            ),
        }
    }
}

/// Every confounder of `result`, cell by cell in declaration order; empty when no engine
/// reported settings.
pub fn confounders(result: &BenchmarkResult) -> Vec<Confounder> {
    let Some(baseline) = result.cells.get(result.baseline_index()) else {
        return Vec::new();
    };
    let base = first_settings(baseline);
    let mut found = Vec::new();
    for cell in &result.cells {
        if cell.name != baseline.name {
            if let (Some(base), Some(this)) = (base, first_settings(cell)) {
                found.extend(from_baseline(&cell.name, base, this));
            }
        }
        found.extend(between_repetitions(cell));
    }
    found
}

/// The settings of the cell's first measured repetition that reported any.
fn first_settings(cell: &CellResult) -> Option<&Settings> {
    cell.measured().map(|r| &r.settings).find(|s| !s.is_empty())
}

/// Settings whose value differs between the two maps and that neither side set from a declared
/// option.
pub fn from_baseline(cell: &str, baseline: &Settings, this: &Settings) -> Vec<Confounder> {
    let declared = |s: Option<&Setting>| s.is_some_and(|s| s.set_by.is_some());
    let mut names: Vec<&String> = baseline.keys().chain(this.keys()).collect();
    names.sort();
    names.dedup();
    names
        .into_iter()
        .filter_map(|name| {
            let (b, c) = (baseline.get(name), this.get(name));
            let differs = b.map(|s| &s.value) != c.map(|s| &s.value);
            (differs && !declared(b) && !declared(c)).then(|| Confounder {
                cell: cell.to_string(),
                setting: name.clone(),
                kind: ConfounderKind::FromBaseline {
                    baseline: b.map(|s| s.value.clone()),
                    cell: c.map(|s| s.value.clone()),
                },
            })
        })
        .collect()
}

/// Settings whose value changed between the cell's measured repetitions (declared or not: a
/// declaration does not change between repetitions).
pub fn between_repetitions(cell: &CellResult) -> Vec<Confounder> {
    let runs: Vec<&Settings> = cell
        .measured()
        .map(|r| &r.settings)
        .filter(|s| !s.is_empty())
        .collect();
    let mut names: Vec<&String> = runs.iter().flat_map(|s| s.keys()).collect();
    names.sort();
    names.dedup();
    names
        .into_iter()
        .filter_map(|name| {
            let mut values: Vec<String> = Vec::new();
            for run in &runs {
                let value = run
                    .get(name)
                    .map_or_else(|| "(not reported)".to_string(), |s| s.value.clone());
                if !values.contains(&value) {
                    values.push(value);
                }
            }
            (values.len() > 1).then(|| Confounder {
                cell: cell.name.clone(),
                setting: name.clone(),
                kind: ConfounderKind::BetweenRepetitions { values },
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn settings(pairs: &[(&str, &str, Option<&str>)]) -> Settings {
        pairs
            .iter()
            .map(|(n, v, by)| {
                let s = Setting::plain(*v);
                (n.to_string(), by.map_or(s.clone(), |o| s.set_by(o)))
            })
            .collect()
    }

    #[test]
    fn a_derived_setting_is_listed_with_both_values_and_a_declared_one_is_not() {
        let base = settings(&[
            ("max_wal_size", "64MB", Some("log_size")),
            ("wal_buffers", "1MB", None),
            ("jit", "on", None),
        ]);
        let cell = settings(&[
            ("max_wal_size", "1GB", Some("log_size")),
            ("wal_buffers", "4MB", None),
            ("jit", "on", None),
        ]);
        let found = from_baseline("test_3", &base, &cell);
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(
            found[0].describe("test_1"),
            "wal_buffers: 1MB in test_1 (baseline), 4MB in test_3"
        );
    }

    #[test]
    fn a_setting_reported_on_one_side_only_is_listed() {
        let base = settings(&[("jit", "on", None)]);
        let cell = settings(&[]);
        let found = from_baseline("b", &base, &cell);
        assert_eq!(
            found[0].describe("a"),
            "jit: on in a (baseline), (not reported) in b"
        );
    }
}
