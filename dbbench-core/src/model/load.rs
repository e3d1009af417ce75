//! The results of one concurrent load as they are written to the results JSON: the driver's
//! configuration, per-worker counts, latency percentiles, errors, retries and the saturation
//! check. Units are in the field names (`_s`, `_ms`, `_per_s`); other numbers are plain counts.

use serde::{Deserialize, Serialize};

/// How much work a load was given, as recorded in the results.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum WorkConfig {
    /// A number of statements in total.
    Statements {
        /// Statements over all workers.
        statements: u64,
    },
    /// A number of bytes, turned into statements of a fixed size.
    Bytes {
        /// Bytes over all workers.
        total_bytes: u64,
        /// Bytes each statement writes.
        statement_bytes: u64,
    },
    /// A fixed time: transactions start until it has passed.
    Duration {
        /// The length of the load.
        duration_s: f64,
    },
}

/// The driver's configuration of one load. Everything here is deterministic, so snapshots carry
/// it.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct LoadConfig {
    /// The load's name; it prefixes its counts, values and series.
    pub name: String,
    /// Concurrent workers, each with its own connection.
    pub workers: u32,
    /// The amount of work.
    pub work: WorkConfig,
    /// Statements per transaction (a worker's last transaction may be shorter).
    pub statements_per_transaction: u32,
    /// Statements the plan gives all workers together (`None` for a duration).
    pub planned_statements: Option<u64>,
    /// Transactions the plan gives all workers together (`None` for a duration).
    pub planned_transactions: Option<u64>,
    /// Statements each worker was given, by worker (empty for a duration).
    pub worker_statements: Vec<u64>,
    /// Pause of each worker after each transaction (closed loop).
    pub think_time_ms: Option<f64>,
    /// Offered transactions per second over all workers (open loop, Poisson arrivals).
    pub target_rate_per_s: Option<f64>,
    /// How long a statement waits for a lock before it fails (`busy_timeout` on SQLite,
    /// `LOCK_TIMEOUT` on SQL Server); `None` keeps the connection's default.
    pub lock_timeout_ms: Option<f64>,
    /// Statements each connection ran after connecting, before the measurement.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub setup: Vec<String>,
    /// Retries of one transaction after a busy or deadlock error before the load fails.
    pub max_retries: u32,
    /// Seed of the arrival times and retry back-off.
    pub seed: u64,
}

/// Latency of committed transactions, from their start (closed loop) or their scheduled arrival
/// (open loop, so queueing behind a slow server counts) to the end of their commit, retries
/// included. Three significant digits.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default)]
pub struct LatencyStats {
    /// Transactions measured.
    pub transactions: u64,
    /// Mean latency.
    pub mean_ms: f64,
    /// Median.
    pub p50_ms: f64,
    /// 95th percentile.
    pub p95_ms: f64,
    /// 99th percentile.
    pub p99_ms: f64,
    /// Slowest transaction.
    pub max_ms: f64,
}

/// Failed attempts by kind. A retried attempt counts here and in `retries`.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq, Default)]
pub struct ErrorCounts {
    /// SQL Server chose the transaction as a deadlock victim (error 1205).
    pub deadlock: u64,
    /// SQLite reported `SQLITE_BUSY` or `SQLITE_LOCKED` (its lock wait ran out).
    pub busy: u64,
    /// A lock or command timeout (SQL Server error 1222, or a dbbench timeout).
    pub timeout: u64,
    /// Any other error.
    pub other: u64,
}

/// One worker's share of the load.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct WorkerStats {
    /// The worker's number, from 0.
    pub worker: u32,
    /// Transactions committed.
    pub transactions: u64,
    /// Statements in committed transactions.
    pub statements: u64,
    /// Rows the committed statements reported.
    pub rows: u64,
    /// Transactions re-run after a retryable error.
    pub retries: u64,
    /// Failed attempts by kind.
    pub errors: ErrorCounts,
    /// CPU time of the worker's thread during the load, where each worker has its own thread.
    pub cpu_s: Option<f64>,
    /// Time the worker spent in the driver's own code between transactions.
    pub driver_s: f64,
}

