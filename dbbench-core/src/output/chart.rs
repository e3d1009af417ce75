//! SVG charts of a benchmark, drawn with `plotters` (SVG backend only, no font files: text is
//! left to the browser's sans-serif):
//!
//! * elapsed time per cell ([`elapsed`]): bars of the mean with 95% error bars and every run as
//!   a dot, as in the multiple-data-files article's chart;
//! * sampled time series of a cell: one panel per counter, one line per measured run, as the
//!   1-TB article's perfmon graphs;
//! * the top waits of a cell: horizontal bars of each wait type's share, as the VLF article's
//!   wait tables;
//! * every cell on one axis ([`cells`]): laps, file sizes with autogrowth events, throughput.
//!
//! Every numeric axis takes its unit and its ticks' decimals from its data ([`axis`]), so the
//! same chart reads at a smoke run's milliseconds and a full run's hundreds of seconds.

use crate::model::error::{Error, Result};
use crate::model::results::CellResult;
use axis::{Ticks, Unit, LABELS};
use plotters::coord::ranged1d::SegmentValue;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use std::collections::BTreeMap;

pub use elapsed::elapsed_chart;

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
mod elapsed;
#[cfg(test)]
mod scale_tests;
#[cfg(test)]
mod tests;
