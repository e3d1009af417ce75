//! The commands that work on the results store: `history`, `compare` (with a saved baseline or
//! with results files), `merge`, and making the results files of every stored benchmark.

use super::console::out;
use crate::analysis::compare::compare_all;
use crate::model::error::{Error, Result};
use crate::model::results::BenchmarkResult;
use crate::output::store::{store_file, Store};
use crate::util::grid::{Align, Grid};
use std::path::{Path, PathBuf};

/// Writes the outputs of every benchmark in `store` from its current results. Benchmarks of this
/// host keep their file stem; those of other hosts (merged stores) get `@<host>` after it, so
/// hosts stay apart. The store keeps only measurements: each benchmark's source values come from
/// `references` or, for a binary without them (`dbbench report`), from the results file they
/// were published in before.
pub fn publish_all(
    store: &Store,
    work_dir: &Path,
    references: &[crate::model::reference::Reference],
) -> Result<usize> {
    let here = crate::model::host::hostname();
    let mut written = 0;
    for stored in store.benchmarks()? {
        let Some(mut current) = store.current(&stored.benchmark, &stored.host)? else {
            continue;
        };
        // Stem and host may come from another machine's store (`merge`): each is made one
        // safe path component, and what is written stays under the work dir.
        let stem = if stored.host == here {
            crate::util::paths::file_safe(&stored.stem)
        } else {
            format!(
                "{}@{}",
                crate::util::paths::file_safe(&stored.stem),
                crate::util::paths::file_safe(&stored.host)
            )
        };
        let published = crate::util::paths::results_file(work_dir, &stem);
        if !published.starts_with(work_dir) || published.components().any(|c| c.as_os_str() == "..")
        {
            return Err(Error::Config(format!(
                "the results of `{}` would be written outside the work dir; not written",
                stored.benchmark
            )));
        }
        current.reference = references
            .iter()
            .find(|r| r.benchmark == stored.benchmark)
            .cloned()
            .or_else(|| {
                let published = crate::util::paths::results_file(work_dir, &stem);
                crate::output::json::read(&published).ok()?.reference
            });
        current.earlier = crate::output::earlier::of_stored(store, &current)?;
        crate::output::publish(&current, &stem, work_dir)?;
        written += 1;
    }
    Ok(written)
}

/// The work dir's results store; an error that says what to do when there is none (opening
/// would create an empty one).
fn existing_store(work_dir: &Path) -> Result<Store> {
    let path = store_file(work_dir);
    if !path.exists() {
        return Err(Error::Config(format!(
            "no results store at `{}`: run the benchmarks first",
            path.display()
        )));
    }
    Store::open(work_dir)
}

/// `history`: every invocation of the store, oldest first.
pub fn history(work_dir: &Path) -> Result<bool> {
    let store = existing_store(work_dir)?;
    let mut grid = Grid::default();
    for (name, align) in [
        ("id", Align::Right),
        ("started (UTC)", Align::Left),
        ("status", Align::Left),
        ("host", Align::Left),
        ("backend", Align::Left),
        ("scale", Align::Left),
        ("repetitions", Align::Right),
        ("baseline", Align::Left),
        ("command", Align::Left),
    ] {
        grid.column(name, align);
    }
    for row in store.history()? {
        let status = match &row.detail {
            Some(detail) => format!("{} ({})", row.status, first_line(detail)),
            None => row.status.clone(),
        };
        grid.row(vec![
            row.id.to_string(),
            utc_minutes(row.started_at_unix_ms),
            status,
            row.host.clone(),
            row.backend.clone(),
            row.scale.clone(),
            row.repetitions.to_string(),
            row.baseline.clone().unwrap_or_default(),
            row.command_line.clone(),
        ]);
    }
    out!("{}", grid.to_text(""));
    out!("results store: {}", store.path().display());
    Ok(true)
}

/// `components`: each benchmark's ratios split into their variance components over the stored
/// invocations of the same experiment (`analysis::components`).
pub fn components(work_dir: &Path, filters: &[String]) -> Result<bool> {
    let store = existing_store(work_dir)?;
    let host = crate::model::host::hostname();
    for stored in store.benchmarks()? {
        let wanted = filters.is_empty() || filters.iter().any(|f| stored.benchmark.contains(f));
        if stored.host != host || !wanted {
            continue;
        }
        let Some(current) = store.current(&stored.benchmark, &host)? else {
            continue;
        };
        let runs = crate::output::earlier::with_same_experiment(&store, &current, 50)?;
        let baseline = current.run.baseline.clone();
        out!(
            "{} ({} run{} of this experiment on {host}, against {baseline}):",
            stored.benchmark,
            runs.len(),
            if runs.len() == 1 { "" } else { "s" }
        );
        let components = crate::analysis::components::Components::of(&runs, &baseline);
        if components.is_empty() {
            out!("  too few runs: two or more invocations of two or more forks of two rounds");
        }
        for c in components {
            out!("  {}", c.line());
        }
    }
    out!("results store: {}", store.path().display());
    Ok(true)
}

