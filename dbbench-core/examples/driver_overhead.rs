//! How much throughput does the concurrent driver cost? On the embedded engine, in one run, the
//! driver with C workers inserting 4.1 KB rows in transactions of ten is compared with a minimal
//! hand-written loop doing the same inserts: connections opened and warmed the same way, one OS
//! thread per connection with the same single-threaded runtime, the same statements and ids, and
//! the same start (all threads ready, clock read, then released). The two alternate in ABBA order
//! so drift (a growing WAL, a busy neighbour) does not favour either; each run gets a fresh table.
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
//! `DBBENCH_OVERHEAD_ROUNDS` (default 10) and `DBBENCH_OVERHEAD_ROWS` (rows per run and worker
//! count; default 2 000 with fsync, 10 000 without) change the size. The target is a throughput
//! ratio (driver / hand-written) of at least 0.97.

use dbbench_core::backend::embedded::EmbeddedBackend;
use dbbench_core::backend::Backend;
use dbbench_core::config::{RunSpec, StorageSpec};
use dbbench_core::driver::{Load, Op, Work};
use dbbench_core::results::CellStatus;
use dbbench_core::runner::{run_benchmark, RunContext};
use dbbench_core::spec::{BenchmarkSpec, BodyFuture, CellSpec};
use dbbench_core::{Connection, Error, Result, Scale, Session, Value};
use std::sync::{Arc, Barrier};
use std::time::{Duration, Instant};

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
        rows: 2_000,
    },
    Durability {
        label: "synchronous = OFF (CPU-bound)",
        setup: Some("PRAGMA synchronous = OFF"),
        rows: 10_000,
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
}

const NOTHING: Cost = Cost {
    wall: Duration::ZERO,
    cpu: Duration::ZERO,
};

fn setting(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// CPU time of the calling thread (Linux; zero elsewhere).
fn thread_cpu() -> Duration {
    #[cfg(target_os = "linux")]
    {
        let mut usage = std::mem::MaybeUninit::<libc::rusage>::zeroed();
        // SAFETY: getrusage writes into the valid, zeroed struct.
        if unsafe { libc::getrusage(libc::RUSAGE_THREAD, usage.as_mut_ptr()) } == 0 {
            // SAFETY: initialised by the successful call (and zeroed before it).
            let u = unsafe { usage.assume_init() };
            let t = |v: libc::timeval| {
                Duration::from_secs(v.tv_sec as u64) + Duration::from_micros(v.tv_usec as u64)
            };
            return t(u.ru_utime) + t(u.ru_stime);
        }
    }
    Duration::ZERO
}

fn insert_sql(table: &str) -> String {
    format!("INSERT INTO {table} (id, worker, payload) VALUES (?1, ?2, ?3)")
}

/// Statements per worker: the driver's equal shares, first workers taking the remainder.
fn shares(statements: u64, workers: u32) -> Vec<u64> {
    let w = u64::from(workers);
    (0..w)
        .map(|i| statements / w + u64::from(i < statements % w))
        .collect()
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
    })
}

