//! SVG charts of a benchmark, drawn with `plotters` (SVG backend only, no font files: text is
//! left to the browser's sans-serif):
//!
//! * elapsed time per cell: bars of the mean with 95% error bars and every run as a dot, as in
//!   the multiple-data-files article's chart;
//! * sampled time series of a cell: one panel per counter, one line per measured run, as the
//!   1-TB article's perfmon graphs;
//! * the top waits of a cell: horizontal bars of each wait type's share, as the VLF article's
//!   wait tables;
//! * every cell on one axis ([`cells`]): laps, file sizes with autogrowth events, throughput.
//!
//! Every numeric axis takes its unit and its ticks' decimals from its data ([`axis`]), so the
//! same chart reads at a smoke run's milliseconds and a full run's hundreds of seconds.

use crate::analysis::stats::Summary;
use crate::analysis::table::elapsed_of;
use crate::model::error::{Error, Result};
use crate::model::results::{BenchmarkResult, CellResult};
use axis::{Ticks, Unit, LABELS};
use plotters::coord::cartesian::Cartesian2d;
use plotters::coord::ranged1d::{SegmentValue, SegmentedCoord};
use plotters::coord::types::{RangedCoordf64, RangedCoordu32};
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use std::collections::BTreeMap;

const WIDTH: u32 = 900;
/// Series with at most this many samples get a dot at each, since one sample draws no line.
const SAMPLE_DOTS: usize = 20;
const FONT: &str = "sans-serif";
const BAR: RGBColor = RGBColor(70, 130, 180);
const RUN_DOT: RGBColor = RGBColor(200, 60, 40);
/// Line colours with enough contrast on white (Tableau 10).
const LINES: [RGBColor; 10] = [
    RGBColor(31, 119, 180),
    RGBColor(255, 127, 14),
    RGBColor(44, 160, 44),
    RGBColor(214, 39, 40),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
    RGBColor(227, 119, 194),
    RGBColor(127, 127, 127),
    RGBColor(188, 189, 34),
    RGBColor(23, 190, 207),
];

/// Draws the legend of `chart` in the charts' common style: a light box at `position`.
fn draw_legend<'a, DB, CT>(
    chart: &mut ChartContext<'a, DB, CT>,
    position: SeriesLabelPosition,
    font_size: u32,
) -> Result<()>
where
    DB: DrawingBackend + 'a,
    CT: CoordTranslate,
{
    chart
        .configure_series_labels()
        .position(position)
        .background_style(WHITE.mix(0.9))
        .border_style(BLACK.mix(0.5))
        .label_font((FONT, font_size))
        .draw()
        .map_err(draw_error)
}

pub(crate) fn draw_error(e: impl std::fmt::Display) -> Error {
    Error::msg(format!("cannot draw chart: {e}"))
}

/// The elapsed time of every cell: mean bar, 95% interval, and each measured run.
pub fn elapsed_chart(result: &BenchmarkResult) -> Result<String> {
    let cells: Vec<(&CellResult, Option<Summary>)> = result
        .cells
        .iter()
        .map(|c| (c, Summary::of(&elapsed_of(c))))
        .collect();
    let top = cells
        .iter()
        .filter_map(|(_, s)| s.as_ref())
        .map(|s| s.ci.map_or(s.max, |ci| ci.high.max(s.max)))
        .fold(0.0_f64, f64::max);
    let unit = axis::time_unit(top);
    // Headroom above the tallest bar keeps the legend clear of the data.
    let y_max = if top > 0.0 { unit.of(top) * 1.3 } else { 1.0 };
    let ticks = Ticks::new(0.0..y_max, LABELS);
    let n = cells.len().max(1) as u32;
    let names: Vec<String> = cells
        .iter()
        .map(|(c, s)| match s {
            Some(_) => c.name.clone(),
            None => format!("{} (no runs)", c.name),
        })
        .collect();
    let height = 480;
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (WIDTH, height)).into_drawing_area();
        root.fill(&WHITE).map_err(draw_error)?;
        let mut chart = ChartBuilder::on(&root)
            .caption(
                format!("{}: elapsed time per cell", result.benchmark),
                (FONT, 22),
            )
            .margin(20)
            .x_label_area_size(50)
            .y_label_area_size(70)
            .build_cartesian_2d((0..n - 1).into_segmented(), 0.0..y_max)
            .map_err(draw_error)?;
        chart
            .configure_mesh()
            .disable_x_mesh()
            .light_line_style(TRANSPARENT)
            .x_labels(n as usize)
            .x_label_formatter(&|v| match v {
                SegmentValue::CenterOf(i) => names.get(*i as usize).cloned().unwrap_or_default(),
                _ => String::new(),
            })
            .y_labels(LABELS)
            .y_label_formatter(&|v| ticks.label(*v))
            .x_desc("cell")
            .y_desc(unit.title("elapsed time"))
            .axis_desc_style((FONT, 16))
            .label_style((FONT, 14))
            .draw()
            .map_err(draw_error)?;
        // The summaries in the axis's unit.
        let in_unit: Vec<Option<Summary>> = cells
            .iter()
            .map(|(c, _)| {
                let runs: Vec<f64> = elapsed_of(c).into_iter().map(|v| unit.of(v)).collect();
                Summary::of(&runs)
            })
            .collect();
        let measured: Vec<Measured> = cells
            .iter()
            .zip(&in_unit)
            .enumerate()
            .filter_map(|(i, ((c, _), s))| s.as_ref().map(|s| (i as u32, *c, s)))
            .collect();
        draw_means(&mut chart, &measured)?;
        draw_intervals(&mut chart, &measured)?;
        draw_runs(&mut chart, &measured, unit)?;
        draw_legend(&mut chart, SeriesLabelPosition::UpperRight, 14)?;
        root.present().map_err(draw_error)?;
    }
    Ok(svg)
}

