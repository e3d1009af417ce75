//! Tests of the driver on a real embedded database: both execution models, failures, panics,
//! fixed durations, pacing, cancellation, and how a report lands in a run's results.

use super::*;
use crate::engine::embedded::EmbeddedBackend;
use crate::engine::plugin::EngineBackend;
use crate::model::config::StorageSpec;
use crate::model::error::Error;
use crate::model::plan::DatabasePlan;
use crate::model::results::RunResult;
use crate::model::scale::Scale;
use crate::model::value::Value;
use crate::model::volume::Volumes;
use std::time::Duration;

/// A fresh database with table `t (id, worker)`.
async fn database(name: &str) -> Arc<Database> {
    let plan = DatabasePlan {
        name: format!("dbbench_driver_unit_{name}_{}", std::process::id()),
        storage: StorageSpec::DEFAULT,
        volumes: Volumes::default(),
        work_dir: crate::util::paths::work_dir(std::path::Path::new(env!("CARGO_MANIFEST_DIR"))),
        scale: Scale::smoke(),
    };
    let db = Database::new(EmbeddedBackend::new().create(&plan).await.unwrap());
    let mut conn = db.connect().await.unwrap();
    conn.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, worker INTEGER NOT NULL)")
        .await
        .unwrap();
    Arc::new(db)
}

/// Rows in `t`, then drops the database; fails if a worker still holds it.
async fn rows_and_drop(db: Arc<Database>) -> i64 {
    let mut conn = db.connect().await.unwrap();
    let rows: i64 = conn.query_scalar("SELECT count(*) FROM t").await.unwrap();
    drop(conn);
    let db = Arc::try_unwrap(db).unwrap_or_else(|_| panic!("a worker still holds the database"));
    db.drop_database().await.unwrap();
    rows
}

async fn insert(conn: &mut Connection, op: Op) -> Result<u64> {
    let params = [Value::Int(op.id as i64), Value::Int(i64::from(op.worker))];
    conn.execute_with("INSERT INTO t (id, worker) VALUES (?1, ?2)", &params)
        .await
}

#[tokio::test]
async fn tasks_run_the_same_plan_on_the_calling_thread() {
    let db = database("tasks").await;
    let mut load = Load::new(3, Work::Statements(50)).statements_per_transaction(4);
    load.execution = Some(Execution::Tasks);
    let report = run_load(db.clone(), Instant::now(), load, insert)
        .await
        .unwrap();
    let s = &report.stats;
    assert_eq!(s.execution, "tasks");
    assert_eq!((s.statements, s.rows), (50, 50));
    let per_worker: Vec<(u64, u64)> = s
        .workers
        .iter()
        .map(|w| (w.statements, w.transactions))
        .collect();
    // 17, 17, 16 statements in transactions of 4: 5, 5 and 4 transactions.
    assert_eq!(per_worker, vec![(17, 5), (17, 5), (16, 4)]);
    assert_eq!(s.transactions, 14);
    assert!(s.workers.iter().all(|w| w.cpu_s.is_none()));
    if cfg!(target_os = "linux") {
        assert!(s.saturation.driving_thread_cpu_s.is_some());
    }
    assert_eq!(rows_and_drop(db).await, 50);
}

#[tokio::test]
async fn a_failing_statement_stops_the_load_and_names_worker_and_kind() {
    let db = database("failing").await;
    let load = Load::new(2, Work::Statements(40)).statements_per_transaction(5);
    let error = run_load(
        db.clone(),
        Instant::now(),
        load,
        async |conn: &mut Connection, op: Op| {
            if op.id == 13 {
                // An error that is not retried.
                conn.execute("INSERT INTO missing (id) VALUES (13)").await
            } else {
                insert(conn, op).await
            }
        },
    )
    .await
    .unwrap_err()
    .to_string();
    assert!(error.contains("load `load`: worker 1"), "{error}");
    assert!(error.contains("(other) after 0 retries"), "{error}");
    assert!(error.contains("no such table: missing"), "{error}");
    // Worker 1's failed transaction was rolled back, so id 13 and its neighbours are absent.
    let rows = rows_and_drop(db).await;
    assert!(rows < 40, "{rows}");
}

#[tokio::test]
async fn a_panic_in_the_closure_becomes_an_error() {
    let db = database("panic").await;
    let load = Load::new(2, Work::Statements(10));
    let result = run_load(
        db.clone(),
        Instant::now(),
        load,
        async |conn: &mut Connection, op: Op| {
            if op.id == 3 {
                panic!("generator bug at {}", op.id);
            }
            insert(conn, op).await
        },
    )
    .await;
    let error = result.unwrap_err().to_string();
    assert!(error.contains("panicked: generator bug at 3"), "{error}");
    rows_and_drop(db).await;
}

