//! Charts that put every cell of a benchmark on one shared axis, labelled with the cell's
//! readable configuration, as a DBA reads the articles:
//!
//! * laps: the cumulative time at each `Session::lap`, one line per cell (the VLF article's
//!   "Loop N done in X seconds");
//! * growth timeline: data and log file size over the measured window, one step line per cell,
//!   with a mark at every autogrowth event (`autogrowths[]`);
//! * throughput: every cell's committed transactions per second on one y-scale, so load cells can
//!   be compared (pgbench's progress lines, the 1-TB article's perfmon throughput);
//! * latency: every cell's p50, p95, p99 and slowest transaction on one axis.
//!
//! Lines come from each cell's first measured run (laps average all of them): one run per cell
//! keeps the lines apart, and the table already gives the spread between runs.

use super::{draw_error, draw_legend, si, FONT, LINES};
use crate::analysis::label;
use crate::model::error::Result;
use crate::model::results::{BenchmarkResult, CellResult, FileKind, RunResult};
use plotters::prelude::*;

/// Wider than the other charts: legends hold whole configurations.
const WIDE: u32 = 1100;

/// One line: its legend and its points.
struct Line {
    label: String,
    points: Vec<(f64, f64)>,
    /// Points where a marker goes (growth events).
    marks: Vec<(f64, f64)>,
}

/// The legend text of each cell: `name: configuration`.
fn legends(result: &BenchmarkResult) -> Vec<String> {
    let keys = label::differing_options(result);
    result
        .cells
        .iter()
        .map(|c| {
            let config = label::label(c, &keys);
            if config.is_empty() {
                c.name.clone()
            } else {
                format!("{}: {config}", c.name)
            }
        })
        .collect()
}

/// Draws `lines` in `area` with a caption and axis titles.
fn draw_lines<DB: DrawingBackend>(
    area: &DrawingArea<DB, plotters::coord::Shift>,
    caption: &str,
    x_desc: &str,
    y_desc: &str,
    lines: &[Line],
) -> Result<()> {
    let x_max = lines
        .iter()
        .flat_map(|l| l.points.iter().map(|p| p.0))
        .fold(0.0_f64, f64::max);
    let y_max = lines
        .iter()
        .flat_map(|l| l.points.iter().map(|p| p.1))
        .fold(0.0_f64, f64::max);
    // Headroom above the lines for the legend, one row per cell.
    let y_top = if y_max > 0.0 {
        y_max * (1.25 + 0.08 * lines.len().min(8) as f64)
    } else {
        1.0
    };
    let mut chart = ChartBuilder::on(area)
        .caption(caption, (FONT, 20))
        .margin(16)
        .x_label_area_size(45)
        .y_label_area_size(70)
        .build_cartesian_2d(0.0..x_max.max(1e-9) * 1.02, 0.0..y_top)
        .map_err(draw_error)?;
    // Enough decimals that a smoke run's 0.04 s window gets distinct ticks.
    let decimals = match x_max {
        x if x >= 10.0 => 0,
        x if x >= 1.0 => 1,
        x if x >= 0.1 => 2,
        _ => 3,
    };
    // Laps are counted: their axis has no halves.
    let counted = lines
        .iter()
        .flat_map(|l| &l.points)
        .all(|p| p.0.fract() == 0.0);
    let x_label = |v: &f64| match (counted, v.fract() == 0.0) {
        (true, false) => String::new(),
        (true, true) => format!("{v:.0}"),
        (false, _) => format!("{v:.*}", decimals),
    };
    chart
        .configure_mesh()
        .light_line_style(BLACK.mix(0.05))
        .x_label_formatter(&x_label)
        .x_desc(x_desc)
        .y_desc(y_desc)
        .y_label_formatter(&|v| si(*v))
        .axis_desc_style((FONT, 15))
        .label_style((FONT, 13))
        .draw()
        .map_err(draw_error)?;
    for (k, line) in lines.iter().enumerate() {
        let color = LINES[k % LINES.len()];
        chart
            .draw_series(LineSeries::new(
                line.points.iter().copied(),
                color.stroke_width(2),
            ))
            .map_err(draw_error)?
            .label(line.label.as_str())
            .legend(move |(x, y)| PathElement::new([(x, y), (x + 18, y)], color.stroke_width(2)));
        chart
            .draw_series(
                line.marks
                    .iter()
                    .map(|&p| Circle::new(p, 3, color.filled())),
            )
            .map_err(draw_error)?;
    }
    draw_legend(&mut chart, SeriesLabelPosition::UpperLeft, 13)
}

/// Renders panels of lines, one under another, as an SVG; `None` when no panel has a line.
fn render(title: &str, panels: &[(&str, &str, &str, Vec<Line>)]) -> Result<Option<String>> {
    let panels: Vec<_> = panels.iter().filter(|p| !p.3.is_empty()).collect();
    if panels.is_empty() {
        return Ok(None);
    }
    let mut svg = String::new();
    {
        let height = 40 + 420 * panels.len() as u32;
        let root = SVGBackend::with_string(&mut svg, (WIDE, height)).into_drawing_area();
        root.fill(&WHITE).map_err(draw_error)?;
        let root = root.titled(title, (FONT, 22)).map_err(draw_error)?;
        for (area, (caption, x, y, lines)) in
            root.split_evenly((panels.len(), 1)).iter().zip(panels)
        {
            draw_lines(area, caption, x, y, lines)?;
        }
        root.present().map_err(draw_error)?;
    }
    Ok(Some(svg))
}

