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
    let (outcome, findings) = Tolerance::default().compare_noting(RECORDED, &slow_disk);
    assert_eq!(outcome, Ok(()));
    assert_eq!(
        findings.notes,
        ["cells[test_1].timing: seconds not compared: another machine (fsync ×3.97)"]
    );
    assert_eq!(findings.seconds, 0);
    // Deterministic fields are still checked.
    let changed = slow_disk.replacen("growth_events: 1200", "growth_events: 1201", 1);
    assert!(Tolerance::default().compare(RECORDED, &changed).is_err());
    // A recording made before calibrations existed is not compared either.
    let uncalibrated = RECORDED.replacen("      calibration: ", "      x: ", 1);
    let old = uncalibrated.lines().filter(|l| !l.starts_with("      x: "));
    let old: String = old.map(|l| format!("{l}\n")).collect();
    let (outcome, findings) = Tolerance::default().compare_noting(&old, &doubled);
    assert_eq!(outcome, Ok(()));
    assert!(findings.notes[0].ends_with("the recording has no calibration of its machine"));
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
    let (outcome, findings) = Tolerance::default().compare_noting(RECORDED, &busy);
    assert_eq!(outcome, Ok(()));
    assert_eq!(
        findings.notes,
        [
            "cells[test_1].timing: seconds not compared: inconclusive: the machine was busy in 2 \
          of 3 runs"
        ]
    );
    let recorded_busy = RECORDED.replacen(
        "      elapsed:",
        "      busy: 1 of 3 runs\n      elapsed:",
        1,
    );
    let (outcome, findings) = Tolerance::default().compare_noting(&recorded_busy, &doubled);
    assert_eq!(outcome, Ok(()));
    assert!(findings.notes[0].ends_with("the recording's machine was busy in 1 of 3 runs"));
}

/// Two cells: the baseline and one with its ratio, measured on the machine.
const RATIOS: &str = "\
cells:
  - name: test_1
    timing:
      machine: vm · 2 cores · release build
      calibration: \"release · CPU loop 70.4 ms · default: fsync 0.124 ms, write 1753 MB/s, commit 0.23 ms\"
      elapsed:
        mean_s: 2.592
        ci95_s:
          - 2.421
          - 2.763
  - name: test_3
    ratio:
      baseline: test_1
      value: 0.74
      ci95:
        - 0.71
        - 0.77
    timing:
      machine: vm · 2 cores · release build
      calibration: \"release · CPU loop 70.4 ms · default: fsync 0.124 ms, write 1753 MB/s, commit 0.23 ms\"
      elapsed:
        mean_s: 1.918
        ci95_s:
          - 1.85
          - 1.99
";

/// `RATIOS` on a machine whose storage is ×1.68 (commit) and ×1.57 (fsync) slower, every cell
/// `slower` times as long, test_3's ratio now `ratio`.
fn elsewhere(slower: f64, ratio: &str, ci: [&str; 2]) -> String {
    let times = |x: f64| format!("{:.4}", x * slower);
    RATIOS
        .replace("fsync 0.124 ms", "fsync 0.195 ms")
        .replace("commit 0.23 ms", "commit 0.386 ms")
        .replacen("2.592", &times(2.592), 1)
        .replacen("2.421", &times(2.421), 1)
        .replacen("2.763", &times(2.763), 1)
        .replacen("1.918", &times(1.918), 1)
        .replacen("1.85", &times(1.85), 1)
        .replacen("1.99", &times(1.99), 1)
        .replacen("value: 0.74", &format!("value: {ratio}"), 1)
        .replacen("- 0.71", &format!("- {}", ci[0]), 1)
        .replacen("- 0.77", &format!("- {}", ci[1]), 1)
}

#[test]
fn another_machine_compares_ratios_and_says_why_not_seconds() {
    // The rerun: every cell 34% slower, test_3's ratio 0.74 → 0.76.
    let slower = elsewhere(1.34, "0.76", ["0.73", "0.79"]);
    let (outcome, findings) = Tolerance::default().compare_noting(RATIOS, &slower);
    assert_eq!(outcome, Ok(()));
    assert_eq!((findings.ratios, findings.seconds), (1, 0));
    assert_eq!(
        findings.describe().unwrap(),
        "compared: ratios of 1 cells, allowing for a drift between machines of τ = 0.1 (assumed: \
         our VM's; DBBENCH_SNAPSHOT_DRIFT); a ratio fails only once it moves by more than ×1.35 \
         either way; seconds not compared for test_1, test_3: another \
         machine (commit ×1.68, fsync ×1.57)"
    );
    // On the recording's machine, the seconds are compared too, and the 34% is found.
    let here = slower
        .replace("fsync 0.195 ms", "fsync 0.124 ms")
        .replace("commit 0.386 ms", "commit 0.23 ms");
    let (outcome, findings) = Tolerance::default().compare_noting(RATIOS, &here);
    assert_eq!(outcome.unwrap_err().len(), 2);
    assert_eq!((findings.ratios, findings.seconds), (1, 2));
}

#[test]
fn a_moved_ratio_fails_on_another_machine() {
    // test_3 ×1.54: beyond what the drift between machines moves a ratio by.
    let moved = elsewhere(1.34, "1.14", ["1.1", "1.18"]);
    let err = Tolerance::default().compare(RATIOS, &moved).unwrap_err();
    assert_eq!(err.len(), 1, "{err:?}");
    assert!(
        err[0].starts_with("cells[test_3].ratio: ratio 0.74 [0.71, 0.77] became 1.14 [1.1, 1.18]"),
        "{}",
        err[0]
    );
    // ×1.28 fails only when the drift between machines is set to none.
    let some = elsewhere(1.34, "0.95", ["0.92", "0.98"]);
    assert_eq!(Tolerance::default().compare(RATIOS, &some), Ok(()));
    let no_drift = Tolerance {
        drift: 0.0,
        ..Tolerance::default()
    };
    assert!(no_drift.compare(RATIOS, &some).is_err());
    assert!(Tolerance::parse_drift("0.05").is_ok());
    assert!(Tolerance::parse_drift("lots").is_err());
    assert!(Tolerance::parse_drift("-0.1").is_err());
    // A ratio to another baseline is a changed snapshot, whatever the figures.
    let rebased = RATIOS.replacen("baseline: test_1", "baseline: test_2", 1);
    assert!(Tolerance::default().compare(RATIOS, &rebased).is_err());
    // DBBENCH_TIMING=ignore: ratios are measurements too.
    let ignore = Tolerance::parse(None, None, Some("ignore")).unwrap();
    assert_eq!(ignore.compare(RATIOS, &moved), Ok(()));
}

#[test]
fn a_busy_ratio_is_not_judged() {
    let moved = elsewhere(1.34, "0.95", ["0.92", "0.98"]);
    let busy = moved.replacen(
        "      - 0.98\n",
        "      - 0.98\n      busy: 3 of 28 runs\n",
        1,
    );
    assert!(busy.contains("busy: 3 of 28 runs"), "{busy}");
    let (outcome, findings) = Tolerance::default().compare_noting(RATIOS, &busy);
    assert_eq!(outcome, Ok(()));
    assert_eq!(findings.ratios, 0);
    assert!(
        findings.notes.iter().any(|n| n
            == "cells[test_3].ratio: ratio not judged: inconclusive: the machine was busy in 3 \
                of 28 runs"),
        "{:?}",
        findings.notes
    );
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
