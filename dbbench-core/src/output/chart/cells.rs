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
//! Points are kept in seconds and bytes; each panel's axes pick their units from the data
//! ([`super::axis`]).
//!
//! Lines come from each cell's first measured run (laps average all of them): one run per cell
//! keeps the lines apart, and the table already gives the spread between runs.

use super::axis::{self, Ticks, Unit, LABELS};
use super::{draw_error, draw_legend, FONT, LINES};
use crate::analysis::label;
use crate::model::error::Result;
use crate::model::results::{BenchmarkResult, CellResult, FileKind, RunResult};
use plotters::prelude::*;

/// Wider than the other charts: legends hold whole configurations.
const WIDE: u32 = 1100;

/// One line: its legend and its points, in base units (seconds, bytes, counts).
struct Line {
    label: String,
    points: Vec<(f64, f64)>,
    /// Points where a marker goes (growth events).
    marks: Vec<(f64, f64)>,
}

/// What an axis measures, which decides its unit.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Measure {
    /// Seconds, shown in s, ms or µs.
    Time,
    /// Bytes, shown in B, KiB, MiB or GiB.
    Bytes,
    /// A count or rate, shown in thousands or millions when it is large.
    Count,
    /// Numbers with a meaning of their own (laps, percentiles), shown as they are.
    Plain,
}

impl Measure {
    fn unit(self, max: f64) -> Unit {
        match self {
            Measure::Time => axis::time_unit(max),
            Measure::Bytes => axis::byte_unit(max),
            Measure::Count => axis::count_unit(max),
            Measure::Plain => Unit { name: "", per: 1.0 },
        }
    }
}

