use super::*;

#[test]
fn elapsed_chart_has_title_axes_legend_and_every_run() {
    let result = crate::model::sample::vlf();
    let svg = elapsed_chart(&result).unwrap();
    assert!(svg.starts_with("<svg"), "{}", &svg[..60]);
    for text in [
        "vlf::doubling: elapsed time per cell",
        "elapsed time (s)",
        "95% confidence interval",
        "one measured run",
        "test_4",
    ] {
        assert!(svg.contains(text), "missing `{text}`");
    }
    let dots = svg
        .matches("<circle")
        .zip(svg.split("<circle").skip(1))
        .filter(|(_, rest)| rest[..rest.find('>').unwrap()].contains("#C83C28"))
        .count();
    assert_eq!(
        dots,
        9 + 1,
        "9 measured runs (warm-ups left out) and the legend's dot"
    );
}

#[test]
fn series_chart_draws_a_line_per_run() {
    let result = crate::model::sample::vlf();
    let svg = series_chart(&result.benchmark, &result.cells[0])
        .unwrap()
        .unwrap();
    assert!(svg.contains("Log Bytes Flushed/sec") && svg.contains("MiB/s"));
    assert!(svg.contains("run 1") && svg.contains("run 3") && !svg.contains("run 0"));
    let mut no_series = result.cells[0].clone();
    no_series.runs.iter_mut().for_each(|r| r.series.clear());
    assert!(series_chart("x", &no_series).unwrap().is_none());
}

#[test]
fn waits_are_shares_of_the_total_largest_first() {
    let result = crate::model::sample::vlf();
    let waits = top_waits(&result.cells[0], 10);
    assert_eq!(waits[0].0, "WRITELOG");
    let total: f64 = waits.iter().map(|w| w.1).sum();
    assert!((total - 100.0).abs() < 1e-9);
    let svg = waits_chart(&result.benchmark, &result.cells[0])
        .unwrap()
        .unwrap();
    assert!(svg.contains("PREEMPTIVE_OS_FLUSHFILEBUFFERS") && svg.contains("top waits"));
}

/// The legend texts of a chart: plotters writes every text as a `<text …>` element.
fn texts(svg: &str) -> Vec<&str> {
    svg.split("<text")
        .skip(1)
        .filter_map(|t| Some(t[t.find('>')? + 1..t.find("</text>")?].trim()))
        .collect()
}

#[test]
fn laps_chart_has_a_line_per_cell_labelled_with_its_configuration() {
    let result = crate::model::sample::vlf();
    let svg = cells::laps_chart(&result).unwrap().unwrap();
    assert!(svg.starts_with("<svg") && svg.trim_end().ends_with("</svg>"));
    let texts = texts(&svg);
    for cell in [
        "test_1: 1MB growth · IFI off",
        "test_3: 1024MB growth",
        "test_4: 1024MB",
    ] {
        assert!(
            texts.iter().any(|t| t.starts_with(cell)),
            "{cell}: {texts:?}"
        );
    }
    assert_eq!(
        svg.matches("<circle").count(),
        3 * 5,
        "a mark per lap of each cell"
    );
    let mut no_laps = result.clone();
    no_laps
        .cells
        .iter_mut()
        .flat_map(|c| &mut c.runs)
        .for_each(|r| r.laps.clear());
    assert!(cells::laps_chart(&no_laps).unwrap().is_none());
}

