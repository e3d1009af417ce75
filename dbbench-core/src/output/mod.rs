//! Layer 6, **output**: everything dbbench makes of results once they exist, and nothing that
//! runs a benchmark. One post-run pipeline ([`publish`]) used by the test harness and the command
//! line alike: the per-benchmark outputs registered in [`OUTPUTS`] (JSON, CSV, report with charts),
//! then the report's index over every benchmark of the work dir, in the suite's declared order
//! ([`order`]). Beside it: the text summary for
//! the terminal and the snapshot check (with its noise-aware comparator).
//!
//! Adding a format: one file with a type that implements [`Output`], and one entry in
//! [`OUTPUTS`].
//!
//! May import: every layer below (`model`, `util`, `engine`, `run`, `analysis`).

#[cfg(test)]
mod any_build;
pub mod chart;
pub mod comparator;
pub mod csv;
pub mod earlier;
pub mod history;
pub mod html;
pub mod json;
pub mod markdown;
pub mod order;
pub mod snapshot;
pub mod store;
pub mod summary;
pub mod waits;

use crate::model::error::{Error, Result};
use crate::model::results::BenchmarkResult;
use std::path::{Path, PathBuf};

/// One way of writing a benchmark's results into the work dir.
pub trait Output: Sync {
    /// What it writes, for messages ("CSV").
    fn name(&self) -> &'static str;

    /// Writes this output's files of one benchmark (`stem` is its file stem).
    fn benchmark(&self, result: &BenchmarkResult, stem: &str, work_dir: &Path) -> Result<()>;

    /// Whether this output is the source the others are made from (the JSON): `report` reads it
    /// and never rewrites it.
    fn is_source(&self) -> bool {
        false
    }

    /// Rewrites what spans every benchmark of the work dir, after benchmarks were written.
    fn index(&self, _work_dir: &Path) -> Result<()> {
        Ok(())
    }
}

/// Every output, in the order they are written: the JSON first, since the report's index reads it.
pub static OUTPUTS: &[&dyn Output] = &[&json::Json, &csv::Csv, &html::Report];

/// What [`publish`] wrote.
#[derive(Debug, Clone, PartialEq)]
pub struct Published {
    /// The results JSON.
    pub json: PathBuf,
    /// The CSV of runs.
    pub csv: PathBuf,
    /// The report's index page.
    pub report: PathBuf,
}

/// Writes every output of one benchmark's results, then the indexes over the whole work dir.
/// Each output is tried; the first failure is returned with the output's name.
/// The benchmark's views are written under its stem's lock (`util::stem_lock`), so a process
/// publishing the same benchmark at once writes its set before or after, never among, these.
pub fn publish(result: &BenchmarkResult, stem: &str, work_dir: &Path) -> Result<Published> {
    let mut first_error = None;
    let held = crate::util::stem_lock::hold(work_dir, stem)?;
    for output in OUTPUTS {
        if let Err(e) = output.benchmark(result, stem, work_dir) {
            first_error.get_or_insert(failed(*output, e));
        }
    }
    drop(held);
    finish(work_dir, first_error)?;
    Ok(Published {
        json: crate::util::paths::results_file(work_dir, stem),
        csv: crate::util::paths::csv_file(work_dir, stem),
        report: crate::util::paths::report_index(work_dir),
    })
}

/// Rewrites every output of every results file in the work dir from the JSON on disk (the
/// `report` command); returns the report's index. A results file that cannot be read is listed
/// in the index with the reason; a work dir without any results is an error.
pub fn rewrite(work_dir: &Path) -> Result<PathBuf> {
    let dir = crate::util::paths::results_dir(work_dir);
    let files = if dir.is_dir() {
        json::results_files(&dir)?
    } else {
        Vec::new()
    };
    if files.is_empty() {
        return Err(Error::Config(format!(
            "no results in `{}`: run the benchmarks first (or set DBBENCH_DIR to the work dir \
             that holds them)",
            dir.display()
        )));
    }
    let mut first_error = None;
    for file in &files {
        let Ok(result) = json::read(file) else {
            continue;
        };
        let stem = file_stem(file);
        let held = match crate::util::stem_lock::hold(work_dir, &stem) {
            Ok(held) => held,
            Err(e) => {
                first_error.get_or_insert(e);
                continue;
            }
        };
        for output in OUTPUTS.iter().filter(|o| !o.is_source()) {
            if let Err(e) = output.benchmark(&result, &stem, work_dir) {
                first_error.get_or_insert(failed(*output, e));
            }
        }
        drop(held);
    }
    finish(work_dir, first_error)?;
    Ok(crate::util::paths::report_index(work_dir))
}

fn finish(work_dir: &Path, mut first_error: Option<Error>) -> Result<()> {
    for output in OUTPUTS {
        if let Err(e) = output.index(work_dir) {
            first_error.get_or_insert(failed(*output, e));
        }
    }
    first_error.map_or(Ok(()), Err)
}

fn failed(output: &dyn Output, e: Error) -> Error {
    Error::msg(format!("the {} output was not written: {e}", output.name()))
}

/// The file stem of a results file (`suites.vlf.doubling`).
pub fn file_stem(path: &Path) -> String {
    path.file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests;
