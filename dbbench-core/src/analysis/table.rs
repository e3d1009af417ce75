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
use crate::analysis::ratio::{Margin, Method, Ratio, Verdict};
use crate::analysis::stats::Summary;
use crate::model::presentation::Presentation;
use crate::model::results::{BenchmarkResult, CellStatus};

mod layout;

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

/// "measured again: 3 windows the busy-machine guard found disturbed (test_2 1, test_3 2;
/// other processes used up to 0.61 cores), each in its place in its fork; the intervals leave
/// them out": `None` when no window was set aside.
pub(crate) fn remeasured_note(result: &crate::model::results::BenchmarkResult) -> Option<String> {
    let mut busiest = crate::model::interference::Busiest::default();
    let mut per_cell = Vec::new();
    let mut total = 0;
    for cell in &result.cells {
        let aside: Vec<_> = cell.set_aside().collect();
        for run in &aside {
            if let Some(i) = &run.interference {
                busiest.note(i);
            }
        }
        if !aside.is_empty() {
            per_cell.push(format!("{} {}", cell.name, aside.len()));
            total += aside.len();
        }
    }
    (total > 0).then(|| {
        format!(
            "measured again: {total} window{} the busy-machine guard found disturbed ({}; {}), \
             each in its place in its fork (at most {} more per repetition); the intervals \
             leave them out",
            if total == 1 { "" } else { "s" },
            per_cell.join(", "),
            busiest.describe(),
            crate::run::schedule::MAX_REMEASURES
        )
    })
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
                            let r = crate::analysis::drift::pooled(
                                &cell.name,
                                r,
                                result.started_at_unix_s,
                                &result.earlier,
                            );
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
        notes.extend(remeasured_note(result));
        let shown: Vec<(&str, &Ratio)> = rows
            .iter()
            .filter_map(|r| Some((r.name.as_str(), r.ratio.as_ref()?)))
            .filter(|(_, r)| r.verdict != Verdict::Baseline)
            .collect();
        let pooling =
            crate::analysis::drift::line(result.started_at_unix_s, &result.earlier, &shown);
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
             wider than {m}{many}",
            b = self.baseline,
            m = margin.describe(),
            many = self.multiplicity()
        )
    }

    /// "; 5 comparisons: where nothing changed each says faster or slower in 5% of runs, one or
    /// more of them in up to 23%" (none for a single comparison). Uncorrected: each row answers
    /// its own question; the reader who scans them all is told the chance of a false alarm among
    /// them (`1 − 0.95^k`, independent rows: rows that share a baseline are correlated, which
    /// lowers it).
    fn multiplicity(&self) -> String {
        let k = self
            .rows
            .iter()
            .filter_map(|r| r.ratio.as_ref())
            .filter(|r| r.verdict != Verdict::Baseline && r.ci.is_some())
            .count();
        if k < 2 {
            return String::new();
        }
        let any = 1.0 - 0.95f64.powi(k as i32);
        format!(
            "; {k} comparisons: where nothing changed each says faster or slower in 5% of runs, \
             one or more of them in up to {:.0}%",
            any * 100.0
        )
    }
}

/// The mean of the evidence value `name` over `cell`'s measured runs that have it.
fn evidence_mean(cell: &crate::model::results::CellResult, name: &str) -> Option<f64> {
    let values: Vec<f64> = cell
        .measured()
        .filter_map(|r| r.values.get(name).copied())
        .collect();
    (!values.is_empty()).then(|| values.iter().sum::<f64>() / values.len() as f64)
}

#[cfg(test)]
mod tests;