/// `share`: the measured windows' share of an invocation's wall time and where the rest went.
pub fn share(work_dir: &Path, invocation: Option<i64>) -> Result<bool> {
    let store = existing_store(work_dir)?;
    let share = store.share(invocation)?;
    let mut grid = Grid::default();
    grid.column("benchmark", Align::Left);
    for name in [
        "reps",
        "span s",
        "windows s",
        "share",
        "create s",
        "fixture s",
        "checkpoint s",
        "settle s",
        "close s",
        "teardown s",
        "lock wait s",
        "other s",
    ] {
        grid.column(name, Align::Right);
    }
    for row in share.benchmarks.iter().chain(std::iter::once(&share.total)) {
        grid.row(vec![
            row.name.clone(),
            row.repetitions.to_string(),
            format!("{:.1}", row.span_s),
            format!("{:.1}", row.windows_s),
            format!("{:.1}%", 100.0 * row.share()),
            format!("{:.1}", row.create_s),
            format!("{:.1}", row.fixture_s),
            format!("{:.1}", row.checkpoint_s),
            format!("{:.1}", row.settle_s),
            format!("{:.1}", row.close_s),
            format!("{:.1}", row.teardown_s),
            format!("{:.1}", row.lock_wait_s),
            format!("{:.1}", row.other_s()),
        ]);
    }
    out!(
        "invocation {}: measured windows ÷ wall time",
        share.invocation
    );
    out!("{}", grid.to_text(""));
    out!("results store: {}", store.path().display());
    Ok(true)
}

fn first_line(text: &str) -> String {
    let line = text.lines().next().unwrap_or_default();
    line.chars().take(80).collect()
}

fn utc_minutes(unix_ms: i64) -> String {
    let secs = unix_ms.div_euclid(1000);
    let days = secs.div_euclid(86_400);
    let rest = secs.rem_euclid(86_400);
    format!(
        "{} {:02}:{:02}",
        crate::util::calendar::civil_date(days),
        rest / 3600,
        rest % 3600 / 60
    )
}

/// `compare`: the current results against a saved baseline (`--baseline NAME`) or against
/// results files (`compare BASELINE_PATH [CURRENT_PATH]`).
pub fn compare(
    work_dir: &Path,
    paths: &[PathBuf],
    baseline: Option<String>,
    markdown: bool,
) -> Result<bool> {
    let (baseline_results, current_path) =
        match (&baseline, paths) {
            (Some(name), [] | [_]) => (saved_baseline(work_dir, name)?, paths.first().cloned()),
            (None, [base] | [base, _]) => (read_results(base)?, paths.get(1).cloned()),
            _ => return Err(Error::Config(
                "compare takes `--baseline NAME [CURRENT_PATH]` or `BASELINE_PATH [CURRENT_PATH]`"
                    .into(),
            )),
        };
    let current = match current_path {
        Some(path) => read_results(&path)?,
        None => current_results(work_dir)?,
    };
    let comparisons = compare_all(&current, &baseline_results)?;
    if markdown {
        out!(
            "{}",
            crate::output::markdown::comparisons(&comparisons).trim_end_matches('\n')
        );
        return Ok(true);
    }
    for comparison in comparisons {
        out!("{}", comparison.render());
    }
    Ok(true)
}

fn read_results(path: &Path) -> Result<Vec<BenchmarkResult>> {
    Ok(crate::output::json::read_all(path)?
        .into_iter()
        .map(|(_, r)| r)
        .collect())
}

/// The current results of this host: from the store when there is one, else the JSON files.
fn current_results(work_dir: &Path) -> Result<Vec<BenchmarkResult>> {
    if !store_file(work_dir).exists() {
        return read_results(&crate::util::paths::results_dir(work_dir));
    }
    let store = Store::open(work_dir)?;
    let here = crate::model::host::hostname();
    let mut out = Vec::new();
    for stored in store.benchmarks()?.into_iter().filter(|s| s.host == here) {
        if let Some(mut current) = store.current(&stored.benchmark, &here)? {
            current.earlier = crate::output::earlier::of_stored(&store, &current)?;
            out.push(current);
        }
    }
    Ok(out)
}

fn saved_baseline(work_dir: &Path, name: &str) -> Result<Vec<BenchmarkResult>> {
    let store = Store::open(work_dir)?;
    let id = store.baseline(name)?;
    let mut out = Vec::new();
    for benchmark in store.benchmarks_of(id)? {
        out.extend(store.of_invocation(id, &benchmark)?);
    }
    Ok(out)
}

/// `merge`: imports `stores` and rewrites every results file and the report.
pub fn merge(
    work_dir: &Path,
    stores: &[PathBuf],
    references: &[crate::model::reference::Reference],
) -> Result<bool> {
    let mut store = Store::open(work_dir)?;
    for other in stores {
        let merged = store.merge(other)?;
        out!(
            "merged {}: {} invocation(s) and {} repetition(s) added, {} already present",
            other.display(),
            merged.invocations,
            merged.repetitions,
            merged.already_present
        );
    }
    let written = publish_all(&store, work_dir, references)?;
    out!(
        "{written} benchmark(s) written; report: {}",
        crate::util::paths::report_index(work_dir).display()
    );
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::reference::{Reference, ReferenceCase};

    #[test]
    fn republished_results_keep_the_articles_values() {
        let dir = tempfile::tempdir().unwrap();
        let mut result = crate::model::sample::vlf();
        result.host.hostname = crate::model::host::hostname();
        let store = Store::open(dir.path()).unwrap();
        // The helper records the benchmark under the stem `vlf`.
        crate::output::history::testing::record(&store, &result, 1.0);
        let published = || {
            let file = crate::util::paths::results_file(dir.path(), "vlf");
            crate::output::json::read(&file).unwrap().reference
        };
        let article = Reference::new("vlf::doubling", "Berry 2013", "test_1")
            .case(ReferenceCase::cell("test_1").elapsed_s(1074.0));
        // The store keeps measurements only; the suite binary declares the article's values.
        assert_eq!(
            publish_all(&store, dir.path(), std::slice::from_ref(&article)).unwrap(),
            1
        );
        assert_eq!(published(), Some(article.clone()));
        // `dbbench report` declares none of its own: the published file's stay.
        publish_all(&store, dir.path(), &[]).unwrap();
        assert_eq!(published(), Some(article));
    }
}
