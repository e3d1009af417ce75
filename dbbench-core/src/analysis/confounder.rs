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
    SettingsCheck::of(result).confounders
}

/// The confounder check of one benchmark, as the console, the report and the snapshot show it.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SettingsCheck {
    /// The baseline cell's name.
    pub baseline: String,
    /// How many distinct settings the engine reported over all cells (0: none reported, the
    /// check had nothing to compare).
    pub compared: usize,
    /// Every setting that differs where nothing declared says it should.
    pub confounders: Vec<Confounder>,
}

impl SettingsCheck {
    /// The check over `result`'s cells: each cell's first measured repetition against the
    /// baseline cell's, and the measured repetitions of each cell against each other. A setting
    /// `set_by` an option is left out of the first comparison only when that option's declared
    /// value differs between the two cells: a derived setting that differs although its
    /// option does not is listed.
    pub fn of(result: &BenchmarkResult) -> SettingsCheck {
        let Some(baseline) = result.cells.get(result.baseline_index()) else {
            return SettingsCheck::default();
        };
        let mut names: Vec<&String> = result
            .cells
            .iter()
            .flat_map(|c| c.measured().flat_map(|r| r.settings.keys()))
            .collect();
        names.sort();
        names.dedup();
        let base = first_settings(baseline);
        let mut found = Vec::new();
        for cell in &result.cells {
            if cell.name != baseline.name {
                if let (Some(base), Some(this)) = (base, first_settings(cell)) {
                    let declared =
                        |option: &str| baseline.config.get(option) != cell.config.get(option);
                    found.extend(from_baseline_declaring(&cell.name, base, this, declared));
                }
            }
            found.extend(between_repetitions(cell));
        }
        SettingsCheck {
            baseline: baseline.name.clone(),
            compared: names.len(),
            confounders: found,
        }
    }

    /// The lines a reader sees: one when nothing differs ("settings: only the declared options
    /// differ (42 settings compared)"), else a heading and one line per confounder; none when
    /// no engine reported settings.
    pub fn lines(&self) -> Vec<String> {
        if self.compared == 0 {
            return Vec::new();
        }
        if self.confounders.is_empty() {
            return vec![format!(
                "settings: only the declared options differ ({} settings compared)",
                self.compared
            )];
        }
        let found = match self.confounders.len() {
            1 => "1 differs where no declared option says it should".to_string(),
            n => format!("{n} differ where no declared option says they should"),
        };
        let mut lines = vec![format!(
            "settings: {found} ({} settings compared):",
            self.compared
        )];
        lines.extend(self.described());
        lines
    }

    /// One line per confounder ([`Confounder::describe`]).
    pub fn described(&self) -> Vec<String> {
        self.confounders
            .iter()
            .map(|c| c.describe(&self.baseline))
            .collect()
    }
}

/// The settings of the cell's first measured repetition that reported any.
fn first_settings(cell: &CellResult) -> Option<&Settings> {
    cell.measured().map(|r| &r.settings).find(|s| !s.is_empty())
}

/// Settings whose value differs between the two maps and that neither side set from a declared
/// option.
pub fn from_baseline(cell: &str, baseline: &Settings, this: &Settings) -> Vec<Confounder> {
    from_baseline_declaring(cell, baseline, this, |_| true)
}

/// [`from_baseline`], where a setting counts as declared only if it is `set_by` an option for
/// which `differs` holds (the option's declared value differs between the two cells). A setting
/// derived from several options names them separated by commas (`data_size,data_files`); one
/// that differs is enough.
pub fn from_baseline_declaring(
    cell: &str,
    baseline: &Settings,
    this: &Settings,
    differs: impl Fn(&str) -> bool,
) -> Vec<Confounder> {
    let declared = |s: Option<&Setting>| {
        s.and_then(|s| s.set_by.as_deref())
            .is_some_and(|options| options.split(',').any(|o| differs(o.trim())))
    };
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
    use crate::model::results::RunResult;

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
    fn a_setting_set_by_an_option_that_does_not_differ_is_listed() {
        let base = settings(&[("pragma.wal_autocheckpoint", "1000", Some("recovery"))]);
        let cell = settings(&[("pragma.wal_autocheckpoint", "0", Some("recovery"))]);
        assert!(from_baseline_declaring("b", &base, &cell, |o| o == "recovery").is_empty());
        let found = from_baseline_declaring("b", &base, &cell, |o| o == "growth");
        assert_eq!(
            found[0].describe("a"),
            "pragma.wal_autocheckpoint: 1000 in a (baseline), 0 in b"
        );
    }

    /// A cell of a sample benchmark: its name, its options, each measured run's settings.
    type Planned<'a> = (&'a str, &'a [(&'a str, &'a str)], Vec<Settings>);

    /// A sample benchmark whose cells have the given options and, per measured run, settings.
    fn result(cells: Vec<Planned<'_>>) -> BenchmarkResult {
        let plans: Vec<crate::model::sample::CellPlan> = cells
            .iter()
            .map(|(name, config, _)| crate::model::sample::CellPlan {
                name,
                config,
                elapsed: &[1.0],
                growth_events: 0,
                segments: 0,
            })
            .collect();
        let mut result = crate::model::sample::benchmark(&plans);
        result.run.baseline = cells[0].0.to_string();
        for (cell, (_, _, runs)) in result.cells.iter_mut().zip(cells) {
            let warmup = cell.runs[0].clone();
            cell.runs = std::iter::once(warmup)
                .chain(runs.into_iter().map(|settings| RunResult {
                    warmup: false,
                    settings,
                    ..cell.runs[1].clone()
                }))
                .collect();
        }
        result
    }

    #[test]
    fn the_check_counts_what_it_compared_and_lists_only_undeclared_differences() {
        let base = settings(&[("threads", "0", Some("maxdop")), ("cache", "2000", None)]);
        let cell = settings(&[("threads", "4", Some("maxdop")), ("cache", "2000", None)]);
        let clean = result(vec![
            ("a", &[], vec![base.clone(), base.clone()]),
            ("b", &[("maxdop", "4")], vec![cell.clone()]),
        ]);
        let check = SettingsCheck::of(&clean);
        assert_eq!(
            check.lines(),
            vec!["settings: only the declared options differ (2 settings compared)"]
        );
        let changed = settings(&[("threads", "0", Some("maxdop")), ("cache", "500", None)]);
        let dirty = result(vec![
            ("a", &[], vec![base.clone(), changed]),
            ("b", &[], vec![cell]),
        ]);
        let check = SettingsCheck::of(&dirty);
        assert_eq!(
            check.lines(),
            vec![
                "settings: 2 differ where no declared option says they should (2 settings compared):",
                "cache: changed between repetitions of a (2000 → 500)",
                "threads: 0 in a (baseline), 4 in b",
            ]
        );
    }

    #[test]
    fn no_settings_reported_gives_no_line() {
        let none = result(vec![("a", &[], vec![Settings::new()])]);
        assert!(SettingsCheck::of(&none).lines().is_empty());
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
