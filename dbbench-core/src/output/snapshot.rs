//! The reviewable `insta` snapshot of a benchmark: each cell's configuration, its deterministic
//! results and its timings, one YAML file per benchmark and scale in `snapshots/` of the declaring
//! crate.
//!
//! Deterministic fields are compared exactly. Each cell's ratio to the baseline with its forks
//! interval ([`ratio`]) and its timings (the elapsed time's mean and 95% interval, and each lap's)
//! are *measurements*, compared by the [`NoiseComparator`]: a rerun that cannot be told apart from
//! the recorded one passes and leaves the `.snap` as it is; a real change fails and leaves a
//! pending `.snap.new` for `cargo insta review`. See [`crate::output::comparator`]. Ratios are
//! judged on any machine; seconds are kept with the calibration of the machine that measured
//! them and compared only on that machine. At `smoke` scale both are left out, since millisecond
//! runs measure scheduler noise.

use crate::model::config::BackendKind;
use crate::model::results::{BenchmarkResult, CellStatus, FileKind, RunResult};
use crate::model::scale::ScaleKind;
use crate::output::comparator::{Findings, NoiseComparator, Tolerance};
use serde::Serialize;

mod cell_check;
mod ratio;
mod table;
mod timing;

pub use cell_check::{check_cell, CellCheck};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
#[cfg(test)]
use timing::significant;
use timing::{timing, Measurement, TimingView};

/// The snapshot's content.
#[derive(Debug, Serialize)]
pub struct SnapshotView {
    /// A compact table of the cells for reviewers, derived from the fields below ([`table`]).
    table: Vec<String>,
    benchmark: String,
    title: String,
    scale: String,
    backend: String,
    fixture: String,
    fixture_rows: u64,
    /// The fixed count of rounds; absent where a precision target chose it.
    #[serde(skip_serializing_if = "Option::is_none")]
    repeat: Option<u32>,
    /// The precision target that chose the number of rounds.
    #[serde(skip_serializing_if = "Option::is_none")]
    precision: Option<String>,
    warmup: u32,
    /// Why the benchmark's question does not apply on this backend; then there are no cells.
    #[serde(skip_serializing_if = "Option::is_none")]
    not_applicable: Option<String>,
    /// Cells whose case names other backends, left out here.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    other_backends: Vec<String>,
    /// The confounder check: every engine setting that differs where no declared option says
    /// it should, one line each ([`crate::analysis::confounder`]); empty when none does.
    settings: Vec<String>,
    cells: Vec<CellView>,
}

#[derive(Debug, Serialize)]
pub(crate) struct CellView {
    name: String,
    config: BTreeMap<String, String>,
    effective: BTreeMap<String, u64>,
    status: String,
    /// Measured (non-warm-up) runs; absent where a precision target chose the count, which
    /// then stands in the timing block, for the reader.
    #[serde(skip_serializing_if = "Option::is_none")]
    runs: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    results: Option<DeterministicView>,
    /// The cell's ratio to the baseline with its interval, judged on any machine.
    #[serde(skip_serializing_if = "Option::is_none")]
    ratio: Option<ratio::RatioView>,
    #[serde(skip_serializing_if = "Option::is_none")]
    timing: Option<TimingView>,
}

#[derive(Debug, Serialize)]
struct DeterministicView {
    laps: Vec<String>,
    counts: BTreeMap<String, i64>,
    /// What the backend found true of the database (the recovery behaviour in effect).
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    facts: BTreeMap<String, String>,
    files: Vec<FileView>,
    #[serde(skip_serializing_if = "Option::is_none")]
    log: Option<LogView>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    loads: Vec<crate::model::load::LoadConfig>,
}

#[derive(Debug, Serialize)]
struct FileView {
    name: String,
    kind: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    volume: Option<String>,
    /// Sizes and growths; absent when concurrent writers make them vary between runs.
    #[serde(flatten, skip_serializing_if = "Option::is_none")]
    layout: Option<FileLayout>,
}

