//! The results data model: a benchmark's cells and their repetitions, as the results JSON holds
//! them (`output::json` writes and reads the files).
//!
//! The JSON follows the versioned schema documented in `docs/results-schema.md`. Every numeric
//! field carries its unit in its name (`_s`, `_ms`, `_bytes`) or is a plain count.

pub use super::design::Design;
pub use super::evidence::{
    AutogrowthEvent, BackendInfo, Evidence, FileKind, FileStats, Lap, LogStats, Series, WaitStat,
    WindowTimes,
};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Version of the JSON schema; bumped on any incompatible change.
pub const SCHEMA_VERSION: u32 = 1;

/// Everything one run of a benchmark produced.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct BenchmarkResult {
    /// [`SCHEMA_VERSION`] of the writer.
    pub schema_version: u32,
    /// Version of dbbench that wrote the file.
    pub dbbench_version: String,
    /// The benchmark's test path without the crate name (`vlf::doubling`).
    pub benchmark: String,
    /// The first line of the benchmark's doc comment.
    pub title: String,
    /// Seconds since the Unix epoch when the run started.
    pub started_at_unix_s: u64,
    /// The data scale (`smoke`, `default`, `full`).
    pub scale: String,
    /// The backend and its preconditions.
    pub backend: BackendInfo,
    /// The machine.
    pub host: super::host::HostInfo,
    /// The run options.
    pub run: RunInfo,
    /// One entry per cell, in declaration order.
    pub cells: Vec<CellResult>,
    /// What the benchmark's source reported for its cases, where the suite declares it (absent
    /// from files written before the field existed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reference: Option<super::reference::Reference>,
    /// The calibration of the machine taken before this run's first cell (absent in files written
    /// before calibrations existed, and where the calibration could not be taken).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub calibration: Option<super::calibration::Calibration>,
    /// The database server's processes on this machine, counted as the workload by the
    /// busy-machine guard (absent when the server is elsewhere or is dbbench's own, and in files
    /// written before the field existed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_on_host: Option<super::interference::ServerOnHost>,
    /// How many rounds ran and why no more did (absent in files written before the field
    /// existed, and while the benchmark is still running).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stopping: Option<Stopping>,
    /// Why the benchmark's question does not apply on this backend (`#[not_on]`); then it has no
    /// cells, and every output shows this sentence instead of a table.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub not_applicable: Option<String>,
    /// Cells left out on this backend because their case names other backends, as
    /// `test_6 (mssql)`: shown in one line under the table rather than as skipped rows.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub elsewhere: Vec<String>,
    /// Earlier runs of this benchmark on the same host, backend, scale and calibration, newest
    /// first (at most ten), with their ratios: what the "between runs" lines pool and check this
    /// run against. Empty (and absent from the file) when the store holds none.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub earlier: Vec<super::earlier::EarlierRun>,
}

/// Why a benchmark ran as many rounds as it did.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Stopping {
    /// Measured rounds that ran (the most any cell has).
    pub rounds: u32,
    /// Why no further round started.
    pub reason: StopReason,
    /// The widest ratio interval when it stopped, as a fraction (0.05 for ±5%), and its cell;
    /// absent where no interval could be computed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub widest: Option<(String, f64)>,
    /// Seconds from the benchmark's first repetition to its last.
    pub elapsed_s: f64,
    /// The forks a precision target ran and how their rounds were allocated (absent without a
    /// judged target, and in files written before forks existed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub design: Option<Design>,
}

/// Why a benchmark stopped starting rounds.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(rename_all = "snake_case", tag = "reason", content = "detail")]
pub enum StopReason {
    /// `repeat` fixed the count.
    Fixed,
    /// Every ratio's interval reached the precision target.
    TargetMet,
    /// `max_repeat` rounds ran.
    RoundLimit,
    /// Another round would have run past the `budget`.
    Budget,
    /// The precision target could not be judged here (why): the minimum rounds ran.
    Unjudged(String),
    /// Written by dbbench before forks: an assumed spread between runs made the interval for
    /// `cell` wider than the target, and rounds ran until the interval across runs was within √2
    /// times that floor. Kept so that such results still read; no run stops so any more.
    BetweenRuns {
        /// The cell whose between-run floor is widest.
        cell: String,
        /// That floor, as a fraction of the ratio (0.10 for ±10%).
        floor: f64,
    },
}

impl Stopping {
    /// How the forks' rounds were allocated, said only when rounds ran: where every cell was
    /// skipped, the design the schedule holds describes rounds that never ran.
    pub fn design_line(&self) -> Option<String> {
        self.design
            .as_ref()
            .filter(|_| self.rounds > 0)
            .map(Design::line)
    }

