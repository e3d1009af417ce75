//! The results store on the embedded engine: a result, once measured, is never lost or
//! overwritten by a later partial or failed run; two processes never measure at the same time;
//! merged partitions equal one unpartitioned run; a store of today's schema stays readable.

mod support;

use dbbench_core::__internals::config::{RunSpec, StorageSpec};
use dbbench_core::__internals::{
    embedded::EmbeddedBackend, exclusive, json, paths, BodyFuture, CellSpec, Invocation, Ran,
    RunContext, Store,
};
use dbbench_core::__internals::{Backend, Volumes};
use dbbench_core::results::{BenchmarkResult, CellStatus, WindowTimes};
use dbbench_core::{Scale, Session};

fn inserts(db: &mut Session) -> BodyFuture<'_> {
    Box::pin(async move {
        db.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, pad BLOB)")
            .await?;
        let rows = if db.cell() == "first" { 100 } else { 200 };
        db.execute(&format!(
            "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < {rows}) \
             INSERT INTO t (pad) SELECT randomblob(100) FROM n"
        ))
        .await?;
        let count: i64 = db.query_scalar("SELECT count(*) FROM t").await?;
        db.record_count("rows", count);
        Ok(())
    })
}

support::benchmark! {
    static INSERTS = inserts,
    title: "Two cells of inserts",
    run: RunSpec { repeat: 2, ..RunSpec::DEFAULT },
    cells: [
        CellSpec { name: "first", storage: StorageSpec::DEFAULT, backends: &[] },
        CellSpec { name: "second", storage: StorageSpec::DEFAULT, backends: &[] },
    ],
}

/// The same benchmark (same path, so the same results in the store) whose second cell fails: a
/// later run of it that goes wrong. A benchmark of its own rather than a flag, so that tests
/// running in parallel cannot see each other's failure.
fn inserts_failing(db: &mut Session) -> BodyFuture<'_> {
    Box::pin(async move {
        if db.cell() == "second" {
            return Err(dbbench_core::Error::msg("the second cell fails this time"));
        }
        inserts(db).await
    })
}

static INSERTS_FAILING: dbbench_core::BenchmarkSpec = dbbench_core::BenchmarkSpec {
    body: inserts_failing,
    ..INSERTS
};

/// These tests stand for separate runs (two `cargo test` commands, two terminals), each its own
/// invocation. Under nextest every process of one run shares an invocation through
/// `NEXTEST_RUN_ID` (as it should), and the test's own processes would inherit it; each nextest
/// test is a process of its own, so dropping the variable here touches no other test.
fn separate_runs() {
    // Only where it is set: under `cargo test` the tests share a process and its environment.
    if std::env::var_os("NEXTEST_RUN_ID").is_some() {
        std::env::remove_var("NEXTEST_RUN_ID");
    }
}

/// Runs `cells` of [`INSERTS`] as the harness does: recorded in the work dir's store, current
/// results published.
fn run_cells(ctx: &RunContext, cells: &[&str]) -> Ran {
    run_cells_of(&INSERTS, ctx, cells)
}

/// [`run_cells`] of `bench`.
fn run_cells_of(
    bench: &'static dbbench_core::BenchmarkSpec,
    ctx: &RunContext,
    cells: &[&str],
) -> Ran {
    let _lock = exclusive();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let mut backend = Backend::new(EmbeddedBackend::new());
        let invocation = Invocation::start(ctx, &backend, env!("CARGO_MANIFEST_DIR")).unwrap();
        let ran = invocation
            .run(bench, cells, ctx, &mut backend)
            .await
            .unwrap();
        dbbench_core::__internals::publish(&ran.current, &INSERTS.file_stem(), &ctx.work_dir)
            .unwrap();
        ran
    })
}

fn rows_of(result: &BenchmarkResult, cell: &str) -> Option<i64> {
    let cell = result.cells.iter().find(|c| c.name == cell)?;
    cell.measured().next().map(|r| r.counts["rows"])
}

