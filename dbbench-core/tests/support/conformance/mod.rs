//! The conformance suite every backend gets from one line: `support::backend_conformance!(name,
//! target)` in its test file generates the lifecycle, cancel, driver, settings read-back and
//! stale-sweep tests for it.
//!
//! The tests speak to the backend only through the dispatcher (`Backend`, `Database`,
//! `Connection`, `run_benchmark`), never through a backend's own types, so a new backend gets them
//! by writing a [`Target`]: how to start it (or why it is skipped), what of dbbench's is left on
//! it, and the few things only it can do (make a database dbbench did not create, mark one as a
//! killed run's). The targets of today's backends are in this folder, each behind its feature.
//!
//! Why the backend's SQL is asked of the target and not chosen by dialect here: a new dialect
//! would otherwise need an arm in the suite.

use super::{cell, double, exclusively};
use dbbench_core::__internals::config::{FixtureKind, RunSpec, StorageSpec};
use dbbench_core::__internals::{
    json, paths, run_benchmark, Backend, BenchmarkSpec, BodyFuture, DatabasePlan, RunContext,
    Volumes,
};
use dbbench_core::driver::{Load, Op, Work};
use dbbench_core::results::{confounders, BenchmarkResult, CacheState, CellStatus};
use dbbench_core::{Connection, Error, Scale, Session, Value};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

mod cancel;
mod driver;
mod lifecycle;
mod settings;
mod stale;
#[allow(unused_imports)] // Each test binary uses what its backend's line generates.
pub use cancel::*;
#[allow(unused_imports)] // Each test binary uses what its backend's line generates.
pub use driver::*;
#[allow(unused_imports)] // Each test binary uses what its backend's line generates.
pub use lifecycle::*;
#[allow(unused_imports)] // Each test binary uses what its backend's line generates.
pub use settings::*;
#[allow(unused_imports)] // Each test binary uses what its backend's line generates.
pub use stale::*;

#[cfg(feature = "embedded")]
pub mod embedded;
#[cfg(feature = "mariadb")]
pub mod mariadb;
#[cfg(feature = "mssql")]
pub mod mssql;
#[cfg(feature = "postgres")]
pub mod postgres;

/// Who a staged database's ownership marker names, for the stale sweep.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Owner {
    /// A dbbench process of this host that is gone (a killed run).
    Gone,
    /// This process's PID with another start time: the PID was reused, the owner is gone.
    Reused,
    /// This process, which still runs.
    Me,
}

/// What the suite needs of a backend besides the dispatcher's API. One value per test: a target
/// may keep what it started (a scripted server) to answer [`Target::leftovers`] later.
#[allow(async_fn_in_trait)] // Used with concrete types only: the macro names the target.
pub trait Target {
    /// A fresh backend for one test, or `None` when the test is skipped (the target prints why,
    /// or fails when the environment says the backend must run).
    async fn backend(&self) -> Option<Backend>;

    /// What dbbench left of its databases for `ctx`, asked after the backend is dropped: must
    /// be empty after every teardown.
    async fn leftovers(&self, ctx: &RunContext) -> Vec<String>;

    /// Parameter `n` (1-based) in a statement.
    fn placeholder(&self, n: usize) -> String;

    /// A statement that runs until a stop ends it; a server that answers at once (a scripted
    /// double) gets it again and again, as the suite repeats it until it fails.
    fn runaway(&self) -> &'static str;

    /// How long a stopped statement may take to return after the timeout fires.
    fn stop_within(&self) -> Duration {
        Duration::from_millis(2000)
    }

    /// Whether a timed-out statement is always named in the error (`(statement: …)`); a server
    /// whose kill needs a login may end the body before it can be named.
    fn names_statement(&self) -> bool {
        true
    }

    /// The driver test's 4.1 KB payload column, filled by its default (a server whose `char`
    /// is shorter says how it makes one as long).
    fn payload_column(&self) -> &'static str {
        "payload char(4100) NOT NULL DEFAULT 'a'"
    }

    /// Settings every window must read back, as results name them (the ones that decide
    /// durability and the log's behaviour: a read-back that lost them would let a confounder
    /// through unseen).
    fn settings(&self) -> &'static [&'static str];

    /// What the server's error for `INSERT INTO no_such_table` contains (its own words, code).
    fn missing_table_error(&self) -> &'static [&'static str];

    /// Whether the server keeps rows and does the work (false for a scripted double, whose counts
    /// are made up).
    fn stores_rows(&self) -> bool {
        true
    }

    /// Makes a database `name` that dbbench did not create, beside the database `admin` is
    /// connected to; `half_marked`: with as much of dbbench's marking as the backend has short of
    /// what makes it dbbench's.
    async fn stage_foreign(
        &self,
        ctx: &RunContext,
        admin: &mut Connection,
        name: &str,
        half_marked: bool,
    );

    /// Leaves a database `name` as a run of `owner` would, with its marker; false when this
    /// backend sweeps no single databases (a managed PostgreSQL cluster is swept as a whole).
    async fn stage_owned(
        &self,
        ctx: &RunContext,
        admin: &mut Connection,
        name: &str,
        owner: Owner,
    ) -> bool;

    /// The statement that marks database `name`, which dbbench made, as made by process `pid`
    /// of this host instead (its start time unknown when `None`): how a claim meets another
    /// run's database of the name it wants (the same name from another container whose process
    /// had the same PID). `None` where the backend's claim is tested beside its code (the
    /// embedded engine's directories, SQL Server's marker).
    fn remark(&self, name: &str, pid: u32, start: Option<u64>) -> Option<String> {
        let _ = (name, pid, start);
        None
    }

    /// Whether database `name` (and every file of it) is still there.
    async fn exists(&self, ctx: &RunContext, admin: &mut Connection, name: &str) -> bool;

    /// Removes a database the suite staged.
    async fn remove(&self, ctx: &RunContext, admin: &mut Connection, name: &str);
}

