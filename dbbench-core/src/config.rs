//! The configuration a benchmark declares: storage options per cell and run options per benchmark.
//!
//! These types are built by the `#[db_bench]` macro as `static` data, so every field is
//! const-constructible (`&'static` slices and strings, no heap). Sizes are already parsed into
//! bytes at compile time; the text the user wrote is kept beside them for reports.

use serde::Serialize;
use std::time::Duration;

/// A size in bytes together with the text the user wrote (`"1MB"`).
///
/// Units are binary, as in SQL Server: `1KB` = 1024 bytes, `1MB` = 1024 KB.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Size {
    /// The size in bytes.
    pub bytes: u64,
    /// The literal as written in the attribute.
    #[serde(skip)]
    pub text: &'static str,
}

impl Size {
    /// A size of `bytes` bytes written as `text`.
    pub const fn new(bytes: u64, text: &'static str) -> Self {
        Size { bytes, text }
    }

    /// The size in mebibytes, for reports.
    pub fn mib(&self) -> f64 {
        self.bytes as f64 / (1024.0 * 1024.0)
    }
}

/// How a file grows when it is full.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Growth {
    /// Grow by a fixed number of bytes.
    Fixed(Size),
    /// Grow by this percent of the file's current size.
    Percent(u32),
    /// Never grow: a write past the end fails with a "file is full" error.
    None,
}

impl Growth {
    /// The number of bytes to add to a file of `current` bytes.
    ///
    /// Percent growth is at least one 64 KiB extent so that a tiny file still makes progress.
    pub fn increment(&self, current: u64) -> Option<u64> {
        match self {
            Growth::Fixed(size) => Some(size.bytes),
            Growth::Percent(pct) => Some((current * *pct as u64 / 100).max(crate::units::EXTENT)),
            Growth::None => None,
        }
    }

    /// The growth as text: `1MB`, `10%` or `none`.
    pub fn describe(&self) -> String {
        match self {
            Growth::Fixed(size) => size.text.to_string(),
            Growth::Percent(pct) => format!("{pct}%"),
            Growth::None => "none".to_string(),
        }
    }
}

/// The recovery model of the database.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Recovery {
    /// Log space is reused after each checkpoint.
    Simple,
    /// The log keeps every record until it is backed up.
    Full,
    /// As full, with minimal logging of bulk operations (SQL Server only).
    BulkLogged,
}

impl Recovery {
    /// The keyword as written in the attribute.
    pub fn keyword(&self) -> &'static str {
        match self {
            Recovery::Simple => "simple",
            Recovery::Full => "full",
            Recovery::BulkLogged => "bulk_logged",
        }
    }
}

/// The storage configuration of one cell. `None` means "the backend's default".
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct StorageSpec {
    /// Number of data files (at least 1).
    pub data_files: u32,
    /// Total initial data size, split equally over the data files.
    pub data_size: Option<Size>,
    /// Autogrowth of each data file.
    pub growth: Option<Growth>,
    /// Initial (or pre-grown) size of the log.
    pub log_size: Option<Size>,
    /// Autogrowth of the log.
    pub log_growth: Option<Growth>,
    /// Grow the log to `log_size` in steps of this size.
    pub log_pregrow: Option<Size>,
    /// Instant file initialization for data files.
    pub ifi: Option<bool>,
    /// Recovery model.
    pub recovery: Option<Recovery>,
    /// Maximum degree of parallelism.
    pub maxdop: Option<u32>,
    /// Number of tempdb data files (an instance-level change on SQL Server).
    pub tempdb_files: Option<u32>,
    /// Initial size of each tempdb data file.
    pub tempdb_size: Option<Size>,
    /// Autogrowth of each tempdb data file.
    pub tempdb_growth: Option<Growth>,
    /// Named volumes the data files are spread over, round robin.
    pub data_on: &'static [&'static str],
    /// Named volume of the log.
    pub log_on: Option<&'static str>,
}

