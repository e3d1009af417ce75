//! The seed suites' PostgreSQL cases on a managed cluster at smoke scale, one repetition each:
//! the VLF suite's `pg_test_1` … `pg_test_5` (WAL segment size, zero fill, WAL made ahead,
//! parallel workers) and the population suite's `pg_same_volume` and `pg_separate_volumes` run
//! with every option honoured, and their physical facts are checked (segments zero-filled only
//! where `wal_init_zero` is on, none created after pre-growth, the data directory and the WAL on
//! their volumes, one 4.1 KB row per page); the data-files suite does not apply there and says
//! so instead of running anything.

use dbbench_core::__internals::config::RunSpec;
use dbbench_core::__internals::postgres::PostgresBackend;
use dbbench_core::__internals::Backend;
use dbbench_core::__internals::Volumes;
use dbbench_core::__internals::{
    check_cell, exclusive, run_benchmark, CellCheck, RunContext, TimingMode, Tolerance,
};
use dbbench_core::__internals::{BenchmarkSpec, BodyFn, BodyFuture};
use dbbench_core::results::{BenchmarkResult, CellStatus, RunResult};
use dbbench_core::{Scale, Session};
use std::path::{Path, PathBuf};

fn scratch(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// A directory the server's user can reach, for volumes the test binds as a user would: a bound
/// volume is the user's choice, which dbbench never moves, so under a mode-700 checkout
/// (`CARGO_TARGET_TMPDIR` below `/root/...`) the test must choose one the `postgres` user can
/// search, as a user would.
fn reachable_scratch(name: &str) -> PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let dir = std::env::temp_dir().join(format!("dbbench-test-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755)).unwrap();
    dir
}

fn run(bench: &'static BenchmarkSpec, ctx: &RunContext) -> BenchmarkResult {
    run_cells(bench, None, ctx)
}

fn run_cells(
    bench: &'static BenchmarkSpec,
    cells: Option<&[&str]>,
    ctx: &RunContext,
) -> BenchmarkResult {
    let _guard = exclusive();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let mut backend = Backend::new(PostgresBackend::managed().unwrap());
        run_benchmark(bench, cells, ctx, &mut backend)
            .await
            .unwrap()
    })
}

/// No cluster directory and no server process is left under `dir`.
fn assert_clean(dir: &Path) {
    let entries: Vec<_> = std::fs::read_dir(dir.join("postgres"))
        .map(|d| d.flatten().map(|e| e.path()).collect())
        .unwrap_or_default();
    assert!(entries.is_empty(), "{entries:?}");
    let dir = std::fs::canonicalize(dir).unwrap();
    let working: Vec<_> = std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter(|e| std::fs::read_link(e.path().join("cwd")).is_ok_and(|cwd| cwd.starts_with(&dir)))
        .collect();
    assert!(working.is_empty(), "processes left: {working:?}");
}

fn ctx(name: &str, volumes: Volumes) -> RunContext {
    RunContext {
        scale: Scale::smoke(),
        volumes,
        work_dir: scratch(name),
    }
}

/// `bench` with one fixed repetition instead of its precision target, and `body` if given.
fn once(bench: &'static BenchmarkSpec, body: Option<BodyFn>) -> &'static BenchmarkSpec {
    Box::leak(Box::new(BenchmarkSpec {
        run: RunSpec {
            repeat: 1,
            precision: None,
            ..bench.run
        },
        body: body.unwrap_or(bench.body),
        ..*bench
    }))
}

#[test]
fn the_data_files_question_does_not_apply_and_nothing_runs() {
    if !dbbench_core::__internals::postgres::cluster::available_for_tests() {
        return;
    }
    let ctx = ctx("pg-data-files", Volumes::default());
    let result = run(&dbbench_suites::data_files::equal_shares::BENCHMARK, &ctx);
    let why = result.not_applicable.as_deref().unwrap_or_default();
    assert!(why.contains("no filegroup"), "{why:?}");
    assert!(result.cells.is_empty(), "{:?}", result.cells);
    assert_clean(&ctx.work_dir);
}

const MB: u64 = 1 << 20;

fn measured<'a>(result: &'a BenchmarkResult, name: &str) -> &'a RunResult {
    let cell = result.cells.iter().find(|c| c.name == name).unwrap();
    assert_eq!(cell.status, CellStatus::Ok, "{name}: {:?}", cell.status);
    &cell.runs[0]
}

