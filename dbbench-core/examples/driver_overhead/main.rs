//! How much throughput does the concurrent driver cost? On the embedded engine, in one run, the
//! driver with C workers inserting 4.1 KB rows in transactions of ten is compared with a minimal
//! hand-written loop doing the same inserts: connections opened and warmed the same way, one OS
//! thread per connection with the same single-threaded runtime, the same statements and ids, and
//! the same start (all threads ready, clock read, then released). The two alternate in ABBA order
//! so drift (a busy neighbour) does not favour either. Each run gets a fresh table and starts
//! from the same files: an unmeasured run first grows the database file, and after every run the
//! table is dropped and the WAL checkpointed and truncated.
//!
//! Two durability settings are measured: the engine as configured (`synchronous = FULL`, every
//! commit waits for an fsync, so the disk dominates) and without fsync (`synchronous = OFF` on
//! every connection of both sides), where the work is CPU-bound and the driver's own cost shows
//! most. Besides throughput, the CPU time of the worker threads per row is compared: on a shared
//! machine it varies far less than wall time, and it is where a driver's overhead would appear.
//!
//! ```text
//! cargo run --release -j2 -p dbbench-core --example driver_overhead
//! ```
//!
//! Runs are short and many (30 ABBA rounds of 600 rows with fsync, 3 000 without), so the two
//! sides of a round see the same neighbours. The summary gives the geometric mean of the
//! per-round throughput ratios with its 95% interval, the pooled ratio, the CPU ratio, and the
//! share of the workers' time the driver's own code took as the driver measures it: the overhead
//! itself, free of the machine's noise.
//!
//! Settings: `DBBENCH_OVERHEAD_ROUNDS` and `DBBENCH_OVERHEAD_ROWS` (rows per run) change the
//! size; `DBBENCH_OVERHEAD_WORKERS` (`1,4,16`) and `DBBENCH_OVERHEAD_SYNC` (`full,off`) choose
//! what runs; `DBBENCH_OVERHEAD_CONTROL=1` runs the hand-written loop on both sides, an A/A
//! control that shows the noise floor of the throughput ratio on this machine. The target is a
//! throughput ratio (driver / hand-written) of at least 0.97.

mod hand_loop;
mod interval;

use dbbench_core::__internals::config::{RunSpec, StorageSpec};
use dbbench_core::__internals::embedded::EmbeddedBackend;
use dbbench_core::__internals::Backend;
use dbbench_core::__internals::{run_benchmark, RunContext};
use dbbench_core::__internals::{BenchmarkSpec, BodyFuture, CellSpec};
use dbbench_core::driver::{Load, Op, Work};
use dbbench_core::results::CellStatus;
use dbbench_core::{Connection, Error, Result, Scale, Session, Value};
use std::time::Duration;

const WORKER_COUNTS: [u32; 3] = [1, 4, 16];
const PER_TRANSACTION: u64 = 10;
const ROW_BYTES: usize = 4_100;
const TARGET: f64 = 0.97;

/// A durability setting: its label, the statement both sides run on each connection, and the
/// default rows per run.
struct Durability {
    label: &'static str,
    setup: Option<&'static str>,
    rows: u64,
}

const DURABILITY: [Durability; 2] = [
    Durability {
        label: "synchronous = FULL (as configured)",
        setup: None,
        rows: 600,
    },
    Durability {
        label: "synchronous = OFF (CPU-bound)",
        setup: Some("PRAGMA synchronous = OFF"),
        rows: 3_000,
    },
];

/// One measured insert.
struct Run<'a> {
    table: &'a str,
    workers: u32,
    rows: u64,
    setup: Option<&'static str>,
}

/// What one run cost.
#[derive(Debug, Clone, Copy)]
struct Cost {
    /// From the start to the last commit.
    wall: Duration,
    /// CPU time of the worker threads over the same span.
    cpu: Duration,
    /// The part of the workers' time spent in the driver's code between transactions, as the
    /// driver measures it (zero for the hand-written loop).
    driver_share: f64,
}

const NOTHING: Cost = Cost {
    wall: Duration::ZERO,
    cpu: Duration::ZERO,
    driver_share: 0.0,
};

