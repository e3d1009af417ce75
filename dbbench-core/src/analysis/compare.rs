//! Comparing a run with a saved baseline run, cell by cell, by the ratios that travel between
//! machines: within each run, each cell's ratio to that run's baseline cell with its forks
//! interval (the results table's, [`Ratio::between`]); then the two runs' ratios over each other
//! ([`Ratio::of_ratios_drifting`]), with the variance of both intervals and the drift between the
//! two invocations, `2τ²`, which neither side's forks can see (`compare/drift.rs`: measured from
//! the store where it can be, else an assumption the comparison states). The cells of one run share their machine, so a run on a slower CI
//! runner moves the seconds but not the ratios: the verdicts judge the ratios, and the seconds are
//! shown beside them for the reader, never judged.
//!
//! Save a baseline by copying `target/dbbench/results/` (or one JSON file) elsewhere; compare
//! with `dbbench compare <baseline> [<current>]` (the suite binary takes the same command).

use crate::analysis::notation;
use crate::analysis::ratio::{Margin, Ratio};
use crate::analysis::stats::Summary;
use crate::analysis::table::elapsed_of;
use crate::model::error::{Error, Result};
use crate::model::interference::Busy;
use crate::model::results::BenchmarkResult;
use crate::util::grid::{Align, Grid};
use std::fmt::Write;

/// One benchmark's current run against its baseline run.
#[derive(Debug, Clone, PartialEq)]
pub struct Comparison {
    /// The benchmark's path.
    pub benchmark: String,
    /// One row per cell name found in either run, current cells first.
    pub rows: Vec<ComparisonRow>,
    /// Differences between the two runs' environments that may explain a change.
    pub environment_changes: Vec<String>,
    /// Why verdicts were overruled: runs measured while the machine was busy, calibrations that
    /// differ.
    pub notes: Vec<String>,
    /// The current run against its own earlier runs ([`crate::analysis::between::lines`]):
    /// agreement and the pooled random-effects estimate; empty without earlier runs.
    pub between_runs: Vec<String>,
    /// The cell the ratios are to (the current run's baseline cell).
    pub baseline_cell: String,
    /// Why the seconds are not comparable either ("another machine (commit ×1.68, fsync
    /// ×1.57)"), where they are not; the ratios are compared regardless.
    pub seconds_note: Option<String>,
}

/// A cell in both runs.
#[derive(Debug, Clone, PartialEq)]
pub struct ComparisonRow {
    /// The cell's name.
    pub cell: String,
    /// Elapsed statistics in the baseline run, if the cell ran there (shown, not judged).
    pub baseline: Option<Summary>,
    /// Elapsed statistics in the current run, if the cell ran there (shown, not judged).
    pub current: Option<Summary>,
    /// The cell's ratio to its run's baseline cell in the baseline run.
    pub baseline_ratio: Option<Ratio>,
    /// The cell's ratio to its run's baseline cell in the current run.
    pub current_ratio: Option<Ratio>,
    /// `current_ratio / baseline_ratio` with its interval and verdict; for the baseline cell
    /// itself, [`Ratio::baseline`].
    pub ratio: Option<Ratio>,
    /// The cell's readable configuration ([`crate::analysis::label`]), empty when it sets none of
    /// the options that differ between cells.
    pub configuration: String,
    /// Why the current runs may measure the client rather than the database: the load driver's
    /// saturation warnings.
    pub saturated: Vec<String>,
}

/// [`compare_drifting`] with the default drift between the invocations, whatever the
/// environment says: the tests' comparison.
#[cfg(test)]
pub(crate) fn compare(current: &BenchmarkResult, baseline: &BenchmarkResult) -> Comparison {
    compare_drifting(current, baseline, InvocationDrift::DEFAULT)
}

