//! The command line of a suite binary: run benchmarks outside `cargo test`, with progress, the
//! result tables and the HTML report. A suite's `main` is one line:
//! `dbbench_core::cli::main(&[&my_suite::my_bench::BENCHMARK])`.

use crate::backend::Backend;
use crate::error::Result;
use crate::runner::{exclusive, run_benchmark, RunContext};
use crate::scale::Scale;
use crate::spec::BenchmarkSpec;
use clap::{Parser, Subcommand};
use std::process::ExitCode;

/// Runs dbbench benchmarks and writes their results and report.
#[derive(Debug, Parser)]
#[command(name = "dbbench", about, long_about = None)]
struct Args {
    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Run benchmarks (all, or those whose path contains one of the filters); the default.
    Run {
        /// Substrings of `module::benchmark::cell` to select.
        filters: Vec<String>,
        /// `smoke`, `default`, `full` or a factor; overrides DBBENCH_SCALE.
        #[arg(long)]
        scale: Option<String>,
    },
    /// List the benchmarks and their cells.
    List,
    /// Rewrite the CSVs, charts and `report/index.html` from the results on disk.
    Report,
    /// Compare the current results with a saved baseline (a results JSON file or directory).
    Compare {
        /// The baseline's results file or directory.
        baseline: std::path::PathBuf,
        /// The current results (default: this work directory's `results/`).
        current: Option<std::path::PathBuf>,
    },
}

/// Parses the command line and runs it; returns a failure exit code if any cell failed.
pub fn main(benchmarks: &[&'static BenchmarkSpec]) -> ExitCode {
    let args = Args::parse();
    let outcome = match args.command.unwrap_or(Command::Run {
        filters: Vec::new(),
        scale: None,
    }) {
        Command::List => {
            list(benchmarks);
            Ok(true)
        }
        Command::Run { filters, scale } => run(benchmarks, &filters, scale.as_deref()),
        Command::Report => work_dir(benchmarks)
            .and_then(|dir| crate::report::write_report(&dir))
            .map(|index| {
                println!("report: {}", index.display());
                true
            }),
        Command::Compare { baseline, current } => work_dir(benchmarks).and_then(|dir| {
            let current = current.unwrap_or_else(|| dir.join("results"));
            for comparison in crate::compare::compare_paths(&current, &baseline)? {
                println!("{}", comparison.render());
            }
            Ok(true)
        }),
    };
    match outcome {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::FAILURE,
        Err(e) => {
            eprintln!("dbbench: {e}");
            ExitCode::FAILURE
        }
    }
}

fn work_dir(benchmarks: &[&'static BenchmarkSpec]) -> Result<std::path::PathBuf> {
    let manifest_dir = benchmarks.first().map(|b| b.manifest_dir).unwrap_or(".");
    Ok(RunContext::from_env(manifest_dir, Scale::default_scale())?.work_dir)
}

/// Compares `result` with the benchmark's recorded snapshot, as `cargo test` would, but reports
/// the outcome as a line instead of failing: the main job measures, reviewers judge.
fn check_snapshot(
    bench: &BenchmarkSpec,
    result: &crate::results::BenchmarkResult,
    ctx: &RunContext,
) -> String {
    let stem = bench.file_stem();
    let name = crate::snapshot::snapshot_name(&stem, &result.scale);
    let path = std::path::Path::new(bench.manifest_dir)
        .join("snapshots")
        .join(format!("{name}.snap"));
    // insta reports a difference by panicking after it wrote the pending snapshot; its own
    // message already shows the diff, so the default panic message is silenced meanwhile.
    let hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {}));
    let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        crate::snapshot::assert_snapshot(result, &stem, bench.manifest_dir, &ctx.work_dir)
    }));
    std::panic::set_hook(hook);
    match outcome {
        Ok(()) => format!("snapshot: matches {}", path.display()),
        Err(_) => format!(
            "snapshot: differs from {} (or none is recorded yet); review it with `cargo insta review`",
            path.display()
        ),
    }
}

fn list(benchmarks: &[&'static BenchmarkSpec]) {
    for bench in benchmarks {
        println!("{}  {}", bench.test_path(), bench.title);
        for cell in bench.cells {
            println!("    {}", cell.name);
        }
    }
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
    filters: &[String],
    scale: Option<&str>,
) -> Result<bool> {
    let _guard = exclusive();
    let Some(first) = benchmarks.first() else {
        return Ok(true);
    };
    let mut ctx = RunContext::from_env(first.manifest_dir, Scale::default_scale())?;
    if let Some(scale) = scale {
        ctx.scale = Scale::parse(scale)?;
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|e| crate::Error::msg(format!("cannot start the tokio runtime: {e}")))?;
    runtime.block_on(async {
        let mut backend = Backend::from_env().await?;
        let mut all_ok = true;
        println!(
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
            let result = run_benchmark(bench, Some(&cells), &ctx, &mut backend).await?;
            println!("{}", crate::summary::render(&result));
            all_ok &= !crate::runner::status_counts(&result).contains_key("failed");
            if cells.len() == bench.cells.len() {
                println!("{}", check_snapshot(bench, &result, &ctx));
            }
        }
        let index = crate::report::write_report(&ctx.work_dir)?;
        println!("report: {}", index.display());
        Ok(all_ok)
    })
}
