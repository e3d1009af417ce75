//! End to end on the embedded engine: a benchmark body runs the concurrent driver with four
//! workers inserting 4.1 KB rows in transactions of ten, and the results carry exact counts,
//! per-worker shares, a latency summary, a throughput series and the driver's configuration.

mod support;

use dbbench_core::__internals::config::{RunSpec, StorageSpec};
use dbbench_core::__internals::BodyFuture;
use dbbench_core::__internals::SnapshotView;
use dbbench_core::driver::{Load, Op, Work};
use dbbench_core::results::CellStatus;
use dbbench_core::{Connection, Session, Value};
use support::{cell, context_from_env, run_embedded};

const WORKERS: u32 = 4;
const STATEMENTS: u64 = 400;
const PER_TRANSACTION: u32 = 10;
/// The 1-TB article's row size.
const ROW_BYTES: usize = 4_100;

fn four_workers(db: &mut Session) -> BodyFuture<'_> {
    Box::pin(async move {
        db.execute(
            "CREATE TABLE row4k (id INTEGER PRIMARY KEY, worker INTEGER NOT NULL, \
             payload BLOB NOT NULL)",
        )
        .await?;
        let payload = vec![0xA5u8; ROW_BYTES];
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
                    "INSERT INTO row4k (id, worker, payload) VALUES (?1, ?2, ?3)",
                    &params,
                )
                .await
            })
            .await?;
        let rows: i64 = db.query_scalar("SELECT count(*) FROM row4k").await?;
        db.record_count("table_rows", rows);
        // Ids are exactly 0..STATEMENTS, dealt round robin: worker w owns the ids ≡ w mod 4.
        let misplaced: i64 = db
            .query_scalar(&format!(
                "SELECT count(*) FROM row4k WHERE id % {WORKERS} <> worker OR id >= {STATEMENTS}"
            ))
            .await?;
        db.record_count("misplaced_rows", misplaced);
        Ok(())
    })
}

support::benchmark! {
    static FOUR_WORKERS = four_workers,
    title: "Four workers insert 4.1 KB rows in transactions of ten",
    run: RunSpec::DEFAULT,
    cells: [cell("one_file", StorageSpec::DEFAULT)],
}

#[test]
fn four_workers_insert_exactly_the_planned_rows() {
    let ctx = context_from_env("driver-load");
    let result = run_embedded(&FOUR_WORKERS, &ctx);
    let cell = &result.cells[0];
    assert_eq!(cell.status, CellStatus::Ok);
    let run = &cell.runs[0];
    assert_eq!(run.counts["table_rows"], STATEMENTS as i64);
    assert_eq!(run.counts["misplaced_rows"], 0);
    assert_eq!(run.counts["load_statements"], STATEMENTS as i64);
    assert_eq!(run.counts["load_rows"], STATEMENTS as i64);
    assert_eq!(run.counts["load_transactions"], 40);

    assert_eq!(run.loads.len(), 1);
    let load = &run.loads[0];
    assert_eq!(load.execution, "threads");
    assert_eq!(load.workers.len(), WORKERS as usize);
    for (w, worker) in load.workers.iter().enumerate() {
        assert_eq!(worker.worker, w as u32);
        assert_eq!((worker.statements, worker.transactions), (100, 10));
        assert_eq!((worker.rows, worker.retries), (100, 0));
        if cfg!(target_os = "linux") {
            assert!(worker.cpu_s.is_some_and(|s| s > 0.0), "{worker:?}");
        }
    }
    assert_eq!(load.errors.total(), 0);
    assert_eq!(load.retries, 0);

    let latency = &load.latency;
    assert_eq!(latency.transactions, 40);
    assert!(latency.p50_ms > 0.0, "{latency:?}");
    assert!(latency.p50_ms <= latency.p95_ms && latency.p95_ms <= latency.p99_ms);
    assert!(latency.p99_ms <= latency.max_ms * 1.001);
    assert!(load.elapsed_s > 0.0 && load.transactions_per_s > 0.0);
    // The load started after the connections were warmed, inside the measured window.
    assert!(load.started_at_s >= 0.0 && load.started_at_s <= run.elapsed_s);
    assert!(load.saturation.wall_s > 0.0);

    let series = run
        .series
        .iter()
        .find(|s| s.name == "load: transactions/s")
        .expect("the throughput series");
    assert_eq!((series.unit.as_str(), series.interval_s), ("1/s", 1.0));
    assert_eq!(series.values.iter().sum::<f64>(), 40.0);

    // The reviewable snapshot carries the driver's configuration and the deterministic counts.
    let view = serde_json::to_value(SnapshotView::of(&result, &ctx.work_dir)).unwrap();
    let results = &view["cells"][0]["results"];
    let loads = &results["loads"];
    assert_eq!(loads[0], serde_json::to_value(&load.config).unwrap());
    let counts: serde_json::Map<String, serde_json::Value> = results["counts"]
        .as_object()
        .unwrap()
        .iter()
        .filter(|(k, _)| k.starts_with("load_") || k.ends_with("_rows"))
        .filter(|(k, _)| k.as_str() != "fixture_rows")
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    insta::assert_yaml_snapshot!(
        "four_workers_snapshot_part",
        serde_json::json!({ "loads": loads, "counts": counts })
    );
}