#[test]
fn partial_and_failing_runs_keep_every_cell() {
    separate_runs();
    let ctx = support::context("store-partial", Scale::smoke(), Volumes::default());
    let full = run_cells(&ctx, &["first", "second"]);
    assert_eq!(full.current.cells.len(), 2);
    let first_invocation = full.current.cells[1].invocation;

    // One cell only: the other keeps its results from the full run.
    let one = run_cells(&ctx, &["first"]);
    assert_eq!(one.fresh.cells.len(), 1);
    assert_eq!(
        one.current.cells.len(),
        2,
        "the current results hold both cells"
    );
    assert_eq!(rows_of(&one.current, "second"), Some(200));
    assert_eq!(one.current.cells[1].invocation, first_invocation);
    assert_ne!(one.current.cells[0].invocation, first_invocation);

    // A failing cell: shown failed, its last good runs kept beside the error.
    let failing = run_cells_of(&INSERTS_FAILING, &ctx, &["first", "second"]);
    let second = &failing.current.cells[1];
    match &second.status {
        CellStatus::Failed(why) => {
            assert!(why.contains("fails this time"), "{why}");
            assert!(why.contains("last good ones"), "{why}");
        }
        other => panic!("the second cell should show its failure, not {other:?}"),
    }
    assert_eq!(rows_of(&failing.current, "second"), Some(200));
    assert_eq!(second.invocation, first_invocation);

    // The JSON and the report are made from the current results: both cells are there.
    let written = json::read(&paths::results_file(&ctx.work_dir, &INSERTS.file_stem())).unwrap();
    assert_eq!(written, failing.current);
    let report = std::fs::read_to_string(paths::report_index(&ctx.work_dir)).unwrap();
    assert!(
        report.contains(">first<") && report.contains(">second<"),
        "{report}"
    );

    // A run whose settings are wrong (a bad DBBENCH_VOLUMES) stops before anything runs and
    // changes nothing.
    let before = json::read(&paths::results_file(&ctx.work_dir, &INSERTS.file_stem())).unwrap();
    let status = std::process::Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "child_runs_both_cells"])
        .env("DBBENCH_STORE_CHILD", "1")
        .env("DBBENCH_DIR", &ctx.work_dir)
        .env("DBBENCH_VOLUMES", "no-equals-sign")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .unwrap();
    assert!(!status.success(), "a bad DBBENCH_VOLUMES fails the run");
    let after = json::read(&paths::results_file(&ctx.work_dir, &INSERTS.file_stem())).unwrap();
    assert_eq!(before, after);

    // Every invocation is in the history, with its status.
    let store = Store::open(&ctx.work_dir).unwrap();
    let statuses: Vec<String> = store
        .history()
        .unwrap()
        .into_iter()
        .map(|r| r.status)
        .collect();
    assert_eq!(statuses, ["completed", "completed", "failed"]);
}

#[test]
fn merged_partitions_equal_one_run() {
    let one = support::context("store-merge-whole", Scale::smoke(), Volumes::default());
    let whole = run_cells(&one, &["first", "second"]).current;
    let a = support::context("store-merge-a", Scale::smoke(), Volumes::default());
    run_cells(&a, &["first"]);
    let b = support::context("store-merge-b", Scale::smoke(), Volumes::default());
    run_cells(&b, &["second"]);

    let merged_dir = support::scratch("store-merge-into");
    let mut store = Store::open(&merged_dir).unwrap();
    for part in [&a, &b] {
        let added = store
            .merge(&dbbench_core::__internals::store_file(&part.work_dir))
            .unwrap();
        assert_eq!((added.invocations, added.repetitions), (1, 2));
    }
    // Merging the same store again adds nothing.
    let again = store
        .merge(&dbbench_core::__internals::store_file(&a.work_dir))
        .unwrap();
    assert_eq!((again.invocations, again.already_present), (0, 1));

    let host = whole.host.hostname.clone();
    let merged = store.current(&INSERTS.test_path(), &host).unwrap().unwrap();
    let shape = |r: &BenchmarkResult| -> Vec<(String, usize, Option<i64>)> {
        r.cells
            .iter()
            .map(|c| (c.name.clone(), c.measured().count(), rows_of(r, &c.name)))
            .collect()
    };
    assert_eq!(shape(&merged), shape(&whole));
    assert_eq!(merged.cells[0].config, whole.cells[0].config);
}

