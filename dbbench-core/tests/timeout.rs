//! `timeout` fires on every backend: a runaway recursive CTE is stopped by the watchdog (SQLite's
//! interrupt on the embedded engine, a cancel request on the managed PostgreSQL cluster), the cell
//! fails with "timed out after 1s in repetition 2 (statement: …)", its database is torn down, and
//! the other cell runs all its repetitions.

mod support;

use dbbench_core::__internals::config::{FixtureKind, RunSpec, StorageSpec};
use dbbench_core::__internals::BodyFuture;
use dbbench_core::__internals::Volumes;
use dbbench_core::results::{BenchmarkResult, CellStatus};
use dbbench_core::{Scale, Session};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};
use support::*;

/// Counts the runaway cell's repetitions, so its second one runs away.
static RUNAWAY_REPS: AtomicU32 = AtomicU32::new(0);
#[cfg(feature = "postgres")]
static PG_RUNAWAY_REPS: AtomicU32 = AtomicU32::new(0);
/// How long the runaway statement ran before it returned, in milliseconds.
static EMBEDDED_STOPPED_MS: AtomicU32 = AtomicU32::new(0);
#[cfg(feature = "postgres")]
static PG_STOPPED_MS: AtomicU32 = AtomicU32::new(0);

/// Never ends: SQLite and PostgreSQL both recurse without limit.
const RUNAWAY: &str =
    "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r) SELECT count(*) FROM r";

async fn body(
    db: &mut Session,
    counter: &AtomicU32,
    stopped_ms: &AtomicU32,
) -> dbbench_core::Result<()> {
    db.execute("CREATE TABLE t (x integer)").await?;
    db.execute("INSERT INTO t VALUES (1)").await?;
    if db.cell() == "runaway" && counter.fetch_add(1, Ordering::SeqCst) == 1 {
        let started = Instant::now();
        let n = db.query_scalar::<i64>(RUNAWAY).await;
        stopped_ms.store(started.elapsed().as_millis() as u32, Ordering::SeqCst);
        db.record_count("never", n?);
    }
    Ok(())
}

fn embedded(db: &mut Session) -> BodyFuture<'_> {
    Box::pin(body(db, &RUNAWAY_REPS, &EMBEDDED_STOPPED_MS))
}

#[cfg(feature = "postgres")]
fn postgres(db: &mut Session) -> BodyFuture<'_> {
    Box::pin(body(db, &PG_RUNAWAY_REPS, &PG_STOPPED_MS))
}

const RUN: RunSpec = RunSpec {
    repeat: 3,
    warmup: 0,
    fixture: FixtureKind::None,
    timeout: Some(Duration::from_secs(1)),
    ..RunSpec::DEFAULT
};

support::benchmark! {
    static EMBEDDED = embedded,
    title: "timeout",
    run: RUN,
    cells: [cell("runaway", StorageSpec::DEFAULT), cell("quick", StorageSpec::DEFAULT)],
}

#[cfg(feature = "postgres")]
support::benchmark! {
    static POSTGRES = postgres,
    title: "timeout",
    run: RUN,
    cells: [cell("runaway", StorageSpec::DEFAULT), cell("quick", StorageSpec::DEFAULT)],
}

fn check(result: &BenchmarkResult, stopped_ms: &AtomicU32) {
    let ms = stopped_ms.load(Ordering::SeqCst);
    // The limit counts from the body's start, a little before the statement's.
    assert!(
        (500..2000).contains(&ms),
        "the runaway statement ran {ms} ms"
    );
    let runaway = &result.cells[0];
    match &runaway.status {
        CellStatus::Failed(why) => assert_eq!(
            why,
            &format!(
                "timed out after 1s in repetition 2 (statement: {}…)",
                &RUNAWAY[..80]
            ),
        ),
        other => panic!("the runaway cell was not stopped: {other:?}"),
    }
    assert_eq!(
        runaway.runs.len(),
        1,
        "the repetition before the runaway one is kept"
    );
    let quick = &result.cells[1];
    assert_eq!(quick.status, CellStatus::Ok);
    assert_eq!(quick.runs.len(), 3, "the other cell runs every repetition");
}

#[test]
fn embedded_runaway_cte_is_interrupted() {
    let ctx = context("timeout-embedded", Scale::smoke(), Volumes::default());
    let result = run_embedded(&EMBEDDED, &ctx);
    check(&result, &EMBEDDED_STOPPED_MS);
    let dbs = ctx.work_dir.join("db");
    let left: Vec<_> = std::fs::read_dir(&dbs)
        .into_iter()
        .flatten()
        .flatten()
        .collect();
    assert!(left.is_empty(), "databases left: {left:?}");
}

#[cfg(feature = "postgres")]
#[test]
fn postgres_runaway_cte_is_cancelled() {
    let ctx = context("timeout-postgres", Scale::smoke(), Volumes::default());
    let result = run_postgres(&POSTGRES, &ctx);
    check(&result, &PG_STOPPED_MS);
    assert_no_cluster_left(&ctx);
}
