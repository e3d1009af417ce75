//! The results table of one benchmark, after Table 7 of the VLF article: one row per cell that
//! leads with the result — the configuration in one readable column (only the options that
//! differ between cells), the elapsed time's mean and 95% interval, the ratio to the baseline cell
//! with a verdict — then the storage metrics the article tabulates (growth events, VLFs or log
//! segments, final file sizes), the top waits, and the load figures of concurrent benchmarks.
//!
//! The model is computed once and rendered by [`crate::output::summary`] for the terminal and by
//! [`crate::output::html`] as HTML.

use crate::analysis::label;
pub use crate::analysis::metrics::{elapsed_of, CellMetrics};
use crate::analysis::notation;
use crate::analysis::ratio::{Margin, Method, Ratio, Verdict};
use crate::analysis::stats::Summary;
use crate::model::presentation::{EvidenceColumn, EvidenceUnit, Presentation};
use crate::model::results::{BenchmarkResult, CellStatus};
use crate::util::grid::{Align, Grid};

/// The table of one benchmark.
#[derive(Debug, Clone, PartialEq)]
pub struct BenchmarkTable {
    /// One row per cell, in declaration order.
    pub rows: Vec<CellRow>,
    /// The baseline cell's name.
    pub baseline: String,
    /// How the backend's results are shown: what its log segments are called (`VLFs` on SQL
    /// Server, `log segments` on the embedded engine) and its own evidence columns, as the result
    /// recorded them ([`crate::engine::presentation`]).
    pub presentation: Presentation,
    /// The source of the reference values and its baseline cell, where the suite declares them.
    pub reference: Option<(String, String)>,
    /// The engine the reference measured (`SQL Server`), for the article columns' titles.
    pub reference_engine: String,
    /// Why verdicts were overruled: cells measured while the machine was busy, cells whose
    /// machine calibration differs from the baseline cell's.
    pub notes: Vec<String>,
    /// What the intervals stand on beyond this run's forks, where the store holds earlier runs
    /// of the same experiment: the runs pooled, or how many more pooling takes
    /// ([`crate::analysis::drift::line`]).
    pub pooling: Option<String>,
    /// The confounder check: engine settings that differ where no declared option says they
    /// should ([`crate::analysis::confounder`]).
    pub settings: crate::analysis::confounder::SettingsCheck,
}

/// One cell's row.
#[derive(Debug, Clone, PartialEq)]
pub struct CellRow {
    /// The cell's name.
    pub name: String,
    /// The options that differ between cells, as a phrase ([`label::label`]).
    pub configuration: String,
    /// The cell's outcome.
    pub status: CellStatus,
    /// Statistics of the measured runs' elapsed time.
    pub elapsed: Option<Summary>,
    /// Ratio to the baseline; `None` for cells without measured runs or without a baseline.
    pub ratio: Option<Ratio>,
    /// Storage metrics, waits and load figures.
    pub metrics: CellMetrics,
    /// What the benchmark's source reported for this cell, where the suite declares it.
    pub reference: Option<ReferenceRow>,
    /// The mean of each of the backend's evidence columns over the measured runs, in the
    /// columns' order; `None` where no run has the value.
    pub evidence: Vec<Option<f64>>,
}

/// The source's values of one cell, beside ours.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ReferenceRow {
    /// Elapsed time in the source.
    pub elapsed_s: Option<f64>,
    /// Ratio to the source's baseline.
    pub ratio: Option<f64>,
    /// VLFs at the end in the source.
    pub log_segments: Option<u64>,
}

/// `ratio` of `cell` to `baseline`, overruled where their runs cannot carry a verdict, and the
/// note that says why. Cells of one run share a calibration; cells from different invocations
/// (a partial rerun) are compared only when their calibrations agree. Results older than
/// calibrations have none on either side and are compared as before.
pub(crate) fn judge(
    ratio: Ratio,
    cell: &crate::model::results::CellResult,
    baseline: &crate::model::results::CellResult,
) -> (Ratio, Option<String>) {
    use crate::model::calibration::{comparable, Tolerance};
    use crate::model::interference::Busy;
    let comparable = match (&cell.calibration, &baseline.calibration) {
        (None, None) => Ok(()),
        (a, b) => comparable(a.as_ref(), b.as_ref(), &Tolerance::DEFAULT),
    };
    let busy = Busy::of(cell.measured()).plus(Busy::of(baseline.measured()));
    let judged = ratio.judged(busy, &comparable);
    let note = match (&comparable, busy.any()) {
        (Err(why), _) => Some(format!(
            "{} is not comparable with {}: {why}",
            cell.name, baseline.name
        )),
        (Ok(()), true) => Some(format!(
            "{} against {}: {}; busiest window: {}",
            cell.name,
            baseline.name,
            busy.inconclusive(),
            busiest(cell, baseline)
        )),
        _ => None,
    };
    (judged, note)
}

/// What the busiest disturbed run of the two cells saw, for the note.
fn busiest(
    cell: &crate::model::results::CellResult,
    baseline: &crate::model::results::CellResult,
) -> String {
    cell.measured()
        .chain(baseline.measured())
        .filter_map(|r| r.interference.as_ref())
        .filter(|i| i.disturbed())
        .max_by(|a, b| {
            a.other_cpu_cores
                .unwrap_or(0.0)
                .total_cmp(&b.other_cpu_cores.unwrap_or(0.0))
        })
        .map(|i| i.disturbed_by.join("; "))
        .unwrap_or_default()
}