#[derive(Debug, Serialize)]
struct FileLayout {
    size_before_bytes: u64,
    size_after_bytes: u64,
    growth_events: u64,
    growth_bytes: u64,
    zero_fill_bytes: u64,
}

#[derive(Debug, Serialize)]
struct LogView {
    growths: u64,
    segments_before: u64,
    segments_after: u64,
}

impl SnapshotView {
    /// The deterministic view of `result`. `work_dir` is replaced by a placeholder in messages.
    pub fn of(result: &BenchmarkResult, work_dir: &Path) -> SnapshotView {
        let pid = std::process::id().to_string();
        let work = work_dir.display().to_string();
        let clean = |text: &str| {
            crate::util::secret::scrub(text)
                .replace(&work, "<work_dir>")
                .replace(crate::util::owner::process_tag(), "<pid>")
                .replace(&pid, "<pid>")
        };
        let cores = format!("{} cores", result.host.cores);
        let build = format!("{} build", result.run.build_profile);
        let machine = [
            result.host.hostname.as_str(),
            &result.host.cpu_model,
            &cores,
            &build,
        ]
        .into_iter()
        .filter(|part| !part.is_empty())
        .collect::<Vec<_>>()
        .join(" · ");
        // A precision target chooses the number of rounds at every scale but smoke, where it
        // runs its minimum (`run::schedule`): only there is the count deterministic.
        let smoke = ScaleKind::of_name(&result.scale) == ScaleKind::Smoke;
        let adaptive = result.run.precision.is_some() && !smoke;
        let mut view = SnapshotView {
            table: Vec::new(),
            benchmark: result.benchmark.clone(),
            title: result.title.clone(),
            scale: result.scale.clone(),
            backend: result.backend.kind.clone(),
            fixture: result.run.fixture.clone(),
            fixture_rows: result.run.fixture_rows,
            repeat: result.run.precision.is_none().then_some(result.run.repeat),
            precision: result.run.precision.as_ref().map(|p| p.describe()),
            warmup: result.run.warmup,
            not_applicable: result.not_applicable.clone(),
            other_backends: result.elsewhere.clone(),
            settings: crate::analysis::confounder::SettingsCheck::of(result).described(),
            cells: result
                .cells
                .iter()
                .map(|cell| CellView {
                    name: cell.name.clone(),
                    config: cell.config.clone(),
                    effective: cell.effective.clone(),
                    status: match &cell.status {
                        CellStatus::Ok => "ok".to_string(),
                        CellStatus::Failed(e) => format!("failed: {}", clean(e)),
                        CellStatus::Skipped(why) => format!("skipped: {why}"),
                    },
                    runs: (!adaptive).then(|| cell.measured().count()),
                    results: cell.measured().next().map(deterministic),
                    ratio: (!smoke).then(|| ratio::of(result, cell)).flatten(),
                    // Smoke runs last milliseconds: their timings are scheduler noise, so smoke
                    // snapshots (the ones `cargo test` and CI check) hold deterministic fields only.
                    timing: (!smoke).then(|| timing(cell, &machine, adaptive)).flatten(),
                })
                .collect(),
        };
        let presentation = crate::engine::presentation(&result.backend);
        view.table = match &result.not_applicable {
            Some(why) => vec![format!("does not apply on {}: {why}", result.backend.kind)],
            None => table::lines(result, &view.cells, &presentation.segments_label),
        };
        view
    }
}

