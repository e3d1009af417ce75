//! A non-finite measured value never makes a repetition unreadable.

use super::RunResult;

#[test]
fn a_non_finite_value_is_unavailable_with_the_reason_and_reads_back() {
    let mut run = RunResult::default();
    run.record_values([
        ("rate_rows_per_s".to_string(), f64::NAN),
        ("peak_per_s".to_string(), f64::INFINITY),
        ("p99_ms".to_string(), 2.5),
    ]);
    assert_eq!(run.values.len(), 1);
    assert_eq!(
        run.unavailable["rate_rows_per_s"],
        "not a finite number (NaN)"
    );
    assert_eq!(run.unavailable["peak_per_s"], "not a finite number (inf)");
    let text = serde_json::to_string(&run).unwrap();
    let back: RunResult = serde_json::from_str(&text).unwrap();
    assert_eq!(back, run);
}

#[test]
fn a_null_written_by_an_older_version_reads_as_absent() {
    let mut text = serde_json::to_value(RunResult::default()).unwrap();
    text["values"] = serde_json::json!({"rate_rows_per_s": null, "p99_ms": 2.5});
    let back: RunResult = serde_json::from_value(text).unwrap();
    assert_eq!(back.values.len(), 1);
    assert_eq!(back.values["p99_ms"], 2.5);
}
