//! The entry point of every generated `#[test]`: the first test of a benchmark runs all of the
//! benchmark's cells that this `cargo test` selects (interleaved), later tests of the same
//! benchmark report the outcome of their own cell from the cached result.

use crate::engine::Backend;
use crate::model::error::{Error, Result};
use crate::model::results::{BenchmarkResult, CellStatus};
use crate::model::scale::Scale;
use crate::run::context::{exclusive, RunContext};
use crate::run::runner::run_benchmark;
use crate::run::selection::TestFilter;
use crate::run::spec::BenchmarkSpec;
use crate::util::console::say;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

/// Results of benchmarks already run in this process, by module path.
static RESULTS: Mutex<Option<HashMap<&'static str, Arc<BenchmarkResult>>>> = Mutex::new(None);

fn cached(bench: &BenchmarkSpec, cell: &str) -> Option<Arc<BenchmarkResult>> {
    let guard = RESULTS.lock().unwrap_or_else(|p| p.into_inner());
    let result = guard.as_ref()?.get(bench.module_path)?.clone();
    result
        .cells
        .iter()
        .any(|c| c.name == cell)
        .then_some(result)
}

fn remember(bench: &BenchmarkSpec, result: Arc<BenchmarkResult>) {
    let mut guard = RESULTS.lock().unwrap_or_else(|p| p.into_inner());
    guard
        .get_or_insert_with(HashMap::new)
        .insert(bench.module_path, result);
}

/// Runs the cell `cell` of `bench` as a test: panics with the cell's error if it failed.
pub fn run_test(bench: &'static BenchmarkSpec, cell: &str) {
    let _guard = exclusive();
    let result = match cached(bench, cell) {
        Some(result) => result,
        None => match run_selected(bench, cell) {
            Ok(result) => result,
            Err(e) => panic!("dbbench: {}: {e}", bench.test_path()),
        },
    };
    let found = result
        .cells
        .iter()
        .find(|c| c.name == cell)
        .expect("the cell ran");
    match &found.status {
        CellStatus::Ok => {}
        CellStatus::Skipped(why) => say(&format!("{}::{cell}: skipped: {why}", bench.test_path())),
        CellStatus::Failed(error) => {
            panic!("dbbench: {}::{cell} failed: {error}", bench.test_path())
        }
    }
}

fn run_selected(bench: &'static BenchmarkSpec, cell: &str) -> Result<Arc<BenchmarkResult>> {
    let filter = TestFilter::from_args();
    let mut selected: Vec<&str> = bench
        .cells
        .iter()
        .map(|c| c.name)
        .filter(|name| filter.selects(&format!("{}::{name}", bench.test_path())))
        .collect();
    if !selected.contains(&cell) {
        selected = vec![cell];
    }
    let mut ctx = RunContext::from_env(bench.manifest_dir, Scale::smoke())?;
    // `cargo test` runs keep their results apart from the main job's (`target/dbbench/tests/`),
    // so running the tests never overwrites the default-scale results and report.
    if std::env::var_os("DBBENCH_DIR").is_none_or(|d| d.is_empty()) {
        ctx.work_dir = ctx.work_dir.join("tests");
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|e| Error::msg(format!("cannot start the tokio runtime: {e}")))?;
    let result = runtime.block_on(async {
        let mut backend = Backend::from_env().await?;
        say(&format!(
            "dbbench › {}: {} of {} cells on the {} backend, scale {}",
            bench.test_path(),
            selected.len(),
            bench.cells.len(),
            backend.kind().keyword(),
            ctx.scale.name
        ));
        run_benchmark(bench, Some(&selected), &ctx, &mut backend).await
    })?;
    let result = Arc::new(result);
    remember(bench, result.clone());
    say(&crate::output::summary::render(&result));
    let stem = bench.file_stem();
    // The report's index covers every benchmark run so far in this work dir, so a partial
    // `cargo test` still leaves a complete report behind.
    let published = crate::output::publish(&result, &stem, &ctx.work_dir)?;
    say(&format!(
        "dbbench › runs: {} · report: {}",
        published.csv.display(),
        published.report.display()
    ));
    if selected.len() == bench.cells.len() {
        crate::output::snapshot::assert_snapshot(&result, &stem, bench.manifest_dir, &ctx.work_dir);
    } else {
        say(&format!(
            "dbbench › {}: snapshot not checked: {} of {} cells selected",
            bench.test_path(),
            selected.len(),
            bench.cells.len()
        ));
    }
    Ok(result)
}
