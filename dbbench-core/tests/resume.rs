//! Resume: a `cargo test` process (this test binary as a child, through the harness) is stopped
//! by SIGINT in repetition 3 of 4; a second one with `DBBENCH_RESUME=1` continues that
//! invocation, runs only repetitions 3 and 4, and the store then holds one completed invocation
//! whose cell has all four repetitions in one cell run.

mod support;

use dbbench_core::__internals::config::{FixtureKind, RunSpec, StorageSpec};
use dbbench_core::__internals::{BenchmarkSpec, BodyFuture, Store};
use dbbench_core::Session;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU32, Ordering};
use support::cell;

const CHILD: &str = "DBBENCH_RESUME_CHILD";

static CALLS: AtomicU32 = AtomicU32::new(0);

fn dir() -> PathBuf {
    PathBuf::from(std::env::var_os(CHILD).unwrap())
}

/// Notes each call in `calls`; the first process signals itself in its third repetition and
/// then runs a statement that never ends.
fn resumable(db: &mut Session) -> BodyFuture<'_> {
    Box::pin(async move {
        db.execute("CREATE TABLE t (x integer)").await?;
        let resumed = std::env::var_os("DBBENCH_RESUME").is_some();
        let line = if resumed { "resumed\n" } else { "first\n" };
        use std::io::Write;
        std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(dir().join("calls"))
            .unwrap()
            .write_all(line.as_bytes())
            .unwrap();
        if !resumed && CALLS.fetch_add(1, Ordering::SeqCst) == 2 {
            unsafe { libc::kill(libc::getpid(), libc::SIGINT) };
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

/// The benchmark, with its snapshot directory in the child's scratch directory (the harness
/// records a snapshot when every cell ran; it must not land in the source tree).
fn bench() -> &'static BenchmarkSpec {
    let manifest: &'static str = Box::leak(dir().to_string_lossy().into_owned().into_boxed_str());
    Box::leak(Box::new(BenchmarkSpec {
        name: "resumable",
        module_path: "resume::resumable",
        manifest_dir: manifest,
        source_file: file!(),
        title: "resumed after an interruption",
        run: RunSpec {
            repeat: 4,
            warmup: 0,
            fixture: FixtureKind::None,
            ..RunSpec::DEFAULT
        },
        cells: Box::leak(Box::new([cell("only", StorageSpec::DEFAULT)])),
        body: resumable,
    }))
}

#[test]
fn child_runs_the_benchmark() {
    if std::env::var_os(CHILD).is_none() {
        return;
    }
    dbbench_core::__private::run_test(bench(), "only");
}

fn child(dir: &std::path::Path, resume: bool) -> (bool, String) {
    let mut command = std::process::Command::new(std::env::current_exe().unwrap());
    command
        .args(["--exact", "child_runs_the_benchmark", "--nocapture"])
        .env(CHILD, dir)
        .env("DBBENCH_DIR", dir)
        .env("INSTA_UPDATE", "always")
        .env_remove("DBBENCH_BACKEND")
        .env_remove("DBBENCH_RESUME");
    if resume {
        command.env("DBBENCH_RESUME", "1");
    }
    let output = command.output().unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    (output.status.success(), text)
}

#[test]
fn resume_completes_an_interrupted_invocation() {
    if std::env::var_os(CHILD).is_some() {
        return;
    }
    let dir = support::scratch("resume-interrupted");
    let (ok, text) = child(&dir, false);
    assert!(!ok, "the first process was interrupted:\n{text}");
    assert!(text.contains("kept 2 of 4 repetitions of `only`"), "{text}");
    let store = Store::open(&dir).unwrap();
    assert_eq!(store.newest_interrupted().unwrap(), Some(1));
    drop(store);

    let (ok, text) = child(&dir, true);
    assert!(ok, "the resumed process failed:\n{text}");
    assert!(text.contains("resuming interrupted invocation 1"), "{text}");
    let calls = std::fs::read_to_string(dir.join("calls")).unwrap();
    assert_eq!(
        calls.lines().filter(|l| *l == "resumed").count(),
        2,
        "only the missing repetitions ran: {calls}"
    );

    let store = Store::open(&dir).unwrap();
    let history = store.history().unwrap();
    let statuses: Vec<&str> = history.iter().map(|h| h.status.as_str()).collect();
    assert_eq!(statuses, ["completed"], "one invocation, completed");
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap();
    let current = store.current("resumable", host.trim()).unwrap().unwrap();
    let runs: Vec<u32> = current.cells[0].runs.iter().map(|r| r.index).collect();
    assert_eq!(
        runs,
        [0, 1, 2, 3],
        "the four repetitions read as one cell run"
    );
    assert!(store.newest_interrupted().unwrap().is_none());
    let (ok, text) = child(&dir, true);
    assert!(!ok && text.contains("nothing to resume"), "{text}");
}
