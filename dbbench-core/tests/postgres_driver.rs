//! The concurrent driver on a managed PostgreSQL cluster with 16 connections (real server
//! sessions, one per worker), and a server whose postmaster is SIGKILLed mid-window: the cell ends
//! with a clear error within seconds, and no process or directory of the cluster is left.

mod support;

use dbbench_core::__internals::config::{RunSpec, StorageSpec};
use dbbench_core::__internals::BodyFuture;
use dbbench_core::__internals::Volumes;
use dbbench_core::driver::{Load, Op, Work};
use dbbench_core::results::CellStatus;
use dbbench_core::{Connection, Error, Scale, Session, Value};
use std::time::{Duration, Instant};
use support::{assert_no_cluster_left, cell, run_postgres};

const WORKERS: u32 = 16;
const STATEMENTS: u64 = 1_600;
const PER_TRANSACTION: u32 = 10;

fn sixteen_workers(db: &mut Session) -> BodyFuture<'_> {
    Box::pin(async move {
        db.execute(
            "CREATE TABLE row4k (id bigint PRIMARY KEY, worker integer NOT NULL, payload bytea NOT NULL)",
        )
        .await?;
        let payload = vec![0xA5u8; 4_100];
        let load = Load::new(WORKERS, Work::Statements(STATEMENTS))
            .statements_per_transaction(PER_TRANSACTION);
        db.load(load)
            .run(async move |conn: &mut Connection, op: Op| {
                let params = [
                    Value::Int(op.id as i64),
                    Value::Int(op.worker.into()),
                    Value::Blob(payload.clone()),
                ];
                conn.execute_with(
                    "INSERT INTO row4k (id, worker, payload) VALUES ($1, $2, $3)",
                    &params,
                )
                .await
            })
            .await?;
        let rows: i64 = db.query_scalar("SELECT count(*) FROM row4k").await?;
        db.record_count("table_rows", rows);
        let misplaced: i64 = db
            .query_scalar(&format!(
                "SELECT count(*) FROM row4k WHERE id % {WORKERS} <> worker OR length(payload) <> 4100"
            ))
            .await?;
        db.record_count("misplaced_rows", misplaced);
        Ok(())
    })
}

/// Inserts in a loop until the server goes away; a thread SIGKILLs the postmaster after 300 ms.
fn killed<'a>(db: &'a mut Session) -> BodyFuture<'a> {
    Box::pin(async move {
        db.execute("CREATE TABLE t (x integer)").await?;
        let pid = support::postmaster_pid(db).await;
        support::kill_after(pid, Duration::from_millis(300));
        let started = Instant::now();
        for i in 0.. {
            db.execute_with("INSERT INTO t VALUES ($1)", &[Value::Int(i)])
                .await?;
            if started.elapsed() > Duration::from_secs(30) {
                break;
            }
        }
        Err(Error::msg("the server outlived its SIGKILL"))
    })
}

support::benchmark! {
    static SIXTEEN = sixteen_workers,
    title: "Sixteen PostgreSQL sessions insert 4.1 KB rows in transactions of ten",
    run: RunSpec::DEFAULT,
    cells: [cell("one", StorageSpec::DEFAULT)],
}
support::benchmark! {
    static KILLED = killed,
    title: "",
    run: RunSpec {
        timeout: Some(Duration::from_secs(60)),
        ..RunSpec::DEFAULT
    },
    cells: [cell("only", StorageSpec::DEFAULT)],
}

fn context(name: &str) -> dbbench_core::__internals::RunContext {
    support::context(name, Scale::smoke(), Volumes::default())
}

#[test]
fn sixteen_connections_insert_exactly_the_planned_rows() {
    if !dbbench_core::__internals::postgres::cluster::available_for_tests() {
        return;
    }
    let ctx = context("pg-driver-16");
    let result = run_postgres(&SIXTEEN, &ctx);
    let cell = &result.cells[0];
    assert_eq!(cell.status, CellStatus::Ok, "{:?}", cell.status);
    let run = &cell.runs[0];
    assert_eq!(run.counts["table_rows"], STATEMENTS as i64);
    assert_eq!(run.counts["misplaced_rows"], 0);
    assert_eq!(run.counts["load_transactions"], 160);
    let load = &run.loads[0];
    assert_eq!(load.execution, "threads");
    assert_eq!(load.workers.len(), WORKERS as usize);
    for worker in &load.workers {
        assert_eq!((worker.statements, worker.transactions), (100, 10));
    }
    assert_eq!(load.errors.total(), 0);
    assert_eq!(load.latency.transactions, 160);
    assert!(load.latency.p50_ms > 0.0 && load.latency.p50_ms <= load.latency.p99_ms);
    // The server saw the commits: 160 of the load's, plus the body's own statements.
    assert!(run.values["pg_db_xact_commit"] >= 160.0, "{:?}", run.values);
    assert!(run.values["pg_db_tup_inserted"] >= STATEMENTS as f64);
    assert_no_cluster_left(&ctx);
}

#[test]
fn a_killed_postmaster_ends_the_cell_clearly_and_leaves_nothing() {
    if !dbbench_core::__internals::postgres::cluster::available_for_tests() {
        return;
    }
    let ctx = context("pg-killed");
    let started = Instant::now();
    let result = run_postgres(&KILLED, &ctx);
    let took = started.elapsed();
    match &result.cells[0].status {
        CellStatus::Failed(e) => {
            assert!(
                e.contains("lost") || e.contains("terminating connection"),
                "{e}"
            );
            assert!(e.contains("killed by signal 9 (SIGKILL)"), "{e}");
            assert!(e.contains("removed its remaining processes"), "{e}");
        }
        other => panic!("expected failure, got {other:?}"),
    }
    assert!(took < Duration::from_secs(30), "took {took:?}");
    assert_no_cluster_left(&ctx);
}