/// Compares `current` with `baseline`, cell by cell, allowing for `drift` between the two
/// invocations ([`InvocationDrift`]; [`compare_all`] reads it from `DBBENCH_COMPARE_DRIFT`).
pub fn compare_drifting(
    current: &BenchmarkResult,
    baseline: &BenchmarkResult,
    drift: InvocationDrift,
) -> Comparison {
    let mut names: Vec<&str> = current.cells.iter().map(|c| c.name.as_str()).collect();
    for cell in &baseline.cells {
        if !names.contains(&cell.name.as_str()) {
            names.push(&cell.name);
        }
    }
    let summary = |result: &BenchmarkResult, name: &str| {
        cell_of(result, name).and_then(|c| Summary::of(&fork_times(c)))
    };
    let mut notes: Vec<String> = Vec::new();
    let margin = Margin::from_env();
    let base_cell = current
        .cells
        .get(current.baseline_index())
        .map(|c| c.name.clone());
    // The pull request's verdict is one question over every cell: its intervals are made at
    // 1 − 0.05/k, so that where nothing changed any of the k says faster or slower in at most 5%.
    let compared = names
        .iter()
        .filter(|name| base_cell.as_deref() != Some(**name))
        .filter(|name| {
            within(current, name, base_cell.as_deref(), margin).is_some()
                && within(baseline, name, base_cell.as_deref(), margin).is_some()
        })
        .count();
    let confidence = family_confidence(compared);
    if compared > 1 {
        notes.push(format!(
            "{compared} cells compared: each interval at {:.0}% (Bonferroni), so where nothing \
             changed any of them says faster or slower in at most 5%",
            confidence * 100.0
        ));
    }
    let (mut measured, mut assumed) = (Vec::new(), 0usize);
    let labels = crate::analysis::label::labels(current);
    let rows = names
        .into_iter()
        .map(|name| {
            let configuration = labels
                .iter()
                .find(|(cell, _)| cell == name)
                .map(|(_, label)| label.clone())
                .unwrap_or_default();
            let mut saturated: Vec<String> = current
                .cells
                .iter()
                .filter(|c| c.name == name)
                .flat_map(|c| c.measured())
                .flat_map(|r| r.loads.iter())
                .flat_map(|l| l.saturation.warnings.iter().cloned())
                .collect();
            saturated.dedup();
            let (base, cur) = (summary(baseline, name), summary(current, name));
            let (then, now) = (
                within(baseline, name, base_cell.as_deref(), margin),
                within(current, name, base_cell.as_deref(), margin),
            );
            let is_base = base_cell.as_deref() == Some(name);
            let ratio = match (&now, &then, cell_of(current, name), cell_of(baseline, name)) {
                _ if is_base && cur.is_some() && base.is_some() => Some(Ratio::baseline()),
                (Some(n), Some(t), Some(c_now), Some(c_then)) => {
                    let (tau, source) = drift.of(name, n, &current.earlier);
                    match source {
                        drift::Source::Measured(runs) => {
                            measured.push((name.to_string(), tau, runs));
                        }
                        drift::Source::Assumed => assumed += 1,
                    }
                    Ratio::of_ratios_drifting(n, t, margin, confidence, tau * tau).map(|r| {
                        // The ratios of both runs rest on the baseline cell's runs too.
                        let base_runs = |result: &BenchmarkResult| {
                            base_cell
                                .as_deref()
                                .and_then(|b| cell_of(result, b))
                                .map(|c| Busy::of(c.measured()))
                                .unwrap_or_default()
                        };
                        let busy = Busy::of(c_now.measured())
                            .plus(Busy::of(c_then.measured()))
                            .plus(base_runs(current))
                            .plus(base_runs(baseline));
                        if busy.any() {
                            notes.push(format!("{name}: {}", busy.inconclusive()));
                        }
                        r.judged(busy, &Ok(()))
                    })
                }
                _ => None,
            };
            ComparisonRow {
                cell: name.to_string(),
                baseline: base,
                current: cur,
                baseline_ratio: then,
                current_ratio: now,
                ratio,
                configuration,
                saturated,
            }
        })
        .collect();
    notes.extend(drift.note(&measured, assumed));
    Comparison {
        benchmark: current.benchmark.clone(),
        rows,
        environment_changes: environment_changes(current, baseline),
        notes: merged(notes),
        between_runs: crate::analysis::between::lines(current),
        baseline_cell: base_cell.unwrap_or_default(),
        seconds_note: seconds_note(current, baseline),
    }
}

/// Each interval's confidence for `k` cells compared as one family: `1 − 0.05 / k` (95% for one).
pub(crate) fn family_confidence(k: usize) -> f64 {
    1.0 - (1.0 - crate::analysis::stats::CONFIDENCE) / k.max(1) as f64
}

/// The ratio of the cell `name` of `result` to the cell `base` (the current run's baseline, so
/// both runs' ratios are to the same cell), as `result`'s own table computes it; `None` for the
/// baseline itself or without measured runs on both sides.
fn within(
    result: &BenchmarkResult,
    name: &str,
    base: Option<&str>,
    margin: Margin,
) -> Option<Ratio> {
    let base = base
        .filter(|b| *b != name)
        .and_then(|b| cell_of(result, b))?;
    let cell = cell_of(result, name)?;
    let paired_order = result.run.order == crate::model::config::Order::Interleaved.keyword();
    let pilot = result.run.precision.as_ref().map(|p| p.min_rounds as usize);
    Ratio::between(cell, base, paired_order, pilot, margin)
}

