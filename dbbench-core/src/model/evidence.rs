//! What an engine measures: the evidence of one measured window (files, log, waits, sampled
//! series, autogrowth events), split times, and the facts about the backend itself.
//!
//! Engines build these and return them; they never see the results they end up in
//! ([`crate::model::results`]).

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// When a measured window was open, as wall-clock time (nanoseconds since the Unix epoch), so
/// that windows of different processes can be compared.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct WindowTimes {
    /// When the body started.
    pub start_unix_ns: u64,
    /// When the window closed.
    pub end_unix_ns: u64,
}

impl WindowTimes {
    /// Nanoseconds since the Unix epoch, now.
    pub fn now_ns() -> u64 {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos() as u64)
            .unwrap_or(0)
    }

    /// Whether the two windows share any instant.
    pub fn overlaps(&self, other: &WindowTimes) -> bool {
        self.start_unix_ns < other.end_unix_ns && other.start_unix_ns < self.end_unix_ns
    }
}

/// Everything an engine measured in one window, returned by its `close_window`.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Evidence {
    /// Data and log files during the window.
    pub files: Vec<FileStats>,
    /// The log's growth and segment (VLF) counts.
    pub log: Option<LogStats>,
    /// Top waits in the window, where the backend has them.
    pub waits: Vec<WaitStat>,
    /// Values sampled over time.
    pub series: Vec<Series>,
    /// Deterministic counts (pages, extents, instance changes).
    pub counts: BTreeMap<String, i64>,
    /// Measured values with units in their names.
    pub values: BTreeMap<String, f64>,
    /// Metrics the backend could not provide, with the reason.
    pub unavailable: BTreeMap<String, String>,
    /// What the backend found true of the database in the window, in words (SQL Server: the
    /// recovery behaviour in effect, `FULL (pseudo-simple: …)` for a FULL database that never had
    /// a full backup).
    pub facts: BTreeMap<String, String>,
    /// Every autogrowth in the window, in order.
    pub autogrowths: Vec<AutogrowthEvent>,
    /// The engine's settings in force during the window, read back from the engine (what the
    /// confounder check compares).
    pub settings: super::setting::Settings,
    /// What the server did outside dbbench's own sessions during the window (`None` where there
    /// is no server, or only dbbench's managed one).
    pub server: Option<super::interference::ServerActivity>,
}

/// The backend a benchmark ran on.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default)]
pub struct BackendInfo {
    /// The backend's keyword: `embedded`, `mssql` or `postgres`.
    pub kind: String,
    /// The engine's version (`SQLite 3.50.2`, `Microsoft SQL Server 2022 …`).
    pub version: String,
    /// Facts the results depend on (IFI state, edition, trace flags…), as text.
    pub preconditions: BTreeMap<String, String>,
    /// How the backend's results are shown, from its profile when the result was made, so that a
    /// build without the backend renders the result alike; `None` in results written before
    /// results recorded it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub presentation: Option<super::presentation::Presentation>,
}

impl BackendInfo {
    /// The precondition naming the product a backend reached when it is not the one the
    /// backend is for (`babelfish` behind the SQL Server backend).
    pub const COMPATIBLE_PRODUCT: &'static str = "compatible_product";

    /// The backend's tag in snapshot names: its keyword, followed by the compatible product it
    /// reached (`mssql_babelfish`), so that a recording from a server that only speaks another's
    /// protocol is never compared with, or taken for, the real server's.
    pub fn snapshot_tag(&self) -> String {
        match self.preconditions.get(Self::COMPATIBLE_PRODUCT) {
            Some(product) if !product.is_empty() => format!("{}_{product}", self.kind),
            _ => self.kind.clone(),
        }
    }
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