    /// What a precision target counted: forks, or rounds in results written before forks.
    fn count(&self) -> u32 {
        self.design.as_ref().map_or(self.rounds, |d| d.forks)
    }

    /// "stopped after 9 forks (18 rounds) in 48.2 s: every ratio's 95% interval reached the
    /// precision target (widest ±4.1%, test_2)" (rounds alone for results without forks).
    /// `precision` is the target the forks ran under: with it, a budget spent before the minimum
    /// ended says so, and what to change.
    pub fn line(&self, precision: Option<&PrecisionInfo>) -> String {
        let whose = precision.map_or(String::new(), PrecisionInfo::whose);
        // A precision target counts forks; results written before forks counted rounds.
        let unit = if self.design.is_some() {
            "fork"
        } else {
            "round"
        };
        let why = match &self.reason {
            StopReason::Fixed => "the fixed `repeat` count".to_string(),
            StopReason::TargetMet => {
                format!("every ratio's 95% interval reached the precision target{whose}")
            }
            StopReason::RoundLimit => format!("the {unit} limit (`max_repeat`){whose}"),
            StopReason::Budget => match precision {
                // Only the minimum ran and it alone overran: the budget does not fit the machine.
                Some(p) if self.elapsed_s > p.budget_s && self.count() <= p.min_rounds => format!(
                    "the time budget{whose}: the minimum {} {unit}s took longer than its {} s \
                     (raise `budget` or lower `min_repeat` to fit this machine and backend)",
                    p.min_rounds, p.budget_s
                ),
                Some(p) if p.backend.is_some() => format!(
                    "the time budget{whose}, {} s (another {unit} would have exceeded it)",
                    p.budget_s
                ),
                _ => format!("the time budget (another {unit} would have exceeded it)"),
            },
            StopReason::Unjudged(why) => format!("the minimum {unit}s{whose}, since {why}"),
            StopReason::BetweenRuns { cell, floor } => format!(
                "the interval across runs{whose} came within √2 times the floor that the \
                 between-run spread ±{}% ({cell}) sets: {} cannot be claimed within one run",
                crate::model::units::percent_text((floor * 1000.0).round() / 1000.0),
                precision.map_or("the target".to_string(), |p| format!(
                    "±{}%",
                    crate::model::units::percent_text(p.target)
                ))
            ),
        };
        let widest = self.widest.as_ref().map_or(String::new(), |(cell, w)| {
            format!(
                " (widest interval ±{}%, {cell})",
                crate::model::units::percent_text((w * 1000.0).round() / 1000.0)
            )
        });
        let count = match &self.design {
            Some(d) => format!(
                "{} fork{} ({} round{})",
                d.forks,
                if d.forks == 1 { "" } else { "s" },
                self.rounds,
                if self.rounds == 1 { "" } else { "s" }
            ),
            None => format!(
                "{} round{}",
                self.rounds,
                if self.rounds == 1 { "" } else { "s" }
            ),
        };
        format!(
            "stopped after {count} in {:.1} s: {why}{widest}",
            self.elapsed_s
        )
    }
}

/// The run options of a benchmark as they were applied.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct RunInfo {
    /// Measured repetitions per cell.
    pub repeat: u32,
    /// Unmeasured warm-up repetitions per cell.
    pub warmup: u32,
    /// The fixture's name.
    pub fixture: String,
    /// Rows in the fixture at this scale.
    pub fixture_rows: u64,
    /// `interleaved` or `blocked`.
    pub order: String,
    /// Name of the baseline cell.
    pub baseline: String,
    /// Timeout of one repetition, if any.
    pub timeout_s: Option<f64>,
    /// `debug` or `release`: how dbbench (and so the embedded engine) was compiled, which changes
    /// embedded timings several-fold. Empty in files written before the field existed.
    #[serde(default)]
    pub build_profile: String,
    /// The precision target that chose the number of rounds, when one was set (then `repeat` is
    /// its minimum).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub precision: Option<PrecisionInfo>,
    /// The page cache every measured window started with.
    #[serde(default)]
    pub cache: super::start::CacheState,
    /// Whether the rounds ran in forks, each on a fresh work area (false in files written
    /// before forks existed, which counted a precision target's rounds).
    #[serde(default)]
    pub forked: bool,
}