/// The elapsed-time chart: one segment per cell, times in the axis's unit.
type ElapsedChart<'a, 'b> =
    ChartContext<'a, SVGBackend<'b>, Cartesian2d<SegmentedCoord<RangedCoordu32>, RangedCoordf64>>;

/// A cell with measured runs: its segment, the cell, and its summary in the axis's unit.
type Measured<'r> = (u32, &'r CellResult, &'r Summary);

/// The bar of each cell's mean.
fn draw_means(chart: &mut ElapsedChart, measured: &[Measured]) -> Result<()> {
    chart
        .draw_series(measured.iter().map(|&(i, _, s)| {
            let mut bar = Rectangle::new(
                [
                    (SegmentValue::Exact(i), 0.0),
                    (SegmentValue::Exact(i + 1), s.mean),
                ],
                BAR.mix(0.75).filled(),
            );
            bar.set_margin(0, 0, 18, 18);
            bar
        }))
        .map_err(draw_error)?
        .label("mean")
        .legend(|(x, y)| Rectangle::new([(x, y - 6), (x + 14, y + 6)], BAR.mix(0.75).filled()));
    Ok(())
}

/// Each cell's 95% confidence interval: a vertical line with a cap at each end.
fn draw_intervals(chart: &mut ElapsedChart, measured: &[Measured]) -> Result<()> {
    chart
        .draw_series(measured.iter().filter_map(|&(i, _, s)| {
            // Drawn by hand: plotters' ErrorBar also circles the mean, which hides the runs.
            s.ci.map(|ci| {
                PathElement::new(
                    [
                        (SegmentValue::CenterOf(i), ci.low.max(0.0)),
                        (SegmentValue::CenterOf(i), ci.high),
                    ],
                    BLACK.stroke_width(2),
                )
            })
        }))
        .map_err(draw_error)?
        .label("95% confidence interval")
        .legend(|(x, y)| PathElement::new([(x + 7, y - 7), (x + 7, y + 7)], BLACK.stroke_width(2)));
    chart
        .draw_series(measured.iter().flat_map(|&(i, _, s)| {
            let ends =
                s.ci.map(|ci| [ci.low.max(0.0), ci.high])
                    .unwrap_or_default();
            ends.into_iter().filter(|_| s.ci.is_some()).map(move |y| {
                EmptyElement::at((SegmentValue::CenterOf(i), y))
                    + PathElement::new([(-10, 0), (10, 0)], BLACK.stroke_width(2))
            })
        }))
        .map_err(draw_error)?;
    Ok(())
}

/// Every measured run of each cell as a dot, in `unit`.
fn draw_runs(chart: &mut ElapsedChart, measured: &[Measured], unit: Unit) -> Result<()> {
    chart
        .draw_series(measured.iter().flat_map(|&(i, c, _)| {
            let runs: Vec<f64> = elapsed_of(c).into_iter().map(|v| unit.of(v)).collect();
            let spread = runs.len() as i32 - 1;
            runs.into_iter().enumerate().map(move |(j, v)| {
                // Side by side rather than on top of each other, so every run stays visible.
                let dx = (2 * j as i32 - spread) * 4;
                EmptyElement::at((SegmentValue::CenterOf(i), v))
                    + Circle::new((dx, 0), 4, RUN_DOT.filled())
            })
        }))
        .map_err(draw_error)?
        .label("one measured run")
        .legend(|(x, y)| Circle::new((x + 7, y), 4, RUN_DOT.filled()));
    Ok(())
}

