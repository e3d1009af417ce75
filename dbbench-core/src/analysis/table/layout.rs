//! The table laid out as a [`Grid`]: which optional columns it has (those some row fills), their
//! headers and each row's cells, with numbers written as the columns write them. Apart from the
//! table's model because the terminal and HTML read the model; only this turns it into text.

use super::{BenchmarkTable, CellMetrics, CellRow, ReferenceRow};
use crate::analysis::notation;
use crate::analysis::ratio::{Ratio, Verdict};
use crate::model::presentation::{EvidenceColumn, EvidenceUnit};
use crate::model::results::CellStatus;
use crate::util::grid::{Align, Grid};

/// A metric column: its title, alignment and the text of one row (`None`: no value).
type Metric = (String, Align, fn(&CellMetrics) -> Option<String>);

impl BenchmarkTable {
    /// The metric columns, in the article's order.
    fn metrics(&self) -> Vec<Metric> {
        let r = Align::Right;
        vec![
            ("data growths".into(), r, |m| {
                m.data_growths.map(notation::thousands)
            }),
            ("log growths".into(), r, |m| {
                m.log_growths.map(notation::thousands)
            }),
            (self.presentation.segments_label.to_string(), r, |m| {
                m.log_segments.map(notation::thousands)
            }),
            ("data size".into(), r, |m| {
                m.data_size_bytes.map(notation::mib)
            }),
            ("log size".into(), r, |m| {
                m.log_size_bytes.map(notation::mib)
            }),
            ("tx/s".into(), r, |m| {
                m.transactions_per_s.map(|t| format!("{t:.0}"))
            }),
            ("latency p50 / p95 / p99 (ms)".into(), r, |m| {
                m.latency_ms
                    .map(|[a, b, c]| format!("{} / {} / {}", three(a), three(b), three(c)))
            }),
            // Shown only where a load retried: a column of zeros costs a 1400 px page its room.
            ("retries".into(), r, |m| {
                m.retries.filter(|&n| n > 0).map(notation::thousands)
            }),
            ("top waits".into(), Align::Left, |m| {
                (!m.top_waits.is_empty()).then(|| {
                    m.top_waits
                        .iter()
                        .map(|(name, pct)| format!("{name} {pct:.0}%"))
                        .collect::<Vec<_>>()
                        .join(", ")
                })
            }),
        ]
    }

    /// The table as text cells: metric columns appear only where some cell has a value, and the
    /// configuration column only where the cells differ.
    pub fn to_grid(&self) -> Grid {
        let columns = self.columns();
        let mut grid = Grid::default();
        self.header(&columns, &mut grid);
        for row in &self.rows {
            grid.row(self.cells(row, &columns));
        }
        grid
    }