/// The hand-written loop on the same kind of connections and threads.
async fn by_hand(db: &mut Session, run: &Run<'_>) -> Result<Cost> {
    let workers = run.workers;
    let mut connections = Vec::new();
    for _ in 0..workers {
        let mut conn = db.connect().await?;
        if let Some(setup) = run.setup {
            conn.batch(setup).await?;
        }
        conn.query("SELECT count(*) FROM sqlite_schema").await?;
        connections.push(conn);
    }
    let ready = Arc::new(Barrier::new(workers as usize + 1));
    let go = Arc::new(Barrier::new(workers as usize + 1));
    let sql: Arc<str> = insert_sql(run.table).into();
    let threads: Vec<_> = connections
        .into_iter()
        .zip(shares(run.rows, workers))
        .enumerate()
        .map(|(worker, (mut conn, share))| {
            let (ready, go, sql) = (ready.clone(), go.clone(), sql.clone());
            let payload = vec![0xA5u8; ROW_BYTES];
            std::thread::spawn(move || -> Result<(Instant, Duration)> {
                let runtime = tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                    .map_err(|e| Error::msg(e.to_string()))?;
                ready.wait();
                go.wait();
                let cpu = thread_cpu();
                runtime.block_on(async {
                    let mut done = 0;
                    while done < share {
                        let n = (share - done).min(PER_TRANSACTION);
                        conn.execute("BEGIN").await?;
                        for sequence in done..done + n {
                            let id = sequence * u64::from(workers) + worker as u64;
                            let params = [
                                Value::Int(id as i64),
                                Value::Int(worker as i64),
                                Value::Blob(payload.clone()),
                            ];
                            conn.execute_with(&sql, &params).await?;
                        }
                        conn.execute("COMMIT").await?;
                        done += n;
                    }
                    Ok((Instant::now(), thread_cpu() - cpu))
                })
            })
        })
        .collect();
    ready.wait();
    let start = Instant::now();
    go.wait();
    let (mut end, mut cpu) = (start, Duration::ZERO);
    for thread in threads {
        let (finished, spent) = thread
            .join()
            .map_err(|_| Error::msg("a hand-written worker panicked"))??;
        end = end.max(finished);
        cpu += spent;
    }
    Ok(Cost {
        wall: end - start,
        cpu,
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
    let cost = if driver {
        with_driver(db, run).await?
    } else {
        by_hand(db, run).await?
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
    Ok(cost)
}

/// The ratios of one setting and worker count over all rounds.
struct Ratios {
    /// Total hand-written wall time over total driver wall time (equal work per run).
    pooled: f64,
    median: f64,
    min: f64,
    max: f64,
    /// Hand-written CPU time over driver CPU time: above 1 when the driver used less.
    cpu: f64,
}

async fn measure(
    db: &mut Session,
    durability: &Durability,
    workers: u32,
    rounds: u64,
    rows: u64,
) -> Result<Ratios> {
    let mut total = [NOTHING; 2];
    let mut ratios = Vec::new();
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
            let sync = if durability.setup.is_some() {
                "nosync"
            } else {
                "sync"
            };
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
        let ratio = rate(cost[0]) / rate(cost[1]);
        ratios.push(ratio);
        println!(
            "{workers:>4}  {round:>5}  {:>14.0}  {:>14.0}  {ratio:>6.3}  {:>9.3}",
            rate(cost[0]),
            rate(cost[1]),
            cost[1].cpu.as_secs_f64() / cost[0].cpu.as_secs_f64()
        );
    }
    ratios.sort_by(f64::total_cmp);
    Ok(Ratios {
        pooled: total[1].wall.as_secs_f64() / total[0].wall.as_secs_f64(),
        median: ratios[ratios.len() / 2],
        min: ratios[0],
        max: ratios[ratios.len() - 1],
        cpu: total[1].cpu.as_secs_f64() / total[0].cpu.as_secs_f64(),
    })
}

fn compare(db: &mut Session) -> BodyFuture<'_> {
    Box::pin(async move {
        let rounds = setting("DBBENCH_OVERHEAD_ROUNDS", 10).max(1);
        let mut summary = Vec::new();
        for durability in &DURABILITY {
            let rows = setting("DBBENCH_OVERHEAD_ROWS", durability.rows);
            println!(
                "\n{}: {ROW_BYTES}-byte rows, transactions of {PER_TRANSACTION}, {rows} rows \
                 per run, {rounds} rounds (ABBA)",
                durability.label
            );
            println!("   C  round   driver rows/s     hand rows/s   ratio  cpu ratio");
            for workers in WORKER_COUNTS {
                let ratios = measure(db, durability, workers, rounds, rows).await?;
                summary.push((durability.label, workers, ratios));
            }
        }
        println!("\ndriver / hand-written: throughput (target ≥ {TARGET}) and CPU per row");
        println!("   C  pooled  median  min     max     cpu ratio  setting");
        for (label, workers, r) in summary {
            let verdict = if r.pooled >= TARGET {
                ""
            } else {
                "  (below target)"
            };
            println!(
                "{workers:>4}  {:>6.3}  {:>6.3}  {:>6.3}  {:>6.3}  {:>9.3}  {label}{verdict}",
                r.pooled, r.median, r.min, r.max, r.cpu
            );
        }
        Ok(())
    })
}

static CELLS: [CellSpec; 1] = [CellSpec {
    name: "one_file",
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
        let mut backend = Backend::Embedded(EmbeddedBackend::new());
        run_benchmark(&OVERHEAD, None, &ctx, &mut backend).await
    })?;
    match &result.cells[0].status {
        CellStatus::Ok => Ok(()),
        CellStatus::Failed(e) | CellStatus::Skipped(e) => Err(Error::msg(e.clone())),
    }
}
