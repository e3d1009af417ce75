//! The HTML report: `target/dbbench/report/index.html` with one section per benchmark found in
//! `target/dbbench/results/*.json`, in the suite's declared order: its environment, its results table, its charts and links to
//! its JSON and CSV.
//!
//! As an [`Output`](super::Output), [`Report`] writes one benchmark's charts under
//! `report/<stem>/` and, as the index step, rewrites `index.html` over every results file.

use super::json::{read, results_files};
use crate::model::error::Result;
use crate::model::results::BenchmarkResult;
use crate::output::chart;
use crate::util::fs::write_file;
use crate::util::grid::escape;
use crate::util::paths::{chart_dir, report_index, results_dir};
use std::fmt::Write;
use std::path::{Path, PathBuf};

mod section;

#[cfg(test)]
use section::environment;
use section::section;

/// The charts written for one benchmark, as paths relative to the report directory.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ChartFiles {
    /// Elapsed time per cell.
    pub elapsed: Option<String>,
    /// Sampled series, per cell that has any: `(cell, path)`.
    pub series: Vec<(String, String)>,
    /// Top waits, per cell that has any: `(cell, path)`.
    pub waits: Vec<(String, String)>,
    /// Every cell on one axis ([`chart::cells`]): `(kind, path)` for `laps`, `growth` and
    /// `throughput`, where the results have the data.
    pub shared: Vec<(&'static str, String)>,
    /// The benchmark's history in the results store: the chart (from two invocations on) and
    /// the table as HTML (empty without a store).
    pub history: Option<String>,
    /// See [`ChartFiles::history`].
    pub history_table: String,
}

/// The charts with every cell on one axis: file kind, what it draws, and the drawing.
type SharedChart = (
    &'static str,
    &'static str,
    fn(&BenchmarkResult) -> Result<Option<String>>,
);
const SHARED: [SharedChart; 4] = [
    (
        "throughput",
        "committed transactions per second of every cell",
        chart::cells::throughput_chart,
    ),
    (
        "latency",
        "transaction latency percentiles of every cell",
        chart::cells::latency_chart,
    ),
    (
        "laps",
        "cumulative time at each lap of every cell",
        chart::cells::laps_chart,
    ),
    (
        "growth",
        "file sizes and autogrowth events of every cell",
        chart::cells::growth_chart,
    ),
];

/// A file-name-safe version of a cell or benchmark name.
fn file_safe(name: &str) -> String {
    name.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '.' || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// The report output.
pub struct Report;

impl super::Output for Report {
    fn name(&self) -> &'static str {
        "report"
    }

    fn benchmark(&self, result: &BenchmarkResult, stem: &str, work_dir: &Path) -> Result<()> {
        write_charts(result, stem, work_dir).map(drop)
    }

    fn index(&self, work_dir: &Path) -> Result<()> {
        write_index(work_dir).map(drop)
    }
}

/// The chart files of one cell, by kind.
fn cell_chart(stem: &str, kind: &str, cell: &str) -> String {
    format!("{stem}/{kind}-{}.svg", file_safe(cell))
}

/// Writes the charts of `result` under `report/<stem>/`; returns their paths relative to the
/// report directory.
pub fn write_charts(result: &BenchmarkResult, stem: &str, work_dir: &Path) -> Result<ChartFiles> {
    let dir = chart_dir(work_dir, stem);
    let report = dir.parent().unwrap_or(&dir).to_path_buf();
    let mut files = ChartFiles::default();
    if result.cells.iter().any(|c| c.measured().next().is_some()) {
        write_file(
            &dir.join("elapsed.svg"),
            chart::elapsed_chart(result)?,
            "cannot write chart",
        )?;
        files.elapsed = Some(format!("{stem}/elapsed.svg"));
    }
    let points = super::history::of_work_dir(result, work_dir)?;
    if let Some(svg) = super::history::chart(result, &points)? {
        let path = format!("{stem}/history.svg");
        write_file(&report.join(&path), svg, "cannot write chart")?;
        files.history = Some(path);
    }
    for (kind, _, draw) in SHARED {
        if let Some(svg) = draw(result)? {
            let path = format!("{stem}/{kind}.svg");
            write_file(&report.join(&path), svg, "cannot write chart")?;
            files.shared.push((kind, path));
        }
    }
    for cell in &result.cells {
        if let Some(svg) = chart::series_chart(&result.benchmark, cell)? {
            let path = cell_chart(stem, "series", &cell.name);
            write_file(&report.join(&path), svg, "cannot write chart")?;
            files.series.push((cell.name.clone(), path));
        }
        if let Some(svg) = chart::waits_chart(&result.benchmark, cell)? {
            let path = cell_chart(stem, "waits", &cell.name);
            write_file(&report.join(&path), svg, "cannot write chart")?;
            files.waits.push((cell.name.clone(), path));
        }
    }
    Ok(files)
}