/// The deterministic part of a run. With concurrent writers, the order in which their pages and
/// log records reach the files varies, so page counts, extents, file sizes, growths and log
/// segments vary too: they stay in the results JSON but leave the snapshot, which keeps the
/// planned counts (rows, statements, transactions) that must not vary.
fn deterministic(run: &RunResult) -> DeterministicView {
    let concurrent = run.loads.iter().any(|l| l.config.workers > 1);
    let varies = |name: &str| name == "data_pages" || name.ends_with("_extents");
    DeterministicView {
        laps: run.laps.iter().map(|l| l.name.clone()).collect(),
        counts: run
            .counts
            .iter()
            .filter(|(name, _)| !(concurrent && varies(name)))
            .map(|(name, value)| (name.clone(), *value))
            .collect(),
        facts: run.facts.clone(),
        files: run
            .files
            .iter()
            .map(|f| FileView {
                name: f.name.clone(),
                kind: match f.kind {
                    FileKind::Data => "data",
                    FileKind::Log => "log",
                },
                volume: f.volume.clone(),
                layout: (!concurrent).then_some(FileLayout {
                    size_before_bytes: f.size_before_bytes,
                    size_after_bytes: f.size_after_bytes,
                    growth_events: f.growth_events,
                    growth_bytes: f.growth_bytes,
                    zero_fill_bytes: f.zero_fill_bytes,
                }),
            })
            .collect(),
        log: run.log.as_ref().filter(|_| !concurrent).map(|l| LogView {
            growths: l.growths,
            segments_before: l.segments_before,
            segments_after: l.segments_after,
        }),
        loads: run.loads.iter().map(|l| l.config.clone()).collect(),
    }
}

/// The snapshot's name: `<module.path.bench>__<scale>` on the default backend (the embedded
/// engine) and `<module.path.bench>__<scale>__<backend>` on any other, so that each backend is
/// compared with its own recording.
pub fn snapshot_name(stem: &str, scale: &str, backend: &str) -> String {
    if backend == BackendKind::DEFAULT.keyword() || backend.is_empty() {
        format!("{stem}__{scale}")
    } else {
        format!("{stem}__{scale}__{backend}")
    }
}

/// Runs `f` (a snapshot assertion) with the benchmark's source file as the snapshot's
/// `input_file`, so `cargo insta review` shows the file that declares the benchmark rather than
/// the dbbench file that asserts every snapshot (insta's `source`).
pub fn with_source<T>(source_file: &str, f: impl FnOnce() -> T) -> T {
    let mut settings = insta::Settings::clone_current();
    settings.set_input_file(source_file);
    settings.bind(f)
}

/// The snapshot file of `result` in `<manifest_dir>/snapshots/`.
pub fn snapshot_file(result: &BenchmarkResult, stem: &str, manifest_dir: &str) -> PathBuf {
    Path::new(manifest_dir).join("snapshots").join(format!(
        "{}.snap",
        snapshot_name(stem, &result.scale, &result.backend.snapshot_tag())
    ))
}

/// Asserts the snapshot of `result` in `<manifest_dir>/snapshots/` through the noise-aware
/// comparison; on a real difference insta writes a pending `.snap.new` for `cargo insta review`
/// and panics with the diff. Panics too when the tolerance variables are malformed. Returns what
/// was compared and what was not, and why (see [`crate::output::comparator`]).
pub fn assert_snapshot(
    result: &BenchmarkResult,
    stem: &str,
    manifest_dir: &str,
    work_dir: &Path,
) -> Findings {
    assert_snapshot_in(
        result,
        &Path::new(manifest_dir).join("snapshots"),
        &snapshot_name(stem, &result.scale, &result.backend.snapshot_tag()),
        work_dir,
    )
}

/// Whether a result matched its recorded snapshot.
#[derive(Debug, Clone, PartialEq)]
pub struct SnapshotCheck {
    /// The snapshot file.
    pub path: PathBuf,
    /// It matched; otherwise it differed, or none was recorded, and insta left a pending
    /// `.snap.new` beside it.
    pub matches: bool,
    /// What was compared and what was not, and why.
    pub findings: Findings,
}

