//! Checking one cell against its part of the recorded snapshot, as a process that ran that cell
//! alone can (nextest runs each cell test in its own process). Apart from the whole snapshot's
//! assertion because it reads the recorded file itself and needs no insta assertion.

use super::{snapshot_file, SnapshotView};
use crate::model::results::BenchmarkResult;
use crate::output::comparator::{Findings, Tolerance};
use std::path::{Path, PathBuf};

/// What checking one cell against the recorded snapshot found.
#[derive(Debug, Clone, PartialEq)]
pub enum CellCheck {
    /// The cell's part of the recorded snapshot matches; the findings say what was compared and
    /// what was not, and why.
    Matches(Findings),
    /// No snapshot is recorded for the benchmark, or it has no entry for the cell.
    NotRecorded(PathBuf),
    /// The cell differs: every difference found.
    Differs(Vec<String>),
}

/// Checks the cell `cell` of `current` (the benchmark's current results) against its part of the
/// recorded snapshot, with the noise-aware comparison: the check a process that ran one cell can
/// make (nextest runs each cell test in its own process).
pub fn check_cell(
    current: &BenchmarkResult,
    cell: &str,
    stem: &str,
    manifest_dir: &str,
    work_dir: &Path,
    tolerance: &Tolerance,
) -> CellCheck {
    let path = snapshot_file(current, stem, manifest_dir);
    let Ok(text) = std::fs::read_to_string(&path) else {
        return CellCheck::NotRecorded(path);
    };
    // An insta snapshot is a header, a `---` line and the YAML.
    let body = text
        .split_once("\n---\n")
        .map_or(text.as_str(), |(_, body)| body);
    let Some(recorded) = recorded_cell(body, cell) else {
        return CellCheck::NotRecorded(path);
    };
    let view = SnapshotView::of(current, work_dir);
    let Some(new) = view.cells.iter().find(|c| c.name == cell) else {
        return CellCheck::Differs(vec![format!("cell `{cell}` has no current results")]);
    };
    // JSON is YAML, so the new cell is compared through the same YAML walk as whole snapshots.
    let new = serde_json::to_string(new).unwrap_or_default();
    // One cell's ratio is judged with the Bonferroni count of the whole snapshot, as a check of
    // the whole would judge it.
    let ratios = crate::output::comparator::ratios_in(body);
    let (outcome, mut findings) = tolerance.compare_among(&recorded, &new, Some(ratios));
    // The recorded cell is the walk's root: name it as in a whole snapshot, for the notes.
    findings.notes = findings
        .notes
        .into_iter()
        .map(|n| format!("cells[{cell}].{n}"))
        .collect();
    match outcome {
        Ok(()) => CellCheck::Matches(findings),
        Err(differences) => CellCheck::Differs(differences),
    }
}

/// The YAML text of the entry of `cells` named `cell` in a recorded snapshot body.
fn recorded_cell(body: &str, cell: &str) -> Option<String> {
    use yaml_rust2::{Yaml, YamlEmitter, YamlLoader};
    let docs = YamlLoader::load_from_str(body).ok()?;
    let cells = docs.first()?["cells"].as_vec()?;
    let found = cells
        .iter()
        .find(|c| c["name"] == Yaml::String(cell.to_string()))?;
    let mut out = String::new();
    YamlEmitter::new(&mut out).dump(found).ok()?;
    Some(out)
}
