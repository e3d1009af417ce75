//! Driver: concurrent load workers insert exactly the planned rows.

use super::*;

const WORKERS: u32 = 4;
const STATEMENTS: u64 = 400;
const PER_TRANSACTION: u32 = 10;
/// The insert of this binary's target, with its placeholders.
static INSERT: OnceLock<String> = OnceLock::new();
/// The table of this binary's target, with its payload column.
static CREATE: OnceLock<String> = OnceLock::new();

fn workers(db: &mut Session) -> BodyFuture<'_> {
    Box::pin(async move {
        db.execute(CREATE.get().expect("the target's table"))
            .await?;
        let insert = INSERT.get().expect("the target's insert").as_str();
        let load = Load::new(WORKERS, Work::Statements(STATEMENTS))
            .statements_per_transaction(PER_TRANSACTION);
        db.load(load)
            .run(async move |conn: &mut Connection, op: Op| {
                let params = [Value::Int(op.id as i64), Value::Int(op.worker.into())];
                conn.execute_with(insert, &params).await
            })
            .await?;
        let rows: i64 = db
            .query_scalar("SELECT count(*) FROM conformance_rows")
            .await?;
        db.record_count("table_rows", rows);
        // Ids are exactly 0..STATEMENTS, dealt round robin: worker w owns the ids ≡ w mod 4.
        let misplaced: i64 = db
            .query_scalar(&format!(
                "SELECT count(*) FROM conformance_rows \
                 WHERE id % {WORKERS} <> worker OR id >= {STATEMENTS}"
            ))
            .await?;
        db.record_count("misplaced_rows", misplaced);
        Ok(())
    })
}

super::super::benchmark! {
    static FOUR_WORKERS = workers,
    module: "conformance",
    title: "Four workers insert 4.1 KB rows in transactions of ten",
    run: RunSpec::DEFAULT,
    cells: [cell("only", StorageSpec::DEFAULT)],
}

pub fn driver_load<T: Target>(target: &T, name: &str) {
    CREATE.get_or_init(|| {
        format!(
            "CREATE TABLE conformance_rows (id bigint NOT NULL PRIMARY KEY, \
             worker integer NOT NULL, {})",
            target.payload_column()
        )
    });
    INSERT.get_or_init(|| {
        format!(
            "INSERT INTO conformance_rows (id, worker) VALUES ({}, {})",
            target.placeholder(1),
            target.placeholder(2)
        )
    });
    let ctx = context(name, "driver");
    let Some((result, left)) = on_backend(target, &ctx, async |backend: &mut Backend| {
        run_on(backend, &FOUR_WORKERS, &ctx).await
    }) else {
        return;
    };
    assert_nothing_left(&left);
    let cell = &result.cells[0];
    assert_eq!(cell.status, CellStatus::Ok, "{:?}", cell.status);
    let run = &cell.runs[0];
    if target.stores_rows() {
        assert_eq!(run.counts["table_rows"], STATEMENTS as i64);
        assert_eq!(run.counts["misplaced_rows"], 0);
    }
    assert_eq!(run.counts["load_statements"], STATEMENTS as i64);
    assert_eq!(run.counts["load_rows"], STATEMENTS as i64);
    assert_eq!(run.counts["load_transactions"], 40);

    assert_eq!(run.loads.len(), 1);
    let load = &run.loads[0];
    assert_eq!(load.workers.len(), WORKERS as usize);
    for (w, worker) in load.workers.iter().enumerate() {
        assert_eq!(worker.worker, w as u32);
        assert_eq!((worker.statements, worker.transactions), (100, 10));
        assert_eq!((worker.rows, worker.retries), (100, 0));
        // Workers on threads have their CPU read (a scripted double's may round to nothing).
        if cfg!(target_os = "linux") && load.execution == "threads" && target.stores_rows() {
            assert!(worker.cpu_s.is_some_and(|s| s > 0.0), "{worker:?}");
        }
    }
    assert_eq!(load.errors.total(), 0);
    assert_eq!(load.retries, 0);
    let config = &load.config;
    assert_eq!((config.workers, config.statements_per_transaction), (4, 10));
    assert_eq!(
        (config.planned_statements, config.planned_transactions),
        (Some(400), Some(40))
    );
    assert_eq!(config.worker_statements, [100; 4]);
    assert_eq!((config.name.as_str(), config.max_retries), ("load", 100));
    assert_eq!(
        (
            config.think_time_ms,
            config.target_rate_per_s,
            config.lock_timeout_ms
        ),
        (None, None, None)
    );

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

    // The reviewable snapshot carries the driver's configuration.
    let view = serde_json::to_value(dbbench_core::__internals::SnapshotView::of(
        &result,
        &ctx.work_dir,
    ))
    .unwrap();
    assert_eq!(
        view["cells"][0]["results"]["loads"][0],
        serde_json::to_value(&load.config).unwrap()
    );
}