impl StorageSpec {
    /// A configuration with one data file and every other option left to the backend.
    pub const DEFAULT: StorageSpec = StorageSpec {
        data_files: 1,
        data_size: None,
        growth: None,
        log_size: None,
        log_growth: None,
        log_pregrow: None,
        ifi: None,
        recovery: None,
        maxdop: None,
        tempdb_files: None,
        tempdb_size: None,
        tempdb_growth: None,
        data_on: &[],
        log_on: None,
    };

    /// The options that are set, as `(name, value)` pairs in a stable order, for reports.
    pub fn describe(&self) -> Vec<(&'static str, String)> {
        let mut out = Vec::new();
        out.push(("data_files", self.data_files.to_string()));
        let mut put = |name: &'static str, value: Option<String>| {
            if let Some(value) = value {
                out.push((name, value));
            }
        };
        put("data_size", self.data_size.map(|s| s.text.to_string()));
        put("growth", self.growth.map(|g| g.describe()));
        put("log_size", self.log_size.map(|s| s.text.to_string()));
        put("log_growth", self.log_growth.map(|g| g.describe()));
        put("log_pregrow", self.log_pregrow.map(|s| s.text.to_string()));
        put("ifi", self.ifi.map(|b| b.to_string()));
        put("recovery", self.recovery.map(|r| r.keyword().to_string()));
        put("maxdop", self.maxdop.map(|m| m.to_string()));
        put("tempdb_files", self.tempdb_files.map(|m| m.to_string()));
        put("tempdb_size", self.tempdb_size.map(|s| s.text.to_string()));
        put("tempdb_growth", self.tempdb_growth.map(|g| g.describe()));
        put(
            "data_on",
            (!self.data_on.is_empty()).then(|| self.data_on.join(",")),
        );
        put("log_on", self.log_on.map(str::to_string));
        out
    }
}

/// The baseline data set loaded before the measured window.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum FixtureKind {
    /// No data: the body starts from an empty database.
    None,
    /// The `charge` table of the SQLskills Credit sample database.
    Credit,
}

/// The order in which the repetitions of a benchmark's cells run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Order {
    /// A B C A B C …: machine drift does not favour one configuration.
    Interleaved,
    /// A A A B B B …
    Blocked,
}

/// A database backend.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum BackendKind {
    /// SQLite in-process with dbbench's storage layer.
    Embedded,
    /// Microsoft SQL Server over TDS.
    Mssql,
    /// PostgreSQL: a managed throwaway cluster or the server in `DBBENCH_POSTGRES`.
    Postgres,
}

impl BackendKind {
    /// The keyword used in `backends = [...]` and `DBBENCH_BACKEND`.
    pub fn keyword(&self) -> &'static str {
        match self {
            BackendKind::Embedded => "embedded",
            BackendKind::Mssql => "mssql",
            BackendKind::Postgres => "postgres",
        }
    }
}

/// Options that apply to every cell of a benchmark.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct RunSpec {
    /// Measured repetitions of each cell.
    pub repeat: u32,
    /// Unmeasured warm-up repetitions before the measured ones.
    pub warmup: u32,
    /// The data set loaded before each repetition.
    pub fixture: FixtureKind,
    /// The backends this benchmark may run on; empty means all.
    pub backends: &'static [BackendKind],
    /// Longest time one repetition of the body may take.
    pub timeout: Option<Duration>,
    /// Order of repetitions across cells.
    pub order: Order,
    /// The cell the others are compared with; `None` means the first.
    pub baseline: Option<&'static str>,
    /// Multiply every storage size by the scale's factor (see [`crate::Scale`]).
    pub scale_storage: bool,
    /// At `DBBENCH_SCALE=smoke`, sizes and work are the articles' divided by this (default 512).
    pub smoke_divisor: u32,
    /// At the default scale, sizes and work are the articles' divided by this (default 16).
    pub default_divisor: u32,
}

impl RunSpec {
    /// One repetition, no warm-up, no fixture, every backend.
    pub const DEFAULT: RunSpec = RunSpec {
        repeat: 1,
        warmup: 0,
        fixture: FixtureKind::None,
        backends: &[],
        timeout: None,
        order: Order::Interleaved,
        baseline: None,
        scale_storage: false,
        smoke_divisor: 512,
        default_divisor: 16,
    };
}
