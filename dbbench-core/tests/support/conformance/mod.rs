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

#[cfg(feature = "embedded")]
pub mod embedded;
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

// ---------------------------------------------------------------------------------------------
// Lifecycle

/// Create → connect → fixture → window → evidence → drop, by hand through the dispatcher.
pub fn lifecycle_by_hand<T: Target>(target: &T, name: &str) {
    let ctx = context(name, "by-hand");
    let Some((kind, left)) = on_backend(target, &ctx, async |backend: &mut Backend| {
        let kind = backend_name(backend);
        let info = backend.info().await.unwrap();
        assert_eq!(info.kind, kind);
        assert!(!info.version.is_empty());
        let db = backend
            .create(&plan(&ctx, &own_name("by_hand")))
            .await
            .unwrap();
        let mut conn = db.connect().await.unwrap();
        let scale = Scale::parse("0.002").unwrap();
        let rows = db
            .load_fixture(&mut conn, FixtureKind::Credit, &scale)
            .await
            .unwrap();
        assert!(rows > 0, "the fixture loaded no rows");
        if target.stores_rows() {
            let count: i64 = conn
                .query_scalar("SELECT count(*) FROM charge")
                .await
                .unwrap();
            assert_eq!(count as u64, rows);
        }
        db.open_window(&mut conn, CacheState::Warm).await.unwrap();
        let sql = dbbench_core::fixture::doubling_insert(conn.dialect(), 1);
        conn.execute(&sql).await.unwrap();
        let evidence = db.close_window(&mut conn).await.unwrap();
        assert!(
            !evidence.settings.is_empty(),
            "the window read back no settings"
        );
        if target.stores_rows() {
            let count: i64 = conn
                .query_scalar("SELECT count(*) FROM charge")
                .await
                .unwrap();
            assert_eq!(count as u64, 2 * rows);
        }
        drop(conn);
        db.drop_database().await.unwrap();
        kind
    }) else {
        return;
    };
    assert!(!kind.is_empty());
    assert_nothing_left(&left);
}

fn doubling<'a>(db: &'a mut Session) -> BodyFuture<'a> {
    Box::pin(async move {
        let before: i64 = db.query_scalar("SELECT count(*) FROM charge").await?;
        double(db, 2).await?;
        let after: i64 = db.query_scalar("SELECT count(*) FROM charge").await?;
        db.record_count("rows_before", before);
        db.record_count("rows_after", after);
        Ok(())
    })
}

super::benchmark! {
    static DOUBLING = doubling,
    title: "",
    run: RunSpec {
        repeat: 2,
        warmup: 1,
        fixture: FixtureKind::Credit,
        ..RunSpec::DEFAULT
    },
    cells: [cell("a", StorageSpec::DEFAULT), cell("b", StorageSpec::DEFAULT)],
}

pub fn lifecycle_repetitions<T: Target>(target: &T, name: &str) {
    let ctx = context(name, "doubling");
    let Some(((kind, result), left)) = on_backend(target, &ctx, async |backend: &mut Backend| {
        (
            backend_name(backend),
            run_on(backend, &DOUBLING, &ctx).await,
        )
    }) else {
        return;
    };
    assert_nothing_left(&left);
    assert_eq!(result.backend.kind, kind);
    assert_eq!(result.cells.len(), 2);
    for cell in &result.cells {
        assert_eq!(cell.status, CellStatus::Ok, "{}", cell.name);
        assert_eq!(cell.runs.len(), 3, "one warm-up and two measured runs");
        assert!(cell.runs[0].warmup && !cell.runs[1].warmup);
        let run = &cell.runs[1];
        assert_eq!(
            run.laps.iter().map(|l| l.name.as_str()).collect::<Vec<_>>(),
            ["loop 1", "loop 2"]
        );
        assert_eq!(run.counts["fixture_rows"] as u64, result.run.fixture_rows);
        if target.stores_rows() {
            assert_eq!(run.counts["rows_before"], run.counts["fixture_rows"]);
            assert_eq!(run.counts["rows_after"], 4 * run.counts["fixture_rows"]);
        }
        assert!(run.elapsed_s > 0.0);
        // The window's evidence: what the engine read back is there or said to be unavailable.
        assert!(!run.settings.is_empty(), "no settings read back");
    }
    // Interleaved, in a balanced order: the warm-up round and round 1 a, b; round 2 b, a.
    let mut order: Vec<(u32, &str)> = result
        .cells
        .iter()
        .flat_map(|c| c.runs.iter().map(move |r| (r.sequence, c.name.as_str())))
        .collect();
    order.sort();
    assert_eq!(order.iter().map(|o| o.1).collect::<String>(), "ababba");
    let file = paths::results_file(&ctx.work_dir, &DOUBLING.file_stem());
    assert_eq!(json::read(&file).unwrap(), result);
}

