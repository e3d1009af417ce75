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
      calibration: \"release · CPU loop 53.2 ms · default: fsync 0.0882 ms, write 2230 MB/s, commit 0.15 ms\"
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
fn timings_are_compared_by_calibration_not_by_machine_name() {
    let doubled = with("10.72", "21.44")
        .replacen("10.24", "20.9", 1)
        .replacen("11.21", "22.0", 1);
    // Another name, the same calibration: compared, and the doubling is found.
    let renamed = doubled.replacen("2 cores · release", "8 cores · release", 1);
    assert!(Tolerance::default().compare(RECORDED, &renamed).is_err());
    // The same name, a slower disk: not compared, and the note says why.
    let slow_disk = doubled.replacen("fsync 0.0882 ms", "fsync 0.35 ms", 1);
    let (outcome, notes) = Tolerance::default().compare_noting(RECORDED, &slow_disk);
    assert_eq!(outcome, Ok(()));
    assert_eq!(
        notes,
        [
            "cells[test_1].timing: timings not compared: not comparable: this machine's \
          calibration differs from the recording's (fsync 0.35 ms vs 0.0882 ms)"
        ]
    );
    // Deterministic fields are still checked.
    let changed = slow_disk.replacen("growth_events: 1200", "growth_events: 1201", 1);
    assert!(Tolerance::default().compare(RECORDED, &changed).is_err());
    // A recording made before calibrations existed is not compared either.
    let uncalibrated = RECORDED.replacen("      calibration: ", "      x: ", 1);
    let old = uncalibrated.lines().filter(|l| !l.starts_with("      x: "));
    let old: String = old.map(|l| format!("{l}\n")).collect();
    let (outcome, notes) = Tolerance::default().compare_noting(&old, &doubled);
    assert_eq!(outcome, Ok(()));
    assert!(notes[0].ends_with("the recording has no calibration of its machine"));
}

#[test]
fn busy_timing_blocks_are_inconclusive_on_either_side() {
    let doubled = with("10.72", "21.44")
        .replacen("10.24", "20.9", 1)
        .replacen("11.21", "22.0", 1);
    let busy = doubled.replacen(
        "      elapsed:",
        "      busy: 2 of 3 runs\n      elapsed:",
        1,
    );
    let (outcome, notes) = Tolerance::default().compare_noting(RECORDED, &busy);
    assert_eq!(outcome, Ok(()));
    assert_eq!(
        notes,
        [
            "cells[test_1].timing: timings not compared: inconclusive: the machine was busy in 2 \
          of 3 runs"
        ]
    );
    let recorded_busy = RECORDED.replacen(
        "      elapsed:",
        "      busy: 1 of 3 runs\n      elapsed:",
        1,
    );
    let (outcome, notes) = Tolerance::default().compare_noting(&recorded_busy, &doubled);
    assert_eq!(outcome, Ok(()));
    assert!(notes[0].ends_with("the recording's machine was busy in 1 of 3 runs"));
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
