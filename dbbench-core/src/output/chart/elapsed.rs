//! The elapsed-time chart of a benchmark: per cell, a bar of the mean, its 95% confidence
//! interval, and every measured run as a dot, as in the multiple-data-files article's chart.

use super::axis::{self, Ticks, Unit, LABELS};
use super::{draw_error, draw_legend, BAR, FONT, RUN_DOT, WIDTH};
use crate::analysis::stats::Summary;
use crate::analysis::table::elapsed_of;
use crate::model::error::Result;
use crate::model::results::{BenchmarkResult, CellResult};
use plotters::coord::cartesian::Cartesian2d;
use plotters::coord::ranged1d::{SegmentValue, SegmentedCoord};
use plotters::coord::types::{RangedCoordf64, RangedCoordu32};
use plotters::prelude::*;

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
