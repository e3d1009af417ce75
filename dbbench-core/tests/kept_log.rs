//! A pre-grown log is zero-filled once per shape, not before every repetition: later
//! repetitions take the log an earlier one left, re-zeroed, and say so in their `start` record;
//! what the window measures (log size, growths, segments) is the same; nothing is left when the
//! benchmark ends, and a pool a killed run left is swept.

mod support;

use dbbench_core::__internals::config::{FixtureKind, RunSpec, StorageSpec};
use dbbench_core::__internals::{embedded::EmbeddedBackend, Backend, BodyFuture, Volumes};
use dbbench_core::{Scale, Session, Size};
use support::cell;

fn insert(db: &mut Session) -> BodyFuture<'_> {
    Box::pin(async move {
        db.execute("CREATE TABLE t (x integer, pad text)").await?;
        db.execute(
            "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r WHERE n < 2000) \
             INSERT INTO t SELECT n, printf('%.200c', 'x') FROM r",
        )
        .await
        .map(|_| ())
    })
}

const PREGROWN: StorageSpec = StorageSpec {
    log_size: Some(Size::new(8 << 20, "8MB")),
    log_pregrow: Some(Size::new(2 << 20, "2MB")),
    ..StorageSpec::DEFAULT
};

support::benchmark! {
    static PREGROWN_LOG = insert,
    title: "pre-grown log kept between repetitions",
    run: RunSpec {
        repeat: 3,
        warmup: 0,
        fixture: FixtureKind::None,
        ..RunSpec::DEFAULT
    },
    cells: [cell("pregrown", PREGROWN), cell("same_shape", PREGROWN)],
}

#[test]
fn later_repetitions_take_the_kept_log_and_measure_the_same() {
    let ctx = support::context("kept-log", Scale::smoke(), Volumes::default());
    let result = support::run_embedded(&PREGROWN_LOG, &ctx);
    let runs: Vec<_> = result.cells.iter().flat_map(|c| &c.runs).collect();
    assert_eq!(runs.len(), 6);
    let reused: Vec<bool> = {
        let mut by_sequence = runs.clone();
        by_sequence.sort_by_key(|r| r.sequence);
        by_sequence
            .iter()
            .map(|r| {
                let prep = r.start.as_ref().unwrap().preparation.as_ref().unwrap();
                assert!(prep.create_s > 0.0 && prep.teardown_s > 0.0, "{prep:?}");
                !prep.reused.is_empty()
            })
            .collect()
    };
    // Every round of a fixed `repeat` is a fork of its own, on a fresh work area: its first
    // repetition zero-fills the log, the next one, of either cell (same shape), takes the one the
    // previous repetition left.
    assert_eq!(reused, [false, true, false, true, false, true]);
    for run in &runs {
        let log = run.log.as_ref().unwrap();
        let first = runs[0].log.as_ref().unwrap();
        assert_eq!(log, first, "the window starts from the same log");
        assert_eq!(log.growths, 0);
        assert_eq!(log.size_before_bytes, 8 << 20);
    }
    let left: Vec<_> = std::fs::read_dir(ctx.work_dir.join("db"))
        .unwrap()
        .flatten()
        .map(|e| e.file_name())
        .collect();
    assert!(
        left.is_empty(),
        "released when the benchmark ended: {left:?}"
    );
}

#[tokio::test]
async fn a_pool_a_killed_run_left_is_swept() {
    let work = support::scratch("kept-log-sweep");
    let pool = work.join("db").join("kept-logs-1");
    std::fs::create_dir_all(&pool).unwrap();
    let dead = {
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let pid = child.id();
        child.wait().unwrap();
        pid
    };
    std::fs::write(
        pool.join(".dbbench-owned"),
        // A marker names its host: an older one with a pid alone is no owner a host can judge.
        format!(
            "created by dbbench\nowner_host={}\nowner_pid={dead}\n",
            std::fs::read_to_string("/proc/sys/kernel/hostname")
                .unwrap()
                .trim()
        ),
    )
    .unwrap();
    std::fs::write(pool.join("log-2097152-8388608.ldf"), vec![0u8; 4096]).unwrap();
    let mut backend = Backend::new(EmbeddedBackend::new());
    let report = backend.sweep_stale(&work).await;
    assert_eq!(report.len(), 1, "{report:?}");
    assert!(
        report[0].contains("kept-logs-1") && !report[0].contains("may remain"),
        "{report:?}"
    );
    assert!(!pool.exists());
}