/// The backend's name as results carry it: the one place the suite names a backend.
pub fn backend_name(backend: &Backend) -> &'static str {
    backend.kind().keyword()
}

/// Generates the conformance tests of the backend `$name` in a module of that name, each getting
/// its own target from `$target` (an expression of a type implementing [`Target`]).
///
/// ```ignore
/// support::backend_conformance!(postgres, support::conformance::postgres::Managed);
/// ```
#[allow(unused_macros)] // See the `use` below.
macro_rules! backend_conformance {
    ($name:ident, $target:expr) => {
        mod $name {
            #[allow(unused_imports)]
            use super::*;
            use $crate::support::conformance as suite;

            #[test]
            fn lifecycle_create_connect_fixture_window_evidence_drop() {
                suite::lifecycle_by_hand(&$target, stringify!($name));
            }
            #[test]
            fn lifecycle_runs_every_repetition_interleaved_and_tears_down() {
                suite::lifecycle_repetitions(&$target, stringify!($name));
            }
            #[test]
            fn lifecycle_a_failing_body_reports_the_server_error_and_is_torn_down() {
                suite::lifecycle_failing(&$target, stringify!($name));
            }
            #[test]
            fn lifecycle_a_panicking_body_is_torn_down_and_reported() {
                suite::lifecycle_panicking(&$target, stringify!($name));
            }
            #[test]
            fn lifecycle_never_takes_over_a_database_it_did_not_create() {
                suite::lifecycle_foreign(&$target, stringify!($name));
            }
            #[test]
            fn cancel_a_body_over_its_timeout_fails_and_is_torn_down() {
                suite::cancel_idle(&$target, stringify!($name));
            }
            #[test]
            fn cancel_a_runaway_statement_is_stopped_and_the_other_cell_runs() {
                suite::cancel_runaway(&$target, stringify!($name));
            }
            #[test]
            fn driver_four_workers_insert_exactly_the_planned_rows() {
                suite::driver_load(&$target, stringify!($name));
            }
            #[test]
            fn settings_are_read_back_in_every_window_and_alike_cells_differ_in_none() {
                suite::settings_read_back(&$target, stringify!($name));
            }
            #[test]
            fn stale_a_killed_runs_database_is_swept_and_others_are_left() {
                suite::stale_sweep(&$target, stringify!($name));
            }
            #[test]
            fn stale_a_live_owners_database_is_never_claimed_a_gone_ones_is() {
                suite::stale_claim(&$target, stringify!($name));
            }
        }
    };
}
#[allow(unused_imports)]
pub(crate) use backend_conformance;

// Benchmark, body and cell names are short: a database is named after them (with the test
// binary's and the PID), and Babelfish keeps only 63 characters of a database name.

/// A context for test `test` of backend `name`, at a small scale, in a scratch work dir.
fn context(name: &str, test: &str) -> RunContext {
    super::context(
        &format!("conformance-{name}-{test}"),
        Scale::parse("0.002").unwrap(),
        Volumes::default(),
    )
}

/// Runs `work` on the target's backend, holding the benchmark lock; the backend is dropped
/// before the leftovers are asked for. `None` when the target skips.
fn on_backend<T: Target, R>(
    target: &T,
    ctx: &RunContext,
    work: impl AsyncFnOnce(&mut Backend) -> R,
) -> Option<(R, Vec<String>)> {
    exclusively(async {
        let mut backend = target.backend().await?;
        let out = work(&mut backend).await;
        drop(backend);
        Some((out, target.leftovers(ctx).await))
    })
}

/// Runs every cell of `bench` on `backend` and publishes the results, as the harness does.
async fn run_on(
    backend: &mut Backend,
    bench: &'static BenchmarkSpec,
    ctx: &RunContext,
) -> BenchmarkResult {
    let result = run_benchmark(bench, None, ctx, backend).await.unwrap();
    dbbench_core::__internals::publish(&result, &bench.file_stem(), &ctx.work_dir).unwrap();
    result
}

fn plan(ctx: &RunContext, name: &str) -> DatabasePlan {
    DatabasePlan {
        name: name.to_string(),
        storage: StorageSpec::DEFAULT,
        volumes: Volumes::default(),
        work_dir: ctx.work_dir.clone(),
        scale: ctx.scale.clone(),
    }
}

/// A database name of this process for the suite's own databases,
/// `dbbench_conformance_<pid>_<what>` (not ending in the PID, as the runner's names do).
fn own_name(what: &str) -> String {
    format!("dbbench_conformance_{}_{what}", std::process::id())
}

fn assert_nothing_left(left: &[String]) {
    assert!(left.is_empty(), "left behind after teardown: {left:?}");
}