#[test]
fn the_vlf_suite_on_postgres_shows_segment_size_zero_fill_and_pregrowth() {
    if !dbbench_core::__internals::postgres::cluster::available_for_tests() {
        return;
    }
    let ctx = ctx("pg-vlf", Volumes::default());
    let result = run(once(&dbbench_suites::vlf::doubling::BENCHMARK, None), &ctx);
    let names: Vec<&str> = result.cells.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "pg_test_1",
            "pg_test_2",
            "pg_test_3",
            "pg_test_4",
            "pg_test_5"
        ]
    );
    assert_eq!(result.run.baseline, "pg_test_1");
    // Every other case is another backend's, named as such and not run here.
    let spec = &dbbench_suites::vlf::doubling::BENCHMARK;
    assert_eq!(
        result.elsewhere.len(),
        spec.cells.len() - names.len(),
        "{:?}",
        result.elsewhere
    );
    assert!(
        result.elsewhere.iter().all(|c| !c.starts_with("pg_")),
        "{:?}",
        result.elsewhere
    );
    let runs: Vec<&RunResult> = names.iter().map(|n| measured(&result, n)).collect();
    for run in &runs {
        assert_eq!(run.counts["rows_after"], 32 * run.counts["fixture_rows"]);
        assert_eq!(run.laps.len(), 5);
    }
    let log = |i: usize| runs[i].log.clone().unwrap();
    let zeros = |i: usize| runs[i].values["pg_wal_zero_fill_bytes"];
    // Test 1 is the only one with wal_init_zero on: every 1 MB segment it created (1 MB is the
    // floor of the scaled 1MB growth) was written with zeros; the others only allocate.
    assert!(log(0).growths > 0, "{:?}", log(0));
    assert_eq!(zeros(0), (log(0).growths * MB) as f64);
    for (i, name) in names.iter().enumerate().skip(1) {
        assert_eq!(zeros(i), 0.0, "{name}");
    }
    // Tests 4 and 5 made their WAL before the window (32000MB / 512 in 4000MB / 512 steps of
    // 2 MB segments), so the load created no segment at all.
    for i in [3, 4] {
        assert!(
            runs[i].counts["pg_pregrow_segments"] > 0,
            "{:?}",
            runs[i].counts
        );
        assert_eq!(log(i).growths, 0, "{}: {:?}", names[i], log(i));
    }
    // The effective sizes: 1 MB segments (the floor of 1MB / 512) and 2 MB ones (1024MB / 512).
    let effective = |i: usize, key: &str| result.cells[i].effective[key];
    assert_eq!(effective(0, "log_growth_bytes"), MB);
    assert_eq!(effective(2, "log_growth_bytes"), 2 * MB);
    assert_eq!(effective(2, "log_size_bytes"), 32000 * MB / 512);
    // What the server would derive or leave to chance is pinned alike in every cell: WAL buffers
    // (1 MB with 1 MB segments otherwise), JIT and autovacuum; neither ran inside a window.
    for (run, name) in runs.iter().zip(&names) {
        let setting = |key: &str| run.settings[key].value.as_str();
        assert_eq!(setting("pg.wal_buffers"), "4MB", "{name}");
        assert_eq!(setting("pg.jit"), "off", "{name}");
        assert_eq!(setting("pg.autovacuum"), "off", "{name}");
        assert_eq!(run.counts["pg_autovacuum_runs"], 0, "{name}");
        assert_eq!(run.counts["pg_autoanalyze_runs"], 0, "{name}");
        assert!(
            run.facts["jit"].starts_with("off"),
            "{name}: {:?}",
            run.facts
        );
    }
    // Tests 1–3 start every window with no segment made ahead (those the window-opening
    // checkpoint left are removed); tests 4 and 5 keep the ones they made on purpose.
    for (i, name) in names.iter().enumerate().take(3) {
        assert_eq!(
            runs[i].values["pg_wal_segments_ahead_before"], 0.0,
            "{name}"
        );
        assert!(runs[i].values.contains_key("pg_wal_segments_removed_ahead"));
    }
    for i in [3, 4] {
        assert!(runs[i].values["pg_wal_segments_ahead_before"] > 0.0);
        assert!(!runs[i].values.contains_key("pg_wal_segments_removed_ahead"));
    }
    // Each cell differs from pg_test_1 only in settings its declared options set.
    let found = dbbench_core::results::confounders(&result);
    assert!(found.is_empty(), "{found:#?}");
    assert_eq!(
        runs[4].settings["pg.max_parallel_workers_per_gather"]
            .set_by
            .as_deref(),
        Some("maxdop")
    );
    assert_clean(&ctx.work_dir);
}