/// Why the two runs' seconds cannot be compared, where they cannot: the calibrations are not of
/// one machine within the tolerance that licenses a seconds check
/// ([`crate::model::calibration::Tolerance::licensing`]).
fn seconds_note(current: &BenchmarkResult, baseline: &BenchmarkResult) -> Option<String> {
    use crate::model::calibration::Tolerance;
    let calibration = |r: &BenchmarkResult| {
        r.calibration
            .clone()
            .or_else(|| r.cells.iter().find_map(|c| c.calibration.clone()))
    };
    let why = match (calibration(current), calibration(baseline)) {
        (Some(now), Some(then)) => now
            .factors(&then, &Tolerance::licensing(Margin::from_env().0))
            .err()
            .map(|why| format!("another machine ({why})")),
        _ => Some("a run without a calibration of its machine".to_string()),
    }?;
    Some(format!(
        "seconds not compared: {why}; the verdicts judge the ratios between cells, which the \
         machine does not move"
    ))
}

/// The notes with those that repeat for every cell said once: "not comparable: this machine's
/// calibration differs …" is about the machine, not one cell.
fn merged(notes: Vec<String>) -> Vec<String> {
    let mut reasons: Vec<(String, Vec<String>)> = Vec::new();
    for note in notes {
        let (cell, reason) = note.split_once(": ").unwrap_or(("", &note));
        match reasons.iter_mut().find(|(r, _)| r == reason) {
            Some((_, cells)) => cells.push(cell.to_string()),
            None => reasons.push((reason.to_string(), vec![cell.to_string()])),
        }
    }
    reasons
        .into_iter()
        .map(|(reason, cells)| format!("{}: {reason}", cells.join(", ")))
        .collect()
}

/// A cell's times in its units of replication: each fork's mean time where the runs record
/// their forks, each measured repetition otherwise.
pub fn fork_times(cell: &crate::model::results::CellResult) -> Vec<f64> {
    let mut forks: std::collections::BTreeMap<u32, (f64, u32)> = Default::default();
    for run in cell.measured() {
        let Some(fork) = run.fork else {
            return elapsed_of(cell);
        };
        let entry = forks.entry(fork).or_default();
        entry.0 += run.elapsed_s;
        entry.1 += 1;
    }
    forks.values().map(|(sum, n)| sum / f64::from(*n)).collect()
}

/// The cell of `result` named `name`.
fn cell_of<'a>(
    result: &'a BenchmarkResult,
    name: &str,
) -> Option<&'a crate::model::results::CellResult> {
    result.cells.iter().find(|c| c.name == name)
}

/// `value` fit to go between backticks: a backtick or a line break in it (a server's version
/// string, a host name from another machine's store) would end the code span and let the rest
/// be read as Markdown.
fn spanned(value: &str) -> String {
    value
        .chars()
        .map(|c| match c {
            '`' => '\'',
            c if c.is_control() => ' ',
            c => c,
        })
        .collect()
}

fn environment_changes(current: &BenchmarkResult, baseline: &BenchmarkResult) -> Vec<String> {
    let pairs = [
        ("scale", &baseline.scale, &current.scale),
        ("backend", &baseline.backend.kind, &current.backend.kind),
        (
            "server version",
            &baseline.backend.version,
            &current.backend.version,
        ),
        ("CPU", &baseline.host.cpu_model, &current.host.cpu_model),
        ("kernel", &baseline.host.kernel, &current.host.kernel),
        (
            "file system",
            &baseline.host.file_system,
            &current.host.file_system,
        ),
        (
            "dbbench version",
            &baseline.dbbench_version,
            &current.dbbench_version,
        ),
        (
            "build profile",
            &baseline.run.build_profile,
            &current.run.build_profile,
        ),
    ];
    let mut out: Vec<String> = Vec::new();
    if baseline.host.hostname != current.host.hostname {
        out.push(format!(
            "host: `{}` → `{}` (timings of different machines are not comparable)",
            spanned(&baseline.host.hostname),
            spanned(&current.host.hostname)
        ));
    }
    out.extend(
        pairs
            .iter()
            .filter(|(_, a, b)| a != b)
            .map(|(what, a, b)| format!("{what}: `{}` → `{}`", spanned(a), spanned(b))),
    );
    if baseline.host.git_commit != current.host.git_commit {
        let show = |c: &Option<String>| spanned(c.as_deref().unwrap_or("unknown"));
        out.push(format!(
            "git commit: `{}` → `{}`",
            show(&baseline.host.git_commit),
            show(&current.host.git_commit)
        ));
    }
    if baseline.backend.preconditions != current.backend.preconditions {
        out.push("backend preconditions differ".into());
    }
    out
}

