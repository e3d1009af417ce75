//! The concurrent load driver: `C` workers, each with its own connection, run the user's
//! statement closure over their shares of the work in transactions of `N` statements, and the
//! driver measures latency, throughput over time, errors, retries and its own overhead.
//!
//! ```no_run
//! use dbbench_core::driver::{Load, Op, Work};
//! use dbbench_core::{Connection, Result, Session, Value};
//!
//! async fn populate(db: &mut Session) -> Result<()> {
//!     db.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, payload BLOB NOT NULL)").await?;
//!     let payload = vec![b'x'; 4_100];
//!     let load = Load::new(128, Work::Statements(128_000)).statements_per_transaction(10);
//!     let report = db
//!         .load(load)
//!         .run(async move |conn: &mut Connection, op: Op| {
//!             let params = [Value::Int(op.id as i64), Value::Blob(payload.clone())];
//!             conn.execute_with("INSERT INTO t VALUES (?1, ?2)", &params).await
//!         })
//!         .await?;
//!     assert_eq!(report.stats.rows, 128_000);
//!     Ok(())
//! }
//! ```
//!
//! **The closure is called once per statement** with the worker's connection and an [`Op`] that
//! numbers the statement, so rows can be generated deterministically from `op.id`; it returns the
//! rows the statement changed (what `execute` returns). The driver owns the transaction around
//! the statements: it begins, calls the closure `N` times and commits, and when the engine
//! reports busy (SQLite) or a deadlock (SQL Server) it rolls back and re-runs the same
//! statements (`op.attempt` tells them apart), so planned counts stay exact.
//!
//! **Start.** Every worker opens its connection with [`Session::connect`] and runs a warm-up
//! query first; the measured load starts when all are ready, so ramp-up is outside it.
//!
//! **Execution.** On the embedded engine each worker is an OS thread with its own small runtime,
//! because SQLite calls block; on a network engine workers are asynchronous tasks driven by the
//! calling thread. The saturation check in the results says when that thread (or the driver's
//! bookkeeping) rather than the database limited the load.
//!
//! **Results.** [`Session::load`] records the report in the repetition's results: see
//! [`LoadReport`] for what goes where.
//!
//! The driver knows nothing of sessions: `Session::load` hands it the database and the window's
//! start (`run_load`), so the session imports the driver and not the other way round.
//!
//! [`Session::connect`]: crate::Session::connect
//! [`Session::load`]: crate::Session::load

mod arrival;
mod crew;
mod failure;
mod latency;
mod report;
mod saturation;
mod timeline;
mod worker;
mod workload;

pub use report::LoadReport;
pub use workload::{Load, Work};

use crate::engine::connection::Connection;
use crate::engine::Database;
use crate::model::error::Result;
use crew::Execution;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Instant;
use worker::Shared;

/// Which statement the closure is asked to run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Op {
    /// The worker, from 0.
    pub worker: u32,
    /// Workers in the load.
    pub workers: u32,
    /// The statement's number in its worker's share, from 0.
    pub sequence: u64,
    /// A number unique in the load, `sequence * workers + worker`. For a planned load (count or
    /// bytes) the ids are exactly `0..statements`, so `op.id` can be a primary key.
    pub id: u64,
    /// The worker's transaction, from 0.
    pub transaction: u64,
    /// The statement's place in its transaction, from 0.
    pub position: u32,
    /// 0 for the first run of the transaction, `k` for its `k`-th retry.
    pub attempt: u32,
}

/// Runs `load` on `database`; the timeline counts seconds from `origin`.
pub(crate) async fn run_load<F>(
    database: Arc<Database>,
    origin: Instant,
    load: Load,
    statement: F,
) -> Result<LoadReport>
where
    F: AsyncFn(&mut Connection, Op) -> Result<u64> + Send + Sync + 'static,
{
    load.validate()?;
    let execution = load.execution.unwrap_or(database.profile().execution);
    let shares: Vec<Option<u64>> = match load.shares() {
        Some(shares) => shares.into_iter().map(Some).collect(),
        None => vec![None; load.workers as usize],
    };
    let shared = Arc::new(Shared {
        load: load.clone(),
        origin,
        database,
        statement,
        stop: AtomicBool::new(false),
        own_thread: execution == Execution::Threads,
    });
    let outcome = crew::run(execution, shared, shares).await?;
    let report = report::assemble(&load, execution, origin, outcome);
    for warning in &report.stats.saturation.warnings {
        crate::util::console::say(&format!("dbbench › load `{}`: {warning}", load.name));
    }
    Ok(report)
}

// The driver's own tests run on the embedded engine.
#[cfg(all(test, feature = "embedded"))]
mod tests;