fn failing<'a>(db: &'a mut Session) -> BodyFuture<'a> {
    Box::pin(async move {
        db.execute("CREATE TABLE t (x integer)").await?;
        db.execute("INSERT INTO no_such_table VALUES (1)").await?;
        Err(Error::msg(
            "the server accepted a table that does not exist",
        ))
    })
}

fn panicking<'a>(db: &'a mut Session) -> BodyFuture<'a> {
    Box::pin(async move {
        db.execute("CREATE TABLE t (x integer)").await?;
        panic!("the body gave up");
    })
}

super::benchmark! {
    static FAILING = failing,
    title: "",
    run: RunSpec::DEFAULT,
    cells: [cell("only", StorageSpec::DEFAULT)],
}
super::benchmark! {
    static PANICKING = panicking,
    title: "",
    run: RunSpec::DEFAULT,
    cells: [cell("only", StorageSpec::DEFAULT)],
}

/// The one cell's failure after running `bench`, with nothing left behind.
fn failure<T: Target>(target: &T, name: &str, bench: &'static BenchmarkSpec) -> Option<String> {
    let ctx = context(name, bench.name);
    let (result, left) = on_backend(target, &ctx, async |backend: &mut Backend| {
        run_on(backend, bench, &ctx).await
    })?;
    assert_nothing_left(&left);
    match &result.cells[0].status {
        CellStatus::Failed(e) => Some(e.clone()),
        other => panic!("expected a failure, got {other:?}"),
    }
}

pub fn lifecycle_failing<T: Target>(target: &T, name: &str) {
    if let Some(e) = failure(target, name, &FAILING) {
        // The server's own error, naming the table.
        for words in target.missing_table_error() {
            assert!(e.contains(words), "{e}");
        }
    }
}

pub fn lifecycle_panicking<T: Target>(target: &T, name: &str) {
    if let Some(e) = failure(target, name, &PANICKING) {
        assert!(e.contains("panicked: the body gave up"), "{e}");
    }
}

/// A database of dbbench's name that dbbench did not create (none of its markers, or only part
/// of them) is refused, never dropped or reused, and still there afterwards.
pub fn lifecycle_foreign<T: Target>(target: &T, name: &str) {
    let ctx = context(name, "foreign");
    let Some(((), left)) = on_backend(target, &ctx, async |backend: &mut Backend| {
        let ours = backend
            .create(&plan(&ctx, &own_name("admin")))
            .await
            .unwrap();
        let mut admin = ours.connect().await.unwrap();
        for (what, half) in [("foreign", false), ("half", true)] {
            let foreign = own_name(what);
            target.stage_foreign(&ctx, &mut admin, &foreign, half).await;
            match backend.create(&plan(&ctx, &foreign)).await {
                Err(e) => assert!(e.to_string().contains("not created by dbbench"), "{e}"),
                Ok(_) => panic!("{foreign} was taken over"),
            }
            assert!(
                target.exists(&ctx, &mut admin, &foreign).await,
                "{foreign} must not be dropped"
            );
            target.remove(&ctx, &mut admin, &foreign).await;
        }
        drop(admin);
        ours.drop_database().await.unwrap();
    }) else {
        return;
    };
    assert_nothing_left(&left);
}

// ---------------------------------------------------------------------------------------------
// Cancel

fn idle(_db: &mut Session) -> BodyFuture<'_> {
    Box::pin(async move {
        tokio::time::sleep(Duration::from_secs(30)).await;
        Err(Error::msg("not reached"))
    })
}

super::benchmark! {
    static IDLE = idle,
    title: "",
    run: RunSpec {
        timeout: Some(Duration::from_millis(200)),
        ..RunSpec::DEFAULT
    },
    cells: [cell("only", StorageSpec::DEFAULT)],
}

pub fn cancel_idle<T: Target>(target: &T, name: &str) {
    if let Some(e) = failure(target, name, &IDLE) {
        // A body that waits on no statement is stopped by the async timer.
        assert_eq!(e, "timed out after 200ms in repetition 1");
    }
}

