//! The history of one benchmark in the results store: each cell's mean elapsed time in every
//! invocation that ran it (on the same backend and scale, since other scales measure other
//! amounts of work, and on the same machine), with the invocations saved as baselines marked. The report shows it as a
//! table and, from two invocations on, as a chart.

use crate::analysis::stats::Summary;
use crate::model::error::Result;
use crate::model::results::BenchmarkResult;
use crate::output::chart::{axis, draw_error};
use crate::output::store::{store_file, Store};
use crate::util::grid::{Align, Grid};
use plotters::prelude::*;
use std::path::Path;

/// One invocation that ran the benchmark.
#[derive(Debug, Clone, PartialEq)]
pub struct Point {
    /// The invocation's id in the store.
    pub invocation: i64,
    /// When it started.
    pub started_at_unix_ms: i64,
    /// The baseline name it was saved as, if any.
    pub baseline: Option<String>,
    /// Mean measured elapsed time per cell, in the benchmark's cell order; `None` where the cell
    /// did not run or has no measured run.
    pub means: Vec<Option<f64>>,
}

/// The history of `result`'s benchmark in the store of `work_dir`, oldest first; empty when the
/// work dir has no store (results that were never stored).
pub fn of_work_dir(result: &BenchmarkResult, work_dir: &Path) -> Result<Vec<Point>> {
    // Opening creates a store, and a report must not leave one where there was none.
    if !store_file(work_dir).exists() {
        return Ok(Vec::new());
    }
    of_store(&Store::open(work_dir)?, result)
}

/// The history of `result`'s benchmark in `store`, oldest first.
pub fn of_store(store: &Store, result: &BenchmarkResult) -> Result<Vec<Point>> {
    let mut points = Vec::new();
    for row in store.history()? {
        let elsewhere = !result.host.hostname.is_empty() && row.host != result.host.hostname;
        if elsewhere || row.backend != result.backend.kind || row.scale != result.scale {
            continue;
        }
        let means = result
            .cells
            .iter()
            .map(|cell| {
                let elapsed = store.elapsed_in(row.id, &result.benchmark, &cell.name)?;
                Ok(elapsed.and_then(|e| Summary::of(&e)).map(|s| s.mean))
            })
            .collect::<Result<Vec<_>>>()?;
        if means.iter().all(Option::is_none) {
            continue;
        }
        points.push(Point {
            invocation: row.id,
            started_at_unix_ms: row.started_at_unix_ms,
            baseline: row.baseline,
            means,
        });
    }
    Ok(points)
}

/// The history as a table: one row per invocation, one column per cell.
pub fn table(result: &BenchmarkResult, points: &[Point]) -> Grid {
    let mut grid = Grid::default();
    grid.column("invocation", Align::Right);
    grid.column("started (UTC)", Align::Left);
    grid.column("baseline", Align::Left);
    for cell in &result.cells {
        grid.column(cell.name.as_str(), Align::Right);
    }
    for p in points {
        let mut row = vec![
            p.invocation.to_string(),
            crate::util::calendar::utc_text((p.started_at_unix_ms / 1000).max(0) as u64),
            p.baseline.clone().unwrap_or_default(),
        ];
        row.extend(p.means.iter().map(|m| match m {
            Some(s) => format!("{s:.3} s"),
            None => "–".into(),
        }));
        grid.row(row);
    }
    grid
}

