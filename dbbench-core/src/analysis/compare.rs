//! Comparing a run with a saved baseline run: for each cell present in both, the ratio of the
//! current mean to the baseline's with its 95% interval and a verdict, the same method as the
//! per-benchmark table ([`crate::analysis::ratio`]).
//!
//! The unit each side is measured in is the fork (`run::schedule`), not the repetition: the
//! repetitions of one fork share its work area and so what one invocation shares, and two
//! invocations share none of it. So each side's sample is its forks' mean times, and the Welch
//! interval carries the variance between forks — what separates two invocations — rather than
//! only the rounds' within one (results written before forks: their repetitions, as before).
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
}

/// A cell in both runs.
#[derive(Debug, Clone, PartialEq)]
pub struct ComparisonRow {
    /// The cell's name.
    pub cell: String,
    /// Elapsed statistics in the baseline run, if the cell ran there.
    pub baseline: Option<Summary>,
    /// Elapsed statistics in the current run, if the cell ran there.
    pub current: Option<Summary>,
    /// `current / baseline` where both have measured runs.
    pub ratio: Option<Ratio>,
    /// The cell's readable configuration ([`crate::analysis::label`]), empty when it sets none of
    /// the options that differ between cells.
    pub configuration: String,
    /// Why the current runs may measure the client rather than the database: the load driver's
    /// saturation warnings.
    pub saturated: Vec<String>,
}

/// Compares `current` with `baseline`, cell by cell.
pub fn compare(current: &BenchmarkResult, baseline: &BenchmarkResult) -> Comparison {
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
    // Two invocations share no rounds: their runs do not pair, so the interval is Welch's.
    let margin = Margin::from_env();
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
            let ratio = match (&cur, &base, cell_of(current, name), cell_of(baseline, name)) {
                (Some(c), Some(b), Some(now), Some(then)) => Ratio::welch(c, b, margin).map(|r| {
                    let comparable = crate::model::calibration::comparable(
                        now.calibration.as_ref(),
                        then.calibration.as_ref(),
                        &crate::model::calibration::Tolerance::DEFAULT,
                    );
                    let busy = Busy::of(now.measured()).plus(Busy::of(then.measured()));
                    match (&comparable, busy.any()) {
                        (Err(why), _) => notes.push(format!("{name}: not comparable: {why}")),
                        (Ok(()), true) => notes.push(format!("{name}: {}", busy.inconclusive())),
                        _ => {}
                    }
                    r.judged(busy, &comparable)
                }),
                _ => None,
            };
            ComparisonRow {
                cell: name.to_string(),
                baseline: base,
                current: cur,
                ratio,
                configuration,
                saturated,
            }
        })
        .collect();
    Comparison {
        benchmark: current.benchmark.clone(),
        rows,
        environment_changes: environment_changes(current, baseline),
        notes: merged(notes),
        between_runs: crate::analysis::between::lines(current),
    }
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
            baseline.host.hostname, current.host.hostname
        ));
    }
    out.extend(
        pairs
            .iter()
            .filter(|(_, a, b)| a != b)
            .map(|(what, a, b)| format!("{what}: `{a}` → `{b}`")),
    );
    if baseline.host.git_commit != current.host.git_commit {
        let show = |c: &Option<String>| c.clone().unwrap_or_else(|| "unknown".into());
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
        grid.column("cell", Align::Left);
        grid.column("baseline (mean ± 95% CI)", Align::Right);
        grid.column("current (mean ± 95% CI)", Align::Right);
        grid.column("ratio current/baseline [95% CI]", Align::Right);
        grid.column("verdict", Align::Left);
        let show = |s: &Option<Summary>| {
            s.as_ref()
                .map(notation::mean_pm)
                .unwrap_or_else(|| "–".into())
        };
        for row in &self.rows {
            grid.row(vec![
                row.cell.clone(),
                show(&row.baseline),
                show(&row.current),
                row.ratio
                    .as_ref()
                    .map(notation::ratio)
                    .unwrap_or_else(|| "–".into()),
                match (&row.ratio, &row.baseline, &row.current) {
                    (Some(r), _, _) => r.verdict_text(),
                    (None, None, Some(_)) => "new cell".into(),
                    (None, Some(_), None) => "not in the current run".into(),
                    _ => "–".into(),
                },
            ]);
        }
        grid
    }

    /// The comparison as text, with the environment changes under it.
    pub fn render(&self) -> String {
        let mut out = format!(
            "dbbench › {}: current run against baseline\n",
            self.benchmark
        );
        out.push_str(&self.to_grid().to_text("  "));
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
        "ratio = current / baseline, below 1 is faster; interval: 95% log-ratio Welch t over \
         each side's forks' mean times (runs of two invocations do not pair, and a fork's rounds \
         share its work area); faster/slower: the interval excludes 1; equivalent: it lies \
         within {m} (DBBENCH_TOLERANCE); inconclusive: it contains 1 and is wider than {m}"
    )
}