/// The runaway statement of this test binary's target (one target per binary).
static RUNAWAY: OnceLock<&'static str> = OnceLock::new();
/// Counts the runaway cell's repetitions, so that its second one runs away.
static RUNAWAY_REPS: AtomicU32 = AtomicU32::new(0);
/// How long the runaway statement ran before it returned, in milliseconds.
static STOPPED_MS: AtomicU32 = AtomicU32::new(0);

fn runaway<'a>(db: &'a mut Session) -> BodyFuture<'a> {
    Box::pin(async move {
        db.execute("CREATE TABLE t (x integer)").await?;
        db.execute("INSERT INTO t VALUES (1)").await?;
        if db.cell() == "stop" && RUNAWAY_REPS.fetch_add(1, Ordering::SeqCst) == 1 {
            let sql = RUNAWAY.get().expect("the target's runaway statement");
            let started = Instant::now();
            let stopped = loop {
                if let Err(e) = db.execute(sql).await {
                    break e;
                }
                tokio::task::yield_now().await;
            };
            STOPPED_MS.store(started.elapsed().as_millis() as u32, Ordering::SeqCst);
            return Err(stopped);
        }
        Ok(())
    })
}

super::benchmark! {
    static RUNAWAY_CELLS = runaway,
    title: "timeout",
    run: RunSpec {
        repeat: 3,
        warmup: 0,
        fixture: FixtureKind::None,
        timeout: Some(Duration::from_secs(1)),
        ..RunSpec::DEFAULT
    },
    cells: [cell("stop", StorageSpec::DEFAULT), cell("quick", StorageSpec::DEFAULT)],
}

/// A statement stopped by the database's stop switch when the timeout fires: a readable error
/// naming the repetition (and the statement), the database torn down, the other cell run.
pub fn cancel_runaway<T: Target>(target: &T, name: &str) {
    let sql = *RUNAWAY.get_or_init(|| target.runaway());
    let ctx = context(name, "runaway");
    let Some((result, left)) = on_backend(target, &ctx, async |backend: &mut Backend| {
        run_on(backend, &RUNAWAY_CELLS, &ctx).await
    }) else {
        return;
    };
    assert_nothing_left(&left);
    let ms = STOPPED_MS.load(Ordering::SeqCst);
    // The limit counts from the body's start, a little before the statement's.
    assert!(
        ms >= 500 && u128::from(ms) < target.stop_within().as_millis(),
        "the runaway statement ran {ms} ms"
    );
    let runaway = &result.cells[0];
    let CellStatus::Failed(why) = &runaway.status else {
        panic!("the runaway cell was not stopped: {:?}", runaway.status);
    };
    let timed_out = "timed out after 1s in repetition 2";
    let shown: String = sql.chars().take(80).collect();
    let named = why.starts_with(&format!("{timed_out} (statement: {shown}"));
    assert!(
        named || (!target.names_statement() && why.starts_with(timed_out)),
        "{why}"
    );
    assert_eq!(runaway.runs.len(), 1, "the repetition before is kept");
    let quick = &result.cells[1];
    assert_eq!(quick.status, CellStatus::Ok);
    assert_eq!(quick.runs.len(), 3, "the other cell runs every repetition");
}

// ---------------------------------------------------------------------------------------------
// Driver

const WORKERS: u32 = 4;
const STATEMENTS: u64 = 400;
const PER_TRANSACTION: u32 = 10;
/// The insert of this binary's target, with its placeholders.
static INSERT: OnceLock<String> = OnceLock::new();

fn workers(db: &mut Session) -> BodyFuture<'_> {
    Box::pin(async move {
        db.execute(
            "CREATE TABLE conformance_rows (id bigint NOT NULL PRIMARY KEY, \
             worker integer NOT NULL, payload char(4100) NOT NULL DEFAULT 'a')",
        )
        .await?;
        let insert = INSERT.get().expect("the target's insert").as_str();
        let load = Load::new(WORKERS, Work::Statements(STATEMENTS))
            .statements_per_transaction(PER_TRANSACTION);
        db.load(load)
            .run(async move |conn: &mut Connection, op: Op| {
                let params = [Value::Int(op.id as i64), Value::Int(op.worker.into())];
                conn.execute_with(insert, &params).await
            })
            .await?;
        let rows: i64 = db
            .query_scalar("SELECT count(*) FROM conformance_rows")
            .await?;
        db.record_count("table_rows", rows);
        // Ids are exactly 0..STATEMENTS, dealt round robin: worker w owns the ids ≡ w mod 4.
        let misplaced: i64 = db
            .query_scalar(&format!(
                "SELECT count(*) FROM conformance_rows \
                 WHERE id % {WORKERS} <> worker OR id >= {STATEMENTS}"
            ))
            .await?;
        db.record_count("misplaced_rows", misplaced);
        Ok(())
    })
}

