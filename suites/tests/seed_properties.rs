//! The physical facts the seed suites rest on, checked on the embedded engine at a small scale:
//! counts and placements, never timings.

use dbbench_core::__internals::embedded::EmbeddedBackend;
use dbbench_core::__internals::Backend;
use dbbench_core::__internals::BenchmarkSpec;
use dbbench_core::__internals::{exclusive, run_benchmark, RunContext};
use dbbench_core::results::{BenchmarkResult, CellResult, CellStatus, FileKind, RunResult};
use dbbench_core::{db_bench, Result, Scale, Session};
use dbbench_suites::{data_files, population, vlf};

/// Runs `bench` on the embedded engine at smoke scale in a scratch directory.
fn run(bench: &'static BenchmarkSpec, name: &str) -> BenchmarkResult {
    let _guard = exclusive();
    let work_dir =
        std::env::temp_dir().join(format!("dbbench-seeds-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&work_dir);
    let ctx = RunContext {
        scale: Scale::smoke(),
        volumes: Default::default(),
        work_dir,
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let result = runtime.block_on(async {
        let mut backend = Backend::new(EmbeddedBackend::new());
        run_benchmark(bench, None, &ctx, &mut backend)
            .await
            .unwrap()
    });
    let _ = std::fs::remove_dir_all(&ctx.work_dir);
    result
}

fn cell<'a>(result: &'a BenchmarkResult, name: &str) -> &'a CellResult {
    let cell = result
        .cells
        .iter()
        .find(|c| c.name == name)
        .expect("cell exists");
    assert_eq!(cell.status, CellStatus::Ok, "{name}: {:?}", cell.status);
    cell
}

fn first_run<'a>(result: &'a BenchmarkResult, name: &str) -> &'a RunResult {
    cell(result, name)
        .measured()
        .next()
        .expect("a measured run")
}

fn data_growths(run: &RunResult) -> u64 {
    run.files
        .iter()
        .filter(|f| f.kind == FileKind::Data)
        .map(|f| f.growth_events)
        .sum()
}

#[test]
fn vlf_small_growth_grows_many_times_more_than_large_growth() {
    let result = run(&vlf::doubling::BENCHMARK, "vlf");
    let (t1, t2, t3, t4) = (
        first_run(&result, "test_1"),
        first_run(&result, "test_2"),
        first_run(&result, "test_3"),
        first_run(&result, "test_4"),
    );
    assert!(
        data_growths(t1) >= 10 * data_growths(t3),
        "{} vs {}",
        data_growths(t1),
        data_growths(t3)
    );
    let log = |r: &RunResult| r.log.clone().expect("log stats");
    assert!(log(t1).growths >= 10 * log(t3).growths.max(1));
    assert!(log(t1).segments_after > log(t3).segments_after);
    assert_eq!(log(t4).growths, 0, "a pre-grown log does not grow");
    // IFI changes how space is initialised, not how much is allocated.
    assert_eq!(data_growths(t1), data_growths(t2));
    let zero_fill = |r: &RunResult| -> u64 {
        r.files
            .iter()
            .filter(|f| f.kind == FileKind::Data)
            .map(|f| f.zero_fill_bytes)
            .sum()
    };
    assert!(zero_fill(t1) > 0 && zero_fill(t2) == 0);
    // Test 6 needs tempdb and runs on SQL Server only, PostgreSQL's cases on PostgreSQL only:
    // the embedded engine leaves them out of its run and names them under the table.
    assert!(result.cells.iter().all(|c| c.name.starts_with("test_")));
    assert_eq!(result.cells.len(), 6, "tests 1–5 and test_4_again");
    assert!(
        result.elsewhere.contains(&"test_6 (mssql)".to_string()),
        "{:?}",
        result.elsewhere
    );
    assert!(
        result
            .elsewhere
            .contains(&"pg_test_1 (postgres)".to_string()),
        "{:?}",
        result.elsewhere
    );
}

#[test]
fn eight_data_files_fill_proportionally() {
    let result = run(&data_files::equal_shares::BENCHMARK, "files");
    for (name, files) in [
        ("data_files_1", 1),
        ("data_files_8", 8),
        ("data_files_16", 16),
    ] {
        let run = first_run(&result, name);
        let data: Vec<_> = run
            .files
            .iter()
            .filter(|f| f.kind == FileKind::Data)
            .collect();
        assert_eq!(data.len(), files, "{name}");
        let extents: Vec<i64> = (1..=files)
            .map(|i| run.counts[&format!("data_{i}_extents")])
            .collect();
        let (min, max) = (extents.iter().min().unwrap(), extents.iter().max().unwrap());
        assert!(max - min <= 1, "{name}: extents per file {extents:?}");
        assert_eq!(run.counts["rows_after"], run.counts["load_rows"]);
    }
}

#[test]
fn separate_volumes_put_data_and_log_apart() {
    let result = run(&population::population::BENCHMARK, "volumes");
    let volumes = |name: &str| -> Vec<(FileKind, Option<String>)> {
        first_run(&result, name)
            .files
            .iter()
            .map(|f| (f.kind, f.volume.clone()))
            .collect()
    };
    assert!(volumes("same_volume").iter().all(|(_, v)| v.is_none()));
    let separate = volumes("separate_volumes");
    assert!(
        separate.contains(&(FileKind::Data, Some("data".into()))),
        "{separate:?}"
    );
    assert!(
        separate.contains(&(FileKind::Log, Some("log".into()))),
        "{separate:?}"
    );
    assert!(
        result.backend.preconditions.contains_key("volume data"),
        "unbound volumes are recorded"
    );
}

/// Reads back the thread limit that `maxdop` set.
/// SQLite's pragma: the embedded engine only.
#[db_bench(maxdop = [1, 4], backends = ["embedded"])]
async fn maxdop_reaches_sqlite(db: &mut Session) -> Result<()> {
    let threads: i64 = db.query_scalar("PRAGMA threads").await?;
    db.record_count("threads", threads);
    Ok(())
}

#[test]
fn maxdop_reaches_the_embedded_engine() {
    let result = run(&maxdop_reaches_sqlite::BENCHMARK, "maxdop");
    assert_eq!(first_run(&result, "maxdop_1").counts["threads"], 1);
    assert_eq!(first_run(&result, "maxdop_4").counts["threads"], 4);
}