#[test]
fn growth_chart_steps_at_every_autogrowth() {
    use crate::model::results::AutogrowthEvent;
    let mut result = crate::model::sample::vlf();
    let grow = |file: &str, at_s: f64| AutogrowthEvent {
        file: file.into(),
        at_s,
        bytes: 1 << 20,
        size_after_bytes: 0,
        zero_filled: false,
        duration_ms: 1.0,
    };
    for run in &mut result.cells[0].runs {
        run.autogrowths = vec![grow("data_1", 1.0), grow("data_1", 2.0), grow("log", 3.0)];
    }
    let svg = cells::growth_chart(&result).unwrap().unwrap();
    let texts = texts(&svg);
    assert!(texts.iter().any(|t| t.contains("data files")) && texts.contains(&"log"));
    assert!(
        texts
            .iter()
            .any(|t| t.starts_with("test_1") && t.ends_with("(2 growths)")),
        "{texts:?}"
    );
    assert!(
        texts
            .iter()
            .any(|t| t.starts_with("test_1") && t.ends_with("(1 growths)")),
        "{texts:?}"
    );
    assert!(
        texts
            .iter()
            // The sample's test_3 counts its growths but has no timeline of them.
            .any(|t| t.starts_with("test_3") && t.ends_with("(2 growths, times not recorded)")),
        "{texts:?}"
    );
    assert_eq!(
        svg.matches("<circle").count(),
        3,
        "one mark per growth event"
    );
    // Growths counted but not timed are said as such, not as none.
    for run in &mut result.cells[2].runs {
        run.autogrowths.clear();
        for file in &mut run.files {
            file.growth_events = if file.name == "data_1" { 7 } else { 0 };
        }
    }
    let untimed = cells::growth_chart(&result).unwrap().unwrap();
    let texts = self::texts(&untimed);
    let name = result.cells[2].name.clone();
    assert!(
        texts
            .iter()
            .any(|t| t.starts_with(&name) && t.ends_with("(7 growths, times not recorded)")),
        "{texts:?}"
    );
}

#[test]
fn throughput_chart_puts_every_cell_on_one_axis() {
    let result = crate::model::sample::load(&[100.0, 400.0]);
    let svg = cells::throughput_chart(&result).unwrap().unwrap();
    let texts = texts(&svg);
    assert!(texts.contains(&"same_volume"), "{texts:?}");
    assert!(
        texts.contains(&"separate_volumes: data on data · log on log"),
        "{texts:?}"
    );
    assert!(
        texts.contains(&"committed transactions per second"),
        "{texts:?}"
    );
    // One chart, so one y axis: the larger cell's peak sets it for both.
    assert_eq!(svg.matches("committed transactions per second").count(), 1);
    assert!(cells::throughput_chart(&crate::model::sample::vlf())
        .unwrap()
        .is_none());
}

#[test]
fn latency_chart_has_a_line_per_load_cell() {
    let mut result = crate::model::sample::vlf();
    assert!(
        cells::latency_chart(&result).unwrap().is_none(),
        "no loads, no chart"
    );
    let load: crate::model::load::LoadStats = serde_json::from_value(serde_json::json!({
        "config": {"name": "load", "workers": 4, "work": {"kind": "statements", "statements": 40},
            "statements_per_transaction": 1, "planned_statements": 40, "planned_transactions": 40,
            "worker_statements": [10, 10, 10, 10], "think_time_ms": null, "target_rate_per_s": null,
            "lock_timeout_ms": null, "max_retries": 3, "seed": 1},
        "execution": "threads", "started_at_s": 0.0, "elapsed_s": 1.0, "transactions": 40,
        "statements": 40, "rows": 40, "transactions_per_s": 40.0, "statements_per_s": 40.0,
        "latency": {"transactions": 40, "mean_ms": 2.0, "p50_ms": 1.5, "p95_ms": 4.0,
            "p99_ms": 9.0, "max_ms": 12.0},
        "errors": {"deadlock": 0, "busy": 0, "timeout": 0, "other": 0}, "retries": 0,
        "workers": [], "saturation": {"wall_s": 1.0, "process_cpu_s": null,
            "driving_thread_cpu_s": null, "cores": 2, "process_cpu_share": null,
            "driving_thread_share": null, "driver_s": 0.0, "driver_share": 0.0, "warnings": []}
    }))
    .unwrap();
    for run in result.cells[0].runs.iter_mut() {
        run.loads.push(load.clone());
    }
    let svg = cells::latency_chart(&result).unwrap().unwrap();
    assert!(svg.starts_with("<svg"));
    assert!(svg.contains("transaction latency of every cell"));
    assert!(svg.contains("test_1"), "the load cell is in the legend");
    assert!(!svg.contains("test_3"), "cells without a load have no line");
}
