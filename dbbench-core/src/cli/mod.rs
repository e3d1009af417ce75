//! Layer 7, **cli**: the two front ends. The command line of a suite binary and of the `dbbench`
//! binary (one set of commands, one argument convention), and the test harness entry that every
//! generated `#[test]` calls (`harness`). Both run benchmarks through `run` and hand the
//! results to the same `output` pipeline.
//!
//! A suite's `main` is one line: `dbbench_core::cli::main(&[&my_suite::my_bench::BENCHMARK])`,
//! or [`main_with_references`] to set an article's own numbers beside the results.
//!
//! May import: every layer.

mod args;
mod console;
pub(crate) mod harness;
pub(crate) mod invocation;
mod stored;

use crate::engine::Backend;
use crate::model::error::{Error, Result};
pub use crate::model::reference::{Reference, ReferenceCase};
use crate::model::results::CellStatus;
use crate::model::scale::Scale;
use crate::output::snapshot;
use crate::output::store::{store_file, Store};
use crate::run::context::{exclusive, RunContext};
use crate::run::spec::BenchmarkSpec;
use args::{Args, Command};
use clap::Parser;
use console::out;
use invocation::Invocation;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// Parses the command line and runs it. The exit status is 0 on success, 1 when a cell failed or
/// a snapshot differs, 2 when the command itself could not run (bad arguments, unreadable files).
pub fn main(benchmarks: &[&'static BenchmarkSpec]) -> ExitCode {
    main_with_references(benchmarks, Vec::new())
}

/// As [`main`], with what the benchmarks' sources reported: each run's results (JSON, tables,
/// report) carry the [`Reference`] of its benchmark, matched by test path.
pub fn main_with_references(
    benchmarks: &[&'static BenchmarkSpec],
    references: Vec<Reference>,
) -> ExitCode {
    let args = Args::parse();
    match execute(benchmarks, &references, args) {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::FAILURE,
        Err(e @ Error::Interrupted { .. }) => {
            eprintln!("dbbench: {}", crate::util::secret::scrub(&e.to_string()));
            ExitCode::from(crate::util::signals::EXIT_INTERRUPTED as u8)
        }
        Err(e) => {
            eprintln!("dbbench: {}", crate::util::secret::scrub(&e.to_string()));
            ExitCode::from(2)
        }
    }
}

fn execute(
    benchmarks: &[&'static BenchmarkSpec],
    references: &[Reference],
    args: Args,
) -> Result<bool> {
    let work_dir = match &args.dir {
        Some(dir) => dir.clone(),
        None => default_work_dir(benchmarks)?,
    };
    let command = args.command.unwrap_or(Command::Run {
        filters: Vec::new(),
        scale: None,
        save_baseline: None,
        resume: false,
    });
    if matches!(
        command,
        Command::Run { .. } | Command::Report | Command::Merge { .. }
    ) {
        // The report lists benchmarks as the suite declares them, not by file name.
        let stems: Vec<String> = benchmarks.iter().map(|b| b.file_stem()).collect();
        if !stems.is_empty() {
            crate::output::order::declare(&work_dir, &stems)?;
        }
    }
    match command {
        Command::List => list(benchmarks),
        Command::Run {
            filters,
            scale,
            save_baseline,
            resume,
        } => run(
            benchmarks,
            references,
            &filters,
            scale.as_deref(),
            work_dir,
            save_baseline,
            resume,
        ),
        Command::Report => {
            if store_file(&work_dir).exists() {
                stored::publish_all(&Store::open(&work_dir)?, &work_dir, references)?;
            }
            let index = crate::output::rewrite(&work_dir)?;
            out!("report: {}", index.display());
            Ok(true)
        }
        Command::Compare {
            paths,
            baseline,
            format,
        } => stored::compare(&work_dir, &paths, baseline, format == "markdown"),
        Command::History => stored::history(&work_dir),
        Command::Share { invocation } => stored::share(&work_dir, invocation),
        Command::Components { filters } => stored::components(&work_dir, &filters),
        Command::Preflight { scale } => preflight(benchmarks, scale.as_deref()),
        Command::Baseline { name, invocation } => {
            let id = Store::open(&work_dir)?.save_baseline(&name, invocation)?;
            out!("baseline `{name}` is invocation {id}");
            Ok(true)
        }
        Command::Merge { stores } => stored::merge(&work_dir, &stores, references),
        Command::Snapshot {
            results,
            snapshot_dir,
            name,
        } => snapshot_command(&results, &snapshot_dir, name, &work_dir),
    }
}

/// The work dir of the benchmarks' crate, or of the current directory's workspace.
fn default_work_dir(benchmarks: &[&'static BenchmarkSpec]) -> Result<PathBuf> {
    let manifest_dir = match benchmarks.first() {
        Some(b) => PathBuf::from(b.manifest_dir),
        None => std::env::current_dir()
            .map_err(|e| Error::io("cannot read the current directory", ".", e))?,
    };
    Ok(crate::util::paths::work_dir(&manifest_dir))
}

fn no_benchmarks() -> Error {
    Error::Config(
        "this binary has no benchmarks; run a suite's binary instead \
         (`cargo run --release -p dbbench-suites -- run`)"
            .into(),
    )
}

fn list(benchmarks: &[&'static BenchmarkSpec]) -> Result<bool> {
    if benchmarks.is_empty() {
        return Err(no_benchmarks());
    }
    for bench in benchmarks {
        out!("{}  {}", bench.test_path(), bench.title);
        for cell in bench.cells {
            out!("    {}", cell.name);
        }
    }
    Ok(true)
}

fn snapshot_command(
    results: &Path,
    snapshot_dir: &Path,
    name: Option<String>,
    work_dir: &Path,
) -> Result<bool> {
    let result = crate::output::json::read(results)?;
    // A malformed tolerance is the user's to fix, not a snapshot difference.
    let tolerance = crate::output::comparator::Tolerance::from_env()?;
    let name = name.unwrap_or_else(|| {
        snapshot::snapshot_name(
            &result.benchmark.replace("::", "."),
            &result.scale,
            &result.backend.snapshot_tag(),
        )
    });
    // insta resolves a relative snapshot path against the crate, not the shell.
    let dir = std::path::absolute(snapshot_dir)
        .map_err(|e| Error::io("cannot resolve the snapshot directory", snapshot_dir, e))?;
    // insta reports a mismatch by panicking after it wrote the pending snapshot and its diff.
    let check = quietly(|| snapshot::check_with(&result, &dir, &name, work_dir, tolerance));
    out!("{}", check.line());
    Ok(check.matches)
}

/// `preflight`: the backend's own check of its server (the one `DBBENCH_BACKEND` names, else the
/// only backend of this build that has a preflight), creating nothing: what the server and its
/// login allow, and for every cell whether it can run there.
fn preflight(benchmarks: &[&'static BenchmarkSpec], scale: Option<&str>) -> Result<bool> {
    let run = preflight_of(std::env::var("DBBENCH_BACKEND").ok().as_deref())?;
    let scale = match scale {
        Some(s) => Scale::parse(s)?,
        None => Scale::from_env(Scale::default_scale())?,
    };
    let cells: Vec<(String, &str, crate::model::config::StorageSpec, _)> = benchmarks
        .iter()
        .flat_map(|b| {
            let scale = scale.for_benchmark(&b.run);
            b.cells.iter().map(move |c| {
                (
                    b.test_path(),
                    c.name,
                    c.storage.scaled(b.run.scale_storage, &scale),
                    b.run.cache,
                )
            })
        })
        .collect();
    let cells: Vec<crate::engine::plugin::PreflightCell<'_>> = cells
        .iter()
        .map(|(b, c, s, cache)| (b.as_str(), *c, *s, *cache))
        .collect();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| Error::msg(format!("cannot start the tokio runtime: {e}")))?;
    out!("{}", runtime.block_on(run(&cells))?);
    Ok(true)
}

/// The preflight of the backend `named` (`DBBENCH_BACKEND`), else of the only backend of this
/// build that has one; an error that says which when there is none.
fn preflight_of(named: Option<&str>) -> Result<crate::engine::plugin::PreflightFn> {
    use crate::engine::registry::{not_built, registration, REGISTERED};
    use crate::model::config::BackendKind;
    if let Some(name) = named.map(str::trim).filter(|n| !n.is_empty()) {
        let kind = BackendKind::from_keyword(name)
            .ok_or_else(|| Error::Config(format!("DBBENCH_BACKEND names no backend: `{name}`")))?;
        let found = registration(kind).ok_or_else(|| not_built(kind, "preflight"))?;
        return found.preflight.ok_or_else(|| {
            Error::Config(format!(
                "preflight: the {name} backend has none; its runs check what they need as they \
                 start"
            ))
        });
    }
    let with: Vec<_> = REGISTERED
        .iter()
        .filter(|r| r.preflight.is_some())
        .collect();
    match with.as_slice() {
        [one] => Ok(one.preflight.expect("filtered on it")),
        [] => Err(Error::Config(
            "preflight: no backend of this build has one; build dbbench-core with the feature of \
             a backend that does (docs/architecture.md, \"A backend\")"
                .into(),
        )),
        more => Err(Error::Config(format!(
            "preflight: name the backend in DBBENCH_BACKEND ({})",
            more.iter()
                .map(|r| r.profile.kind.keyword())
                .collect::<Vec<_>>()
                .join(", ")
        ))),
    }
}

/// Runs `f` with the panic hook silenced: insta reports a differing snapshot by printing its diff
/// and then panicking, and the panic's own "thread panicked at" line would only repeat it. The
/// command line runs on one thread, so no other panic is hidden meanwhile.
fn quietly<T>(f: impl FnOnce() -> T) -> T {
    let hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {}));
    let out = f();
    std::panic::set_hook(hook);
    out
}

fn selected_cells(bench: &BenchmarkSpec, filters: &[String]) -> Vec<&'static str> {
    bench
        .cells
        .iter()
        .filter(|c| {
            let path = format!("{}::{}", bench.test_path(), c.name);
            filters.is_empty() || filters.iter().any(|f| path.contains(f.as_str()))
        })
        .map(|c| c.name)
        .collect()
}

/// Runs the selected benchmarks one after another; `Ok(false)` when some cell failed.
fn run(
    benchmarks: &[&'static BenchmarkSpec],
    references: &[Reference],
    filters: &[String],
    scale: Option<&str>,
    work_dir: PathBuf,
    save_baseline: Option<String>,
    resume: bool,
) -> Result<bool> {
    let _guard = exclusive();
    crate::util::signals::install();
    let Some(first) = benchmarks.first() else {
        return Err(no_benchmarks());
    };
    // Settings errors are reported before anything runs.
    crate::output::comparator::Tolerance::from_env()?;
    let mut ctx = RunContext::from_env(first.manifest_dir, Scale::default_scale())?;
    ctx.work_dir = work_dir;
    if let Some(scale) = scale {
        ctx.scale = Scale::parse(scale)?;
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|e| Error::msg(format!("cannot start the tokio runtime: {e}")))?;
    runtime.block_on(async {
        let mut backend = Backend::from_env().await?;
        let invocation = if resume {
            Invocation::resume_interrupted(&ctx.work_dir)?
        } else {
            Invocation::start(&ctx, &backend, first.manifest_dir)?
        };
        let mut all_ok = true;
        let mut differing: Vec<String> = Vec::new();
        let mut busy = crate::model::interference::Busy::default();
        let mut busiest = crate::model::interference::Busiest::default();
        let mut remeasured = 0;
        out!(
            "dbbench: {} benchmark(s) on the {} backend at scale {}; results in {}",
            benchmarks.len(),
            backend.kind().keyword(),
            ctx.scale.name,
            ctx.work_dir.display()
        );
        for bench in benchmarks {
            let cells = selected_cells(bench, filters);
            if cells.is_empty() {
                continue;
            }
            let ran = invocation.run(bench, &cells, &ctx, &mut backend).await?;
            let all_cells = cells.len() == bench.cells.len();
            let (result, snapshot) = report_benchmark(bench, ran, references, &ctx, all_cells)?;
            // A differing snapshot fails the main job as it fails `cargo test`: CI that runs the
            // main job must not pass a regression the snapshot check found.
            if snapshot.is_some_and(|check| !check.matches) {
                differing.push(bench.test_path());
            }
            for run in result.cells.iter().flat_map(|c| c.measured()) {
                busy = busy.plus(crate::model::interference::Busy::of([run]));
                if let Some(i) = run.interference.as_ref() {
                    busiest.note(i);
                }
            }
            remeasured += result
                .cells
                .iter()
                .map(|c| c.set_aside().count())
                .sum::<usize>();
            all_ok &= !result
                .cells
                .iter()
                .any(|c| matches!(c.status, CellStatus::Failed(_)));
        }
        if remeasured > 0 {
            out!(
                "dbbench: {remeasured} window(s) the busy-machine guard found disturbed were set \
                 aside and measured again in their place (each table says which)"
            );
        }
        if busy.any() {
            // One line, not a page of timing differences: the neighbours' work is not ours.
            out!(
                "warning: the machine stayed busy during {} of {} measured repetitions, each \
                 measured {} times ({}): their verdicts and timing checks say inconclusive; \
                 rerun on a quieter machine to judge timings",
                busy.disturbed,
                busy.runs,
                1 + crate::run::schedule::MAX_REMEASURES,
                busiest.describe()
            );
        }
        out!(
            "report: {}",
            crate::util::paths::report_index(&ctx.work_dir).display()
        );
        out!(
            "results store: {} (invocation {})",
            invocation.store.path().display(),
            invocation.id
        );
        if !differing.is_empty() {
            out!(
                "dbbench: the snapshot of {} differs (see above); exit status 1",
                differing.join(", ")
            );
        }
        if let Some(name) = save_baseline {
            if all_ok {
                invocation.store.save_baseline(&name, Some(invocation.id))?;
                out!("saved as baseline `{name}`");
            } else {
                out!("not saved as baseline `{name}`: a cell failed");
            }
        }
        Ok(all_ok && differing.is_empty())
    })
}

/// Prints what one benchmark measured, publishes its current results with its source's values,
/// and checks its snapshot when every cell ran (`all_cells`); returns what was measured now and
/// the snapshot check, where one was made.
fn report_benchmark(
    bench: &'static BenchmarkSpec,
    mut ran: invocation::Ran,
    references: &[Reference],
    ctx: &RunContext,
    all_cells: bool,
) -> Result<(
    crate::model::results::BenchmarkResult,
    Option<snapshot::SnapshotCheck>,
)> {
    // The store keeps what was measured; the source's values join at publishing.
    let reference = references
        .iter()
        .find(|r| r.benchmark == bench.test_path())
        .cloned();
    ran.fresh.reference.clone_from(&reference);
    ran.current.reference = reference;
    let result = ran.fresh;
    out!("{}", crate::output::summary::render(&result));
    crate::output::publish(&ran.current, &bench.file_stem(), &ctx.work_dir)?;
    let mut checked = None;
    if all_cells {
        let check = quietly(|| {
            snapshot::with_source(bench.source_file, || {
                snapshot::check(
                    &result,
                    &bench.file_stem(),
                    bench.manifest_dir,
                    &ctx.work_dir,
                )
            })
        });
        out!("{}", check.line());
        checked = Some(check);
    }
    Ok((result, checked))
}

#[cfg(test)]
mod tests;
