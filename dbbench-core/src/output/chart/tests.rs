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
    assert!(svg.contains("Log Bytes Flushed/sec") && svg.contains("bytes/s"));
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

#[test]
fn si_labels_stay_short() {
    assert_eq!(si(4_200_000.0), "4.2M");
    assert_eq!(si(350_000.0), "350k");
    assert_eq!(si(12.0), "12");
    assert_eq!(si(0.25), "0.25");
}
