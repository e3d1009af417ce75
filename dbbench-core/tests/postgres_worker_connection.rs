//! The driver workers' PostgreSQL connections, which speak the protocol themselves after a
//! tokio-postgres startup (engine/postgres/wire.rs), on a managed cluster: every value kind read
//! and written as the session's connection reads and writes it, server errors with their SQLSTATE
//! and the connection still usable after one, a wrong parameter count and COPY refused clearly, a
//! statement abandoned while it waits whose answer does not become the next one's, a
//! timeout that cancels the workers' runaway statements on the server, and a postmaster SIGKILLed
//! while sixteen workers insert: the cell ends with a clear error within seconds and nothing of
//! the cluster is left.

mod support;

use dbbench_core::__internals::config::{RunSpec, StorageSpec};
use dbbench_core::__internals::postgres::PostgresConnection;
use dbbench_core::__internals::BodyFuture;
use dbbench_core::__internals::Volumes;
use dbbench_core::driver::{Load, Op, Work};
use dbbench_core::results::CellStatus;
use dbbench_core::{Connection, Error, Scale, Session, Value};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use support::{assert_no_cluster_left, cell, run_postgres};

/// What the worker saw, for the test to check after the run.
static SEEN: Mutex<Vec<String>> = Mutex::new(Vec::new());

fn note(line: String) {
    SEEN.lock().unwrap().push(line);
}

fn one_worker_sees_everything(db: &mut Session) -> BodyFuture<'_> {
    Box::pin(async move {
        db.execute("CREATE TABLE kv (k integer PRIMARY KEY, v text)")
            .await?;
        db.execute("INSERT INTO kv VALUES (1, 'one')").await?;
        let load = Load::new(1, Work::Statements(1)).statements_per_transaction(1);
        db.load(load)
            .run(async move |conn: &mut Connection, _op: Op| {
                let rows = conn
                    .query_with(
                        "SELECT $1::bigint AS i, $2::text AS t, $3::float8 AS f, NULL::integer AS n, \
                         12.50::numeric AS d, true AS b, '2024-02-29'::date AS day, \
                         $4::bytea AS blob, k, v FROM kv ORDER BY k",
                        &[
                            Value::Int(-42),
                            Value::Text("naïve ' quote".into()),
                            Value::Float(0.25),
                            Value::Blob(vec![0, 1, 254, 255]),
                        ],
                    )
                    .await?;
                for row in &rows {
                    note(format!("columns {:?}", row.columns()));
                    note(format!("values {:?}", row.values()));
                }
                let changed = conn
                    .execute_with("UPDATE kv SET v = $1 WHERE k = $2", &[
                        Value::Text("uno".into()),
                        Value::Int(1),
                    ])
                    .await?;
                note(format!("updated {changed}"));
                conn.batch("CREATE TABLE side (x integer); INSERT INTO side VALUES (7), (8)")
                    .await?;
                let side = conn.query("SELECT sum(x) FROM side").await?;
                note(format!("side {:?}", side[0].values()));
                match conn.execute_with("SELECT $1::integer", &[]).await {
                    Err(e) => note(format!("arity {e}")),
                    Ok(_) => note("arity accepted".into()),
                }
                if let Some(pg) = conn.downcast_mut::<PostgresConnection>() {
                    match pg.with_client(|client| client.simple_query("SELECT 1")).await {
                        Err(e) => note(format!("client {e}")),
                        Ok(_) => note("client accepted".into()),
                    }
                }
                match conn.execute_with("COPY kv FROM STDIN", &[]).await {
                    Err(e) => note(format!("copy {e}")),
                    Ok(_) => note("copy accepted".into()),
                }
                // The failed COPY aborted the transaction; leave it and go on.
                conn.batch("ROLLBACK").await?;
                // A statement given up while it waits (a timeout around it): its answer must not
                // become the next statement's.
                let abandoned = tokio::time::timeout(
                    Duration::from_millis(100),
                    conn.query("SELECT pg_sleep(0.5), 1 AS one"),
                )
                .await
                .is_err();
                note(format!("abandoned {abandoned}"));
                let next = conn.query("SELECT 2 AS two").await?;
                note(format!("next {:?} {:?}", next[0].columns(), next[0].values()));
                conn.batch("BEGIN").await?;
                // Last: an error ends the transaction (its COMMIT becomes a rollback).
                match conn
                    .execute_with("INSERT INTO kv VALUES ($1, 'again')", &[Value::Int(1)])
                    .await
                {
                    Err(e) => note(format!("duplicate {e}")),
                    Ok(_) => note("duplicate accepted".into()),
                }
                match conn.query("SELECT 1").await {
                    Err(e) => note(format!("aborted {e}")),
                    Ok(_) => note("aborted accepted".into()),
                }
                Ok(1)
            })
            .await?;
        let v: String = db.query_scalar("SELECT v FROM kv WHERE k = 1").await?;
        note(format!("after {v}"));
        Ok(())
    })
}

const WORKERS: u32 = 16;

/// Sixteen workers insert until the server goes away; a thread SIGKILLs the postmaster once the
/// load runs.
fn killed_under_load(db: &mut Session) -> BodyFuture<'_> {
    Box::pin(async move {
        db.execute("CREATE TABLE t (worker integer, x bigint)")
            .await?;
        let pid = support::postmaster_pid(db).await;
        let killer = Arc::new(std::sync::Once::new());
        let load = Load::new(WORKERS, Work::Duration(Duration::from_secs(40)));
        db.load(load)
            .run(async move |conn: &mut Connection, op: Op| {
                killer.call_once(|| support::kill_after(pid, Duration::from_millis(500)));
                conn.execute_with(
                    "INSERT INTO t VALUES ($1, $2)",
                    &[Value::Int(op.worker.into()), Value::Int(op.sequence as i64)],
                )
                .await
            })
            .await?;
        Err(Error::msg("the server outlived its SIGKILL"))
    })
}