/// A store from elsewhere whose stem and host name paths (`../`) merges with each made one safe
/// path component, and the store merged from is left as it was (not migrated in place).
#[test]
fn a_hostile_store_merges_into_safe_names_and_is_not_changed() {
    let a = support::context("store-merge-hostile", Scale::smoke(), Volumes::default());
    run_cells(&a, &["first"]);
    let source = dbbench_core::__internals::store_file(&a.work_dir);
    {
        let conn = rusqlite::Connection::open(&source).unwrap();
        conn.execute_batch(
            "UPDATE invocations SET host = 'x/../../../../tmp/evil'; \
             UPDATE benchmark_runs SET stem = '../../escape'; PRAGMA wal_checkpoint(TRUNCATE);",
        )
        .unwrap();
    }
    let before = std::fs::read(&source).unwrap();
    let mut store = Store::open(&support::scratch("store-merge-hostile-into")).unwrap();
    store.merge(&source).unwrap();
    assert_eq!(std::fs::read(&source).unwrap(), before);
    let stored = store.benchmarks().unwrap();
    assert!(!stored.is_empty());
    for b in stored {
        for name in [&b.stem, &b.host] {
            assert!(!name.contains('/') && !name.starts_with('.'), "{name}");
        }
    }
}

/// Two processes started at once on the same benchmark: their measured windows never overlap.
#[test]
fn two_processes_never_measure_at_once() {
    if std::env::var_os("DBBENCH_STORE_CHILD").is_some() {
        return;
    }
    separate_runs();
    let dir = support::scratch("store-two-processes");
    let children: Vec<std::process::Child> = (0..2)
        .map(|_| {
            std::process::Command::new(std::env::current_exe().unwrap())
                .args(["--exact", "child_runs_both_cells", "--nocapture"])
                .env("DBBENCH_STORE_CHILD", "1")
                .env("DBBENCH_DIR", &dir)
                .stdout(std::process::Stdio::null())
                .stderr(std::process::Stdio::null())
                .spawn()
                .unwrap()
        })
        .collect();
    for mut child in children {
        assert!(child.wait().unwrap().success(), "a child run failed");
    }
    let conn = rusqlite::Connection::open(dbbench_core::__internals::store_file(&dir)).unwrap();
    let mut stmt = conn
        .prepare(
            "SELECT b.invocation_id, r.window_start_unix_ns, r.window_end_unix_ns \
             FROM repetitions r JOIN cell_runs c ON c.id = r.cell_run_id \
             JOIN benchmark_runs b ON b.id = c.benchmark_run_id",
        )
        .unwrap();
    let windows: Vec<(i64, WindowTimes)> = stmt
        .query_map([], |r| {
            Ok((
                r.get(0)?,
                WindowTimes {
                    start_unix_ns: r.get::<_, i64>(1)? as u64,
                    end_unix_ns: r.get::<_, i64>(2)? as u64,
                },
            ))
        })
        .unwrap()
        .collect::<rusqlite::Result<_>>()
        .unwrap();
    assert_eq!(windows.len(), 8, "2 processes × 2 cells × 2 repetitions");
    let invocations: std::collections::BTreeSet<i64> = windows.iter().map(|w| w.0).collect();
    assert_eq!(invocations.len(), 2, "one invocation per process");
    for (i, (pa, a)) in windows.iter().enumerate() {
        for (pb, b) in &windows[i + 1..] {
            assert!(
                !a.overlaps(b),
                "windows of invocations {pa} and {pb} overlap: {a:?} {b:?}"
            );
        }
    }
}

/// The body of [`two_processes_never_measure_at_once`]'s children.
#[test]
fn child_runs_both_cells() {
    if std::env::var_os("DBBENCH_STORE_CHILD").is_none() {
        return;
    }
    let ctx = RunContext::from_env(env!("CARGO_MANIFEST_DIR"), Scale::smoke()).unwrap();
    run_cells(&ctx, &["first", "second"]);
}

/// A store written by schema version 1 (kept as SQL text) opens, and its results read back.
#[test]
fn a_version_1_store_stays_readable() {
    let dir = support::scratch("store-v1");
    let path = dbbench_core::__internals::store_file(&dir);
    let conn = rusqlite::Connection::open(&path).unwrap();
    conn.execute_batch(include_str!("fixtures/store-v1.sql"))
        .unwrap();
    drop(conn);
    let store = Store::open(&dir).unwrap();
    let history = store.history().unwrap();
    assert_eq!(history.len(), 1);
    assert_eq!(history[0].status, "completed");
    let benchmarks = store.benchmarks().unwrap();
    assert_eq!(benchmarks.len(), 1);
    let current = store
        .current(&benchmarks[0].benchmark, &benchmarks[0].host)
        .unwrap()
        .unwrap();
    assert_eq!(current.cells.len(), 2);
    assert!(current.cells.iter().all(|c| c.measured().count() == 2));
    // Version 2 gave the stored repetitions their elapsed column, which the history reads.
    let invocation = history[0].id;
    for cell in &current.cells {
        let elapsed = store
            .elapsed_in(invocation, &benchmarks[0].benchmark, &cell.name)
            .unwrap()
            .expect("the cell ran in the invocation");
        let from_json: Vec<f64> = cell.measured().map(|r| r.elapsed_s).collect();
        assert_eq!(elapsed, from_json);
    }
}