/// The charts of `result` that exist on disk (written by [`write_charts`]).
fn charts_on_disk(result: &BenchmarkResult, stem: &str, work_dir: &Path) -> ChartFiles {
    let report = crate::util::paths::report_dir(work_dir);
    let exists = |path: &String| report.join(path).exists();
    let elapsed = format!("{stem}/elapsed.svg");
    let of_kind = |kind: &str| {
        result
            .cells
            .iter()
            .map(|c| (c.name.clone(), cell_chart(stem, kind, &c.name)))
            .filter(|(_, path)| exists(path))
            .collect()
    };
    ChartFiles {
        elapsed: exists(&elapsed).then_some(elapsed),
        series: of_kind("series"),
        waits: of_kind("waits"),
        shared: SHARED
            .iter()
            .map(|(kind, _, _)| (*kind, format!("{stem}/{kind}.svg")))
            .filter(|(_, path)| exists(path))
            .collect(),
        history: Some(format!("{stem}/history.svg")).filter(exists),
        // A store that cannot be read costs the report its history, not the report.
        history_table: super::history::of_work_dir(result, work_dir)
            .ok()
            .filter(|points| !points.is_empty())
            .map(|points| super::history::table(result, &points).to_html())
            .unwrap_or_default(),
    }
}

/// Writes `report/index.html` over every results file of the work dir, in the suite's declared
/// order ([`super::order`]); returns its path.
///
/// A results file that cannot be read is listed in the index with the reason instead of
/// stopping the report.
pub fn write_index(work_dir: &Path) -> Result<PathBuf> {
    let dir = results_dir(work_dir);
    let files = if dir.is_dir() {
        super::order::sorted(results_files(&dir)?, &super::order::declared(work_dir)?)
    } else {
        Vec::new()
    };
    let mut sections = String::new();
    let mut toc = String::new();
    for file in &files {
        let file_stem = super::file_stem(file);
        match read(file) {
            Ok(result) => {
                let stem = file_safe(&file_stem);
                let charts = charts_on_disk(&result, &stem, work_dir);
                let _ = writeln!(
                    toc,
                    "<li><a href=\"#{id}\">{name}</a>{title}</li>",
                    id = escape(&stem),
                    name = escape(&result.benchmark),
                    title = if result.title.is_empty() {
                        String::new()
                    } else {
                        format!(" — {}", escape(&result.title))
                    }
                );
                sections.push_str(&section(&result, &stem, &charts));
            }
            Err(e) => {
                let _ = writeln!(
                    toc,
                    "<li>{} — not readable: {}</li>",
                    escape(&file_stem),
                    escape(&e.to_string())
                );
            }
        }
    }
    if files.is_empty() {
        toc.push_str("<li>No results yet: run the benchmarks with <code>cargo test</code>.</li>\n");
    }
    let index = report_index(work_dir);
    write_file(&index, page(&toc, &sections), "cannot write report file")?;
    Ok(index)
}

fn page(toc: &str, sections: &str) -> String {
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <title>dbbench report</title>\n<style>{STYLE}</style>\n</head>\n<body>\n\
         <h1>dbbench report</h1>\n<ul class=\"toc\">\n{toc}</ul>\n{sections}</body>\n</html>\n"
    )
}

const STYLE: &str = "
body { font-family: sans-serif; margin: 2em auto; max-width: 1320px; padding: 0 1em; color: #222; }
h2 { border-bottom: 2px solid #4682b4; padding-bottom: .2em; margin-top: 2.5em; }
table { border-collapse: collapse; margin: 1em 0; font-size: 14px; }
th, td { padding: .3em .45em; border-bottom: 1px solid #ddd; white-space: nowrap; }
th { background: #eef3f8; white-space: normal; vertical-align: bottom; }
.wide { overflow-x: auto; }
td.r, th.r { text-align: right; font-variant-numeric: tabular-nums; }
td.l, th.l { text-align: left; }
/* The configuration and waits wrap at their phrases, so the metrics stay on a 1400 px page. */
td.l { white-space: normal; }
/* The configuration (the second column where there is one) gets room for a phrase per line. */
td.l:nth-child(2) { min-width: 10em; }
.env { font-size: 13px; color: #555; }
.note { font-size: 13px; color: #555; }
.failed { color: #b00; }
.warn { font-size: 13px; color: #8a5a00; }
img { display: block; max-width: 100%; margin: 1em 0; border: 1px solid #eee; }
";

#[cfg(test)]
mod tests;
