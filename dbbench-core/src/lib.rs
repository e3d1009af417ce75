//! # dbbench
//!
//! Declarative database storage-configuration benchmarks. Write an ordinary async function, annotate
//! it with [`db_bench`], and `cargo test` creates a database in each declared configuration, loads a
//! baseline, runs and times the function, collects file, log and server statistics, tears the
//! database down, and records the results as JSON and a reviewable `insta` snapshot.
//!
//! ```ignore
//! use dbbench_core::{db_bench, Result, Session};
//!
//! /// Doubling the charge table.
//! #[db_bench(fixture = "credit", data_files = [1, 4], repeat = 3)]
//! async fn doubling(db: &mut Session) -> Result<()> {
//!     for n in 1..=5 {
//!         let sql = dbbench_core::fixture::doubling_insert(db.dialect(), n);
//!         db.execute(&sql).await?;
//!         db.lap(format!("loop {n}"));
//!     }
//!     Ok(())
//! }
//! ```
//!
//! The default backend is the embedded engine (SQLite in-process with dbbench's storage layer);
//! `DBBENCH_BACKEND=mssql` with `DBBENCH_MSSQL` runs the same benchmarks on SQL Server.

#![warn(missing_docs)]

// The layers, lowest first; each imports only the layers above it in this list
// (`docs/architecture.md`; `tests/layers.rs` checks it).
mod analysis;
pub mod cli;
mod engine;
mod model;
mod output;
mod run;
mod util;

#[doc(hidden)]
pub mod __private;

pub use dbbench_macros::db_bench;
pub use engine::connection::Connection;
pub use model::config::{BackendKind, Growth, Recovery, Size, StorageSpec};
pub use model::dialect::Dialect;
pub use model::error::{Error, Result};
pub use model::scale::Scale;
pub use model::units;
pub use model::value::{FromValue, Row, Value};
pub use run::session::Session;
pub use run::spec::BenchmarkSpec;

/// The concurrent load driver: [`Session::load`] runs a [`Load`](driver::Load) of `C` workers,
/// each with its own connection, and returns its [`LoadReport`](driver::LoadReport).
pub mod driver {
    pub use crate::model::load::{
        ErrorCounts, ErrorKind, LatencyStats, LoadConfig, LoadStats, SaturationStats, WorkConfig,
        WorkerStats,
    };
    pub use crate::run::driver::{Load, LoadReport, LoadRun, Op, Work};
}

/// The results a benchmark produced, as the results JSON holds them (`docs/results-schema.md`).
pub mod results {
    pub use crate::model::calibration::{Calibration, VolumeCalibration};
    pub use crate::model::host::HostInfo;
    pub use crate::model::interference::{Busy, Interference, Thresholds};
    pub use crate::model::results::*;
    pub use crate::model::start::{CacheState, WindowStart};
}

/// The `credit` fixture and the statements of the articles' workloads, in each dialect.
pub mod fixture {
    pub use crate::engine::fixture::*;
    pub use crate::run::workload::double_charges;
}

/// Internals that dbbench's own integration tests and examples reach; not part of the public
/// API.
#[doc(hidden)]
pub mod __internals {
    pub use crate::analysis::compare::compare_all;
    pub use crate::analysis::precision::IntervalJudge;
    pub use crate::cli::invocation::{Invocation, Ran};
    pub use crate::engine::embedded::storage;
    pub use crate::engine::embedded::EmbeddedBackend;
    pub use crate::engine::mssql;
    pub use crate::engine::postgres;
    pub use crate::engine::{Backend, Database, DatabasePlan};
    pub use crate::model::config;
    pub use crate::model::units;
    pub use crate::model::volume::Volumes;
    pub use crate::output::comparator::{TimingMode, Tolerance};
    pub use crate::output::snapshot::{assert_snapshot_with, SnapshotView};
    pub use crate::output::snapshot::{check_cell, CellCheck};
    pub use crate::output::store::{store_file, InvocationStart, Store};
    pub use crate::output::{json, publish, rewrite, summary};
    pub use crate::run::context::{exclusive, RunContext};
    pub use crate::run::recorder::{NoRecorder, Recorder};
    pub use crate::run::runner::{database_name, run_benchmark, run_recorded};
    pub use crate::run::spec::{BenchmarkSpec, BodyFn, BodyFuture, CellSpec};
    pub use crate::run::target::{Judge, NoJudge};
    pub use crate::util::monitor::Monitor;
    pub use crate::util::paths;
    pub use crate::util::probe::calibrate;
}
