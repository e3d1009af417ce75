//! The storage layer end to end through `run_benchmark`: every configuration runs the body with
//! several connections writing, reports per-file and log statistics, and leaves no file behind.

mod common;

use common::*;
use dbbench_core::backend::Backend;
use dbbench_core::config::{FixtureKind, Growth, Recovery, RunSpec, StorageSpec};
use dbbench_core::results::{BenchmarkResult, CellStatus, FileKind, RunResult};
use dbbench_core::runner::{run_benchmark, RunContext};
use dbbench_core::scale::Scale;
use dbbench_core::session::Session;
use dbbench_core::spec::{BenchmarkSpec, BodyFuture, CellSpec};
use dbbench_core::units::MIB;
use dbbench_core::volume::Volumes;
use dbbench_core::Connection;
use std::path::Path;

/// Inserts `rows` rows of 200 bytes per transaction, `transactions` times, on `conn`.
async fn write(conn: &mut Connection, transactions: u32, rows: u32) -> dbbench_core::Result<()> {
    for _ in 0..transactions {
        conn.execute(&format!(
            "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < {rows}) \
             INSERT INTO t (pad) SELECT randomblob(200) FROM n"
        ))
        .await?;
    }
    Ok(())
}

/// Three connections write at once, each on its own thread, then the database is checked.
fn concurrent_body(db: &mut Session) -> BodyFuture<'_> {
    Box::pin(async move {
        db.batch("CREATE TABLE t (id INTEGER PRIMARY KEY, pad BLOB)")
            .await?;
        let mut others = [db.connect().await?, db.connect().await?];
        let [first, second] = &mut others;
        let conns: [&mut Connection; 3] = [db.connection(), first, second];
        std::thread::scope(|s| {
            let threads: Vec<_> = conns
                .into_iter()
                .map(|conn| {
                    s.spawn(move || {
                        tokio::runtime::Builder::new_current_thread()
                            .build()
                            .unwrap()
                            .block_on(write(conn, 10, 600))
                    })
                })
                .collect();
            threads
                .into_iter()
                .map(|t| t.join().unwrap())
                .collect::<dbbench_core::Result<Vec<()>>>()
        })?;
        drop(others);
        let verdict: String = db.query_scalar("PRAGMA integrity_check").await?;
        assert_eq!(verdict, "ok");
        let rows: i64 = db.query_scalar("SELECT count(*) FROM t").await?;
        db.record_count("rows", rows);
        Ok(())
    })
}

/// Fifty transactions of about 220 KB each on one connection: ~11 MB of log.
fn log_body(db: &mut Session) -> BodyFuture<'_> {
    Box::pin(async move {
        db.batch("CREATE TABLE t (id INTEGER PRIMARY KEY, pad BLOB)")
            .await?;
        write(db.connection(), 50, 1000).await?;
        let verdict: String = db.query_scalar("PRAGMA integrity_check").await?;
        assert_eq!(verdict, "ok");
        Ok(())
    })
}

const fn bench(
    name: &'static str,
    cells: &'static [CellSpec],
    body: dbbench_core::spec::BodyFn,
) -> BenchmarkSpec {
    BenchmarkSpec {
        name,
        module_path: name,
        manifest_dir: env!("CARGO_MANIFEST_DIR"),
        source_file: file!(),
        title: "storage layer end to end",
        run: RunSpec {
            fixture: FixtureKind::None,
            ..RunSpec::DEFAULT
        },
        cells,
        body,
    }
}

static CONFIGURATIONS: BenchmarkSpec = bench(
    "storage_runner::configurations",
    &[
        CellSpec {
            backends: &[],
            name: "defaults",
            storage: StorageSpec::DEFAULT,
        },
        CellSpec {
            backends: &[],
            name: "growth_1mb_no_ifi",
            storage: StorageSpec {
                data_size: Some(mib(1, "1MB")),
                growth: Some(grow_mib(1, "1MB")),
                ifi: Some(false),
                log_growth: Some(grow_mib(1, "1MB")),
                ..StorageSpec::DEFAULT
            },
        },
        CellSpec {
            backends: &[],
            name: "four_files_two_volumes",
            storage: StorageSpec {
                data_files: 4,
                data_size: Some(mib(4, "4MB")),
                growth: Some(Growth::Percent(10)),
                data_on: &["a", "b"],
                log_on: Some("b"),
                ..StorageSpec::DEFAULT
            },
        },
        CellSpec {
            backends: &[],
            name: "no_growth",
            storage: StorageSpec {
                data_size: Some(mib(1, "1MB")),
                growth: Some(Growth::None),
                ..StorageSpec::DEFAULT
            },
        },
        CellSpec {
            backends: &[],
            name: "missing_volume",
            storage: StorageSpec {
                data_files: 2,
                data_on: &["a", "gone"],
                ..StorageSpec::DEFAULT
            },
        },
    ],
    concurrent_body,
);