/// A precision target as it was applied.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct PrecisionInfo {
    /// The target half-width of every ratio's interval, as a fraction (0.05 for ±5%).
    pub target: f64,
    /// The fewest rounds.
    pub min_rounds: u32,
    /// The most rounds.
    pub max_rounds: u32,
    /// No round starts after this many seconds.
    pub budget_s: f64,
    /// The backend whose own run options these are (`postgres(budget = "5m")`); absent where
    /// the benchmark's applied, and in files written before backends could have their own.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub backend: Option<String>,
}

impl PrecisionInfo {
    /// "±5% (3 to 20 forks, within 300 s)", and "…, postgres's own" where the backend has run
    /// options of its own (rounds, for results written before forks: see [`RunInfo::forked`]).
    pub fn describe(&self) -> String {
        self.describe_in("forks")
    }

    /// [`PrecisionInfo::describe`] counting `unit`.
    pub fn describe_in(&self, unit: &str) -> String {
        format!(
            "±{}% ({} to {} {unit}, within {} s{})",
            crate::model::units::percent_text(self.target),
            self.min_rounds,
            self.max_rounds,
            self.budget_s,
            self.backend
                .as_ref()
                .map_or(String::new(), |b| format!(", {b}'s own"))
        )
    }

    /// " under postgres's own run options", or nothing where the benchmark's applied.
    pub fn whose(&self) -> String {
        self.backend
            .as_ref()
            .map_or(String::new(), |b| format!(" under {b}'s own run options"))
    }
}

impl RunInfo {
    /// "3 measured run(s)", or "forks until precision ±5% (3 to 20 forks, within 300 s)".
    pub fn rounds_text(&self) -> String {
        match &self.precision {
            Some(p) if self.forked => format!("forks until precision {}", p.describe()),
            Some(p) => format!("rounds until precision {}", p.describe_in("rounds")),
            None => format!("{} measured run(s)", self.repeat),
        }
    }
}

/// The profile this code was compiled with: `debug` (debug assertions on) or `release`.
pub fn build_profile() -> &'static str {
    if cfg!(debug_assertions) {
        "debug"
    } else {
        "release"
    }
}

/// Outcome of a cell.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(rename_all = "snake_case", tag = "state", content = "detail")]
pub enum CellStatus {
    /// Every repetition succeeded.
    Ok,
    /// A repetition failed; the error as text.
    Failed(String),
    /// The cell did not run on this backend; why.
    Skipped(String),
}

/// Results of one cell.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct CellResult {
    /// The cell's name.
    pub name: String,
    /// The storage options as declared, `(option, value)`.
    pub config: BTreeMap<String, String>,
    /// The sizes actually used after scaling, in bytes (`data_size_bytes`, `log_size_bytes`…).
    pub effective: BTreeMap<String, u64>,
    /// Outcome.
    pub status: CellStatus,
    /// Every repetition, warm-up ones included (flagged).
    pub runs: Vec<RunResult>,
    /// The invocation of the results store these runs come from (absent in files written before
    /// the store existed, and in results that were never stored).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub invocation: Option<i64>,
    /// The calibration of the machine these runs were measured on (absent when none was taken).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub calibration: Option<super::calibration::Calibration>,
}

impl CellResult {
    /// The measured (non-warm-up) runs that count: a window set aside for being measured again
    /// ([`RunResult::set_aside`]) is kept in `runs` but is not one of them.
    pub fn measured(&self) -> impl Iterator<Item = &RunResult> {
        self.runs
            .iter()
            .filter(|r| !r.warmup && r.set_aside.is_none())
    }

    /// The windows set aside because the busy-machine guard found them disturbed and their
    /// repetition was measured again in its place.
    pub fn set_aside(&self) -> impl Iterator<Item = &RunResult> {
        self.runs.iter().filter(|r| r.set_aside.is_some())
    }
}