#[tokio::test]
async fn a_duration_load_stops_at_its_deadline_and_thinks_between_transactions() {
    let db = database("duration").await;
    let load = Load::new(2, Work::Duration(Duration::from_millis(300)))
        .think_time(Duration::from_millis(20));
    let report = run_load(db.clone(), Instant::now(), load, insert)
        .await
        .unwrap();
    let s = &report.stats;
    // Each worker thinks 20 ms between transactions: at most 300 / 20 + 1 of them.
    for w in &s.workers {
        assert!((1..=16).contains(&w.transactions), "{w:?}");
    }
    assert!(s.elapsed_s >= 0.2 && s.elapsed_s < 5.0, "{}", s.elapsed_s);
    assert_eq!(s.config.planned_statements, None);
    let mut run = RunResult::default();
    report.clone().record(&mut run);
    assert!(!run.counts.contains_key("load_transactions"));
    assert!(run.values.contains_key("load_transactions_per_s"));
    assert_eq!(rows_and_drop(db).await as u64, s.statements);
}

#[tokio::test]
async fn an_open_loop_load_is_paced_by_its_arrivals() {
    let db = database("paced").await;
    // 40 transactions at 200/s over two workers take about 0.2 s; unpaced they take a few ms.
    let load = Load::new(2, Work::Statements(40)).target_rate(200.0);
    let report = run_load(db.clone(), Instant::now(), load, insert)
        .await
        .unwrap();
    let s = &report.stats;
    assert_eq!(s.transactions, 40);
    assert!(s.elapsed_s > 0.08 && s.elapsed_s < 5.0, "{}", s.elapsed_s);
    assert!(s.transactions_per_s < 500.0, "{}", s.transactions_per_s);
    assert_eq!(s.config.target_rate_per_s, Some(200.0));
    assert_eq!(rows_and_drop(db).await, 40);
}

#[tokio::test]
async fn dropping_a_running_load_stops_and_joins_its_workers() {
    let db = database("dropped").await;
    let load = Load::new(3, Work::Duration(Duration::from_secs(60)));
    let run = run_load(db.clone(), Instant::now(), load, insert);
    assert!(tokio::time::timeout(Duration::from_millis(300), run)
        .await
        .is_err());
    // Every worker thread ended and released the database.
    let rows = rows_and_drop(db).await;
    assert!(rows > 0);
}

#[tokio::test]
async fn an_invalid_load_fails_before_connecting() {
    let db = database("invalid").await;
    let error = run_load(
        db.clone(),
        Instant::now(),
        Load::new(0, Work::Statements(1)),
        insert,
    )
    .await
    .unwrap_err();
    assert!(error.to_string().contains("at least one worker"), "{error}");
    rows_and_drop(db).await;
}

#[tokio::test]
async fn a_report_lands_in_counts_values_series_and_loads() {
    let db = database("record").await;
    let origin = Instant::now();
    let load = Load::new(2, Work::Statements(20))
        .name("fill")
        .statements_per_transaction(10);
    let report = run_load(db.clone(), origin, load, insert).await.unwrap();
    let mut run = RunResult::default();
    report.clone().record(&mut run);
    assert_eq!(run.counts["fill_transactions"], 2);
    assert_eq!(run.counts["fill_statements"], 20);
    assert_eq!(run.counts["fill_rows"], 20);
    assert!(run.values["fill_transactions_per_s"] > 0.0);
    assert!(run.values.contains_key("fill_latency_p99_ms"));
    assert_eq!(run.series.len(), 1);
    assert_eq!(run.series[0].name, "fill: transactions/s");
    assert_eq!(run.series[0].values.iter().sum::<f64>(), 2.0);
    assert_eq!(run.loads, vec![report.stats]);
    rows_and_drop(db).await;
}

#[tokio::test]
async fn setup_statements_run_on_every_worker_connection_before_the_load() {
    let db = database("setup").await;
    let load = Load::new(3, Work::Statements(9)).setup("PRAGMA synchronous = OFF");
    let report = run_load(
        db.clone(),
        Instant::now(),
        load,
        async |conn: &mut Connection, op: Op| {
            let synchronous: i64 = conn.query_scalar("PRAGMA synchronous").await?;
            if synchronous != 0 {
                return Err(Error::msg(format!(
                    "worker {}: synchronous is {synchronous}",
                    op.worker
                )));
            }
            insert(conn, op).await
        },
    )
    .await
    .unwrap();
    assert_eq!(report.stats.config.setup, vec!["PRAGMA synchronous = OFF"]);
    assert_eq!(rows_and_drop(db).await, 9);
}

#[tokio::test]
async fn the_seed_shape_runs_128_workers_on_their_own_threads() {
    // The 1-TB article's shape, scaled down: 128 connections, 4.1 KB rows given as bytes,
    // transactions of ten. Without fsync the write lock is held briefly, so 128 writers queue
    // behind it for less long.
    let db = database("seed").await;
    let row = 4_100u64;
    let load = Load::new(
        128,
        Work::Bytes {
            total: 128 * 10 * row,
            per_statement: row,
        },
    )
    .statements_per_transaction(10)
    .setup("PRAGMA synchronous = OFF");
    let report = run_load(db.clone(), Instant::now(), load, insert)
        .await
        .unwrap();
    let s = &report.stats;
    assert_eq!(s.workers.len(), 128);
    assert!(s
        .workers
        .iter()
        .all(|w| (w.statements, w.transactions) == (10, 1)));
    assert_eq!((s.transactions, s.rows), (128, 1280));
    assert_eq!(s.latency.transactions, 128);
    assert_eq!(s.errors.total(), 0);
    assert_eq!(rows_and_drop(db).await, 1280);
}