#[test]
fn one_invocation_calibrates_once_and_its_cells_keep_the_calibration() {
    separate_runs();
    let ctx = support::context("store-calibration", Scale::smoke(), Volumes::default());
    let first = run_cells(&ctx, &["first"]);
    let calibration = first
        .fresh
        .calibration
        .clone()
        .expect("a run on this machine is calibrated");
    assert_eq!(calibration.volumes[0].name, "default");
    assert!(calibration.cpu_loop_ms > 0.0 && calibration.volumes[0].fsync_ms > 0.0);
    // Another process of the same invocation (a nextest process) reuses it, to the bit.
    let id = first.current.cells[0].invocation.expect("stored");
    let second = {
        let _lock = exclusive();
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .unwrap()
            .block_on(async {
                let mut backend = Backend::new(EmbeddedBackend::new());
                Invocation::resume(&ctx.work_dir, id)
                    .unwrap()
                    .run(&INSERTS, &["second"], &ctx, &mut backend)
                    .await
                    .unwrap()
            })
    };
    assert_eq!(second.fresh.calibration.as_ref(), Some(&calibration));
    // The current view gives each cell the calibration of the run its repetitions come from.
    for cell in &second.current.cells {
        assert_eq!(
            cell.calibration.as_ref(),
            Some(&calibration),
            "{}",
            cell.name
        );
    }
    // A new invocation measures the machine again.
    let third = run_cells(&ctx, &["first"]);
    assert!(third.fresh.calibration.is_some());
    assert_ne!(third.fresh.calibration, Some(calibration));
}

#[test]
fn a_run_is_checked_against_its_earlier_runs_in_the_store() {
    separate_runs();
    let ctx = support::context("store-earlier", Scale::smoke(), Volumes::default());
    let first = run_cells(&ctx, &["first", "second"]);
    assert!(first.current.earlier.is_empty(), "nothing before the first");
    let text = dbbench_core::__internals::summary::render(&first.current);
    assert!(!text.contains("between runs"), "{text}");
    let second = run_cells(&ctx, &["first", "second"]);
    let third = run_cells(&ctx, &["first", "second"]);
    let ids =
        |ran: &Ran| -> Vec<i64> { ran.current.earlier.iter().map(|e| e.invocation).collect() };
    let invocation = |ran: &Ran| ran.current.cells[0].invocation.unwrap();
    // Earlier runs count only where the machine's calibration agrees with this run's: on a
    // machine busy with other work the CPU loop can move past the tolerance between two runs
    // seconds apart, and then the earlier run is rightly left out. The test expects exactly the
    // agreeing ones, newest first.
    let tolerance = dbbench_core::results::CalibrationTolerance::DEFAULT;
    let agrees = |a: &Ran, b: &Ran| match (&a.current.calibration, &b.current.calibration) {
        (Some(x), Some(y)) => x.agrees_with(y, &tolerance).is_ok(),
        _ => true,
    };
    let expected = |ran: &Ran, before: &[&Ran]| -> Vec<i64> {
        before
            .iter()
            .rev()
            .filter(|b| agrees(ran, b))
            .map(|b| invocation(b))
            .collect()
    };
    assert_eq!(ids(&second), expected(&second, &[&first]));
    assert_eq!(ids(&third), expected(&third, &[&first, &second]));
    assert_eq!(third.fresh.earlier, third.current.earlier);
    let text = dbbench_core::__internals::summary::render(&third.current);
    assert_eq!(
        text.contains("between runs:"),
        !ids(&third).is_empty(),
        "{text}"
    );
    if ids(&third).len() == 2 {
        assert!(
            text.contains("pooled across 3 runs of this host (random effects)"),
            "{text}"
        );
    } else {
        eprintln!("calibrations disagreed between runs (a busy machine): pooling not exercised");
    }
    // The results file carries them, so a report made from it later says the same.
    let published = json::read(&paths::results_file(&ctx.work_dir, &INSERTS.file_stem())).unwrap();
    assert_eq!(published.earlier, third.current.earlier);
}