    /// The columns some row has a value in.
    fn columns(&self) -> Columns<'_> {
        let shown: Vec<Metric> = self
            .metrics()
            .into_iter()
            .filter(|(_, _, get)| self.rows.iter().any(|r| get(&r.metrics).is_some()))
            .collect();
        let configured = self.rows.iter().any(|r| r.configuration != "defaults");
        let refs: Vec<Option<&ReferenceRow>> =
            self.rows.iter().map(|r| r.reference.as_ref()).collect();
        let has = |get: fn(&ReferenceRow) -> bool| refs.iter().flatten().any(|r| get(r));
        // "article (SQL Server)": its figures are the source's engine's, not this backend's.
        let article = match self.reference_engine.as_str() {
            "" => "article".to_string(),
            engine => format!("article ({engine})"),
        };
        let evidence: Vec<(usize, &EvidenceColumn)> = self
            .presentation
            .evidence_columns
            .iter()
            .enumerate()
            .filter(|(i, _)| {
                self.rows
                    .iter()
                    .any(|r| r.evidence.get(*i).is_some_and(|v| v.is_some()))
            })
            .collect();
        Columns {
            shown,
            configured,
            ref_elapsed: has(|r| r.elapsed_s.is_some()),
            ref_ratio: has(|r| r.ratio.is_some()),
            ref_segments: has(|r| r.log_segments.is_some()),
            article,
            evidence,
        }
    }

    /// The grid's columns, in order.
    fn header(&self, columns: &Columns, grid: &mut Grid) {
        grid.column("cell", Align::Left);
        if columns.configured {
            grid.column("configuration", Align::Left);
        }
        grid.column("n", Align::Right);
        grid.column("elapsed (mean ± 95% CI)", Align::Right);
        grid.column(format!("ratio to {} [95% CI]", self.baseline), Align::Right);
        grid.column("verdict", Align::Left);
        let ref_baseline = self.reference.as_ref().map_or("", |(_, b)| b.as_str());
        let article = &columns.article;
        if columns.ref_elapsed {
            grid.column(format!("{article} elapsed"), Align::Right);
        }
        if columns.ref_ratio {
            grid.column(format!("{article} ratio to {ref_baseline}"), Align::Right);
        }
        for (title, align, _) in &columns.shown {
            grid.column(title.as_str(), *align);
            if columns.ref_segments && *title == self.presentation.segments_label {
                grid.column(format!("{article} VLFs"), Align::Right);
            }
        }
        // The backend's own evidence, where some cell has it, before the top waits would be:
        // appended after the article's metrics so that embedded and SQL Server tables keep
        // their layout.
        for (_, column) in &columns.evidence {
            grid.column(&*column.title, Align::Right);
        }
    }

    /// One row's cells under `columns`.
    fn cells(&self, row: &CellRow, columns: &Columns) -> Vec<String> {
        let mut cells = vec![row.name.clone()];
        if columns.configured {
            cells.push(row.configuration.clone());
        }
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
                .map(Ratio::verdict_text)
                .unwrap_or_else(|| "–".to_string()),
        );
        let reference = row.reference.clone().unwrap_or_default();
        let dash = || "–".to_string();
        if columns.ref_elapsed {
            cells.push(
                reference
                    .elapsed_s
                    .map_or_else(dash, |s| format!("{s:.0} s")),
            );
        }
        if columns.ref_ratio {
            cells.push(reference.ratio.map_or_else(dash, |r| format!("{r:.2}")));
        }
        for (title, _, get) in &columns.shown {
            cells.push(get(&row.metrics).unwrap_or_else(dash));
            if columns.ref_segments && *title == self.presentation.segments_label {
                cells.push(
                    reference
                        .log_segments
                        .map_or_else(dash, notation::thousands),
                );
            }
        }
        for (i, column) in &columns.evidence {
            let value = row.evidence.get(*i).copied().flatten();
            cells.push(value.map_or_else(dash, |v| evidence_text(v, column.unit)));
        }
        cells
    }
}

/// Which optional columns a table's grid has: those some row has a value in.
struct Columns<'t> {
    /// The metrics shown.
    shown: Vec<Metric>,
    /// Whether the cells differ in configuration.
    configured: bool,
    /// Whether the source gives elapsed times, ratios and log segment counts.
    ref_elapsed: bool,
    ref_ratio: bool,
    ref_segments: bool,
    /// What the source's columns are headed with: `article`, `article (SQL Server)`.
    article: String,
    /// The backend's evidence columns shown, with their index in each row's evidence.
    evidence: Vec<(usize, &'t EvidenceColumn)>,
}

/// An evidence value as its column writes it.
fn evidence_text(value: f64, unit: EvidenceUnit) -> String {
    match unit {
        EvidenceUnit::Count => notation::thousands(value.round() as u64),
        EvidenceUnit::Bytes => notation::mib(value.round() as u64),
        EvidenceUnit::Millis => format!("{} ms", three(value)),
    }
}

/// Three significant digits: `0.482`, `49.3`, `131`.
fn three(x: f64) -> String {
    match x.abs() {
        v if v >= 100.0 => format!("{x:.0}"),
        v if v >= 10.0 => format!("{x:.1}"),
        v if v >= 1.0 => format!("{x:.2}"),
        _ => format!("{x:.3}"),
    }
}