/// A metric column: its title, alignment and the text of one row (`None`: no value).
type Metric = (String, Align, fn(&CellMetrics) -> Option<String>);

impl BenchmarkTable {
    /// The table of `result`.
    pub fn of(result: &BenchmarkResult) -> BenchmarkTable {
        let presentation = crate::engine::presentation(&result.backend);
        let keys = label::differing_options(result);
        let baseline_cell = result.cells.get(result.baseline_index());
        let baseline = baseline_cell.and_then(|c| Summary::of(&elapsed_of(c)));
        let mut notes = Vec::new();
        let paired_order = result.run.order == crate::model::config::Order::Interleaved.keyword();
        let margin = Margin::from_env();
        // A precision target chose the count after its minimum rounds: two-stage intervals.
        let pilot = result.run.precision.as_ref().map(|p| p.min_rounds as usize);
        let rows = result
            .cells
            .iter()
            .map(|cell| {
                let elapsed = Summary::of(&elapsed_of(cell));
                let is_baseline = baseline_cell.is_some_and(|b| b.name == cell.name);
                let ratio = match (&elapsed, &baseline, baseline_cell) {
                    (Some(_), Some(_), _) if is_baseline => Some(Ratio::baseline()),
                    (Some(_), Some(_), Some(base)) => {
                        Ratio::between(cell, base, paired_order, pilot, margin).map(|r| {
                            // The forks' interval, pooled with this host's earlier runs of the
                            // experiment where there are enough; then overruled where it must be.
                            let r = crate::analysis::drift::pooled(&cell.name, r, &result.earlier);
                            let (judged, note) = judge(r, cell, base);
                            notes.extend(note);
                            judged
                        })
                    }
                    _ => None,
                };
                CellRow {
                    name: cell.name.clone(),
                    configuration: match label::label(cell, &keys) {
                        l if l.is_empty() => "defaults".to_string(),
                        l => l,
                    },
                    status: cell.status.clone(),
                    elapsed,
                    ratio,
                    metrics: CellMetrics::of(cell),
                    evidence: presentation
                        .evidence_columns
                        .iter()
                        .map(|c| evidence_mean(cell, &c.value))
                        .collect(),
                    reference: result.reference.as_ref().and_then(|r| {
                        r.of(&cell.name).map(|case| ReferenceRow {
                            elapsed_s: case.elapsed_s,
                            ratio: r.ratio(&cell.name),
                            log_segments: case.log_segments,
                        })
                    }),
                }
            })
            .collect::<Vec<CellRow>>();
        let shown: Vec<(&str, &Ratio)> = rows
            .iter()
            .filter_map(|r| Some((r.name.as_str(), r.ratio.as_ref()?)))
            .filter(|(_, r)| r.verdict != Verdict::Baseline)
            .collect();
        let pooling = crate::analysis::drift::line(&result.earlier, &shown);
        BenchmarkTable {
            rows,
            baseline: baseline_cell.map(|c| c.name.clone()).unwrap_or_default(),
            reference: result
                .reference
                .as_ref()
                .map(|r| (r.source.clone(), r.baseline.clone())),
            reference_engine: result
                .reference
                .as_ref()
                .map(|r| r.engine.clone())
                .unwrap_or_default(),
            presentation,
            notes,
            pooling,
            settings: crate::analysis::confounder::SettingsCheck::of(result),
        }
    }

    /// The interval methods the rows' ratios used, each once: "paired rounds, 95% log-ratio t".
    pub fn methods(&self) -> Vec<Method> {
        let mut methods: Vec<Method> = Vec::new();
        let ratios = self.rows.iter().filter_map(|r| r.ratio.as_ref());
        for r in ratios.filter(|r| r.verdict != Verdict::Baseline && r.ci.is_some()) {
            if !methods.contains(&r.method) {
                methods.push(r.method);
            }
        }
        methods
    }

    /// The line under the table that says how ratios and verdicts were made: the method, the
    /// margin, and (for the reader who compares) the rule for each verdict.
    pub fn method_line(&self) -> String {
        let methods: Vec<&str> = self.methods().iter().map(Method::describe).collect();
        let margin = self
            .rows
            .iter()
            .filter_map(|r| r.ratio.as_ref())
            .find(|r| r.verdict != Verdict::Baseline)
            .map_or(Margin::DEFAULT, |r| r.margin);
        let how = match methods.as_slice() {
            [] => "no interval".to_string(),
            many => many.join(" and "),
        };
        format!(
            "ratio to {b}, below 1 is faster; interval: {how}; faster/slower: the interval \
             excludes 1; equivalent: it lies within {m}; inconclusive: it contains 1 and is \
             wider than {m}",
            b = self.baseline,
            m = margin.describe()
        )
    }

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

/// The mean of the evidence value `name` over `cell`'s measured runs that have it.
fn evidence_mean(cell: &crate::model::results::CellResult, name: &str) -> Option<f64> {
    let values: Vec<f64> = cell
        .measured()
        .filter_map(|r| r.values.get(name).copied())
        .collect();
    (!values.is_empty()).then(|| values.iter().sum::<f64>() / values.len() as f64)
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

#[cfg(test)]
mod tests;
