//! The noise-aware snapshot end to end, through insta's real file handling: results are checked
//! by the `dbbench-results snapshot` binary (a separate process, so insta's update mode can be
//! set per check without touching this process's environment) against `.snap` files in a
//! temporary directory.

use dbbench_core::results::{
    BackendInfo, BenchmarkResult, CellResult, CellStatus, FileKind, FileStats, Lap, RunInfo,
    RunResult, SCHEMA_VERSION,
};
use dbbench_core::results::{Calibration, HostInfo, Interference, VolumeCalibration};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const NAME: &str = "suite.vlf.doubling__smoke";

/// A two-cell result with measured runs of the given elapsed times (seconds).
fn result(times: [&[f64]; 2], growth_events: u64) -> BenchmarkResult {
    let cells = ["growth_1mb", "growth_1gb"]
        .iter()
        .zip(times)
        .map(|(name, times)| CellResult {
            name: name.to_string(),
            config: BTreeMap::from([("growth".to_string(), name[7..].to_string())]),
            effective: BTreeMap::new(),
            status: CellStatus::Ok,
            runs: times
                .iter()
                .enumerate()
                .map(|(i, &elapsed_s)| RunResult {
                    index: i as u32,
                    sequence: i as u32,
                    elapsed_s,
                    laps: vec![Lap {
                        name: "insert".into(),
                        at_s: elapsed_s * 0.75,
                        split_s: elapsed_s * 0.75,
                    }],
                    files: vec![FileStats {
                        name: "data_1".into(),
                        kind: FileKind::Data,
                        volume: None,
                        size_before_bytes: 1 << 20,
                        size_after_bytes: (1 + growth_events) << 20,
                        reads: 3,
                        writes: 90,
                        bytes_read: 1 << 15,
                        bytes_written: 40 << 20,
                        read_stall_ms: 0.5,
                        write_stall_ms: 120.0,
                        flushes: 12,
                        growth_events,
                        growth_bytes: growth_events << 20,
                        zero_fill_bytes: 0,
                        growth_total_ms: 9.0,
                        growth_max_ms: 1.0,
                    }],
                    ..RunResult::default()
                })
                .collect(),
            invocation: None,
            calibration: Some(calibration(0.1)),
        })
        .collect();
    BenchmarkResult {
        schema_version: SCHEMA_VERSION,
        dbbench_version: "0.1.0".into(),
        benchmark: "vlf::doubling".into(),
        title: "Doubling".into(),
        started_at_unix_s: 1_700_000_000,
        scale: "default".into(),
        backend: BackendInfo {
            kind: "embedded".into(),
            version: "SQLite 3".into(),
            preconditions: BTreeMap::new(),
            ..Default::default()
        },
        host: HostInfo::default(),
        run: RunInfo {
            repeat: times[0].len() as u32,
            warmup: 0,
            fixture: "none".into(),
            fixture_rows: 0,
            order: "interleaved".into(),
            baseline: "growth_1mb".into(),
            timeout_s: None,
            build_profile: "debug".into(),
            precision: None,
            cache: Default::default(),
            forked: false,
        },
        cells,
        reference: None,
        calibration: Some(calibration(0.1)),
        server_on_host: None,
        stopping: None,
        not_applicable: None,
        elsewhere: Vec::new(),
        earlier: Vec::new(),
    }
}

/// A calibration whose fsync latency is `fsync_ms`.
fn calibration(fsync_ms: f64) -> Calibration {
    Calibration {
        build_profile: "debug".into(),
        cpu_loop_ms: 40.0,
        volumes: vec![VolumeCalibration {
            name: "default".into(),
            fsync_ms,
            write_mb_s: 900.0,
            commit_ms: 0.2,
        }],
    }
}

const SLOW: [f64; 3] = [2.10, 2.00, 2.05];
const FAST: [f64; 3] = [1.20, 1.25, 1.15];

struct Workspace {
    dir: tempfile::TempDir,
}

impl Workspace {
    fn new() -> Workspace {
        Workspace {
            dir: tempfile::tempdir().unwrap(),
        }
    }

    fn snapshots(&self) -> PathBuf {
        self.dir.path().join("snapshots")
    }

    fn snap(&self) -> PathBuf {
        self.snapshots().join(format!("{NAME}.snap"))
    }

    fn pending(&self) -> PathBuf {
        self.snapshots().join(format!("{NAME}.snap.new"))
    }

