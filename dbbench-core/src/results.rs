//! The results data model and its JSON files.
//!
//! One JSON file per benchmark, `target/dbbench/results/<module.path.name>.json`, following the
//! versioned schema documented in `docs/results-schema.md`. Every numeric field carries its unit in
//! its name (`_s`, `_ms`, `_bytes`) or is a plain count.

use crate::error::{Error, Result};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::Path;

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
    pub host: crate::host::HostInfo,
    /// The run options.
    pub run: RunInfo,
    /// One entry per cell, in declaration order.
    pub cells: Vec<CellResult>,
}

/// The backend a benchmark ran on.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default)]
pub struct BackendInfo {
    /// `embedded` or `mssql`.
    pub kind: String,
    /// The engine's version (`SQLite 3.50.2`, `Microsoft SQL Server 2022 …`).
    pub version: String,
    /// Facts the results depend on (IFI state, edition, trace flags…), as text.
    pub preconditions: BTreeMap<String, String>,
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
}

impl CellResult {
    /// The measured (non-warm-up) runs.
    pub fn measured(&self) -> impl Iterator<Item = &RunResult> {
        self.runs.iter().filter(|r| !r.warmup)
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
    /// Measured values that vary from run to run, with units in their names.
    pub values: BTreeMap<String, f64>,
    /// Metrics the backend could not provide, with the reason.
    pub unavailable: BTreeMap<String, String>,
    /// Every autogrowth of a data or log file in the measured window, in order.
    #[serde(default)]
    pub autogrowths: Vec<AutogrowthEvent>,
    /// Concurrent loads the body ran with [`crate::Session::load`], in order.
    #[serde(default)]
    pub loads: Vec<crate::driver::LoadStats>,
}

/// One autogrowth of a file in the measured window (SQL Server's "Data/Log File Auto Grow").
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct AutogrowthEvent {
    /// Logical file name (`data_1`, `log`).
    pub file: String,
    /// When the growth started, in seconds since the window opened.
    pub at_s: f64,
    /// Bytes added.
    pub bytes: u64,
    /// The file's size after the growth.
    pub size_after_bytes: u64,
    /// Whether the new space was written with zeros (no instant file initialization).
    pub zero_filled: bool,
    /// How long the growth took.
    pub duration_ms: f64,
}

/// A split time recorded by the body.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Lap {
    /// The label given to `lap`.
    pub name: String,
    /// Time since the body started.
    pub at_s: f64,
    /// Time since the previous lap (or the start).
    pub split_s: f64,
}

/// Role of a database file.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum FileKind {
    /// A data file.
    Data,
    /// The log (WAL on the embedded engine).
    Log,
}

/// Per-file statistics for the measured window: the counterpart of `sys.dm_io_virtual_file_stats`
/// plus autogrowth events.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct FileStats {
    /// Logical name (`data_1`, `log`).
    pub name: String,
    /// Data or log.
    pub kind: FileKind,
    /// The volume name the file was placed on, if any.
    pub volume: Option<String>,
    /// Size when the window opened.
    pub size_before_bytes: u64,
    /// Size when the window closed.
    pub size_after_bytes: u64,
    /// Read calls.
    pub reads: u64,
    /// Write calls.
    pub writes: u64,
    /// Bytes read.
    pub bytes_read: u64,
    /// Bytes written, zero fill included.
    pub bytes_written: u64,
    /// Time spent in reads.
    pub read_stall_ms: f64,
    /// Time spent in writes.
    pub write_stall_ms: f64,
    /// Flushes (fsync / fdatasync).
    pub flushes: u64,
    /// Autogrowth events.
    pub growth_events: u64,
    /// Bytes added by autogrowth.
    pub growth_bytes: u64,
    /// Bytes of zeros written to initialise new space.
    pub zero_fill_bytes: u64,
    /// Total time spent growing.
    pub growth_total_ms: f64,
    /// Longest single growth.
    pub growth_max_ms: f64,
}

/// Log growth and segment counts. Segments are the embedded engine's counterpart of VLFs.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct LogStats {
    /// Log growths in the measured window.
    pub growths: u64,
    /// Segments (VLFs) when the window opened.
    pub segments_before: u64,
    /// Segments (VLFs) when the window closed.
    pub segments_after: u64,
    /// Log size when the window opened.
    pub size_before_bytes: u64,
    /// Log size when the window closed.
    pub size_after_bytes: u64,
}

/// One wait type's share of the measured window, as the articles tabulate them.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct WaitStat {
    /// The wait type (`WRITELOG`).
    pub wait_type: String,
    /// Total wait time.
    pub wait_time_s: f64,
    /// Tasks that waited.
    pub waiting_tasks: u64,
    /// Percent of all (non-benign) wait time.
    pub pct: f64,
    /// Running percent in descending order.
    pub running_pct: f64,
}

/// A value sampled at a fixed interval during the measured window.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Series {
    /// What is sampled (`Log Bytes Flushed/sec`, `rows/s`).
    pub name: String,
    /// Unit of the values.
    pub unit: String,
    /// Seconds between samples.
    pub interval_s: f64,
    /// The samples; sample `i` covers `[i*interval_s, (i+1)*interval_s)` of the window.
    pub values: Vec<f64>,
}

impl BenchmarkResult {
    /// Writes the result as pretty JSON to `path`, creating the directory.
    pub fn write(&self, path: &Path) -> Result<()> {
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir)
                .map_err(|e| Error::io("cannot create directory", dir, e))?;
        }
        let text = serde_json::to_string_pretty(self)?;
        std::fs::write(path, text).map_err(|e| Error::io("cannot write results", path, e))
    }

    /// Reads a result written by [`BenchmarkResult::write`].
    pub fn read(path: &Path) -> Result<Self> {
        let text =
            std::fs::read_to_string(path).map_err(|e| Error::io("cannot read results", path, e))?;
        let value: Self = serde_json::from_str(&text).map_err(|e| {
            Error::Config(format!("`{}` is not a dbbench result: {e}", path.display()))
        })?;
        if value.schema_version != SCHEMA_VERSION {
            return Err(Error::Config(format!(
                "`{}` has schema version {}, this dbbench reads version {SCHEMA_VERSION}",
                path.display(),
                value.schema_version
            )));
        }
        Ok(value)
    }

    /// The baseline cell's index.
    pub fn baseline_index(&self) -> usize {
        self.cells
            .iter()
            .position(|c| c.name == self.run.baseline)
            .unwrap_or(0)
    }
}