/// Whether the client, rather than the database, limited the load.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default)]
pub struct SaturationStats {
    /// Wall-clock time of the load.
    pub wall_s: f64,
    /// CPU time of the whole process during the load (it includes the engine when the engine
    /// runs in-process).
    pub process_cpu_s: Option<f64>,
    /// CPU time of the thread that drove asynchronous workers, when they share one thread.
    pub driving_thread_cpu_s: Option<f64>,
    /// CPU cores available to the process.
    pub cores: u32,
    /// `process_cpu_s / (wall_s * cores)`.
    pub process_cpu_share: Option<f64>,
    /// `driving_thread_cpu_s / wall_s`.
    pub driving_thread_share: Option<f64>,
    /// Time all workers spent in the driver's own code between transactions.
    pub driver_s: f64,
    /// `driver_s / (workers * wall_s)`: the part of the workers' time the driver took.
    pub driver_share: f64,
    /// Why the client may have been the bottleneck; empty when it was not.
    pub warnings: Vec<String>,
}

/// Everything one concurrent load measured.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct LoadStats {
    /// The driver's configuration.
    pub config: LoadConfig,
    /// `threads` (one OS thread per worker, for engines whose calls block) or `tasks`
    /// (asynchronous tasks on the calling thread, for network engines).
    pub execution: String,
    /// When the measured load started, after the connections were opened and warmed, as seconds
    /// since the measured window opened.
    pub started_at_s: f64,
    /// From the start of the load to the end of its last transaction.
    pub elapsed_s: f64,
    /// Transactions committed.
    pub transactions: u64,
    /// Statements in committed transactions.
    pub statements: u64,
    /// Rows the committed statements reported.
    pub rows: u64,
    /// `transactions / elapsed_s`.
    pub transactions_per_s: f64,
    /// `statements / elapsed_s`.
    pub statements_per_s: f64,
    /// Transaction latency.
    pub latency: LatencyStats,
    /// Failed attempts by kind.
    pub errors: ErrorCounts,
    /// Transactions re-run after a retryable error.
    pub retries: u64,
    /// Per-worker counts, by worker number.
    pub workers: Vec<WorkerStats>,
    /// The saturation check.
    pub saturation: SaturationStats,
}

/// How the workers of a load run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Execution {
    /// One OS thread per worker, each with its own single-threaded runtime: an in-process engine's
    /// calls block, so only threads run them in parallel.
    Threads,
    /// Asynchronous tasks on the calling thread: network engines wait on sockets, and one thread
    /// drives many connections.
    Tasks,
}

impl Execution {
    /// The name recorded in the results.
    pub fn keyword(self) -> &'static str {
        match self {
            Execution::Threads => "threads",
            Execution::Tasks => "tasks",
        }
    }
}

/// The kind of a failed attempt, as an engine classifies it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorKind {
    /// A deadlock victim.
    Deadlock,
    /// SQLite's `SQLITE_BUSY` or `SQLITE_LOCKED`.
    Busy,
    /// A lock or command timeout.
    Timeout,
    /// Anything else.
    Other,
}

impl ErrorKind {
    /// Whether re-running the whole transaction is the remedy: for a busy database and for a
    /// deadlock victim it is the documented one.
    pub fn retryable(self) -> bool {
        matches!(self, ErrorKind::Busy | ErrorKind::Deadlock)
    }

    /// The kind as it is written in reports.
    pub fn keyword(self) -> &'static str {
        match self {
            ErrorKind::Deadlock => "deadlock",
            ErrorKind::Busy => "busy",
            ErrorKind::Timeout => "timeout",
            ErrorKind::Other => "other",
        }
    }
}