/// The sampled series of `cell`'s measured runs: one panel per series name, one line per run.
/// `None` when the runs sampled nothing.
pub fn series_chart(benchmark: &str, cell: &CellResult) -> Result<Option<String>> {
    let mut by_name: BTreeMap<(usize, &str), Vec<(u32, &crate::model::results::Series)>> =
        BTreeMap::new();
    let mut order: Vec<&str> = Vec::new();
    for run in cell.measured() {
        for s in run.series.iter().filter(|s| !s.values.is_empty()) {
            if !order.contains(&s.name.as_str()) {
                order.push(&s.name);
            }
            let pos = order.iter().position(|n| *n == s.name).unwrap_or(0);
            by_name
                .entry((pos, &s.name))
                .or_default()
                .push((run.index, s));
        }
    }
    if by_name.is_empty() {
        return Ok(None);
    }
    let panel_height = 300;
    let height = 50 + panel_height * by_name.len() as u32;
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (WIDTH, height)).into_drawing_area();
        root.fill(&WHITE).map_err(draw_error)?;
        let root = root
            .titled(
                &format!("{benchmark} › {}: sampled counters per run", cell.name),
                (FONT, 22),
            )
            .map_err(draw_error)?;
        let panels = root.split_evenly((by_name.len(), 1));
        for (panel, ((_, name), runs)) in panels.iter().zip(&by_name) {
            draw_panel(panel, name, runs)?;
        }
        root.present().map_err(draw_error)?;
    }
    Ok(Some(svg))
}

/// One panel of [`series_chart`]: the series `name`, one line per run `(index, series)`.
fn draw_panel(
    panel: &DrawingArea<SVGBackend, plotters::coord::Shift>,
    name: &str,
    runs: &[(u32, &crate::model::results::Series)],
) -> Result<()> {
    let t_max = runs
        .iter()
        .map(|(_, s)| s.interval_s * s.values.len() as f64)
        .fold(0.0_f64, f64::max);
    let v_max = runs
        .iter()
        .flat_map(|(_, s)| s.values.iter().copied())
        .fold(0.0_f64, f64::max);
    let v_min = runs
        .iter()
        .flat_map(|(_, s)| s.values.iter().copied())
        .fold(0.0_f64, f64::min);
    let t_unit = axis::time_unit(t_max);
    let (v_unit, v_title) = value_unit(&runs[0].1.unit, v_max.max(-v_min));
    let (t_max, v_min, v_max) = (t_unit.of(t_max), v_unit.of(v_min), v_unit.of(v_max));
    // Headroom for the legend, which grows with the number of runs.
    let headroom = 1.3 + 0.05 * runs.len().min(10) as f64;
    let v_max = if v_max > v_min {
        v_min + (v_max - v_min) * headroom
    } else {
        v_min + 1.0
    };
    let mut chart = ChartBuilder::on(panel)
        .caption(name, (FONT, 17))
        .margin(12)
        .x_label_area_size(42)
        .y_label_area_size(70)
        .build_cartesian_2d(0.0..t_max.max(1e-9), v_min..v_max)
        .map_err(draw_error)?;
    let x_ticks = Ticks::new(0.0..t_max.max(1e-9), LABELS);
    let y_ticks = Ticks::new(v_min..v_max, LABELS);
    chart
        .configure_mesh()
        .light_line_style(BLACK.mix(0.05))
        .x_labels(LABELS)
        .y_labels(LABELS)
        .x_label_formatter(&|v| x_ticks.label(*v))
        .y_label_formatter(&|v| y_ticks.label(*v))
        .x_desc(t_unit.title("time since the measured window opened"))
        .y_desc(v_title)
        .axis_desc_style((FONT, 14))
        .label_style((FONT, 13))
        .draw()
        .map_err(draw_error)?;
    for (k, (index, s)) in runs.iter().enumerate() {
        let color = LINES[k % LINES.len()];
        let points: Vec<(f64, f64)> = s
            .values
            .iter()
            .enumerate()
            .map(|(i, v)| (t_unit.of((i as f64 + 0.5) * s.interval_s), v_unit.of(*v)))
            .collect();
        chart
            .draw_series(LineSeries::new(points.clone(), color.stroke_width(2)))
            .map_err(draw_error)?
            .label(format!("run {index}"))
            .legend(move |(x, y)| PathElement::new([(x, y), (x + 18, y)], color.stroke_width(2)));
        // A smoke run samples once or twice: a line of one point draws nothing, so few
        // samples also get a dot each.
        if points.len() <= SAMPLE_DOTS {
            chart
                .draw_series(
                    points
                        .into_iter()
                        .map(|p| Circle::new(p, 3, color.filled())),
                )
                .map_err(draw_error)?;
        }
    }
    draw_legend(&mut chart, SeriesLabelPosition::UpperRight, 13)?;
    Ok(())
}