/// One repetition of one cell.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default)]
pub struct RunResult {
    /// Repetition number within the cell, from 0, warm-ups first.
    pub index: u32,
    /// Position in the benchmark's overall run order, from 0.
    pub sequence: u32,
    /// A warm-up run, excluded from statistics.
    pub warmup: bool,
    /// The fork it ran in, from 0: each fork starts on a fresh work area (absent in files
    /// written before forks existed; in blocked order every repetition is in fork 0).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fork: Option<u32>,
    /// Its position in its round's order, from 0 (absent in files written before the order was
    /// balanced).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub position: Option<u32>,
    /// Wall-clock time of the body.
    pub elapsed_s: f64,
    /// Split times recorded by `Session::lap`.
    pub laps: Vec<Lap>,
    /// Data and log files during the measured window.
    pub files: Vec<FileStats>,
    /// The log's growth and segment (VLF) counts.
    pub log: Option<LogStats>,
    /// Top waits in the measured window, where the backend has them.
    pub waits: Vec<WaitStat>,
    /// Values sampled over time (counters, throughput).
    pub series: Vec<Series>,
    /// Deterministic counts (row counts, events) reported by the body or backend.
    pub counts: BTreeMap<String, i64>,
    /// Measured values that vary from run to run, with units in their names; always finite
    /// ([`RunResult::record_values`]). A `null` (a non-finite value written by an older
    /// version) reads as absent.
    #[serde(deserialize_with = "finite_values")]
    pub values: BTreeMap<String, f64>,
    /// Metrics the backend could not provide, with the reason.
    pub unavailable: BTreeMap<String, String>,
    /// What the backend found true of the database in the window, in words (the recovery
    /// behaviour in effect on SQL Server); absent in files written before the field existed.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub facts: BTreeMap<String, String>,
    /// Every autogrowth of a data or log file in the measured window, in order.
    #[serde(default)]
    pub autogrowths: Vec<AutogrowthEvent>,
    /// The engine's settings in force during the window, read back from the engine (absent in
    /// files written before the confounder check existed).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub settings: super::setting::Settings,
    /// Concurrent loads the body ran with [`crate::Session::load`], in order.
    #[serde(default)]
    pub loads: Vec<crate::model::load::LoadStats>,
    /// How busy the machine was with other work while the window was open (absent in files
    /// written before the busy-machine guard existed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interference: Option<super::interference::Interference>,
    /// The state the window started from: what the kernel still had to write, the flush and
    /// wait before it, the page cache (absent in files written before the field existed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start: Option<super::start::WindowStart>,
    /// Why this window does not count: the guard found it disturbed and its repetition was
    /// measured again in its place, in the same fork (`measured again: other processes used
    /// 0.48 cores (threshold 0.25)`). Kept for the record, left out of every statistic; absent
    /// for a window that counts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub set_aside: Option<String>,
}

impl BenchmarkResult {
    /// The baseline cell's index.
    pub fn baseline_index(&self) -> usize {
        self.cells
            .iter()
            .position(|c| c.name == self.run.baseline)
            .unwrap_or(0)
    }
}

impl RunResult {
    /// Records measured values. A non-finite one (NaN, ±infinity: a rate over no time) has no
    /// number in JSON (serde_json writes `null`, which no f64 reads back), so it goes to
    /// `unavailable` with the reason instead, and the stored repetition stays readable.
    pub fn record_values(&mut self, values: impl IntoIterator<Item = (String, f64)>) {
        for (name, value) in values {
            if value.is_finite() {
                self.unavailable.remove(&name);
                self.values.insert(name, value);
            } else {
                self.values.remove(&name);
                self.unavailable
                    .insert(name, format!("not a finite number ({value})"));
            }
        }
    }

    /// Adds what an engine measured in the window: files, log, waits, series and autogrowths are
    /// the engine's alone; its counts, values and unavailable metrics join the body's; the
    /// server's activity for others joins the window's interference, judged again.
    pub fn absorb(&mut self, evidence: Evidence) {
        self.record_values(evidence.values);
        self.files.extend(evidence.files);
        if evidence.log.is_some() {
            self.log = evidence.log;
        }
        self.waits.extend(evidence.waits);
        self.series.extend(evidence.series);
        self.counts.extend(evidence.counts);
        self.unavailable.extend(evidence.unavailable);
        self.facts.extend(evidence.facts);
        self.autogrowths.extend(evidence.autogrowths);
        self.settings.extend(evidence.settings);
        // The server's activity joins the machine's, and the window is judged again with it.
        if let Some(server) = evidence.server {
            if let Some(interference) = self.interference.take() {
                self.interference = Some(
                    super::interference::Interference {
                        server: Some(server),
                        ..interference
                    }
                    .judge(&super::interference::Thresholds::DEFAULT),
                );
            }
        }
    }
}

/// `values` as written, a `null` (a non-finite value of an older version) left out.
fn finite_values<'de, D: serde::Deserializer<'de>>(
    deserializer: D,
) -> std::result::Result<BTreeMap<String, f64>, D::Error> {
    let raw: BTreeMap<String, Option<f64>> = Deserialize::deserialize(deserializer)?;
    Ok(raw
        .into_iter()
        .filter_map(|(name, value)| Some((name, value?)))
        .collect())
}

#[cfg(test)]
mod absorb_tests;
#[cfg(test)]
mod stopping_tests;

#[cfg(test)]
mod finite_tests;