static RECOVERY: BenchmarkSpec = bench(
    "storage_runner::recovery",
    &[
        CellSpec {
            backends: &[],
            name: "simple",
            storage: StorageSpec {
                recovery: Some(Recovery::Simple),
                log_size: Some(mib(1, "1MB")),
                log_growth: Some(grow_mib(1, "1MB")),
                ..StorageSpec::DEFAULT
            },
        },
        CellSpec {
            backends: &[],
            name: "full",
            storage: StorageSpec {
                recovery: Some(Recovery::Full),
                log_size: Some(mib(1, "1MB")),
                log_growth: Some(grow_mib(1, "1MB")),
                ..StorageSpec::DEFAULT
            },
        },
    ],
    log_body,
);

/// The article's doubling loop on the credit fixture, one connection: deterministic results.
fn doubling_body(db: &mut Session) -> BodyFuture<'_> {
    Box::pin(async move {
        for n in 1..=3 {
            let sql = dbbench_core::fixture::doubling_insert(db.dialect(), n);
            db.execute(&sql).await?;
            db.lap(format!("loop {n}"));
        }
        let rows: i64 = db.query_scalar("SELECT count(*) FROM charge").await?;
        db.record_count("rows_after", rows);
        Ok(())
    })
}

static DOUBLING: BenchmarkSpec = BenchmarkSpec {
    run: RunSpec {
        fixture: FixtureKind::Credit,
        ..RunSpec::DEFAULT
    },
    ..bench(
        "storage_runner::doubling",
        &[
            CellSpec {
                backends: &[],
                name: "growth_1mb_no_ifi",
                storage: StorageSpec {
                    data_size: Some(mib(1, "1MB")),
                    growth: Some(grow_mib(1, "1MB")),
                    ifi: Some(false),
                    log_size: Some(mib(1, "1MB")),
                    log_growth: Some(grow_mib(1, "1MB")),
                    recovery: Some(Recovery::Full),
                    ..StorageSpec::DEFAULT
                },
            },
            CellSpec {
                backends: &[],
                name: "four_files_presized",
                storage: StorageSpec {
                    data_files: 4,
                    data_size: Some(mib(8, "8MB")),
                    growth: Some(grow_mib(1, "1MB")),
                    ifi: Some(true),
                    log_size: Some(mib(8, "8MB")),
                    log_pregrow: Some(mib(2, "2MB")),
                    ..StorageSpec::DEFAULT
                },
            },
        ],
        doubling_body,
    )
};

fn run(bench: &'static BenchmarkSpec, work: &Path, volumes: Volumes) -> BenchmarkResult {
    run_at(bench, work, volumes, Scale::smoke())
}

fn run_at(
    bench: &'static BenchmarkSpec,
    work: &Path,
    volumes: Volumes,
    scale: Scale,
) -> BenchmarkResult {
    let ctx = RunContext {
        scale,
        volumes,
        work_dir: work.to_path_buf(),
    };
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
        .block_on(async {
            let mut backend = Backend::from_env().await.unwrap();
            run_benchmark(bench, None, &ctx, &mut backend)
                .await
                .unwrap()
        })
}

fn cell<'a>(result: &'a BenchmarkResult, name: &str) -> &'a dbbench_core::results::CellResult {
    result.cells.iter().find(|c| c.name == name).unwrap()
}

fn only_run<'a>(result: &'a BenchmarkResult, name: &str) -> &'a RunResult {
    let cell = cell(result, name);
    assert_eq!(cell.status, CellStatus::Ok, "{name}");
    &cell.runs[0]
}