fn population(db: &mut Session) -> BodyFuture<'_> {
    Box::pin(async move {
        dbbench_suites::big_rows::populate(db, 4, 512).await?;
        let data_dir: String = db.query_scalar("SHOW data_directory").await?;
        let wal = std::fs::canonicalize(Path::new(&data_dir).join("pg_wal")).unwrap();
        db.record_count("data_on_vol_data", data_dir.contains("vol_data") as i64);
        db.record_count(
            "wal_on_vol_log",
            wal.to_string_lossy().contains("vol_log") as i64,
        );
        let per_page: f64 = db
            .query_scalar(
                "SELECT count(*)::float8 / greatest(pg_relation_size('big') / 8192, 1) FROM big",
            )
            .await?;
        db.record_count("rows_per_page", per_page.round() as i64);
        Ok(())
    })
}

#[test]
fn the_population_suite_on_postgres_puts_data_and_wal_on_their_volumes() {
    if !dbbench_core::__internals::postgres::cluster::available_for_tests() {
        return;
    }
    let base = reachable_scratch("pg-population-volumes");
    let mut volumes = Volumes::default();
    for (name, dir) in [("data", "vol_data"), ("log", "vol_log")] {
        std::fs::create_dir_all(base.join(dir)).unwrap();
        volumes.bind(name, base.join(dir));
    }
    let ctx = ctx("pg-population-shape", volumes);
    let suite = &dbbench_suites::population::population::BENCHMARK;
    let result = run(once(suite, Some(population)), &ctx);
    let (same, separate) = (
        measured(&result, "pg_same_volume"),
        measured(&result, "pg_separate_volumes"),
    );
    for run in [same, separate] {
        assert_eq!(run.counts["rows_after"], 512);
        assert_eq!(run.counts["load_statements"], 512);
        // char(4100) with PLAIN storage: one row per 8 KB page, as on SQL Server.
        assert_eq!(run.counts["rows_per_page"], 1);
    }
    assert_eq!(
        (
            same.counts["data_on_vol_data"],
            same.counts["wal_on_vol_log"]
        ),
        (0, 0)
    );
    assert_eq!(
        (
            separate.counts["data_on_vol_data"],
            separate.counts["wal_on_vol_log"]
        ),
        (1, 1)
    );
    assert_clean(&ctx.work_dir);
    for dir in ["vol_data", "vol_log"] {
        let left: Vec<_> = std::fs::read_dir(base.join(dir))
            .unwrap()
            .flatten()
            .collect();
        assert!(left.is_empty(), "{dir}: {left:?}");
    }
    let _ = std::fs::remove_dir_all(&base);
}

#[test]
fn a_changed_segment_count_fails_the_committed_postgres_snapshot() {
    if !dbbench_core::__internals::postgres::cluster::available_for_tests() {
        return;
    }
    let ctx = ctx("pg-snapshot-cell", Volumes::default());
    let bench = &dbbench_suites::vlf::doubling::BENCHMARK;
    let mut result = run_cells(bench, Some(&["pg_test_4"]), &ctx);
    assert_clean(&ctx.work_dir);
    let tolerance = Tolerance {
        mode: TimingMode::Ignore,
        ..Tolerance::default()
    };
    let check = |result: &BenchmarkResult| {
        check_cell(
            result,
            "pg_test_4",
            &bench.file_stem(),
            bench.manifest_dir,
            &ctx.work_dir,
            &tolerance,
        )
    };
    // Its part of `vlf.doubling__smoke__postgres.snap` matches as it ran...
    assert!(
        matches!(check(&result), CellCheck::Matches(_)),
        "{:?}",
        check(&result)
    );
    // ...and one WAL segment created in the window, where the pre-made WAL left none to create,
    // does not.
    let run = result.cells[0].runs.iter_mut().find(|r| !r.warmup).unwrap();
    run.log.as_mut().unwrap().growths += 1;
    match check(&result) {
        CellCheck::Differs(differences) => {
            assert!(
                differences.iter().any(|d| d.contains("growths")),
                "{differences:?}"
            )
        }
        other => panic!("a changed segment count must differ, not {other:?}"),
    }
}