impl Comparison {
    /// The comparison as text cells.
    pub fn to_grid(&self) -> Grid {
        let mut grid = Grid::default();
        let to = &self.baseline_cell;
        grid.column("cell", Align::Left);
        grid.column("baseline s (mean ± 95% CI)", Align::Right);
        grid.column("current s (mean ± 95% CI)", Align::Right);
        grid.column(format!("baseline: ratio to {to}"), Align::Right);
        grid.column(format!("current: ratio to {to}"), Align::Right);
        grid.column("current/baseline ratio [CI]", Align::Right);
        grid.column("verdict", Align::Left);
        let show = |s: &Option<Summary>| {
            s.as_ref()
                .map(notation::mean_pm)
                .unwrap_or_else(|| "–".into())
        };
        for row in &self.rows {
            let within = |r: &Option<Ratio>| match r {
                Some(r) => notation::ratio(r),
                None if row.cell == *to => "baseline".into(),
                None => "–".into(),
            };
            grid.row(vec![
                row.cell.clone(),
                show(&row.baseline),
                show(&row.current),
                within(&row.baseline_ratio),
                within(&row.current_ratio),
                row.ratio
                    .as_ref()
                    .filter(|r| r.verdict != crate::analysis::ratio::Verdict::Baseline)
                    .map(notation::ratio)
                    .unwrap_or_else(|| "–".into()),
                self.verdict(row),
            ]);
        }
        grid
    }

    /// A row's verdict in words.
    pub fn verdict(&self, row: &ComparisonRow) -> String {
        match (&row.ratio, &row.baseline, &row.current) {
            (Some(r), _, _) => r.verdict_text(),
            (None, None, Some(_)) => "new cell".into(),
            (None, Some(_), None) => "not in the current run".into(),
            _ => "–".into(),
        }
    }

    /// The comparison as text, with the environment changes under it.
    pub fn render(&self) -> String {
        let mut out = format!(
            "dbbench › {}: current run against baseline\n",
            self.benchmark
        );
        out.push_str(&self.to_grid().to_text("  "));
        let judged = self
            .rows
            .iter()
            .filter(|r| {
                r.ratio
                    .as_ref()
                    .is_some_and(|r| r.verdict != crate::analysis::ratio::Verdict::Baseline)
            })
            .count();
        let _ = writeln!(
            out,
            "  compared: the ratios to {} of {judged} cells",
            self.baseline_cell
        );
        if let Some(note) = &self.seconds_note {
            let _ = writeln!(out, "  {note}");
        }
        for note in &self.notes {
            let _ = writeln!(out, "  {note}");
        }
        for change in &self.environment_changes {
            let _ = writeln!(out, "  environment changed: {change}");
        }
        if !self.between_runs.is_empty() {
            let _ = writeln!(
                out,
                "  between runs (current run against its earlier runs):"
            );
            for line in &self.between_runs {
                let _ = writeln!(out, "    {line}");
            }
        }
        let _ = writeln!(out, "  {}", method_note());

        out
    }
}

/// How `compare` reads: the method and the three verdicts, with the margin in force.
pub fn method_note() -> String {
    let m = Margin::from_env().describe();
    format!(
        "ratio = the cell's time over the baseline cell's in each run (paired within forks, 95% t \
         over the forks' means); current/baseline = the current run's ratio over the baseline \
         run's, t with both intervals' variances, 95% over all cells compared (Bonferroni; the \
         machine cancels within each run, the drift between the two runs is in it as 2τ²); below \
         1: the cell gained on the \
         baseline cell; faster/slower: the interval excludes 1; equivalent: it lies within {m} \
         (DBBENCH_TOLERANCE); inconclusive: it contains 1 and is wider than {m}; seconds are \
         shown, not judged"
    )
}

/// Compares every current benchmark with the baseline's benchmark of the same name (benchmarks
/// missing from the baseline are skipped). Two single results are compared whatever their names,
/// so a result can be compared with a renamed copy.
pub fn compare_all(
    current: &[BenchmarkResult],
    baseline: &[BenchmarkResult],
) -> Result<Vec<Comparison>> {
    let drift = InvocationDrift::from_env()?;
    if let ([one], [other]) = (current, baseline) {
        return Ok(vec![compare_drifting(one, other, drift)]);
    }
    let out: Vec<Comparison> = current
        .iter()
        .filter_map(|c| {
            let b = baseline.iter().find(|b| b.benchmark == c.benchmark)?;
            Some(compare_drifting(c, b, drift))
        })
        .collect();
    if out.is_empty() {
        let names = |set: &[BenchmarkResult]| {
            set.iter()
                .map(|r| r.benchmark.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        };
        return Err(Error::Config(format!(
            "no benchmark is in both: the current results hold {}, the baseline {}",
            names(current),
            names(baseline)
        )));
    }
    Ok(out)
}

mod drift;
pub use drift::InvocationDrift;

#[cfg(test)]
mod tests;