#[test]
fn every_configuration_runs_measures_and_cleans_up() {
    let base = scratch("runner-configurations");
    let (work, a, b) = (base.join("work"), base.join("a"), base.join("b"));
    std::fs::create_dir_all(&a).unwrap();
    std::fs::create_dir_all(&b).unwrap();
    let mut volumes = Volumes::default();
    volumes.bind("a", &a);
    volumes.bind("b", &b);
    volumes.bind("gone", base.join("gone"));
    let result = run(&CONFIGURATIONS, &work, volumes);

    for name in ["defaults", "growth_1mb_no_ifi", "four_files_two_volumes"] {
        let run = only_run(&result, name);
        assert_eq!(run.counts["rows"], 3 * 10 * 600, "{name}");
        let log = run.log.as_ref().unwrap();
        let log_file = run.files.iter().find(|f| f.kind == FileKind::Log).unwrap();
        assert_eq!(log.size_after_bytes, log_file.size_after_bytes);
        assert!(
            log_file.writes > 0 && log_file.flushes > 0,
            "{name}: {log_file:?}"
        );
    }
    let defaults = only_run(&result, "defaults");
    assert_eq!(
        defaults.files[0].size_before_bytes,
        64 * 1024,
        "one extent to start"
    );
    assert_eq!(
        defaults.files[0].growth_bytes,
        64 * MIB,
        "default growth 64 MB"
    );

    let grown = &only_run(&result, "growth_1mb_no_ifi").files[0];
    assert!(grown.growth_events >= 2, "{grown:?}");
    assert_eq!(
        grown.size_after_bytes - grown.size_before_bytes,
        grown.growth_events * MIB
    );
    assert_eq!(grown.zero_fill_bytes, grown.growth_bytes);

    let spread = only_run(&result, "four_files_two_volumes");
    let volumes: Vec<Option<&str>> = spread.files.iter().map(|f| f.volume.as_deref()).collect();
    assert_eq!(
        volumes,
        [Some("a"), Some("b"), Some("a"), Some("b"), Some("b")]
    );

    let CellStatus::Failed(full) = &cell(&result, "no_growth").status else {
        panic!("a data file without growth must fill up");
    };
    assert!(
        full.contains("_data_1.mdf` is full") && full.contains("none"),
        "{full}"
    );
    let CellStatus::Failed(missing) = &cell(&result, "missing_volume").status else {
        panic!("a missing volume directory must fail the cell");
    };
    assert!(
        missing.contains(&base.join("gone").display().to_string()),
        "{missing}"
    );

    assert!(
        listing(&work.join("db")).is_empty(),
        "{:?}",
        listing(&work.join("db"))
    );
    assert!(listing(&a).is_empty() && listing(&b).is_empty());
    let json = dbbench_core::workdir::results_file(&work, "storage_runner.configurations");
    let written = BenchmarkResult::read(&json).unwrap();
    assert_eq!(
        written.cells[1].runs[0].files,
        result.cells[1].runs[0].files
    );
}

#[test]
fn full_recovery_keeps_more_log_than_simple() {
    let work = scratch("runner-recovery");
    let result = run(&RECOVERY, &work, Volumes::default());
    let simple = only_run(&result, "simple").log.clone().unwrap();
    let full = only_run(&result, "full").log.clone().unwrap();
    assert!(
        full.size_after_bytes > simple.size_after_bytes + 2 * MIB,
        "full {} vs simple {}",
        full.size_after_bytes,
        simple.size_after_bytes
    );
    assert!(full.growths > simple.growths);
    assert!(full.segments_after > simple.segments_after);
    assert!(listing(&work.join("db")).is_empty());
}

#[test]
fn doubling_statistics_are_deterministic_and_snapshotted() {
    let work = scratch("runner-doubling");
    // 16 000 rows doubled three times: about 5 MB of data, several 1 MB growths.
    let scale = Scale::parse("0.01").unwrap();
    let result = run_at(&DOUBLING, &work, Volumes::default(), scale.clone());
    // Through dbbench's own snapshot assertion: counts exactly; timings are recorded but not
    // judged, since this test is about storage, not speed.
    let snapshots = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/snapshots");
    let counts_only = dbbench_core::comparator::Tolerance {
        mode: dbbench_core::comparator::TimingMode::Ignore,
        ..Default::default()
    };
    dbbench_core::snapshot::assert_snapshot_with(
        &result,
        &snapshots,
        "storage_runner__storage_doubling",
        &work,
        counts_only,
    );
    let again = run_at(&DOUBLING, &work, Volumes::default(), scale);
    let counts = |r: &BenchmarkResult| -> Vec<_> {
        r.cells
            .iter()
            .map(|c| {
                let run = &c.runs[0];
                let files: Vec<_> = run
                    .files
                    .iter()
                    .map(|f| (f.size_after_bytes, f.growth_events, f.zero_fill_bytes))
                    .collect();
                (files, run.log.clone(), run.counts.clone())
            })
            .collect()
    };
    assert_eq!(
        counts(&result),
        counts(&again),
        "a second run measures the same"
    );
}
