//! The reviewable `insta` snapshot of a benchmark: each cell's configuration and its deterministic
//! results, one YAML file per benchmark and scale in `snapshots/` of the declaring crate.

use crate::results::{BenchmarkResult, CellStatus, FileKind, RunResult};
use serde::Serialize;
use std::collections::BTreeMap;
use std::path::Path;

/// The snapshot's content.
#[derive(Debug, Serialize)]
pub struct SnapshotView {
    benchmark: String,
    title: String,
    scale: String,
    backend: String,
    fixture: String,
    fixture_rows: u64,
    repeat: u32,
    warmup: u32,
    cells: Vec<CellView>,
}

#[derive(Debug, Serialize)]
struct CellView {
    name: String,
    config: BTreeMap<String, String>,
    effective: BTreeMap<String, u64>,
    status: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    results: Option<DeterministicView>,
}

#[derive(Debug, Serialize)]
struct DeterministicView {
    laps: Vec<String>,
    counts: BTreeMap<String, i64>,
    files: Vec<FileView>,
    #[serde(skip_serializing_if = "Option::is_none")]
    log: Option<LogView>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    loads: Vec<crate::driver::LoadConfig>,
}

#[derive(Debug, Serialize)]
struct FileView {
    name: String,
    kind: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    volume: Option<String>,
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
        let clean = |text: &str| text.replace(&work, "<work_dir>").replace(&pid, "<pid>");
        SnapshotView {
            benchmark: result.benchmark.clone(),
            title: result.title.clone(),
            scale: result.scale.clone(),
            backend: result.backend.kind.clone(),
            fixture: result.run.fixture.clone(),
            fixture_rows: result.run.fixture_rows,
            repeat: result.run.repeat,
            warmup: result.run.warmup,
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
                    results: cell.measured().next().map(deterministic),
                })
                .collect(),
        }
    }
}

fn deterministic(run: &RunResult) -> DeterministicView {
    DeterministicView {
        laps: run.laps.iter().map(|l| l.name.clone()).collect(),
        counts: run.counts.clone(),
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
                size_before_bytes: f.size_before_bytes,
                size_after_bytes: f.size_after_bytes,
                growth_events: f.growth_events,
                growth_bytes: f.growth_bytes,
                zero_fill_bytes: f.zero_fill_bytes,
            })
            .collect(),
        log: run.log.as_ref().map(|l| LogView {
            growths: l.growths,
            segments_before: l.segments_before,
            segments_after: l.segments_after,
        }),
        loads: run.loads.iter().map(|l| l.config.clone()).collect(),
    }
}

/// The snapshot's name: `<module.path.bench>__<scale>`.
pub fn snapshot_name(stem: &str, scale: &str) -> String {
    format!("{stem}__{scale}")
}

/// Asserts the snapshot of `result` in `<manifest_dir>/snapshots/`; on a difference insta writes a
/// pending `.snap.new` for `cargo insta review` and panics with the diff.
pub fn assert_snapshot(result: &BenchmarkResult, stem: &str, manifest_dir: &str, work_dir: &Path) {
    let view = SnapshotView::of(result, work_dir);
    let mut settings = insta::Settings::clone_current();
    settings.set_snapshot_path(Path::new(manifest_dir).join("snapshots"));
    settings.set_prepend_module_to_snapshot(false);
    settings.set_omit_expression(true);
    settings.set_description(format!(
        "dbbench results of {} at scale {}",
        result.benchmark, result.scale
    ));
    let name = snapshot_name(stem, &result.scale);
    settings.bind(|| insta::assert_yaml_snapshot!(name, view));
}
