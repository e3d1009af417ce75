//! `dbbench-results`: work with results files without rerunning benchmarks.
//!
//! ```text
//! dbbench-results compare <current> <baseline>   ratio and verdict per cell (files or directories)
//! dbbench-results report [<work_dir>]            rewrite CSVs, charts and report/index.html
//! dbbench-results snapshot <results.json> <snapshot_dir> [<name>]
//!                                                check results against their insta snapshot
//! ```
//!
//! `snapshot` applies the same noise-aware comparison as the benchmark tests (honouring
//! `DBBENCH_TOLERANCE`, `DBBENCH_TOLERANCE_ABS`, `DBBENCH_TIMING` and insta's `INSTA_UPDATE`):
//! it exits 0 when the results match and leaves a pending `.snap.new` and exits non-zero when
//! they do not.

use dbbench_core::results::BenchmarkResult;
use dbbench_core::{compare, report, snapshot, Error, Result};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

const USAGE: &str = "usage:
  dbbench-results compare <current> <baseline>
  dbbench-results report [<work_dir>]
  dbbench-results snapshot <results.json> <snapshot_dir> [<name>]";

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match run(&args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("dbbench-results: {e}");
            ExitCode::from(2)
        }
    }
}

fn run(args: &[String]) -> Result<()> {
    let usage = || Error::Config(format!("unexpected arguments\n{USAGE}"));
    match args
        .iter()
        .map(String::as_str)
        .collect::<Vec<_>>()
        .as_slice()
    {
        ["compare", current, baseline] => {
            for comparison in compare::compare_paths(Path::new(current), Path::new(baseline))? {
                println!("{}", comparison.render());
            }
            Ok(())
        }
        ["report", rest @ ..] if rest.len() <= 1 => {
            let work_dir = match rest.first() {
                Some(dir) => PathBuf::from(dir),
                None => dbbench_core::workdir::work_dir(
                    &std::env::current_dir()
                        .map_err(|e| Error::io("cannot read the current directory", ".", e))?,
                ),
            };
            println!("{}", report::write_report(&work_dir)?.display());
            Ok(())
        }
        ["snapshot", results, dir, rest @ ..] if rest.len() <= 1 => {
            let result = BenchmarkResult::read(Path::new(results))?;
            let name = match rest.first() {
                Some(name) => name.to_string(),
                None => {
                    snapshot::snapshot_name(&result.benchmark.replace("::", "."), &result.scale)
                }
            };
            let work_dir = Path::new(results)
                .parent()
                .and_then(Path::parent)
                .unwrap_or(Path::new("."));
            // insta resolves a relative snapshot path against the crate, not the shell.
            let dir = std::path::absolute(dir)
                .map_err(|e| Error::io("cannot resolve the snapshot directory", dir, e))?;
            // insta reports a mismatch by panicking, after writing the pending snapshot.
            snapshot::assert_snapshot_in(&result, &dir, &name, work_dir);
            Ok(())
        }
        ["--help" | "-h" | "help"] => {
            println!("{USAGE}");
            Ok(())
        }
        _ => Err(usage()),
    }
}