    /// Checks `result` against the snapshot with insta's update mode `update` and extra
    /// environment variables.
    fn check(&self, result: &BenchmarkResult, update: &str, env: &[(&str, &str)]) -> Output {
        let file = self
            .dir
            .path()
            .join("results")
            .join("suite.vlf.doubling.json");
        dbbench_core::__internals::json::write(result, &file).unwrap();
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_dbbench"));
        cmd.arg("snapshot")
            .arg(&file)
            .arg(self.snapshots())
            .arg(NAME)
            .env("INSTA_UPDATE", update)
            .env("INSTA_WORKSPACE_ROOT", self.dir.path())
            .env("CI", "false")
            .env_remove("INSTA_FORCE_PASS")
            .env_remove("DBBENCH_TOLERANCE")
            .env_remove("DBBENCH_TOLERANCE_ABS")
            .env_remove("DBBENCH_TIMING");
        for (k, v) in env {
            cmd.env(k, v);
        }
        cmd.output().unwrap()
    }

    fn record(&self, result: &BenchmarkResult) -> String {
        let out = self.check(result, "always", &[]);
        assert!(out.status.success(), "{}", text(&out));
        read(&self.snap())
    }
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn text(out: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

fn scaled(times: &[f64], factor: f64) -> Vec<f64> {
    times.iter().map(|t| t * factor).collect()
}

#[test]
fn the_recorded_snapshot_holds_timings_as_measurements() {
    let ws = Workspace::new();
    let snap = ws.record(&result([&SLOW, &FAST], 5));
    assert!(
        snap.contains("      elapsed:\n        mean_s: 2.05\n"),
        "{snap}"
    );
    assert!(snap.contains("growth_events: 5"), "{snap}");
}

#[test]
fn the_same_results_pass_and_leave_the_snapshot_untouched() {
    let ws = Workspace::new();
    let recorded = ws.record(&result([&SLOW, &FAST], 5));
    let out = ws.check(&result([&SLOW, &FAST], 5), "new", &[]);
    assert!(out.status.success(), "{}", text(&out));
    assert_eq!(read(&ws.snap()), recorded);
    assert!(!ws.pending().exists());
}

#[test]
fn noise_within_the_intervals_passes_and_keeps_the_recorded_values() {
    let ws = Workspace::new();
    let recorded = ws.record(&result([&SLOW, &FAST], 5));
    let noisy = result([&scaled(&SLOW, 1.04), &[1.14, 1.28, 1.19]], 5);
    let out = ws.check(&noisy, "new", &[]);
    assert!(out.status.success(), "{}", text(&out));
    assert_eq!(
        read(&ws.snap()),
        recorded,
        "the .snap keeps the recorded timings"
    );
    assert!(!ws.pending().exists());
}

#[test]
fn a_doubled_time_fails_and_leaves_a_pending_snapshot_with_both_values() {
    let ws = Workspace::new();
    let recorded = ws.record(&result([&SLOW, &FAST], 5));
    let out = ws.check(&result([&scaled(&SLOW, 2.0), &FAST], 5), "new", &[]);
    assert!(!out.status.success(), "a doubled time must fail");
    let output = text(&out);
    assert!(
        output.contains("cells[growth_1mb].timing.elapsed: mean 2.05 s")
            && output.contains("became 4.1 s"),
        "{output}"
    );
    assert_eq!(read(&ws.snap()), recorded, "the .snap is left for review");
    let pending = read(&ws.pending());
    assert!(pending.contains("mean_s: 4.1\n"), "{pending}");
    assert!(
        !output.contains("growth_1gb].timing"),
        "the unchanged cell passes: {output}"
    );
}

#[test]
fn timing_ignore_checks_deterministic_fields_only() {
    let ws = Workspace::new();
    ws.record(&result([&SLOW, &FAST], 5));
    let doubled = result([&scaled(&SLOW, 2.0), &FAST], 5);
    let out = ws.check(&doubled, "new", &[("DBBENCH_TIMING", "ignore")]);
    assert!(out.status.success(), "{}", text(&out));
    assert!(!ws.pending().exists());
}

#[test]
fn a_changed_deterministic_field_fails_even_when_timing_is_ignored() {
    let ws = Workspace::new();
    ws.record(&result([&SLOW, &FAST], 5));
    let out = ws.check(
        &result([&SLOW, &FAST], 6),
        "new",
        &[("DBBENCH_TIMING", "ignore")],
    );
    assert!(!out.status.success());
    let output = text(&out);
    assert!(
        output.contains("cells[growth_1mb].results.files[data_1].growth_events: 5 became 6"),
        "{output}"
    );
    assert!(read(&ws.pending()).contains("growth_events: 6"));
}

#[test]
fn single_runs_are_judged_by_the_tolerance_band() {
    let ws = Workspace::new();
    ws.record(&result([&[2.0], &[1.2]], 5));
    let out = ws.check(&result([&[2.1], &[1.2]], 5), "new", &[]);
    assert!(
        out.status.success(),
        "+5% is inside the default 10%: {}",
        text(&out)
    );
    let out = ws.check(&result([&[2.5], &[1.2]], 5), "new", &[]);
    assert!(!out.status.success(), "+25% is outside the default 10%");
    std::fs::remove_file(ws.pending()).unwrap();
    let out = ws.check(
        &result([&[2.5], &[1.2]], 5),
        "new",
        &[("DBBENCH_TOLERANCE", "30%")],
    );
    assert!(out.status.success(), "{}", text(&out));
}

#[test]
fn malformed_tolerance_is_reported() {
    let ws = Workspace::new();
    ws.record(&result([&SLOW, &FAST], 5));
    let out = ws.check(
        &result([&SLOW, &FAST], 5),
        "new",
        &[("DBBENCH_TOLERANCE", "a bit")],
    );
    assert!(!out.status.success());
    assert!(text(&out).contains("DBBENCH_TOLERANCE must be a percentage"));
}

#[test]
fn another_machine_compares_ratios_not_seconds_and_checks_the_rest() {
    let ws = Workspace::new();
    let recorded = ws.record(&result([&SLOW, &FAST], 5));
    assert!(
        recorded.contains("calibration: \"debug · CPU loop 40 ms · default: fsync 0.1 ms"),
        "{recorded}"
    );
    assert!(
        recorded.contains("    ratio:\n      baseline: growth_1mb\n      value: 0.585\n"),
        "{recorded}"
    );
    // A machine whose fsync is ×1.5 slower: every cell takes 1.6 times as long (test_3's ratio
    // stays), or growth_1gb slows alone (its ratio moves).
    let elsewhere = |fast: f64, growth_events| {
        let mut r = result(
            [&scaled(&SLOW, 1.6), &scaled(&FAST, 1.6 * fast)],
            growth_events,
        );
        for cell in &mut r.cells {
            cell.calibration = Some(calibration(0.15));
        }
        r
    };
    let out = ws.check(&elsewhere(1.0, 5), "new", &[]);
    let output = text(&out);
    assert!(
        out.status.success(),
        "60% slower everywhere, the ratio unchanged: {output}"
    );
    assert!(
        output.contains(
            "(compared: ratios of 1 cells, allowing for a drift between machines of τ = 0.1 \
             (assumed: our VM's; DBBENCH_SNAPSHOT_DRIFT); a ratio fails only once it moves by \
             more than ×"
        ) && output.contains(
            " either way; seconds not compared for growth_1mb, growth_1gb: another machine \
             (fsync ×1.5))"
        ),
        "{output}"
    );
    assert_eq!(read(&ws.snap()), recorded, "the recorded figures stay");
    assert!(
        !ws.pending().exists(),
        "a machine difference is no .snap.new"
    );
    // growth_1gb twice as slow against growth_1mb: beyond the drift between machines.
    let out = ws.check(&elsewhere(2.0, 5), "new", &[]);
    let output = text(&out);
    assert!(!out.status.success(), "the ratio moved: {output}");
    assert!(
        output.contains("cells[growth_1gb].ratio: ratio 0.585 [") && output.contains("became 1.17"),
        "{output}"
    );
    assert!(
        !output.contains("timing.elapsed"),
        "seconds of another machine are not judged: {output}"
    );
    assert!(
        output.contains(
            "review it with `cargo insta review` (compared: ratios of 1 cells, allowing for a \
             drift between machines of τ = 0.1 (assumed: our VM's; DBBENCH_SNAPSHOT_DRIFT); a \
             ratio fails only once it moves by more than ×"
        ) && output.contains(
            " either way; seconds not compared for growth_1mb, growth_1gb: another machine \
             (fsync ×1.5))"
        ),
        "a differing check says what it compared too: {output}"
    );
    std::fs::remove_file(ws.pending()).unwrap();
    let out = ws.check(&elsewhere(1.0, 6), "new", &[]);
    assert!(
        !out.status.success(),
        "deterministic fields are still checked"
    );
    assert!(text(&out).contains("growth_events: 5 became 6"));
}

#[test]
fn runs_measured_on_a_busy_machine_make_timings_inconclusive() {
    let ws = Workspace::new();
    let recorded = ws.record(&result([&SLOW, &FAST], 5));
    let mut busy = result([&scaled(&SLOW, 2.0), &FAST], 5);
    for run in busy.cells[0].runs.iter_mut().take(2) {
        run.interference = Some(Interference {
            window_s: 4.0,
            other_cpu_cores: Some(1.4),
            judged: true,
            disturbed_by: vec!["other processes used 1.40 cores (threshold 0.25)".into()],
            ..Interference::default()
        });
    }
    let out = ws.check(&busy, "new", &[]);
    let output = text(&out);
    assert!(out.status.success(), "doubled, but busy: {output}");
    assert!(
        output.contains(
            "seconds not compared for growth_1mb: inconclusive: the machine was busy (this \
             run's or the recording's)"
        ),
        "{output}"
    );
    assert_eq!(read(&ws.snap()), recorded);
    // The other cell was quiet: its timings are still compared.
    let mut slower = busy.clone();
    for run in &mut slower.cells[1].runs {
        run.elapsed_s *= 2.0;
    }
    assert!(!ws.check(&slower, "new", &[]).status.success());
}
