use super::*;

const RECORDED: &str = "\
benchmark: vlf::doubling
cells:
  - name: test_1
    runs: 3
    results:
      growth_events: 1200
    timing:
      machine: vm · AMD EPYC · 2 cores · release build
      elapsed:
        mean_s: 10.72
        ci95_s:
          - 10.24
          - 11.21
      laps:
        - name: loop 1
          mean_s: 0.3459
          ci95_s: ~
";

fn with(old: &str, new: &str) -> String {
    RECORDED.replacen(old, new, 1)
}

#[test]
fn identical_text_passes() {
    assert_eq!(Tolerance::default().compare(RECORDED, RECORDED), Ok(()));
}

#[test]
fn overlapping_intervals_pass() {
    let new = with("10.72", "11.4")
        .replacen("10.24", "11.0", 1)
        .replacen("11.21", "11.8", 1);
    assert_eq!(Tolerance::default().compare(RECORDED, &new), Ok(()));
}

#[test]
fn doubled_mean_fails_with_both_values() {
    let new = with("10.72", "21.44")
        .replacen("10.24", "20.9", 1)
        .replacen("11.21", "22.0", 1);
    let err = Tolerance::default().compare(RECORDED, &new).unwrap_err();
    assert_eq!(err.len(), 1, "{err:?}");
    assert!(
        err[0].starts_with("cells[test_1].timing.elapsed:"),
        "{}",
        err[0]
    );
    assert!(
        err[0].contains("10.72") && err[0].contains("21.44"),
        "{}",
        err[0]
    );
}

#[test]
fn single_runs_use_the_tolerance_band() {
    let five_pct = with("0.3459", "0.3632");
    assert_eq!(Tolerance::default().compare(RECORDED, &five_pct), Ok(()));
    let forty_pct = with("0.3459", "0.4843");
    assert!(Tolerance::default().compare(RECORDED, &forty_pct).is_err());
    let wide = Tolerance::parse(Some("50%"), None, None).unwrap();
    assert_eq!(wide.compare(RECORDED, &forty_pct), Ok(()));
}

#[test]
fn deterministic_changes_fail_even_when_timing_is_ignored() {
    let ignore = Tolerance::parse(None, None, Some("ignore")).unwrap();
    let new = with("growth_events: 1200", "growth_events: 1201");
    let err = ignore.compare(RECORDED, &new).unwrap_err();
    assert_eq!(
        err,
        ["cells[test_1].results.growth_events: 1200 became 1201"]
    );
    let doubled = with("10.72", "21.44").replacen("10.24", "20.9", 1);
    assert_eq!(ignore.compare(RECORDED, &doubled), Ok(()));
    let renamed_lap = with("loop 1", "loop one");
    assert!(ignore.compare(RECORDED, &renamed_lap).is_err());
}

#[test]
fn timings_from_another_machine_are_not_compared() {
    let new = with("10.72", "21.44")
        .replacen("10.24", "20.9", 1)
        .replacen("11.21", "22.0", 1);
    let other = new.replacen("2 cores · release", "8 cores · release", 1);
    assert_eq!(Tolerance::default().compare(RECORDED, &other), Ok(()));
    assert!(Tolerance::default().compare(RECORDED, &new).is_err());
    // Deterministic fields are still checked on another machine.
    let changed = other.replacen("growth_events: 1200", "growth_events: 1201", 1);
    assert!(Tolerance::default().compare(RECORDED, &changed).is_err());
}

#[test]
fn structure_changes_fail() {
    let new = with("    runs: 3\n", "");
    assert!(Tolerance::default().compare(RECORDED, &new).is_err());
}

#[test]
fn settings_parse_and_reject_nonsense() {
    let t = Tolerance::parse(Some("25%"), Some("50ms"), Some("compare")).unwrap();
    assert!((t.relative - 0.25).abs() < 1e-12 && (t.absolute_s - 0.05).abs() < 1e-12);
    assert_eq!(
        Tolerance::parse(Some("0.2"), Some("0.5s"), None)
            .unwrap()
            .absolute_s,
        0.5
    );
    assert!(Tolerance::parse(Some("lots"), None, None).is_err());
    assert!(Tolerance::parse(None, Some("-1"), None).is_err());
    assert!(Tolerance::parse(None, None, Some("skip")).is_err());
}

#[test]
fn the_derived_table_is_not_compared() {
    let t = Tolerance::default();
    let body = "cells:\n  - name: a\n    runs: 3\n";
    let with = |row: &str| format!("table:\n  - \"{row}\"\n{body}");
    assert!(t.compare(&with("a 1 s"), &with("a 9 s")).is_ok());
    assert!(
        t.compare(body, &with("a 1 s")).is_ok(),
        "snapshots recorded before the table"
    );
    let changed = "cells:\n  - name: a\n    runs: 4\n";
    assert!(t
        .compare(&with("a"), &format!("table:\n  - a\n{changed}"))
        .is_err());
}