/// The display unit of a series recorded in `unit` whose largest magnitude is `max`, and the
/// axis title: bytes (`bytes`, `B`, and their rates) in KiB/MiB/GiB, anything else counted.
fn value_unit(unit: &str, max: f64) -> (Unit, String) {
    let (base, rate) = match unit.strip_suffix("/s") {
        Some(base) => (base, "/s"),
        None => (unit, ""),
    };
    if matches!(base, "bytes" | "B") {
        let u = axis::byte_unit(max);
        (u, format!("{}{rate}", u.name))
    } else {
        let u = axis::count_unit(max);
        (u, u.title(unit))
    }
}

pub use crate::analysis::metrics::top_waits;

/// The top waits of `cell` as horizontal bars; `None` when the backend recorded no waits.
pub fn waits_chart(benchmark: &str, cell: &CellResult) -> Result<Option<String>> {
    let waits = top_waits(cell, 10);
    if waits.is_empty() {
        return Ok(None);
    }
    let k = waits.len() as u32;
    let longest = waits.iter().map(|(n, _)| n.len()).max().unwrap_or(10) as u32;
    let height = 130 + 36 * k;
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (WIDTH, height)).into_drawing_area();
        root.fill(&WHITE).map_err(draw_error)?;
        let mut chart = ChartBuilder::on(&root)
            .caption(
                format!("{benchmark} › {}: top waits", cell.name),
                (FONT, 22),
            )
            .margin(20)
            .x_label_area_size(45)
            // Wait type names are long; size the label area to the longest one.
            .y_label_area_size(40 + longest * 8)
            .build_cartesian_2d(0.0..100.0, (0..k - 1).into_segmented())
            .map_err(draw_error)?;
        let label_of = |v: &SegmentValue<u32>| match v {
            SegmentValue::CenterOf(i) => (k - 1)
                .checked_sub(*i)
                .and_then(|rank| waits.get(rank as usize))
                .map(|(n, _)| n.clone())
                .unwrap_or_default(),
            _ => String::new(),
        };
        chart
            .configure_mesh()
            .disable_y_mesh()
            .light_line_style(TRANSPARENT)
            .y_labels(k as usize)
            .x_label_formatter(&|v| format!("{v:.0}"))
            .y_desc("wait type")
            .y_label_formatter(&label_of)
            .x_desc("share of wait time in the measured runs (%)")
            .axis_desc_style((FONT, 15))
            .label_style((FONT, 13))
            .draw()
            .map_err(draw_error)?;
        chart
            .draw_series(waits.iter().enumerate().map(|(rank, (_, pct))| {
                let i = k - 1 - rank as u32;
                let mut bar = Rectangle::new(
                    [
                        (0.0, SegmentValue::Exact(i)),
                        (*pct, SegmentValue::Exact(i + 1)),
                    ],
                    BAR.mix(0.75).filled(),
                );
                bar.set_margin(5, 5, 0, 0);
                bar
            }))
            .map_err(draw_error)?
            .label("share of wait time")
            .legend(|(x, y)| Rectangle::new([(x, y - 6), (x + 14, y + 6)], BAR.mix(0.75).filled()));
        chart
            .draw_series(waits.iter().enumerate().map(|(rank, (_, pct))| {
                let i = k - 1 - rank as u32;
                Text::new(
                    format!("{pct:.1}%"),
                    (pct + 1.0, SegmentValue::CenterOf(i)),
                    TextStyle::from((FONT, 13).into_font()).pos(Pos::new(HPos::Left, VPos::Center)),
                )
            }))
            .map_err(draw_error)?;
        draw_legend(&mut chart, SeriesLabelPosition::LowerRight, 13)?;
        root.present().map_err(draw_error)?;
    }
    Ok(Some(svg))
}

pub(crate) mod axis;
pub mod cells;
#[cfg(test)]
mod scale_tests;
#[cfg(test)]
mod tests;
