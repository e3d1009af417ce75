//! Every chart kind rendered at a smoke run's magnitudes (milliseconds, KiB, a few transactions
//! per second) and a full run's (hundreds of seconds, GiB, tens of thousands per second): each
//! numeric axis must have distinct, increasing tick labels and the unit its data calls for.

use super::*;
use crate::model::results::{AutogrowthEvent, BenchmarkResult};
use crate::output::history::{self, Point};

/// Smoke-like: a 10 s sample run becomes 4 ms, its 64 MiB files 6.5 KiB.
const SMOKE: (f64, f64) = (4e-4, 1e-4);
/// Full-like: the same run becomes 430 s, its files 2 GiB and more.
const FULL: (f64, f64) = (40.0, 32.0);

/// `result` with every time multiplied by `time` and every size by `bytes`, and a few
/// autogrowths of each cell's files, so that every chart has data at that magnitude.
fn rescaled(mut result: BenchmarkResult, (time, bytes): (f64, f64)) -> BenchmarkResult {
    let size = |b: &mut u64| *b = (*b as f64 * bytes) as u64;
    for run in result.cells.iter_mut().flat_map(|c| &mut c.runs) {
        run.elapsed_s *= time;
        for lap in &mut run.laps {
            lap.at_s *= time;
            lap.split_s *= time;
        }
        for file in &mut run.files {
            size(&mut file.size_before_bytes);
            size(&mut file.size_after_bytes);
        }
        for series in &mut run.series {
            series.interval_s *= time;
            if series.unit.starts_with("bytes") {
                series.values.iter_mut().for_each(|v| *v *= bytes / time);
            }
        }
        for load in &mut run.loads {
            load.started_at_s *= time;
            let l = &mut load.latency;
            for ms in [&mut l.p50_ms, &mut l.p95_ms, &mut l.p99_ms, &mut l.max_ms] {
                *ms *= time;
            }
        }
        let grown = run.files[0].size_after_bytes - run.files[0].size_before_bytes;
        run.autogrowths = (1..=3)
            .map(|k| AutogrowthEvent {
                file: run.files[k % 2].name.clone(),
                at_s: run.elapsed_s * k as f64 / 4.0,
                bytes: grown / 3,
                size_after_bytes: 0,
                zero_filled: false,
                duration_ms: 1.0,
            })
            .collect();
    }
    result
}

/// The numeric axes of an SVG chart, each as its tick labels from the lowest value's end: the
/// labels plotters right-aligns beside a y axis (same x), and those it centres under an x axis
/// (same y). Text that is not a number (names, titles, legends) is no tick.
fn axes(svg: &str) -> Vec<Vec<String>> {
    let attr = |tag: &str, name: &str| -> Option<String> {
        let start = tag.find(&format!(" {name}=\""))? + name.len() + 3;
        Some(tag[start..][..tag[start..].find('"')?].to_string())
    };
    let mut y_axes: BTreeMap<String, Vec<(f64, String)>> = BTreeMap::new();
    let mut x_axes: BTreeMap<String, Vec<(f64, String)>> = BTreeMap::new();
    for element in svg.split("<text").skip(1) {
        let (Some(end), Some(close)) = (element.find('>'), element.find("</text>")) else {
            continue;
        };
        let (tag, text) = (&element[..end], element[end + 1..close].trim());
        if text.parse::<f64>().is_err() || tag.contains("transform") {
            continue;
        }
        let (Some(x), Some(y)) = (attr(tag, "x"), attr(tag, "y")) else {
            continue;
        };
        let at = |v: &str| v.parse::<f64>().unwrap();
        match attr(tag, "text-anchor").as_deref() {
            Some("end") => y_axes.entry(x).or_default().push((-at(&y), text.into())),
            Some("middle") => x_axes.entry(y).or_default().push((at(&x), text.into())),
            _ => {}
        }
    }
    let mut axes = Vec::new();
    for (vertical, mut ticks) in y_axes
        .into_values()
        .map(|t| (true, t))
        .chain(x_axes.into_values().map(|t| (false, t)))
    {
        ticks.sort_by(|a, b| a.0.total_cmp(&b.0));
        let mut axis: Vec<String> = Vec::new();
        for (_, text) in ticks {
            // Panels stacked in one SVG put their y axes at the same x: the next panel's axis
            // starts where the values fall back.
            let value = |t: &String| t.parse::<f64>().unwrap();
            if vertical && axis.last().is_some_and(|last| value(&text) < value(last)) {
                axes.push(std::mem::take(&mut axis));
            }
            axis.push(text);
        }
        axes.push(axis);
    }
    axes.retain(|ticks| ticks.len() >= 2);
    axes
}

/// Every text of an SVG chart, trimmed.
fn texts(svg: &str) -> Vec<&str> {
    svg.split("<text")
        .skip(1)
        .filter_map(|t| Some(t[t.find('>')? + 1..t.find("</text>")?].trim()))
        .collect()
}