fn setting(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}
/// `DBBENCH_OVERHEAD_CONTROL=1` replaces the driver by the hand-written loop: an A/A run that
/// shows how far two identical sides drift apart on this machine.
fn control() -> bool {
    std::env::var("DBBENCH_OVERHEAD_CONTROL").is_ok_and(|v| v == "1")
}

fn insert_sql(table: &str) -> String {
    format!("INSERT INTO {table} (id, worker, payload) VALUES (?1, ?2, ?3)")
}
async fn with_driver(db: &mut Session, run: &Run<'_>) -> Result<Cost> {
    let sql = insert_sql(run.table);
    let payload = vec![0xA5u8; ROW_BYTES];
    let mut load = Load::new(run.workers, Work::Statements(run.rows))
        .name(run.table)
        .statements_per_transaction(PER_TRANSACTION as u32);
    if let Some(setup) = run.setup {
        load = load.setup(setup);
    }
    let report = db
        .load(load)
        .run(async move |conn: &mut Connection, op: Op| {
            let params = [
                Value::Int(op.id as i64),
                Value::Int(op.worker.into()),
                Value::Blob(payload.clone()),
            ];
            conn.execute_with(&sql, &params).await
        })
        .await?;
    for warning in &report.stats.saturation.warnings {
        println!("    warning: {warning}");
    }
    let cpu: f64 = report.stats.workers.iter().filter_map(|w| w.cpu_s).sum();
    Ok(Cost {
        wall: Duration::from_secs_f64(report.stats.elapsed_s),
        cpu: Duration::from_secs_f64(cpu),
        driver_share: report.stats.saturation.driver_share,
    })
}
/// Runs one measured insert into a fresh table and checks the row count.
async fn one_run(db: &mut Session, driver: bool, run: &Run<'_>) -> Result<Cost> {
    let table = run.table;
    db.execute(&format!(
        "CREATE TABLE {table} (id INTEGER PRIMARY KEY, worker INTEGER NOT NULL, \
         payload BLOB NOT NULL)"
    ))
    .await?;
    let cost = if driver && !control() {
        with_driver(db, run).await?
    } else {
        hand_loop::by_hand(db, run).await?
    };
    let rows: i64 = db
        .query_scalar(&format!("SELECT count(*) FROM {table}"))
        .await?;
    if rows != run.rows as i64 {
        return Err(Error::msg(format!(
            "{table}: {rows} rows, expected {}",
            run.rows
        )));
    }
    db.execute(&format!("DROP TABLE {table}")).await?;
    // Every run starts from the same files: an empty WAL and the dropped table's pages free.
    db.query("PRAGMA wal_checkpoint(TRUNCATE)").await?;
    Ok(cost)
}

/// The ratios of one setting and worker count over all rounds.
struct Ratios {
    /// Geometric mean of the per-round throughput ratios.
    mean: f64,
    /// Its 95% confidence interval (t distribution on the log ratios).
    low: f64,
    high: f64,
    /// Total hand-written wall time over total driver wall time (equal work per run).
    pooled: f64,
    /// Hand-written CPU time over driver CPU time: above 1 when the driver used less.
    cpu: f64,
    /// Mean share of the workers' time the driver's own code took.
    driver_share: f64,
}
async fn measure(
    db: &mut Session,
    durability: &Durability,
    workers: u32,
    rounds: u64,
    rows: u64,
) -> Result<Ratios> {
    let sync = if durability.setup.is_some() {
        "nosync"
    } else {
        "sync"
    };
    // An unmeasured run first grows the database file, so no measured run pays for that.
    let warm_up = Run {
        table: &format!("{sync}_c{workers}_warm_up"),
        workers,
        rows,
        setup: durability.setup,
    };
    one_run(db, false, &warm_up).await?;
    let mut total = [NOTHING; 2];
    let mut ratios = Vec::new();
    let mut driver_share = 0.0;
    for round in 0..rounds {
        let mut cost = [NOTHING; 2];
        // ABBA: the driver goes first in even rounds, second in odd ones.
        let order = if round % 2 == 0 {
            [true, false]
        } else {
            [false, true]
        };
        for driver in order {
            let side = if driver { "driver" } else { "hand" };
            let table = format!("{sync}_c{workers}_r{round}_{side}");
            let run = Run {
                table: &table,
                workers,
                rows,
                setup: durability.setup,
            };
            let side = usize::from(!driver);
            cost[side] = one_run(db, driver, &run).await?;
            total[side].wall += cost[side].wall;
            total[side].cpu += cost[side].cpu;
        }
        let rate = |c: Cost| rows as f64 / c.wall.as_secs_f64();
        driver_share += cost[0].driver_share / rounds as f64;
        let ratio = rate(cost[0]) / rate(cost[1]);
        ratios.push(ratio);
        println!(
            "{workers:>4}  {round:>5}  {:>14.0}  {:>14.0}  {ratio:>6.3}  {:>9.3}",
            rate(cost[0]),
            rate(cost[1]),
            cost[1].cpu.as_secs_f64() / cost[0].cpu.as_secs_f64()
        );
    }
    let (mean, low, high) = interval::geometric_interval(&ratios);
    Ok(Ratios {
        mean,
        low,
        high,
        pooled: total[1].wall.as_secs_f64() / total[0].wall.as_secs_f64(),
        cpu: total[1].cpu.as_secs_f64() / total[0].cpu.as_secs_f64(),
        driver_share,
    })
}

