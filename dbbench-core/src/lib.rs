//! # dbbench
//!
//! Declarative database storage-configuration benchmarks. Write an ordinary async function, annotate
//! it with [`db_bench`], and `cargo test` creates a database in each declared configuration, loads a
//! baseline, runs and times the function, collects file, log and server statistics, tears the
//! database down, and records the results as JSON, CSV, an HTML report and a reviewable `insta`
//! snapshot.
//!
//! The default backend is the embedded engine (SQLite in-process with dbbench's storage layer), so
//! a benchmark runs anywhere with no server; `DBBENCH_BACKEND=mssql` with `DBBENCH_MSSQL` runs the
//! same benchmarks on SQL Server, and `DBBENCH_BACKEND=postgres` on PostgreSQL, each with its
//! Cargo feature (`mssql`, `postgres`; the embedded engine is the default feature `embedded`).
//!
//! ## A first benchmark
//!
//! **1. The dependency.** `cargo add dbbench-core`, or in `Cargo.toml`:
//!
//! ```toml
//! [dependencies]
//! dbbench-core = "0.1"
//! ```
//!
//! For PostgreSQL or SQL Server add the backend's feature:
//! `dbbench-core = { version = "0.1", features = ["postgres", "mssql"] }`.
//!
//! dbbench-core brings the [`db_bench`] attribute and the runtime it calls (one version: the two
//! are published together), and runs each benchmark on a runtime of its own, so no other
//! dependency is needed.
//!
//! **2. The benchmark**, in any module of the crate (`src/lib.rs` here): an `async fn` taking a
//! [`Session`], with the configurations to compare in the attribute. A list of values makes one
//! cell per value, each a `#[test]`:
//!
//! ```no_run
//! use dbbench_core::fixture::doubling_insert;
//! use dbbench_core::{db_bench, Result, Session};
//!
//! /// Doubling the charge table five times with small and large autogrowth.
//! #[db_bench(fixture = "credit", data_size = "1MB", growth = ["1MB", "64MB"], repeat = 2)]
//! pub async fn double_charges(db: &mut Session) -> Result<()> {
//!     for n in 1..=5 {
//!         let sql = doubling_insert(db.dialect(), n);
//!         db.execute(&sql).await?;
//!         db.lap(format!("loop {n}"));
//!     }
//!     Ok(())
//! }
//! # fn main() {}
//! ```
//!
//! **3. `cargo test`** runs the two cells `double_charges::growth_1mb` and
//! `double_charges::growth_64mb` at `smoke` scale (`cargo test double_charges` runs just them):
//! each repetition gets a fresh database that dbbench owns, the `credit` fixture is loaded outside
//! the measured window, the body is timed, and the results go under `target/dbbench/tests/`
//! (`results/*.json`, `*.csv`, `report/index.html`).
//!
//! **4. Accept the snapshot.** A new benchmark has no snapshot yet, so its first `cargo test` fails
//! and writes the pending one beside the crate, as
//! `snapshots/<crate>.<module>.<benchmark>__smoke.snap.new`. Read it and accept it with
//! `cargo insta review` (`cargo install cargo-insta` once) or `cargo insta accept`, or rerun with
//! `INSTA_UPDATE=always cargo test`, and commit the `.snap`. From then on `cargo test` fails when a
//! deterministic result changes (growths, log segments) and judges timings statistically.
//!
//! ## A suite binary
//!
//! To run the benchmarks at a larger scale than tests do, with progress, result tables, history and
//! baselines, give the crate a binary whose `main` is [`cli::main`] over the benchmarks in the
//! order the report should show them (`cargo run --release -- --help` lists its commands):
//!
//! ```no_run
//! mod autogrowth {
//!     use dbbench_core::{db_bench, Result, Session};
//!
//!     /// Updating every charge with small and large autogrowth.
//!     #[db_bench(fixture = "credit", growth = ["1MB", "64MB"])]
//!     pub async fn update_charges(db: &mut Session) -> Result<()> {
//!         db.execute("UPDATE charge SET charge_amt = charge_amt + 1").await?;
//!         Ok(())
//!     }
//! }
//!
//! fn main() -> std::process::ExitCode {
//!     dbbench_core::cli::main(&[&autogrowth::update_charges::BENCHMARK])
//! }
//! ```
//!
//! Every option of the attribute is described in the repository's `docs/options.md`, the results'
//! fields in `docs/results-schema.md`, and the concurrent load driver in [`driver`].

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
pub use model::scale::{Scale, ScaleKind};
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
    pub use crate::run::driver::{Load, LoadReport, Op, Work};
    pub use crate::run::session::LoadRun;
}

/// The results a benchmark produced, as the results JSON holds them (`docs/results-schema.md`).
pub mod results {
    pub use crate::model::calibration::{
        Calibration, Tolerance as CalibrationTolerance, VolumeCalibration,
    };
    pub use crate::model::earlier::{EarlierRatio, EarlierRun};
    pub use crate::model::host::HostInfo;
    pub use crate::model::interference::{
        Busy, Interference, ServerActivity, ServerThresholds, Thresholds,
    };
    pub use crate::model::presentation::{EvidenceColumn, EvidenceUnit, Presentation};
    pub use crate::model::results::*;
    pub use crate::model::setting::{Setting, Settings};
    pub use crate::model::start::{CacheState, Preparation, WindowStart};

    /// The confounder check: settings that differ from the baseline cell, or between
    /// repetitions, where nothing declared says they should.
    pub use crate::analysis::confounder::{
        between_repetitions, confounders, from_baseline, from_baseline_declaring, Confounder,
        ConfounderKind, SettingsCheck,
    };
}

/// The `credit` fixture and the statements of the articles' workloads, in the dialect of each
/// backend this build has.
pub mod fixture {
    pub use crate::engine::fixture::*;
    pub use crate::engine::registry::{credit_schema, doubling_insert};
    pub use crate::run::workload::double_charges;
}

/// Internals that dbbench's own integration tests and examples reach; not part of the public
/// API.
#[doc(hidden)]
pub mod __internals {
    pub use crate::analysis::compare::compare_all;
    pub use crate::analysis::precision::IntervalJudge;
    pub use crate::cli::invocation::{Invocation, Ran};
    // Every backend this build has, by its module's name (`__internals::mssql`).
    pub use crate::engine::backends::*;
    pub use crate::engine::plugin::{EngineBackend, EngineConnection, EngineDatabase, Pending};
    pub use crate::engine::{Backend, Database};
    pub use crate::model::config;
    pub use crate::model::plan::DatabasePlan;
    pub use crate::model::units;
    pub use crate::model::volume::Volumes;
    pub use crate::output::comparator::{TimingMode, Tolerance};
    pub use crate::output::snapshot::{assert_snapshot_with, SnapshotView};
    pub use crate::output::snapshot::{check_cell, CellCheck};
    pub use crate::output::store::{store_file, InvocationStart, Store};
    pub use crate::output::{json, publish, rewrite, summary};
    pub use crate::run::context::{exclusive, RunContext};
    pub use crate::run::plan::database_name;
    pub use crate::run::recorder::{NoRecorder, Recorder};
    pub use crate::run::runner::{run_benchmark, run_recorded};
    pub use crate::run::spec::{BenchmarkSpec, BodyFn, BodyFuture, CellSpec};
    pub use crate::run::target::{Judge, NoJudge};
    pub use crate::util::deadline;
    pub use crate::util::leftover;
    pub use crate::util::local_server;
    pub use crate::util::monitor::Monitor;
    pub use crate::util::owner::process_tag;
    pub use crate::util::paths;
    pub use crate::util::probe::calibrate;
}
