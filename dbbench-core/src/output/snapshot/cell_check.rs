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

/// Whether `body` has an anchor or an alias: dbbench's snapshots never do, and the loader copies
/// an anchored node at each alias, so a committed `.snap` of nested aliases (a "billion
/// laughs") would take all memory when it is read.
fn has_anchors(body: &str) -> bool {
    use yaml_rust2::parser::{Event, EventReceiver, Parser};
    struct Anchors(bool);
    impl EventReceiver for Anchors {
        fn on_event(&mut self, ev: Event) {
            self.0 |= matches!(
                ev,
                Event::Alias(_)
                    | Event::Scalar(_, _, 1.., _)
                    | Event::SequenceStart(1.., _)
                    | Event::MappingStart(1.., _)
            );
        }
    }
    let mut found = Anchors(false);
    // A body that does not parse has no cell to compare either.
    Parser::new_from_str(body).load(&mut found, true).is_err() || found.0
}

/// The YAML text of the entry of `cells` named `cell` in a recorded snapshot body; none in a
/// body with anchors or aliases ([`has_anchors`]).
fn recorded_cell(body: &str, cell: &str) -> Option<String> {
    use yaml_rust2::{Yaml, YamlEmitter, YamlLoader};
    if has_anchors(body) {
        return None;
    }
    let docs = YamlLoader::load_from_str(body).ok()?;
    let cells = docs.first()?["cells"].as_vec()?;
    let found = cells
        .iter()
        .find(|c| c["name"] == Yaml::String(cell.to_string()))?;
    let mut out = String::new();
    YamlEmitter::new(&mut out).dump(found).ok()?;
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_body_with_aliases_is_not_read_one_without_is() {
        let plain = "cells:\n  - name: a\n    x: 1\n";
        assert!(recorded_cell(plain, "a").unwrap().contains("x: 1"));
        // Each level doubles: read with the aliases expanded, 2^30 copies.
        let mut bomb = String::from("l0: &l0 [x, x]\n");
        for i in 1..30 {
            bomb.push_str(&format!("l{i}: &l{i} [*l{p}, *l{p}]\n", p = i - 1));
        }
        bomb.push_str("cells:\n  - name: a\n    x: *l29\n");
        assert!(has_anchors(&bomb));
        assert_eq!(recorded_cell(&bomb, "a"), None);
        assert!(!has_anchors(plain));
    }
}