/// Two workers each run a statement that never ends; the cell's timeout must cancel them on the
/// server through their connections' cancel tokens.
fn runaway_workers(db: &mut Session) -> BodyFuture<'_> {
    Box::pin(async move {
        let load = Load::new(2, Work::Statements(2)).statements_per_transaction(1);
        db.load(load)
            .run(async move |conn: &mut Connection, _op: Op| {
                conn.query(
                    "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r) \
                     SELECT count(*) FROM r",
                )
                .await
                .map(|_| 1)
            })
            .await?;
        Ok(())
    })
}

support::benchmark! {
    static RUNAWAY = runaway_workers,
    title: "",
    run: RunSpec {
        timeout: Some(Duration::from_secs(1)),
        ..RunSpec::DEFAULT
    },
    cells: [cell("only", StorageSpec::DEFAULT)],
}
support::benchmark! {
    static EVERYTHING = one_worker_sees_everything,
    title: "",
    // A connection that lost its place in the conversation would wait forever: fail instead.
    run: RunSpec {
        timeout: Some(Duration::from_secs(30)),
        ..RunSpec::DEFAULT
    },
    cells: [cell("only", StorageSpec::DEFAULT)],
}
support::benchmark! {
    static KILLED = killed_under_load,
    title: "",
    run: RunSpec {
        timeout: Some(Duration::from_secs(90)),
        ..RunSpec::DEFAULT
    },
    cells: [cell("only", StorageSpec::DEFAULT)],
}

fn context(name: &str) -> dbbench_core::__internals::RunContext {
    support::context(name, Scale::smoke(), Volumes::default())
}

#[test]
fn a_worker_connection_reads_writes_and_fails_as_the_session_does() {
    if !dbbench_core::__internals::postgres::cluster::available_for_tests() {
        return;
    }
    let ctx = context("pg-worker-connection");
    let result = run_postgres(&EVERYTHING, &ctx);
    assert_eq!(
        result.cells[0].status,
        CellStatus::Ok,
        "{:?}",
        result.cells[0].status
    );
    let seen = SEEN.lock().unwrap().clone();
    let line = |prefix: &str| -> String {
        seen.iter()
            .find(|l| l.starts_with(prefix))
            .unwrap_or_else(|| panic!("no `{prefix}` in {seen:#?}"))
            .clone()
    };
    assert_eq!(
        line("columns"),
        r#"columns ["i", "t", "f", "n", "d", "b", "day", "blob", "k", "v"]"#
    );
    assert_eq!(
        line("values"),
        r#"values [Int(-42), Text("naïve ' quote"), Float(0.25), Null, Float(12.5), Int(1), Text("2024-02-29"), Blob([0, 1, 254, 255]), Int(1), Text("one")]"#
    );
    assert_eq!(line("updated"), "updated 1");
    assert_eq!(line("side"), "side [Int(15)]");
    let arity = line("arity");
    assert!(
        arity.contains("takes 1 parameter(s)") && arity.contains("0 were given"),
        "{arity}"
    );
    let client = line("client");
    assert!(
        client.contains("COPY and other direct uses need the session's connection"),
        "{client}"
    );
    let copy = line("copy");
    assert!(
        copy.contains("57014") || copy.contains("COPY FROM STDIN is not available"),
        "{copy}"
    );
    assert!(copy.contains("driver worker's connection"), "{copy}");
    assert_eq!(line("abandoned"), "abandoned true");
    assert_eq!(line("next"), r#"next ["two"] [Int(2)]"#);
    let duplicate = line("duplicate");
    assert!(
        duplicate.contains("23505")
            && duplicate.contains("duplicate key value violates unique constraint \"kv_pkey\"")
            && duplicate.contains("detail: Key (k)=(1) already exists."),
        "{duplicate}"
    );
    let aborted = line("aborted");
    assert!(aborted.contains("25P02"), "{aborted}");
    // The failed transaction was rolled back, the update with it.
    assert_eq!(line("after"), "after one");
    assert_no_cluster_left(&ctx);
}

#[test]
fn a_postmaster_killed_under_load_ends_the_cell_clearly_and_leaves_nothing() {
    if !dbbench_core::__internals::postgres::cluster::available_for_tests() {
        return;
    }
    let ctx = context("pg-killed-under-load");
    let started = Instant::now();
    let result = run_postgres(&KILLED, &ctx);
    let took = started.elapsed();
    match &result.cells[0].status {
        CellStatus::Failed(e) => {
            assert!(e.contains("load `"), "{e}");
            assert!(
                e.contains("connection to the PostgreSQL server was lost")
                    || e.contains("terminating connection"),
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

#[test]
fn a_timeout_cancels_the_workers_statements_on_the_server() {
    if !dbbench_core::__internals::postgres::cluster::available_for_tests() {
        return;
    }
    let ctx = context("pg-worker-timeout");
    let started = Instant::now();
    let result = run_postgres(&RUNAWAY, &ctx);
    let took = started.elapsed();
    match &result.cells[0].status {
        CellStatus::Failed(why) => {
            assert!(
                why.starts_with("timed out after 1s in repetition 1"),
                "{why}"
            )
        }
        other => panic!("the runaway workers were not stopped: {other:?}"),
    }
    // Cluster start and teardown included; without the cancel the statements never end.
    assert!(took < Duration::from_secs(20), "took {took:?}");
    assert_no_cluster_left(&ctx);
}
