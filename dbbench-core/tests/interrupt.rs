//! Ctrl-C in the middle of a run: a child process (this test binary, run as a `#[db_bench]` test
//! would run, through the harness) gets SIGINT while repetition 3 of 4 runs a statement that never
//! ends. The statement is interrupted, the database torn down, repetitions 1 and 2 stay in the
//! store, the invocation is marked interrupted, and the child exits non-zero saying what it kept
//! and how to resume.

mod support;

use dbbench_core::__internals::config::{FixtureKind, RunSpec, StorageSpec};
use dbbench_core::__internals::{BodyFuture, Store};
use dbbench_core::Session;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};
use support::cell;

const CHILD: &str = "DBBENCH_INTERRUPT_CHILD";

static CALLS: AtomicU32 = AtomicU32::new(0);

/// Repetition 3 announces itself with a file, then runs away.
fn stoppable(db: &mut Session) -> BodyFuture<'_> {
    Box::pin(async move {
        db.execute("CREATE TABLE t (x integer)").await?;
        if CALLS.fetch_add(1, Ordering::SeqCst) == 2 {
            let dir = PathBuf::from(std::env::var_os(CHILD).unwrap());
            std::fs::write(dir.join("repetition-3-started"), b"").unwrap();
            let n: i64 = db
                .query_scalar(
                    "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r) \
                     SELECT count(*) FROM r",
                )
                .await?;
            db.record_count("never", n);
        }
        Ok(())
    })
}

support::benchmark! {
    static STOPPABLE = stoppable,
    title: "interrupted in repetition 3",
    run: RunSpec {
        repeat: 4,
        warmup: 0,
        fixture: FixtureKind::None,
        ..RunSpec::DEFAULT
    },
    cells: [cell("only", StorageSpec::DEFAULT)],
}

/// The child: runs the benchmark through the harness, as a generated test does.
#[test]
fn child_runs_until_interrupted() {
    if std::env::var_os(CHILD).is_none() {
        return;
    }
    dbbench_core::__private::run_test(&STOPPABLE, "only");
}

#[test]
fn sigint_in_repetition_3_keeps_1_and_2_and_tears_down() {
    if std::env::var_os(CHILD).is_some() {
        return;
    }
    let dir = support::scratch("interrupt-sigint");
    let child = std::process::Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "child_runs_until_interrupted", "--nocapture"])
        .env(CHILD, &dir)
        .env("DBBENCH_DIR", &dir)
        .env_remove("DBBENCH_BACKEND")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let started = Instant::now();
    while !dir.join("repetition-3-started").exists() {
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "repetition 3 never started"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    // Let the runaway statement get going.
    std::thread::sleep(Duration::from_millis(200));
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let output = child.wait_with_output().unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(!output.status.success(), "the child exited 0:\n{text}");
    assert!(started.elapsed() < Duration::from_secs(60));
    assert!(text.contains("interrupted by SIGINT"), "{text}");
    assert!(text.contains("kept 2 of 4 repetitions of `only`"), "{text}");
    assert!(
        text.contains("--resume") && text.contains("DBBENCH_RESUME=1"),
        "{text}"
    );

    let leftovers: Vec<_> = std::fs::read_dir(dir.join("db"))
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path())
        .collect();
    assert!(leftovers.is_empty(), "databases left: {leftovers:?}");

    let store = Store::open(&dir).unwrap();
    let history = store.history().unwrap();
    assert_eq!(history.len(), 1);
    assert_eq!(history[0].status, "interrupted");
    let conn = rusqlite::Connection::open(dbbench_core::__internals::store_file(&dir)).unwrap();
    let kept: Vec<i64> = conn
        .prepare("SELECT repetition FROM repetitions ORDER BY repetition")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .collect::<rusqlite::Result<_>>()
        .unwrap();
    assert_eq!(
        kept,
        vec![0, 1],
        "repetitions 1 and 2 (indices 0 and 1) are kept"
    );
}