/// Cumulative time at each lap, averaged over the measured runs, one line per cell that lapped.
pub fn laps_chart(result: &BenchmarkResult) -> Result<Option<String>> {
    let lines = result
        .cells
        .iter()
        .zip(legends(result))
        .filter_map(|(cell, label)| {
            let runs: Vec<&RunResult> = cell.measured().filter(|r| !r.laps.is_empty()).collect();
            let laps = runs.iter().map(|r| r.laps.len()).min()?;
            let mean_at =
                |i: usize| runs.iter().map(|r| r.laps[i].at_s).sum::<f64>() / runs.len() as f64;
            let mut points = vec![(0.0, 0.0)];
            points.extend((0..laps).map(|i| ((i + 1) as f64, mean_at(i))));
            let marks = points[1..].to_vec();
            Some(Line {
                label,
                points,
                marks,
            })
        })
        .collect();
    render(
        &format!("{}: time at each lap (cumulative)", result.benchmark),
        &[(
            "mean of the measured runs",
            "lap",
            "seconds since the body started",
            lines,
        )],
    )
}

/// The size of `cell`'s files of `kind` over its first measured run: a step at every autogrowth.
fn size_line(cell: &CellResult, kind: FileKind, label: &str) -> Option<Line> {
    let run = cell.measured().next()?;
    let files: Vec<_> = run.files.iter().filter(|f| f.kind == kind).collect();
    if files.is_empty() {
        return None;
    }
    let mib = |b: u64| b as f64 / (1024.0 * 1024.0);
    let mut size: u64 = files.iter().map(|f| f.size_before_bytes).sum();
    let mut points = vec![(0.0, mib(size))];
    let mut marks = Vec::new();
    for g in run
        .autogrowths
        .iter()
        .filter(|g| files.iter().any(|f| f.name == g.file))
    {
        points.push((g.at_s, mib(size)));
        size += g.bytes;
        points.push((g.at_s, mib(size)));
        marks.push((g.at_s, mib(size)));
    }
    let end: u64 = files.iter().map(|f| f.size_after_bytes).sum();
    points.push((run.elapsed_s, mib(end.max(size))));
    Some(Line {
        label: format!("{label} ({} growths)", marks.len()),
        points,
        marks,
    })
}

/// Data and log file size over the measured window per cell, with its autogrowth events;
/// `None` when no cell has file statistics.
pub fn growth_chart(result: &BenchmarkResult) -> Result<Option<String>> {
    let legends = legends(result);
    let panel = |kind: FileKind| -> Vec<Line> {
        result
            .cells
            .iter()
            .zip(&legends)
            .filter_map(|(c, l)| size_line(c, kind, l))
            .collect()
    };
    let x = "seconds since the measured window opened";
    render(
        &format!("{}: file sizes and autogrowth events", result.benchmark),
        &[
            ("data files (all)", x, "MiB", panel(FileKind::Data)),
            ("log", x, "MiB", panel(FileKind::Log)),
        ],
    )
}

/// Every cell's committed transactions per second over its first measured run, on one axis;
/// `None` when no cell ran a concurrent load.
pub fn throughput_chart(result: &BenchmarkResult) -> Result<Option<String>> {
    let lines = result
        .cells
        .iter()
        .zip(legends(result))
        .filter_map(|(cell, label)| {
            let run = cell.measured().next()?;
            let load = run.loads.first()?;
            let start = load.started_at_s;
            let series = run
                .series
                .iter()
                .find(|s| s.name.ends_with("transactions/s"))?;
            let points: Vec<(f64, f64)> = series
                .values
                .iter()
                .enumerate()
                .map(|(i, v)| (start + (i as f64 + 0.5) * series.interval_s, *v))
                .collect();
            // A dot per second: a load shorter than two seconds has no line to draw.
            let marks = points.clone();
            Some(Line {
                label,
                points,
                marks,
            })
        })
        .collect();
    render(
        &format!("{}: throughput of every cell", result.benchmark),
        &[(
            "first measured run of each cell",
            "seconds since the measured window opened",
            "committed transactions per second",
            lines,
        )],
    )
}

/// Every cell's transaction latency at the 50th, 95th and 99th percentile and its slowest
/// transaction, over all measured runs' loads (the worst of them at each percentile), one line per
/// cell on one axis; `None` when no cell ran a concurrent load.
pub fn latency_chart(result: &BenchmarkResult) -> Result<Option<String>> {
    let lines = result
        .cells
        .iter()
        .zip(legends(result))
        .filter_map(|(cell, label)| {
            let loads: Vec<_> = cell.measured().flat_map(|r| r.loads.iter()).collect();
            if loads.is_empty() {
                return None;
            }
            let worst = |f: fn(&crate::model::load::LatencyStats) -> f64| {
                loads.iter().map(|l| f(&l.latency)).fold(0.0_f64, f64::max)
            };
            let points = vec![
                (50.0, worst(|l| l.p50_ms)),
                (95.0, worst(|l| l.p95_ms)),
                (99.0, worst(|l| l.p99_ms)),
                (100.0, worst(|l| l.max_ms)),
            ];
            Some(Line {
                label,
                marks: points.clone(),
                points,
            })
        })
        .collect();
    render(
        &format!("{}: transaction latency of every cell", result.benchmark),
        &[(
            "percentiles over the measured runs (100 = slowest transaction)",
            "percentile",
            "latency (ms)",
            lines,
        )],
    )
}