/// Each cell's mean elapsed time over the invocations, a line per cell and a dashed vertical
/// line at each saved baseline; `None` below two invocations, where there is no trend to draw.
pub fn chart(result: &BenchmarkResult, points: &[Point]) -> Result<Option<String>> {
    if points.len() < 2 {
        return Ok(None);
    }
    let top = points
        .iter()
        .flat_map(|p| p.means.iter().flatten().copied())
        .fold(0.0_f64, f64::max);
    // Milliseconds at smoke scale, minutes at full: the unit comes from the data.
    let unit = axis::time_unit(top);
    let y_max = (unit.of(top) * 1.5).max(1e-9);
    let y_ticks = axis::Ticks::new(0.0..y_max, axis::LABELS);
    let n = points.len();
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (1100, 420)).into_drawing_area();
        root.fill(&WHITE).map_err(draw_error)?;
        let mut chart = ChartBuilder::on(&root)
            .caption(
                format!("{}: mean elapsed time per invocation", result.benchmark),
                ("sans-serif", 20),
            )
            .margin(16)
            .x_label_area_size(45)
            .y_label_area_size(70)
            .build_cartesian_2d(-0.5..(n as f64 - 0.5), 0.0..y_max)
            .map_err(draw_error)?;
        let label = |v: &f64| {
            let i = v.round() as usize;
            match points.get(i) {
                Some(p) if (v - i as f64).abs() < 1e-6 => format!("#{}", p.invocation),
                _ => String::new(),
            }
        };
        chart
            .configure_mesh()
            .light_line_style(BLACK.mix(0.05))
            .x_labels(n.min(20))
            .x_label_formatter(&label)
            .y_labels(axis::LABELS)
            .y_label_formatter(&|v| y_ticks.label(*v))
            .x_desc("invocation in the results store")
            .y_desc(unit.title("mean elapsed time"))
            .axis_desc_style(("sans-serif", 15))
            .label_style(("sans-serif", 13))
            .draw()
            .map_err(draw_error)?;
        for (i, p) in points.iter().enumerate() {
            if let Some(name) = &p.baseline {
                let x = i as f64;
                chart
                    .draw_series(DashedLineSeries::new(
                        [(x, 0.0), (x, y_max)],
                        6,
                        4,
                        BLACK.mix(0.6).stroke_width(1),
                    ))
                    .map_err(draw_error)?;
                chart
                    .draw_series([Text::new(
                        format!("baseline {name}"),
                        (x, y_max * 0.97),
                        ("sans-serif", 13),
                    )])
                    .map_err(draw_error)?;
            }
        }
        for (k, cell) in result.cells.iter().enumerate() {
            let color = Palette99::pick(k).to_rgba();
            let line: Vec<(f64, f64)> = points
                .iter()
                .enumerate()
                .filter_map(|(i, p)| p.means[k].map(|m| (i as f64, unit.of(m))))
                .collect();
            if line.is_empty() {
                continue;
            }
            chart
                .draw_series(LineSeries::new(line.clone(), color.stroke_width(2)))
                .map_err(draw_error)?
                .label(cell.name.as_str())
                .legend(move |(x, y)| {
                    PathElement::new([(x, y), (x + 18, y)], color.stroke_width(2))
                });
            chart
                .draw_series(line.into_iter().map(|p| Circle::new(p, 3, color.filled())))
                .map_err(draw_error)?;
        }
        chart
            .configure_series_labels()
            .position(SeriesLabelPosition::UpperRight)
            .background_style(WHITE.mix(0.9))
            .border_style(BLACK.mix(0.5))
            .label_font(("sans-serif", 13))
            .draw()
            .map_err(draw_error)?;
        root.present().map_err(draw_error)?;
    }
    Ok(Some(svg))
}

/// Recording results into a store as a run would, for tests of what reads the store.
#[cfg(test)]
pub(crate) mod testing {
    use super::*;
    use crate::model::results::WindowTimes;
    use crate::output::store::{InvocationStart, InvocationStatus};
    use crate::run::recorder::Recorder;

    /// Records `result` as one invocation of `store`, its elapsed times scaled by `factor`.
    pub(crate) fn record(store: &Store, result: &BenchmarkResult, factor: f64) -> i64 {
        let id = store
            .begin(&InvocationStart {
                command_line: "test".into(),
                git_commit: None,
                host: result.host.hostname.clone(),
                backend: result.backend.kind.clone(),
                scale: result.scale.clone(),
                run_key: None,
            })
            .unwrap();
        let mut recorder = store.recorder(id);
        let declared: Vec<&str> = result.cells.iter().map(|c| c.name.as_str()).collect();
        let mut header = result.clone();
        header.cells.clear();
        recorder
            .benchmark_started("vlf", &header, &declared)
            .unwrap();
        for cell in &result.cells {
            let mut empty = cell.clone();
            empty.runs.clear();
            recorder.cell_started(&empty).unwrap();
            for run in &cell.runs {
                let mut run = run.clone();
                run.elapsed_s *= factor;
                recorder
                    .repetition_finished(&cell.name, &run, WindowTimes::default())
                    .unwrap();
            }
            recorder.cell_finished(&cell.name, &cell.status).unwrap();
        }
        store.finish(id, InvocationStatus::Completed, None).unwrap();
        id
    }
}

#[cfg(test)]
mod tests {
    use super::testing::record;
    use super::*;

    #[test]
    fn each_invocation_is_a_point_and_baselines_are_marked() {
        let dir = tempfile::tempdir().unwrap();
        let result = crate::model::sample::vlf();
        assert!(of_work_dir(&result, dir.path()).unwrap().is_empty());
        assert!(
            !store_file(dir.path()).exists(),
            "reading history creates no store"
        );
        let store = Store::open(dir.path()).unwrap();
        let first = record(&store, &result, 1.0);
        store.save_baseline("main", Some(first)).unwrap();
        record(&store, &result, 2.0);
        let mut other_scale = result.clone();
        other_scale.scale = "smoke".into();
        record(&store, &other_scale, 9.0);

        let points = of_work_dir(&result, dir.path()).unwrap();
        assert_eq!(points.len(), 2, "the smoke invocation measures other work");
        assert_eq!(points[0].baseline.as_deref(), Some("main"));
        assert_eq!(points[1].baseline, None);
        let test_1 = |p: &Point| p.means[0].unwrap();
        assert!((test_1(&points[1]) / test_1(&points[0]) - 2.0).abs() < 1e-9);

        let text = table(&result, &points).to_text("");
        assert!(text.contains("main") && text.contains("test_4"), "{text}");
        let svg = chart(&result, &points).unwrap().unwrap();
        assert!(svg.contains("baseline main") && svg.contains("#1") && svg.contains("#2"));
        assert!(chart(&result, &points[..1]).unwrap().is_none());
    }
}
