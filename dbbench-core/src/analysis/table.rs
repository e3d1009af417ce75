//! The results table of one benchmark, after Table 7 of the VLF article: one row per cell with
//! the configuration options that differ between cells, the elapsed time's mean and 95% interval,
//! the ratio to the baseline cell with a verdict, and the storage metrics the article tabulates
//! (growth events, VLFs or log segments, final file sizes, the top wait).
//!
//! The model is computed once and rendered by [`crate::output::summary`] for the terminal and by
//! [`crate::output::html`] as HTML.

use crate::analysis::notation;
use crate::analysis::ratio::{Ratio, Verdict};
use crate::analysis::stats::Summary;
use crate::model::results::{BenchmarkResult, CellResult, CellStatus, FileKind, RunResult};
use crate::util::grid::{Align, Grid};
use std::collections::BTreeMap;

/// The table of one benchmark.
#[derive(Debug, Clone, PartialEq)]
pub struct BenchmarkTable {
    /// Configuration options whose values differ between cells.
    pub config_columns: Vec<String>,
    /// One row per cell, in declaration order.
    pub rows: Vec<CellRow>,
    /// The baseline cell's name.
    pub baseline: String,
    /// What the backend's log segments are called (`VLFs` on SQL Server, `log segments` on the
    /// embedded engine), from its profile.
    pub segments_label: &'static str,
}

/// One cell's row.
#[derive(Debug, Clone, PartialEq)]
pub struct CellRow {
    /// The cell's name.
    pub name: String,
    /// Values of [`BenchmarkTable::config_columns`]; `default` where the cell leaves it unset.
    pub config: Vec<String>,
    /// The cell's outcome.
    pub status: CellStatus,
    /// Statistics of the measured runs' elapsed time.
    pub elapsed: Option<Summary>,
    /// Ratio to the baseline; `None` for cells without measured runs or without a baseline.
    pub ratio: Option<Ratio>,
    /// Storage metrics.
    pub metrics: CellMetrics,
}

/// The storage metrics of a cell, from its first measured run (they are deterministic on the
/// embedded engine and nearly so on SQL Server), except the top wait, which sums all runs.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct CellMetrics {
    /// Autogrowth events of the data files.
    pub data_growths: Option<u64>,
    /// Autogrowth events of the log.
    pub log_growths: Option<u64>,
    /// VLFs (log segments) when the window closed.
    pub log_segments: Option<u64>,
    /// Size of all data files when the window closed.
    pub data_size_bytes: Option<u64>,
    /// Size of the log when the window closed.
    pub log_size_bytes: Option<u64>,
    /// The wait type with the largest share of wait time over all measured runs, and its percent.
    pub top_wait: Option<(String, f64)>,
}

impl CellMetrics {
    /// The metrics of `cell`'s measured runs.
    pub fn of(cell: &CellResult) -> CellMetrics {
        let Some(first) = cell.measured().next() else {
            return CellMetrics::default();
        };
        let data: Vec<_> = first
            .files
            .iter()
            .filter(|f| f.kind == FileKind::Data)
            .collect();
        let log_file = first.files.iter().find(|f| f.kind == FileKind::Log);
        CellMetrics {
            data_growths: (!data.is_empty()).then(|| data.iter().map(|f| f.growth_events).sum()),
            log_growths: first
                .log
                .as_ref()
                .map(|l| l.growths)
                .or(log_file.map(|f| f.growth_events)),
            log_segments: first.log.as_ref().map(|l| l.segments_after),
            data_size_bytes: (!data.is_empty())
                .then(|| data.iter().map(|f| f.size_after_bytes).sum()),
            log_size_bytes: log_file
                .map(|f| f.size_after_bytes)
                .or(first.log.as_ref().map(|l| l.size_after_bytes)),
            top_wait: top_wait(cell.measured()),
        }
    }
}

/// The wait type with the most wait time summed over `runs`, with its percent of the total.
fn top_wait<'a>(runs: impl Iterator<Item = &'a RunResult>) -> Option<(String, f64)> {
    let mut totals: BTreeMap<&str, f64> = BTreeMap::new();
    for run in runs {
        for wait in &run.waits {
            *totals.entry(&wait.wait_type).or_default() += wait.wait_time_s;
        }
    }
    let sum: f64 = totals.values().sum();
    let (name, time) = totals.into_iter().max_by(|a, b| a.1.total_cmp(&b.1))?;
    (sum > 0.0).then(|| (name.to_string(), 100.0 * time / sum))
}

/// The measured runs' elapsed times of a cell.
pub fn elapsed_of(cell: &CellResult) -> Vec<f64> {
    cell.measured().map(|r| r.elapsed_s).collect()
}

