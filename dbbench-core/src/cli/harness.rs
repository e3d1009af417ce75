//! The entry point of every generated `#[test]`: the first test of a benchmark runs all of the
//! benchmark's cells that this `cargo test` selects (interleaved), later tests of the same
//! benchmark report the outcome of their own cell from the cached result.

use super::invocation::Invocation;
use crate::engine::{registry, Backend};
use crate::model::config::BackendKind;
use crate::model::error::{Error, Result};
use crate::model::results::{BenchmarkResult, CellStatus};
use crate::model::scale::Scale;
use crate::run::context::{exclusive, RunContext};
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
    // A cell that does not run on this backend says why without starting anything; the
    // benchmark's other tests run (and check) the cells that do.
    if let (Ok(kind), Some(spec)) = (BackendKind::from_env(), bench.cell(cell)) {
        if let Some(why) = bench.not_applicable_on(kind) {
            say(&format!(
                "{}::{cell}: skipped: does not apply on {}: {why}",
                bench.test_path(),
                kind.keyword()
            ));
            if bench.cells[0].name != cell {
                return;
            }
        } else if !bench.runs_on(spec, kind) {
            // Its tests may be the only ones this `cargo test` runs of the benchmark (the cells
            // of other backends are ignored tests): the first one runs the cells that this
            // backend runs and the filter selects, as any first test of a benchmark does.
            let _guard = exclusive();
            let ran = bench.cells.iter().any(|c| cached(bench, c.name).is_some());
            if !ran {
                let filter = TestFilter::from_args();
                let runnable = bench.cells.iter().any(|c| {
                    bench.runs_on(c, kind)
                        && filter.selects(&format!("{}::{}", bench.test_path(), c.name))
                });
                if runnable {
                    if let Err(e) = run_selected(bench, cell) {
                        panic!(
                            "dbbench: {}: {}",
                            bench.test_path(),
                            crate::util::secret::scrub(&e.to_string())
                        );
                    }
                }
            }
            say(&format!(
                "{}::{cell}: skipped: {}",
                bench.test_path(),
                elsewhere_reason(spec.backends, kind)
            ));
            return;
        }
    }
    let _guard = exclusive();
    let result = match cached(bench, cell) {
        Some(result) => result,
        None => match run_selected(bench, cell) {
            Ok(result) => result,
            Err(e) => panic!(
                "dbbench: {}: {}",
                bench.test_path(),
                crate::util::secret::scrub(&e.to_string())
            ),
        },
    };
    if result.not_applicable.is_some() {
        return;
    }
    let found = result
        .cells
        .iter()
        .find(|c| c.name == cell)
        .expect("the cell ran");
    match &found.status {
        CellStatus::Ok => {}
        CellStatus::Skipped(why) => say(&format!("{}::{cell}: skipped: {why}", bench.test_path())),
        CellStatus::Failed(error) => {
            panic!(
                "dbbench: {}::{cell} failed: {}",
                bench.test_path(),
                crate::util::secret::scrub(&error.to_string())
            )
        }
    }
}