super::benchmark! {
    static FOUR_WORKERS = workers,
    title: "Four workers insert 4.1 KB rows in transactions of ten",
    run: RunSpec::DEFAULT,
    cells: [cell("only", StorageSpec::DEFAULT)],
}

pub fn driver_load<T: Target>(target: &T, name: &str) {
    INSERT.get_or_init(|| {
        format!(
            "INSERT INTO conformance_rows (id, worker) VALUES ({}, {})",
            target.placeholder(1),
            target.placeholder(2)
        )
    });
    let ctx = context(name, "driver");
    let Some((result, left)) = on_backend(target, &ctx, async |backend: &mut Backend| {
        run_on(backend, &FOUR_WORKERS, &ctx).await
    }) else {
        return;
    };
    assert_nothing_left(&left);
    let cell = &result.cells[0];
    assert_eq!(cell.status, CellStatus::Ok, "{:?}", cell.status);
    let run = &cell.runs[0];
    if target.stores_rows() {
        assert_eq!(run.counts["table_rows"], STATEMENTS as i64);
        assert_eq!(run.counts["misplaced_rows"], 0);
    }
    assert_eq!(run.counts["load_statements"], STATEMENTS as i64);
    assert_eq!(run.counts["load_rows"], STATEMENTS as i64);
    assert_eq!(run.counts["load_transactions"], 40);

    assert_eq!(run.loads.len(), 1);
    let load = &run.loads[0];
    assert_eq!(load.workers.len(), WORKERS as usize);
    for (w, worker) in load.workers.iter().enumerate() {
        assert_eq!(worker.worker, w as u32);
        assert_eq!((worker.statements, worker.transactions), (100, 10));
        assert_eq!((worker.rows, worker.retries), (100, 0));
        // Workers on threads have their CPU read (a scripted double's may round to nothing).
        if cfg!(target_os = "linux") && load.execution == "threads" && target.stores_rows() {
            assert!(worker.cpu_s.is_some_and(|s| s > 0.0), "{worker:?}");
        }
    }
    assert_eq!(load.errors.total(), 0);
    assert_eq!(load.retries, 0);
    let config = &load.config;
    assert_eq!((config.workers, config.statements_per_transaction), (4, 10));
    assert_eq!(
        (config.planned_statements, config.planned_transactions),
        (Some(400), Some(40))
    );
    assert_eq!(config.worker_statements, [100; 4]);
    assert_eq!((config.name.as_str(), config.max_retries), ("load", 100));
    assert_eq!(
        (
            config.think_time_ms,
            config.target_rate_per_s,
            config.lock_timeout_ms
        ),
        (None, None, None)
    );

    let latency = &load.latency;
    assert_eq!(latency.transactions, 40);
    assert!(latency.p50_ms > 0.0, "{latency:?}");
    assert!(latency.p50_ms <= latency.p95_ms && latency.p95_ms <= latency.p99_ms);
    assert!(latency.p99_ms <= latency.max_ms * 1.001);
    assert!(load.elapsed_s > 0.0 && load.transactions_per_s > 0.0);
    // The load started after the connections were warmed, inside the measured window.
    assert!(load.started_at_s >= 0.0 && load.started_at_s <= run.elapsed_s);
    assert!(load.saturation.wall_s > 0.0);
    let series = run
        .series
        .iter()
        .find(|s| s.name == "load: transactions/s")
        .expect("the throughput series");
    assert_eq!((series.unit.as_str(), series.interval_s), ("1/s", 1.0));
    assert_eq!(series.values.iter().sum::<f64>(), 40.0);

    // The reviewable snapshot carries the driver's configuration.
    let view = serde_json::to_value(dbbench_core::__internals::SnapshotView::of(
        &result,
        &ctx.work_dir,
    ))
    .unwrap();
    assert_eq!(
        view["cells"][0]["results"]["loads"][0],
        serde_json::to_value(&load.config).unwrap()
    );
}

// ---------------------------------------------------------------------------------------------
// Settings read-back

fn once<'a>(db: &'a mut Session) -> BodyFuture<'a> {
    Box::pin(async move { double(db, 1).await })
}