/// One panel of lines: its caption, what each axis is (title and measure), and its lines.
struct Panel<'a> {
    caption: &'a str,
    x: (&'a str, Measure),
    y: (&'a str, Measure),
    lines: Vec<Line>,
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

/// Draws `panel` in `area`, each axis in the unit its data calls for.
fn draw_lines<DB: DrawingBackend>(
    area: &DrawingArea<DB, plotters::coord::Shift>,
    panel: &Panel,
) -> Result<()> {
    let lines = &panel.lines;
    let x_max = lines
        .iter()
        .flat_map(|l| l.points.iter().map(|p| p.0))
        .fold(0.0_f64, f64::max);
    let y_max = lines
        .iter()
        .flat_map(|l| l.points.iter().map(|p| p.1))
        .fold(0.0_f64, f64::max);
    let (x_unit, y_unit) = (panel.x.1.unit(x_max), panel.y.1.unit(y_max));
    let (x_max, y_max) = (x_unit.of(x_max), y_unit.of(y_max));
    // Headroom above the lines for the legend, one row per cell.
    let y_top = if y_max > 0.0 {
        y_max * (1.25 + 0.08 * lines.len().min(8) as f64)
    } else {
        1.0
    };
    let x_range = 0.0..x_max.max(1e-9) * 1.02;
    let mut chart = ChartBuilder::on(area)
        .caption(panel.caption, (FONT, 20))
        .margin(16)
        .x_label_area_size(45)
        .y_label_area_size(70)
        .build_cartesian_2d(x_range.clone(), 0.0..y_top)
        .map_err(draw_error)?;
    let (x_ticks, y_ticks) = (Ticks::new(x_range, LABELS), Ticks::new(0.0..y_top, LABELS));
    // Laps are counted: their axis has no halves.
    let counted = panel.x.1 == Measure::Plain
        && lines
            .iter()
            .flat_map(|l| &l.points)
            .all(|p| p.0.fract() == 0.0);
    let x_label = |v: &f64| match (counted, v.fract() == 0.0) {
        (true, false) => String::new(),
        (true, true) => format!("{v:.0}"),
        (false, _) => x_ticks.label(*v),
    };
    chart
        .configure_mesh()
        .light_line_style(BLACK.mix(0.05))
        .x_labels(LABELS)
        .y_labels(LABELS)
        .x_label_formatter(&x_label)
        .y_label_formatter(&|v| y_ticks.label(*v))
        .x_desc(x_unit.title(panel.x.0))
        .y_desc(y_unit.title(panel.y.0))
        .axis_desc_style((FONT, 15))
        .label_style((FONT, 13))
        .draw()
        .map_err(draw_error)?;
    let scaled = |points: &[(f64, f64)]| -> Vec<(f64, f64)> {
        points
            .iter()
            .map(|&(x, y)| (x_unit.of(x), y_unit.of(y)))
            .collect()
    };
    for (k, line) in lines.iter().enumerate() {
        let color = LINES[k % LINES.len()];
        chart
            .draw_series(LineSeries::new(scaled(&line.points), color.stroke_width(2)))
            .map_err(draw_error)?
            .label(line.label.as_str())
            .legend(move |(x, y)| PathElement::new([(x, y), (x + 18, y)], color.stroke_width(2)));
        chart
            .draw_series(
                scaled(&line.marks)
                    .into_iter()
                    .map(|p| Circle::new(p, 3, color.filled())),
            )
            .map_err(draw_error)?;
    }
    draw_legend(&mut chart, SeriesLabelPosition::UpperLeft, 13)
}

/// Renders panels of lines, one under another, as an SVG; `None` when no panel has a line.
fn render(title: &str, panels: Vec<Panel>) -> Result<Option<String>> {
    let panels: Vec<_> = panels.into_iter().filter(|p| !p.lines.is_empty()).collect();
    if panels.is_empty() {
        return Ok(None);
    }
    let mut svg = String::new();
    {
        let height = 40 + 420 * panels.len() as u32;
        let root = SVGBackend::with_string(&mut svg, (WIDE, height)).into_drawing_area();
        root.fill(&WHITE).map_err(draw_error)?;
        let root = root.titled(title, (FONT, 22)).map_err(draw_error)?;
        for (area, panel) in root.split_evenly((panels.len(), 1)).iter().zip(&panels) {
            draw_lines(area, panel)?;
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
        vec![Panel {
            caption: "mean of the measured runs",
            x: ("lap", Measure::Plain),
            y: ("time since the body started", Measure::Time),
            lines,
        }],
    )
}

/// The size of `cell`'s files of `kind` over its first measured run: a step at every autogrowth.
fn size_line(cell: &CellResult, kind: FileKind, label: &str) -> Option<Line> {
    let run = cell.measured().next()?;
    let files: Vec<_> = run.files.iter().filter(|f| f.kind == kind).collect();
    if files.is_empty() {
        return None;
    }
    let bytes = |b: u64| b as f64;
    let mut size: u64 = files.iter().map(|f| f.size_before_bytes).sum();
    let mut points = vec![(0.0, bytes(size))];
    let mut marks = Vec::new();
    for g in run
        .autogrowths
        .iter()
        .filter(|g| files.iter().any(|f| f.name == g.file))
    {
        points.push((g.at_s, bytes(size)));
        size += g.bytes;
        points.push((g.at_s, bytes(size)));
        marks.push((g.at_s, bytes(size)));
    }
    let end: u64 = files.iter().map(|f| f.size_after_bytes).sum();
    points.push((run.elapsed_s, bytes(end.max(size))));
    // A backend may count its files' growths without timing each (InnoDB has no growth event):
    // the legend gives that count, not the zero of an empty timeline.
    let counted: u64 = files.iter().map(|f| f.growth_events).sum();
    let growths = if marks.is_empty() && counted > 0 {
        format!("{counted} growths, times not recorded")
    } else {
        format!("{} growths", marks.len())
    };
    Some(Line {
        label: format!("{label} ({growths})"),
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
    let x = ("time since the measured window opened", Measure::Time);
    let y = ("size", Measure::Bytes);
    render(
        &format!("{}: file sizes and autogrowth events", result.benchmark),
        vec![
            Panel {
                caption: "data files (all)",
                x,
                y,
                lines: panel(FileKind::Data),
            },
            Panel {
                caption: "log",
                x,
                y,
                lines: panel(FileKind::Log),
            },
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
        vec![Panel {
            caption: "first measured run of each cell",
            x: ("time since the measured window opened", Measure::Time),
            y: ("committed transactions per second", Measure::Count),
            lines,
        }],
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
            // In seconds, like every other time axis, so it picks ms or µs from the data.
            let points = vec![
                (50.0, worst(|l| l.p50_ms) / 1e3),
                (95.0, worst(|l| l.p95_ms) / 1e3),
                (99.0, worst(|l| l.p99_ms) / 1e3),
                (100.0, worst(|l| l.max_ms) / 1e3),
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
        vec![Panel {
            caption: "percentiles over the measured runs (100 = slowest transaction)",
            x: ("percentile", Measure::Plain),
            y: ("latency", Measure::Time),
            lines,
        }],
    )
}
