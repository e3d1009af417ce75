//! The busy-machine guard end to end: while two CPU burners run (niced busy loops, bounded in
//! time, started so that they are not this process's descendants), a real benchmark on the
//! embedded engine marks its repetitions disturbed; its verdict, `compare` against a quiet
//! baseline and the snapshot check (through the `dbbench snapshot` binary) then say inconclusive
//! instead of slower. The same results with the guard's marks removed do fail the snapshot check,
//! so it is the guard that makes the difference.

mod support;

use dbbench_core::__internals::config::{FixtureKind, RunSpec, StorageSpec};
use dbbench_core::__internals::{json, summary, BodyFuture, Volumes};
use dbbench_core::results::BenchmarkResult;
use dbbench_core::{Scale, Session};
use std::process::{Command, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};
use support::*;

/// The burners, started by the first repetition's body: inside the measurement lock, so that
/// waiting for the lock (another dbbench measuring) never outlasts them.
static BURNERS: Mutex<Option<Burners>> = Mutex::new(None);

/// Inserts rows, one statement each, for 400 ms: a window long enough to judge.
fn inserts(db: &mut Session) -> BodyFuture<'_> {
    Box::pin(async move {
        {
            let mut burners = BURNERS.lock().unwrap();
            if burners.is_none() {
                let started = Burners(burners_start());
                assert_eq!(started.0.len(), 2, "two burners started");
                *burners = Some(started);
            }
        }
        db.execute("CREATE TABLE t (id integer PRIMARY KEY, payload text)")
            .await?;
        let start = Instant::now();
        let mut n = 0;
        while start.elapsed() < Duration::from_millis(400) {
            db.execute("INSERT INTO t (payload) VALUES ('0123456789abcdef')")
                .await?;
            n += 1;
        }
        db.record_value("inserts", n as f64);
        Ok(())
    })
}

support::benchmark! {
    static BUSY = inserts,
    title: "busy",
    run: RunSpec {
        repeat: 3,
        warmup: 0,
        fixture: FixtureKind::None,
        ..RunSpec::DEFAULT
    },
    cells: [cell("a", StorageSpec::DEFAULT), cell("b", StorageSpec::DEFAULT)],
}

/// Two niced busy loops that end by themselves after 120 s (the test stops them sooner); the shell
/// that starts them exits at once, so they are reparented away from this process. Their process
/// ids.
fn burners_start() -> Vec<u32> {
    let script = "for i in 1 2; do nice -n 19 timeout 120 sh -c 'while :; do :; done' \
                  >/dev/null 2>&1 & echo $!; done";
    let out = Command::new("sh")
        .args(["-c", script])
        .stdout(Stdio::piped())
        .output()
        .expect("sh runs");
    String::from_utf8_lossy(&out.stdout)
        .split_whitespace()
        .filter_map(|p| p.parse().ok())
        .collect()
}

/// Stops the burners when dropped, however the test ends.
struct Burners(Vec<u32>);

impl Drop for Burners {
    fn drop(&mut self) {
        for pid in &self.0 {
            let _ = Command::new("kill").arg(pid.to_string()).status();
        }
    }
}

/// `result` as a quiet machine would have measured it: three times faster, nothing disturbed.
fn quiet(result: &BenchmarkResult) -> BenchmarkResult {
    let mut quiet = result.clone();
    for run in quiet.cells.iter_mut().flat_map(|c| c.runs.iter_mut()) {
        run.elapsed_s /= 3.0;
        run.interference = None;
    }
    quiet
}

/// Checks `result` against the snapshot in `dir` through the `dbbench snapshot` binary.
fn snapshot(result: &BenchmarkResult, dir: &std::path::Path, update: &str) -> (bool, String) {
    let file = dir.join("results").join("busy.json");
    json::write(result, &file).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_dbbench"))
        .arg("snapshot")
        .arg(&file)
        .arg(dir.join("snapshots"))
        .arg("busy")
        .env("INSTA_UPDATE", update)
        .env("INSTA_WORKSPACE_ROOT", dir)
        .env("CI", "false")
        .env_remove("INSTA_FORCE_PASS")
        .env_remove("DBBENCH_TIMING")
        .output()
        .unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.success(), text)
}

#[cfg(target_os = "linux")]
#[test]
fn cpu_load_from_another_process_makes_verdicts_and_snapshot_checks_inconclusive() {
    // Not smoke: timings are in the snapshot only at other scales.
    let ctx = context("busy", Scale::parse("0.001").unwrap(), Volumes::default());
    let result = run_embedded(&BUSY, &ctx);
    drop(BURNERS.lock().unwrap().take());

    let runs: Vec<_> = result.cells.iter().flat_map(|c| c.measured()).collect();
    assert_eq!(runs.len(), 6);
    for run in &runs {
        let seen = run
            .interference
            .as_ref()
            .expect("every window is monitored");
        assert!(
            seen.disturbed(),
            "a window with two burners running was not marked disturbed: {seen:?}"
        );
        assert!(seen.disturbed_by[0].starts_with("other processes used"));
    }

    // The verdict of `b` against the baseline `a`.
    let text = summary::render(&result);
    assert!(
        text.contains("inconclusive: the machine was busy in 6 of 6 runs"),
        "{text}"
    );
    assert!(!text.contains(" slower "), "{text}");

    // `compare` against a quiet baseline three times faster.
    let baseline = quiet(&result);
    let comparison = dbbench_core::__internals::compare_all(
        std::slice::from_ref(&result),
        std::slice::from_ref(&baseline),
    )
    .unwrap();
    let rendered = comparison[0].render();
    // b's ratio over a's in each run: b's and a's runs of both runs are counted.
    assert!(
        rendered.contains("b: inconclusive: the machine was busy in 6 of 12 runs"),
        "{rendered}"
    );
    // No row's verdict says slower (the note under the table names every verdict).
    assert!(
        !rendered.lines().any(|l| l.trim_end().ends_with("slower")),
        "{rendered}"
    );

    // The snapshot recorded on the quiet machine, checked with the busy results.
    let (ok, out) = snapshot(&baseline, &ctx.work_dir, "always");
    assert!(ok, "{out}");
    let (ok, out) = snapshot(&result, &ctx.work_dir, "no");
    assert!(ok, "busy timings are not judged: {out}");
    assert!(
        out.contains(
            "seconds not compared for a, b: inconclusive: the machine was busy (this run's or the \
             recording's)"
        ),
        "{out}"
    );
    assert!(
        out.contains(
            "ratio not judged for b: inconclusive: the machine was busy (this run's or the \
             recording's)"
        ),
        "{out}"
    );
    // Without the guard's marks the same timings are a regression.
    let (ok, out) = snapshot(&quiet_marks(&result), &ctx.work_dir, "no");
    assert!(
        !ok,
        "three times slower must fail when nothing says busy: {out}"
    );
}

/// `result` with the guard's marks removed, timings unchanged.
fn quiet_marks(result: &BenchmarkResult) -> BenchmarkResult {
    let mut unmarked = result.clone();
    for run in unmarked.cells.iter_mut().flat_map(|c| c.runs.iter_mut()) {
        run.interference = None;
    }
    unmarked
}