impl BenchmarkTable {
    /// The table of `result`.
    pub fn of(result: &BenchmarkResult) -> BenchmarkTable {
        let config_columns = differing_options(result);
        let baseline_cell = result.cells.get(result.baseline_index());
        let baseline = baseline_cell.and_then(|c| Summary::of(&elapsed_of(c)));
        let rows = result
            .cells
            .iter()
            .map(|cell| {
                let elapsed = Summary::of(&elapsed_of(cell));
                let is_baseline = baseline_cell.is_some_and(|b| b.name == cell.name);
                let ratio = match (&elapsed, &baseline) {
                    (Some(_), Some(_)) if is_baseline => Some(Ratio::baseline()),
                    (Some(e), Some(b)) => Ratio::of(e, b),
                    _ => None,
                };
                CellRow {
                    name: cell.name.clone(),
                    config: config_columns
                        .iter()
                        .map(|k| cell.config.get(k).cloned().unwrap_or("default".into()))
                        .collect(),
                    status: cell.status.clone(),
                    elapsed,
                    ratio,
                    metrics: CellMetrics::of(cell),
                }
            })
            .collect();
        BenchmarkTable {
            config_columns,
            rows,
            baseline: baseline_cell.map(|c| c.name.clone()).unwrap_or_default(),
            segments_label: crate::engine::profile_named(&result.backend.kind)
                .map_or("log segments", |p| p.segments_label),
        }
    }

    /// The table as text cells: metric columns appear only where some cell has a value.
    pub fn to_grid(&self) -> Grid {
        let mut grid = Grid::default();
        grid.column("cell", Align::Left);
        for c in &self.config_columns {
            grid.column(c.as_str(), Align::Left);
        }
        grid.column("n", Align::Right);
        grid.column("elapsed (mean ± 95% CI)", Align::Right);
        grid.column(format!("ratio to {} [95% CI]", self.baseline), Align::Right);
        grid.column("verdict", Align::Left);
        type Metric = fn(&CellMetrics) -> Option<String>;
        let metrics: [(&str, Metric); 6] = [
            ("data growths", |m| m.data_growths.map(notation::thousands)),
            ("log growths", |m| m.log_growths.map(notation::thousands)),
            (self.segments_label, |m| {
                m.log_segments.map(notation::thousands)
            }),
            ("data size", |m| m.data_size_bytes.map(notation::mib)),
            ("log size", |m| m.log_size_bytes.map(notation::mib)),
            ("top wait", |m| {
                m.top_wait
                    .as_ref()
                    .map(|(name, pct)| format!("{name} {pct:.0}%"))
            }),
        ];
        let shown: Vec<&(&str, Metric)> = metrics
            .iter()
            .filter(|(_, get)| self.rows.iter().any(|r| get(&r.metrics).is_some()))
            .collect();
        for (title, _) in &shown {
            let align = if *title == "top wait" {
                Align::Left
            } else {
                Align::Right
            };
            grid.column(*title, align);
        }
        for row in &self.rows {
            let mut cells = vec![row.name.clone()];
            cells.extend(row.config.iter().cloned());
            let n = row.elapsed.as_ref().map(|s| s.n).unwrap_or(0);
            cells.push(n.to_string());
            cells.push(match (&row.status, &row.elapsed) {
                (CellStatus::Failed(_), _) => "failed".to_string(),
                (CellStatus::Skipped(_), _) => "skipped".to_string(),
                (CellStatus::Ok, Some(s)) => notation::mean_pm(s),
                (CellStatus::Ok, None) => "no measured run".to_string(),
            });
            cells.push(match &row.ratio {
                Some(r) if r.verdict == Verdict::Baseline => "1.00".to_string(),
                Some(r) => notation::ratio(r),
                None => "–".to_string(),
            });
            cells.push(
                row.ratio
                    .as_ref()
                    .map(|r| r.verdict.describe().to_string())
                    .unwrap_or_else(|| "–".to_string()),
            );
            for (_, get) in &shown {
                cells.push(get(&row.metrics).unwrap_or_else(|| "–".to_string()));
            }
            grid.row(cells);
        }
        grid
    }
}

/// Options whose value is not the same in every cell, in alphabetical order.
fn differing_options(result: &BenchmarkResult) -> Vec<String> {
    let mut keys: Vec<String> = Vec::new();
    for cell in &result.cells {
        for key in cell.config.keys() {
            if !keys.contains(key) {
                keys.push(key.clone());
            }
        }
    }
    keys.retain(|key| {
        let mut values = result.cells.iter().map(|c| c.config.get(key));
        let first = values.next().flatten();
        values.any(|v| v != first)
    });
    keys
}