/// Asserts that `svg` has `count` numeric axes, each with at least three distinct, increasing
/// tick labels, and that every text of `titles` is in it; returns the axes for the caller.
fn assert_axes_read(what: &str, svg: &str, count: usize, titles: &[&str]) -> Vec<Vec<String>> {
    let axes = axes(svg);
    assert_eq!(axes.len(), count, "{what}: numeric axes {axes:?}");
    for ticks in &axes {
        assert!(ticks.len() >= 3, "{what}: too few ticks {ticks:?}");
        let values: Vec<f64> = ticks.iter().map(|t| t.parse().unwrap()).collect();
        assert!(
            values.windows(2).all(|w| w[0] < w[1]),
            "{what}: tick labels must be distinct and increasing: {ticks:?}"
        );
    }
    let texts = texts(svg);
    for title in titles {
        assert!(texts.contains(title), "{what}: no `{title}` in {texts:?}");
    }
    axes
}

#[test]
fn elapsed_reads_at_both_scales() {
    let smoke = elapsed_chart(&rescaled(crate::model::sample::vlf(), SMOKE)).unwrap();
    assert_axes_read("elapsed, smoke", &smoke, 1, &["elapsed time (ms)"]);
    let full = elapsed_chart(&rescaled(crate::model::sample::vlf(), FULL)).unwrap();
    assert_axes_read("elapsed, full", &full, 1, &["elapsed time (s)"]);
    let tiny = elapsed_chart(&rescaled(crate::model::sample::vlf(), (2e-6, 1.0))).unwrap();
    assert_axes_read("elapsed, µs", &tiny, 1, &["elapsed time (µs)"]);
}

#[test]
fn laps_read_at_both_scales() {
    for (scale, unit) in [(SMOKE, "ms"), (FULL, "s")] {
        let svg = cells::laps_chart(&rescaled(crate::model::sample::vlf(), scale))
            .unwrap()
            .unwrap();
        let title = format!("time since the body started ({unit})");
        let axes = assert_axes_read("laps", &svg, 2, &[&title]);
        assert!(
            axes.iter().any(|t| t.iter().all(|l| !l.contains('.'))),
            "the lap axis counts whole laps: {axes:?}"
        );
    }
}

#[test]
fn file_sizes_read_at_both_scales() {
    for (scale, time, size) in [(SMOKE, "ms", "KiB"), (FULL, "s", "GiB")] {
        let svg = cells::growth_chart(&rescaled(crate::model::sample::vlf(), scale))
            .unwrap()
            .unwrap();
        let time = format!("time since the measured window opened ({time})");
        let size = format!("size ({size})");
        assert_axes_read("file sizes", &svg, 4, &[&time, &size]);
    }
}

#[test]
fn throughput_and_latency_read_at_both_scales() {
    for (scale, tps, rate, latency) in [
        (
            SMOKE,
            [3.0, 7.0],
            "committed transactions per second",
            "latency (µs)",
        ),
        (
            (1000.0, 1.0),
            [40_000.0, 90_000.0],
            "committed transactions per second (thousands)",
            "latency (s)",
        ),
    ] {
        let result = rescaled(crate::model::sample::load(&tps), scale);
        let svg = cells::throughput_chart(&result).unwrap().unwrap();
        assert_axes_read("throughput", &svg, 2, &[rate]);
        let svg = cells::latency_chart(&result).unwrap().unwrap();
        assert_axes_read("latency", &svg, 2, &[latency]);
    }
}

#[test]
fn series_read_at_both_scales() {
    for (scale, time, rate) in [(SMOKE, "ms", "MiB/s"), (FULL, "s", "MiB/s")] {
        let result = rescaled(crate::model::sample::vlf(), scale);
        let svg = series_chart(&result.benchmark, &result.cells[0])
            .unwrap()
            .unwrap();
        let time = format!("time since the measured window opened ({time})");
        assert_axes_read("series", &svg, 2, &[&time, rate]);
    }
    let mut result = crate::model::sample::load(&[3.0, 7.0]);
    let svg = series_chart(&result.benchmark, &result.cells[0])
        .unwrap()
        .unwrap();
    assert_axes_read("series of a small rate", &svg, 2, &["1/s"]);
    let mut one_sample = result.cells[0].clone();
    one_sample
        .runs
        .iter_mut()
        .for_each(|r| r.series[0].values.truncate(1));
    let svg = series_chart(&result.benchmark, &one_sample)
        .unwrap()
        .unwrap();
    let runs = one_sample.measured().count();
    assert_eq!(
        svg.matches("<circle").count(),
        runs,
        "a smoke run's single sample is a dot per run, not an invisible line"
    );
    for run in &mut result.cells[0].runs {
        run.series[0].values.iter_mut().for_each(|v| *v *= 20_000.0);
    }
    let svg = series_chart(&result.benchmark, &result.cells[0])
        .unwrap()
        .unwrap();
    assert_axes_read("series of a large rate", &svg, 2, &["1/s (thousands)"]);
}

#[test]
fn history_reads_at_both_scales() {
    let result = crate::model::sample::vlf();
    for (means, unit) in [
        ([0.0042, 0.0047, 0.0039], "ms"),
        ([412.0, 398.5, 430.2], "s"),
    ] {
        let points: Vec<Point> = means
            .iter()
            .enumerate()
            .map(|(i, m)| Point {
                invocation: i as i64 + 1,
                started_at_unix_ms: 1_700_000_000_000 + i as i64 * 60_000,
                baseline: None,
                means: vec![Some(*m), Some(m * 0.8), None],
            })
            .collect();
        let svg = history::chart(&result, &points).unwrap().unwrap();
        let title = format!("mean elapsed time ({unit})");
        assert_axes_read("history", &svg, 1, &[&title]);
    }
}
