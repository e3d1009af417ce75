//! SQLite busy handling under the driver: eight workers write to one embedded database with no
//! lock wait at all, so every collision surfaces as `SQLITE_BUSY`. The driver rolls back, retries
//! the same statements and counts it, and the final row count is still exact.

mod support;

use dbbench_core::__internals::config::{RunSpec, StorageSpec};
use dbbench_core::__internals::BodyFuture;
use dbbench_core::driver::{Load, Op, Work};
use dbbench_core::results::CellStatus;
use dbbench_core::{Connection, Session, Value};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;
use std::time::Duration;
use support::{cell, context_from_env, run_embedded};

const WORKERS: u32 = 8;
const STATEMENTS: u64 = 8 * 30 * 10;

fn contended(db: &mut Session) -> BodyFuture<'_> {
    Box::pin(async move {
        db.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, worker INTEGER NOT NULL, pad TEXT)")
            .await?;
        let highest_attempt = Arc::new(AtomicU32::new(0));
        let seen = highest_attempt.clone();
        let load = Load::new(WORKERS, Work::Statements(STATEMENTS))
            .statements_per_transaction(10)
            .lock_timeout(Duration::ZERO)
            .max_retries(10_000);
        db.load(load)
            .run(async move |conn: &mut Connection, op: Op| {
                seen.fetch_max(op.attempt, Ordering::Relaxed);
                let params = [
                    Value::Int(op.id as i64),
                    Value::Int(op.worker.into()),
                    Value::Text("x".repeat(200)),
                ];
                conn.execute_with(
                    "INSERT INTO t (id, worker, pad) VALUES (?1, ?2, ?3)",
                    &params,
                )
                .await
            })
            .await?;
        let rows: i64 = db.query_scalar("SELECT count(*) FROM t").await?;
        db.record_count("table_rows", rows);
        db.record_count(
            "highest_attempt",
            highest_attempt.load(Ordering::Relaxed).into(),
        );
        Ok(())
    })
}

support::benchmark! {
    static CONTENDED = contended,
    title: "Eight writers with no busy timeout",
    run: RunSpec::DEFAULT,
    cells: [cell("one_file", StorageSpec::DEFAULT)],
}

#[test]
fn busy_transactions_are_retried_counted_and_the_count_stays_exact() {
    let ctx = context_from_env("driver-busy");
    let result = run_embedded(&CONTENDED, &ctx);
    let cell = &result.cells[0];
    assert_eq!(cell.status, CellStatus::Ok);
    let run = &cell.runs[0];
    let load = &run.loads[0];

    assert!(
        load.retries > 0,
        "eight writers without a lock wait must collide"
    );
    // Every failed attempt was busy, and every one was retried.
    assert_eq!(load.errors.busy, load.retries);
    assert_eq!(load.errors.total(), load.errors.busy);
    assert_eq!(
        load.workers.iter().map(|w| w.retries).sum::<u64>(),
        load.retries
    );
    assert!(run.counts["highest_attempt"] >= 1);

    // Retries re-ran the same statements, so nothing is lost or doubled.
    assert_eq!(run.counts["table_rows"], STATEMENTS as i64);
    assert_eq!(run.counts["load_rows"], STATEMENTS as i64);
    assert_eq!(run.counts["load_transactions"], (STATEMENTS / 10) as i64);
    assert!(load.workers.iter().all(|w| w.statements == 300));
    assert_eq!(load.config.lock_timeout_ms, Some(0.0));
}