/// Compares every current benchmark with the baseline's benchmark of the same name (benchmarks
/// missing from the baseline are skipped). Two single results are compared whatever their names,
/// so a result can be compared with a renamed copy.
pub fn compare_all(
    current: &[BenchmarkResult],
    baseline: &[BenchmarkResult],
) -> Result<Vec<Comparison>> {
    if let ([one], [other]) = (current, baseline) {
        return Ok(vec![compare(one, other)]);
    }
    let out: Vec<Comparison> = current
        .iter()
        .filter_map(|c| {
            let b = baseline.iter().find(|b| b.benchmark == c.benchmark)?;
            Some(compare(c, b))
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::ratio::Verdict;

    #[test]
    fn each_side_is_measured_in_forks() {
        let mut cell = crate::model::sample::vlf().cells[0].clone();
        let times: Vec<f64> = elapsed_of(&cell);
        assert_eq!(fork_times(&cell), times, "without forks: the repetitions");
        for (i, run) in cell.runs.iter_mut().filter(|r| !r.warmup).enumerate() {
            run.fork = Some(i as u32 / 2);
        }
        let forks = fork_times(&cell);
        assert_eq!(forks.len(), times.len().div_ceil(2));
        assert!((forks[0] - (times[0] + times[1]) / 2.0).abs() < 1e-12);
    }

    #[test]
    fn a_doubled_cell_is_slower_and_an_unchanged_one_is_not() {
        let baseline = crate::model::sample::vlf();
        let mut current = baseline.clone();
        for run in &mut current.cells[0].runs {
            run.elapsed_s *= 2.0;
        }
        for (run, wobble) in current.cells[1]
            .runs
            .iter_mut()
            .zip([1.01, 0.98, 1.0, 1.02])
        {
            run.elapsed_s *= wobble;
        }
        current.host.cpu_model = "Other CPU".into();
        let c = compare(&current, &baseline);
        let verdict = |i: usize| c.rows[i].ratio.as_ref().unwrap().verdict;
        assert_eq!(verdict(0), Verdict::Slower);
        assert!((c.rows[0].ratio.as_ref().unwrap().ratio - 2.0).abs() < 1e-9);
        // ±2% of wobble is no difference worth the name: equivalent within the ±10% margin.
        assert_eq!(verdict(1), Verdict::Equivalent);
        assert_eq!(c.environment_changes, ["CPU: `Test CPU` → `Other CPU`"]);
        insta::assert_snapshot!(c.render());
    }

    #[test]
    fn cells_in_one_run_only_are_listed() {
        let baseline = crate::model::sample::vlf();
        let mut current = baseline.clone();
        current.cells.remove(2);
        current.cells[1].name = "test_5".into();
        let text = compare(&current, &baseline).render();
        assert!(text.contains("new cell"), "{text}");
        assert!(text.contains("not in the current run"), "{text}");
    }

    #[test]
    fn sets_compare_namesakes() {
        let vlf = crate::model::sample::vlf();
        let mut other = vlf.clone();
        other.benchmark = "other::bench".into();
        let all = compare_all(&[vlf.clone(), other.clone()], std::slice::from_ref(&vlf)).unwrap();
        assert_eq!(all.len(), 1);
        assert!(all[0].rows.iter().all(|r| matches!(
            r.ratio.as_ref().unwrap().verdict,
            Verdict::Equivalent | Verdict::Imprecise
        )));
        let mut third = vlf.clone();
        third.benchmark = "third::bench".into();
        let err = compare_all(&[other, third], &[vlf.clone(), vlf]).unwrap_err();
        assert!(err.to_string().contains("no benchmark is in both"), "{err}");
    }
}