fn compare(db: &mut Session) -> BodyFuture<'_> {
    Box::pin(async move {
        let rounds = setting("DBBENCH_OVERHEAD_ROUNDS", 30).max(1);
        let mut summary = Vec::new();
        let workers_list = std::env::var("DBBENCH_OVERHEAD_WORKERS").unwrap_or_default();
        let chosen_workers: Vec<u32> = workers_list
            .split(',')
            .filter_map(|w| w.trim().parse().ok())
            .collect();
        let sync_list = std::env::var("DBBENCH_OVERHEAD_SYNC").unwrap_or_default();
        for durability in &DURABILITY {
            let keyword = if durability.setup.is_some() {
                "off"
            } else {
                "full"
            };
            if !sync_list.is_empty() && !sync_list.split(',').any(|s| s.trim() == keyword) {
                continue;
            }
            let rows = setting("DBBENCH_OVERHEAD_ROWS", durability.rows);
            println!(
                "\n{}: {ROW_BYTES}-byte rows, transactions of {PER_TRANSACTION}, {rows} rows \
                 per run, {rounds} rounds (ABBA)",
                durability.label
            );
            println!("   C  round   driver rows/s     hand rows/s   ratio  cpu ratio");
            for workers in WORKER_COUNTS {
                if !chosen_workers.is_empty() && !chosen_workers.contains(&workers) {
                    continue;
                }
                let ratios = measure(db, durability, workers, rounds, rows).await?;
                summary.push((durability.label, workers, ratios));
            }
        }
        let title = if control() {
            "A/A control: hand-written / hand-written"
        } else {
            "driver / hand-written"
        };
        println!("\n{title} (throughput target ≥ {TARGET})");
        println!("   C  throughput [95% interval]  pooled  cpu per row  driver share  setting");
        for (label, workers, r) in summary {
            println!(
                "{workers:>4}  {:>10.3} [{:.3}, {:.3}]  {:>6.3}  {:>11.3}  {:>11.4}%  {label}",
                r.mean,
                r.low,
                r.high,
                r.pooled,
                r.cpu,
                r.driver_share * 100.0
            );
        }
        Ok(())
    })
}

static CELLS: [CellSpec; 1] = [CellSpec {
    name: "one_file",
    backends: &[],
    storage: StorageSpec::DEFAULT,
}];

static OVERHEAD: BenchmarkSpec = BenchmarkSpec {
    name: "driver_overhead",
    module_path: "examples::driver_overhead",
    manifest_dir: env!("CARGO_MANIFEST_DIR"),
    source_file: file!(),
    title: "Driver throughput against a hand-written loop",
    run: RunSpec::DEFAULT,
    cells: &CELLS,
    body: compare,
};

fn main() -> Result<()> {
    let ctx = RunContext::from_env(env!("CARGO_MANIFEST_DIR"), Scale::smoke())?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|e| Error::msg(format!("cannot start the runtime: {e}")))?;
    let result = runtime.block_on(async {
        let mut backend = Backend::new(EmbeddedBackend::new());
        run_benchmark(&OVERHEAD, None, &ctx, &mut backend).await
    })?;
    match &result.cells[0].status {
        CellStatus::Ok => Ok(()),
        CellStatus::Failed(e) | CellStatus::Skipped(e) => Err(Error::msg(e.clone())),
    }
}