/// Why a cell whose case names only `backends` does not run on `kind`: the backends are not in
/// this build (their features were off), or they are other backends than `DBBENCH_BACKEND`'s.
fn elsewhere_reason(backends: &[BackendKind], kind: BackendKind) -> String {
    let missing: Vec<String> = backends
        .iter()
        .filter(|b| !registry::is_built(**b))
        .map(|b| format!("`{}`", b.keyword()))
        .collect();
    if !backends.is_empty() && missing.len() == backends.len() {
        let s = if missing.len() == 1 { "" } else { "s" };
        format!("not built with feature{s} {}", missing.join(", "))
    } else {
        format!(
            "its case runs on other backends than {} (DBBENCH_BACKEND)",
            kind.keyword()
        )
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
    crate::util::signals::install();
    // Settings errors are reported before anything runs: the tolerance is read only when the
    // snapshot is checked, after every repetition (scale and volumes are read just below).
    crate::output::comparator::Tolerance::from_env()?;
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
    let ran = runtime.block_on(async {
        let mut backend = Backend::from_env().await?;
        say(&format!(
            "dbbench › {}: {} of {} cells on the {} backend, scale {}",
            bench.test_path(),
            selected.len(),
            bench.cells.len(),
            backend.kind().keyword(),
            ctx.scale.name
        ));
        let invocation = process_invocation(&ctx, &backend, bench.manifest_dir)?;
        invocation.run(bench, &selected, &ctx, &mut backend).await
    })?;
    let result = Arc::new(ran.fresh);
    remember(bench, result.clone());
    say(&crate::output::summary::render(&result));
    let stem = bench.file_stem();
    // The outputs show the benchmark's current results: the cells run now and, for the others,
    // their newest results in the store, so a partial run never hides a cell.
    let published = crate::output::publish(&ran.current, &stem, &ctx.work_dir)?;
    say(&format!(
        "dbbench › runs: {} · report: {}",
        published.csv.display(),
        published.report.display()
    ));
    if selected.len() == bench.cells.len() {
        let findings = crate::output::snapshot::with_source(bench.source_file, || {
            crate::output::snapshot::assert_snapshot(
                &result,
                &stem,
                bench.manifest_dir,
                &ctx.work_dir,
            )
        });
        if let Some(note) = findings.describe() {
            say(&format!("dbbench › {}: {note}", bench.test_path()));
        }
    } else {
        check_cells(bench, &selected, &ran.current, &ctx)?;
    }
    Ok(result)
}

/// The invocation of this test process, per work dir: every benchmark a `cargo test` process runs
/// belongs to one invocation (and under nextest, every process of the run, by `NEXTEST_RUN_ID`).
fn process_invocation(
    ctx: &RunContext,
    backend: &Backend,
    manifest_dir: &str,
) -> Result<Invocation> {
    static STARTED: Mutex<Vec<(std::path::PathBuf, i64, bool)>> = Mutex::new(Vec::new());
    let mut started = STARTED.lock().unwrap_or_else(|p| p.into_inner());
    if let Some((_, id, resuming)) = started.iter().find(|(dir, ..)| *dir == ctx.work_dir) {
        return Ok(Invocation {
            resuming: *resuming,
            ..Invocation::resume(&ctx.work_dir, *id)?
        });
    }
    // `DBBENCH_RESUME=1 cargo test` continues the newest interrupted invocation.
    let resume = std::env::var("DBBENCH_RESUME").is_ok_and(|v| !v.is_empty() && v != "0");
    let invocation = if resume {
        Invocation::resume_interrupted(&ctx.work_dir)?
    } else {
        Invocation::start(ctx, backend, manifest_dir)?
    };
    started.push((ctx.work_dir.clone(), invocation.id, invocation.resuming));
    Ok(invocation)
}

/// Checks each cell that ran against its part of the recorded snapshot: a process that ran only
/// some cells (a filtered `cargo test`, every nextest process) still fails on a changed
/// deterministic value. On a difference the whole current benchmark is written as the pending
/// snapshot, for `cargo insta review`.
fn check_cells(
    bench: &BenchmarkSpec,
    selected: &[&str],
    current: &BenchmarkResult,
    ctx: &RunContext,
) -> Result<()> {
    use crate::output::snapshot::{check_cell, CellCheck};
    let tolerance = crate::output::comparator::Tolerance::from_env()?;
    let stem = bench.file_stem();
    let complete = bench
        .cells
        .iter()
        .all(|c| current.cells.iter().any(|r| r.name == c.name));
    for cell in selected {
        match check_cell(
            current,
            cell,
            &stem,
            bench.manifest_dir,
            &ctx.work_dir,
            &tolerance,
        ) {
            CellCheck::Matches(findings) => say(&format!(
                "dbbench › {}::{cell}: matches its part of the snapshot{}",
                bench.test_path(),
                findings
                    .describe()
                    .map(|n| format!(" ({n})"))
                    .unwrap_or_default()
            )),
            CellCheck::NotRecorded(path) if complete => {
                // Every cell has results now: record (or fail on) the whole snapshot as insta does.
                say(&format!(
                    "dbbench › no snapshot entry for {cell} in {}",
                    path.display()
                ));
                crate::output::snapshot::with_source(bench.source_file, || {
                    crate::output::snapshot::assert_snapshot(
                        current,
                        &stem,
                        bench.manifest_dir,
                        &ctx.work_dir,
                    )
                });
            }
            CellCheck::NotRecorded(path) => say(&format!(
                "dbbench › {}::{cell}: snapshot not checked: {} has no entry for it yet, and not \
                 every cell has results to record one (run all cells once)",
                bench.test_path(),
                path.display()
            )),
            CellCheck::Differs(differences) => {
                // insta writes the pending `.snap.new` of the whole current benchmark.
                let _ = crate::output::snapshot::with_source(bench.source_file, || {
                    crate::output::snapshot::check(
                        current,
                        &stem,
                        bench.manifest_dir,
                        &ctx.work_dir,
                    )
                });
                panic!(
                    "dbbench: {}::{cell} differs from its recorded snapshot:\n  {}\nreview the \
                     pending snapshot with `cargo insta review`",
                    bench.test_path(),
                    differences.join("\n  ")
                );
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_case_for_a_backend_left_out_of_the_build_names_its_feature() {
        for backend in [BackendKind::named("postgres"), BackendKind::named("mssql")] {
            let why = elsewhere_reason(&[backend], BackendKind::named("embedded"));
            if registry::is_built(backend) {
                assert_eq!(
                    why,
                    "its case runs on other backends than embedded (DBBENCH_BACKEND)"
                );
            } else {
                assert_eq!(
                    why,
                    format!("not built with feature `{}`", backend.keyword())
                );
            }
        }
        // A case that also names a backend of this build is one for other backends.
        let mixed = elsewhere_reason(
            &[BackendKind::named("embedded"), BackendKind::named("mssql")],
            BackendKind::named("postgres"),
        );
        if registry::is_built(BackendKind::named("embedded"))
            || registry::is_built(BackendKind::named("mssql"))
        {
            assert!(
                mixed.starts_with("its case runs on other backends"),
                "{mixed}"
            );
        } else {
            assert_eq!(mixed, "not built with features `embedded`, `mssql`");
        }
    }
}
