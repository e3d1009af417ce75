//! The seed suites on a managed PostgreSQL cluster at smoke scale. As declared, their cells set
//! data-file options PostgreSQL has no equivalent for, so each must be refused by name before
//! anything is created; their shapes (the VLF doubling with log pre-sizing, zero fill and
//! pre-growth; the population through the driver with data and log on one volume or two) then run
//! with the options PostgreSQL honours, and their physical facts are checked.

use dbbench_core::__internals::config::{
    FixtureKind, Growth, Recovery, RunSpec, Size, StorageSpec,
};
use dbbench_core::__internals::postgres::PostgresBackend;
use dbbench_core::__internals::Backend;
use dbbench_core::__internals::Volumes;
use dbbench_core::__internals::{exclusive, run_benchmark, RunContext};
use dbbench_core::__internals::{BenchmarkSpec, BodyFuture, CellSpec};
use dbbench_core::results::{BenchmarkResult, CellStatus, RunResult};
use dbbench_core::{Scale, Session};
use std::path::{Path, PathBuf};

fn scratch(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn run(bench: &'static BenchmarkSpec, ctx: &RunContext) -> BenchmarkResult {
    let _guard = exclusive();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let mut backend = Backend::Postgres(Box::new(PostgresBackend::managed().unwrap()));
        run_benchmark(bench, None, ctx, &mut backend).await.unwrap()
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

#[test]
fn seed_cells_are_skipped_by_name_when_postgres_cannot_honour_them() {
    if !dbbench_core::__internals::postgres::cluster::available_for_tests() {
        return;
    }
    let ctx = ctx("pg-seeds", Volumes::default());
    for bench in dbbench_suites::all() {
        let result = run(bench, &ctx);
        for cell in &result.cells {
            match &cell.status {
                CellStatus::Skipped(why) => {
                    let named = ["data_files", "data_size", "growth", "tempdb_files"]
                        .iter()
                        .any(|o| {
                            why.contains(&format!(
                                "option `{o}` is not supported by the postgres backend"
                            ))
                        });
                    let restricted = why.contains("runs on mssql only");
                    assert!(
                        named || restricted,
                        "{}::{}: {why}",
                        result.benchmark,
                        cell.name
                    );
                    assert!(cell.runs.is_empty());
                }
                CellStatus::Failed(e) => panic!("{}::{}: {e}", result.benchmark, cell.name),
                CellStatus::Ok => panic!("{}: a data-file option was ignored", cell.name),
            }
        }
    }
    assert_clean(&ctx.work_dir);
}

fn doubling(db: &mut Session) -> BodyFuture<'_> {
    Box::pin(async move {
        dbbench_core::fixture::double_charges(db, 5).await?;
        Ok(())
    })
}

const MB: u64 = 1 << 20;
const fn size(mb: u64, text: &'static str) -> Option<Size> {
    Some(Size::new(mb * MB, text))
}

static VLF_CELLS: [CellSpec; 2] = [
    CellSpec {
        name: "log_grows",
        storage: StorageSpec {
            log_size: size(2, "2MB"),
            log_growth: Some(Growth::Fixed(Size::new(MB, "1MB"))),
            ifi: Some(false),
            recovery: Some(Recovery::Full),
            ..StorageSpec::DEFAULT
        },
        backends: &[],
    },
    CellSpec {
        name: "log_pregrown",
        storage: StorageSpec {
            log_size: size(48, "48MB"),
            log_growth: Some(Growth::Fixed(Size::new(MB, "1MB"))),
            log_pregrow: size(8, "8MB"),
            ifi: Some(true),
            recovery: Some(Recovery::Simple),
            maxdop: Some(4),
            ..StorageSpec::DEFAULT
        },
        backends: &[],
    },
];

static VLF_SHAPE: BenchmarkSpec = BenchmarkSpec {
    name: "doubling",
    module_path: "postgres_seeds::vlf_shape::doubling",
    manifest_dir: env!("CARGO_MANIFEST_DIR"),
    source_file: file!(),
    title: "The VLF doubling with PostgreSQL's log options",
    run: RunSpec {
        fixture: FixtureKind::Credit,
        ..RunSpec::DEFAULT
    },
    cells: &VLF_CELLS,
    body: doubling,
};

fn measured<'a>(result: &'a BenchmarkResult, name: &str) -> &'a RunResult {
    let cell = result.cells.iter().find(|c| c.name == name).unwrap();
    assert_eq!(cell.status, CellStatus::Ok, "{name}: {:?}", cell.status);
    &cell.runs[0]
}

#[test]
fn the_vlf_doubling_shape_shows_wal_growth_zero_fill_and_pregrowth() {
    if !dbbench_core::__internals::postgres::cluster::available_for_tests() {
        return;
    }
    let ctx = ctx("pg-vlf-shape", Volumes::default());
    let result = run(&VLF_SHAPE, &ctx);
    let (grows, pregrown) = (
        measured(&result, "log_grows"),
        measured(&result, "log_pregrown"),
    );
    for run in [grows, pregrown] {
        assert_eq!(run.counts["rows_after"], 32 * run.counts["fixture_rows"]);
        assert_eq!(run.laps.len(), 5);
    }
    // 48 one-megabyte segments were switched through before the window, and the checkpoints
    // recycled the finished ones as segments ahead of the insert position.
    assert_eq!(pregrown.counts["pg_pregrow_segments"], 48);
    assert!(
        pregrown.values["pg_wal_segments_ahead_before"] >= 8.0,
        "{:?}",
        pregrown.values
    );
    let (g, p) = (grows.log.clone().unwrap(), pregrown.log.clone().unwrap());
    assert!(g.growths > p.growths, "{g:?} vs {p:?}");
    // ifi = false is wal_init_zero = on: every created segment was written with zeros.
    assert_eq!(
        grows.values["pg_wal_zero_fill_bytes"],
        (g.growths * MB) as f64
    );
    assert_eq!(pregrown.values["pg_wal_zero_fill_bytes"], 0.0);
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

static POPULATION_CELLS: [CellSpec; 2] = [
    CellSpec {
        name: "same_volume",
        storage: StorageSpec::DEFAULT,
        backends: &[],
    },
    CellSpec {
        name: "separate_volumes",
        storage: StorageSpec {
            data_on: &["data"],
            log_on: Some("log"),
            ..StorageSpec::DEFAULT
        },
        backends: &[],
    },
];

static POPULATION_SHAPE: BenchmarkSpec = BenchmarkSpec {
    name: "population",
    module_path: "postgres_seeds::population_shape::population",
    manifest_dir: env!("CARGO_MANIFEST_DIR"),
    source_file: file!(),
    title: "The 1-TB population's shape: data and log on one volume or two",
    run: RunSpec::DEFAULT,
    cells: &POPULATION_CELLS,
    body: population,
};

#[test]
fn the_population_shape_puts_data_and_wal_on_their_volumes() {
    if !dbbench_core::__internals::postgres::cluster::available_for_tests() {
        return;
    }
    let base = scratch("pg-population-volumes");
    let mut volumes = Volumes::default();
    for (name, dir) in [("data", "vol_data"), ("log", "vol_log")] {
        std::fs::create_dir_all(base.join(dir)).unwrap();
        volumes.bind(name, base.join(dir));
    }
    let ctx = ctx("pg-population-shape", volumes);
    let result = run(&POPULATION_SHAPE, &ctx);
    let (same, separate) = (
        measured(&result, "same_volume"),
        measured(&result, "separate_volumes"),
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