super::benchmark! {
    static ALIKE = once,
    title: "",
    run: RunSpec {
        repeat: 2,
        warmup: 0,
        fixture: FixtureKind::Credit,
        ..RunSpec::DEFAULT
    },
    cells: [cell("a", StorageSpec::DEFAULT), cell("b", StorageSpec::DEFAULT)],
}

/// Every window reads the settings in force back, and two cells that declare the same differ
/// in none of them (the confounder check finds nothing).
pub fn settings_read_back<T: Target>(target: &T, name: &str) {
    let ctx = context(name, "settings");
    let Some((result, left)) = on_backend(target, &ctx, async |backend: &mut Backend| {
        run_on(backend, &ALIKE, &ctx).await
    }) else {
        return;
    };
    assert_nothing_left(&left);
    let mut names = None;
    for cell in &result.cells {
        assert_eq!(
            cell.status,
            CellStatus::Ok,
            "{}: {:?}",
            cell.name,
            cell.status
        );
        let runs: Vec<_> = cell.measured().collect();
        assert_eq!(runs.len(), 2);
        for run in runs {
            assert!(!run.settings.is_empty(), "{}: no settings", cell.name);
            // Every window reads the same settings.
            let these: Vec<&String> = run.settings.keys().collect();
            let first = names.get_or_insert_with(|| these.clone());
            assert_eq!(*first, these);
        }
    }
    let found = confounders(&result);
    assert!(found.is_empty(), "{found:#?}");
}

// ---------------------------------------------------------------------------------------------
// Stale sweep

fn quick(db: &mut Session) -> BodyFuture<'_> {
    Box::pin(async move { db.execute("CREATE TABLE t (x integer)").await.map(|_| ()) })
}

super::benchmark! {
    static QUICK = quick,
    title: "stale cleanup at start",
    run: RunSpec {
        repeat: 1,
        warmup: 0,
        fixture: FixtureKind::None,
        ..RunSpec::DEFAULT
    },
    cells: [cell("only", StorageSpec::DEFAULT)],
}

/// A killed run's database (its owner gone, or its PID reused) is removed by the sweep, and by
/// the next run's sweep at its start; a live process's and one without a marker are left.
pub fn stale_sweep<T: Target>(target: &T, name: &str) {
    let ctx = context(name, "stale");
    let Some(((), left)) = on_backend(target, &ctx, async |backend: &mut Backend| {
        let ours = backend
            .create(&plan(&ctx, &own_name("admin")))
            .await
            .unwrap();
        let mut admin = ours.connect().await.unwrap();
        let [dead, reused, live, unmarked, killed] =
            ["dead", "reused", "live", "unmarked", "killed"].map(own_name);
        let staged = target
            .stage_owned(&ctx, &mut admin, &dead, Owner::Gone)
            .await;
        if staged {
            target
                .stage_owned(&ctx, &mut admin, &reused, Owner::Reused)
                .await;
            target.stage_owned(&ctx, &mut admin, &live, Owner::Me).await;
            target
                .stage_foreign(&ctx, &mut admin, &unmarked, false)
                .await;
            let lines = backend.sweep_stale(&ctx.work_dir).await;
            for gone in [&dead, &reused] {
                assert!(
                    !target.exists(&ctx, &mut admin, gone).await,
                    "{gone}: {lines:?}"
                );
                assert!(lines.iter().any(|l| l.contains(gone.as_str())), "{lines:?}");
            }
            for kept in [&live, &unmarked] {
                assert!(
                    target.exists(&ctx, &mut admin, kept).await,
                    "{kept} was removed"
                );
            }
            let again = backend.sweep_stale(&ctx.work_dir).await;
            assert!(
                !again.iter().any(|l| l.contains(dead.as_str())),
                "nothing more to remove: {again:?}"
            );
            // The next run sweeps at its start.
            target
                .stage_owned(&ctx, &mut admin, &killed, Owner::Gone)
                .await;
            let result = run_on(backend, &QUICK, &ctx).await;
            assert_eq!(result.cells[0].status, CellStatus::Ok);
            assert!(!target.exists(&ctx, &mut admin, &killed).await);
            for kept in [&live, &unmarked] {
                assert!(
                    target.exists(&ctx, &mut admin, kept).await,
                    "{kept} was removed"
                );
                target.remove(&ctx, &mut admin, kept).await;
            }
        } else {
            eprintln!("{name}: the backend sweeps no single databases; stale staging skipped");
        }
        drop(admin);
        ours.drop_database().await.unwrap();
    }) else {
        return;
    };
    assert_nothing_left(&left);
}