impl SnapshotCheck {
    /// One line for the console: whether it matched, what it compared (ratios, seconds) and what
    /// it did not, and why ("seconds not compared for test_1, …: another machine (…)").
    pub fn line(&self) -> String {
        let findings = self
            .findings
            .describe()
            .map(|n| format!(" ({n})"))
            .unwrap_or_default();
        if self.matches {
            format!("snapshot: matches {}{findings}", self.path.display())
        } else {
            format!(
                "snapshot: differs from {} (or none is recorded yet); review it with \
                 `cargo insta review`{findings}",
                self.path.display()
            )
        }
    }
}

/// Checks `result` against its snapshot as [`assert_snapshot`] does, but returns the outcome
/// instead of panicking: the main job measures, reviewers judge. insta shows its diff either way.
pub fn check(
    result: &BenchmarkResult,
    stem: &str,
    manifest_dir: &str,
    work_dir: &Path,
) -> SnapshotCheck {
    let tolerance = Tolerance::from_env().unwrap_or_else(|e| panic!("dbbench: {e}"));
    check_with(
        result,
        &Path::new(manifest_dir).join("snapshots"),
        &snapshot_name(stem, &result.scale, &result.backend.snapshot_tag()),
        work_dir,
        tolerance,
    )
}

/// [`check`] of the snapshot named `name` in `snapshot_dir` with `tolerance`: what was compared
/// is kept whether it matched or not, so a differing check's line says it too.
pub fn check_with(
    result: &BenchmarkResult,
    snapshot_dir: &Path,
    name: &str,
    work_dir: &Path,
    tolerance: Tolerance,
) -> SnapshotCheck {
    let findings: Shared = Default::default();
    let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        assert_into(result, snapshot_dir, name, work_dir, tolerance, &findings)
    }));
    SnapshotCheck {
        path: snapshot_dir.join(format!("{name}.snap")),
        matches: outcome.is_ok(),
        findings: take(&findings),
    }
}

/// Asserts the snapshot of `result` named `name` in the directory `snapshot_dir`, with the
/// tolerance of the environment (see [`Tolerance::from_env`]); returns what was compared.
pub fn assert_snapshot_in(
    result: &BenchmarkResult,
    snapshot_dir: &Path,
    name: &str,
    work_dir: &Path,
) -> Findings {
    let tolerance = Tolerance::from_env().unwrap_or_else(|e| panic!("dbbench: {e}"));
    assert_snapshot_with(result, snapshot_dir, name, work_dir, tolerance)
}

/// As `assert_snapshot_in`, with an explicit tolerance instead of the environment's (tests
/// that check storage counts compare them exactly and leave timings unjudged this way).
pub fn assert_snapshot_with(
    result: &BenchmarkResult,
    snapshot_dir: &Path,
    name: &str,
    work_dir: &Path,
    tolerance: Tolerance,
) -> Findings {
    let findings: Shared = Default::default();
    assert_into(result, snapshot_dir, name, work_dir, tolerance, &findings);
    take(&findings)
}

/// Where the comparator leaves its findings.
type Shared = std::sync::Arc<std::sync::Mutex<Findings>>;

fn take(findings: &Shared) -> Findings {
    std::mem::take(&mut *findings.lock().unwrap_or_else(|p| p.into_inner()))
}

fn assert_into(
    result: &BenchmarkResult,
    snapshot_dir: &Path,
    name: &str,
    work_dir: &Path,
    tolerance: Tolerance,
    findings: &Shared,
) {
    let view = SnapshotView::of(result, work_dir);
    let mut settings = insta::Settings::clone_current();
    settings.set_snapshot_path(snapshot_dir);
    settings.set_prepend_module_to_snapshot(false);
    settings.set_omit_expression(true);
    settings.set_description(format!(
        "dbbench results of {} at scale {}",
        result.benchmark, result.scale
    ));
    settings.set_comparator(Box::new(NoiseComparator {
        tolerance,
        findings: findings.clone(),
    }));
    settings.bind(|| insta::assert_yaml_snapshot!(name, view));
}

#[cfg(test)]
mod tests;
