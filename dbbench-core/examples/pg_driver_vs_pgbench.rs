//! The concurrent driver against pgbench on the same managed PostgreSQL cluster: the same
//! connection counts (C = 1, 4, 16), the same single-statement insert in a transaction of its own
//! (`BEGIN; INSERT …; END;`, three round trips of prepared statements on both sides: pgbench runs
//! with `-M prepared`, and the driver sends BEGIN and COMMIT from its statement cache), over the
//! same Unix socket, alternating driver and pgbench in ABBA order per round so drift favours
//! neither; every run starts from a fresh `CHECKPOINT`, with autovacuum off on both tables. Prints each run's transactions per second and the ratio driver / pgbench of the
//! pooled throughput per C (target ≥ 0.95).
//!
//! Each C runs in two placements. *Free*: the scheduler places the clients. *Pinned*: the
//! clients (pgbench's process with all its threads, the driver's worker threads) may run only on
//! the CPUs of `DBBENCH_PGBENCH_PIN` (default `0`), the same for both; the server is never
//! pinned. Why both: at one connection the throughput depends on whether the client happens to
//! share a CPU with its backend (no wake-up of an idle CPU per round trip) more than on the
//! client's own cost. On the 2-core VM of the README pgbench alone made 4,500–4,800 tx/s pinned
//! to CPU 0, 6,000–6,100 pinned to CPU 1 (its backend's CPU, which also takes the disk
//! interrupts) and anything between when free, so a free ratio partly measures where the
//! scheduler put each client. Pinned, both clients run under the same conditions and the ratio
//! measures the clients. `DBBENCH_PGBENCH_PIN=none` skips the pinned rounds.
//!
//! ```text
//! cargo run --release -j2 -p dbbench-core --example pg_driver_vs_pgbench
//! ```
//!
//! `DBBENCH_PGBENCH_SECS` (default 2) sets the seconds per run, `DBBENCH_PGBENCH_ROUNDS`
//! (default 10) the ABBA rounds (many short rounds: consecutive runs of the same client on this
//! VM differ by up to a fifth, so one long pair says little), `DBBENCH_PGBENCH_CONNECTIONS` (default `1,4,16`) the connection
//! counts. pgbench is found beside the server binaries or on PATH.

use dbbench_core::__internals::config::{RunSpec, StorageSpec};
use dbbench_core::__internals::postgres::{PostgresBackend, PostgresConnection};
use dbbench_core::__internals::Backend;
use dbbench_core::__internals::{run_benchmark, RunContext};
use dbbench_core::__internals::{BenchmarkSpec, BodyFuture, CellSpec};
use dbbench_core::driver::{Load, Op, Work};
use dbbench_core::results::CellStatus;
use dbbench_core::{Connection, Error, Result, Scale, Session, Value};
use std::cell::Cell;
use std::os::unix::process::CommandExt;
use std::process::Command;
use std::time::Duration;

const CONNECTIONS: [u32; 3] = [1, 4, 16];
const TARGET: f64 = 0.95;

fn env_u64(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// The connection counts to compare: `DBBENCH_PGBENCH_CONNECTIONS` (`1,4`), else `CONNECTIONS`.
fn connections() -> Result<Vec<u32>> {
    let Ok(list) = std::env::var("DBBENCH_PGBENCH_CONNECTIONS") else {
        return Ok(CONNECTIONS.to_vec());
    };
    list.split(',')
        .map(|c| match c.trim().parse::<u32>() {
            Ok(n) if n > 0 => Ok(n),
            _ => Err(Error::msg(format!(
                "DBBENCH_PGBENCH_CONNECTIONS: `{c}` is not a positive count (in `{list}`)"
            ))),
        })
        .collect()
}

/// Where the clients run.
#[derive(Clone, Copy)]
enum Placement {
    /// Wherever the scheduler puts them.
    Free,
    /// Only on these CPUs.
    Pinned(libc::cpu_set_t),
}

impl Placement {
    fn label(&self, cpus: &str) -> String {
        match self {
            Placement::Free => "free".into(),
            Placement::Pinned(_) => format!("pinned to CPU {cpus}"),
        }
    }
}

/// The CPUs of `DBBENCH_PGBENCH_PIN` (`0`, `0,1`), `None` for `none`.
fn pin_cpus() -> Result<Option<(String, libc::cpu_set_t)>> {
    let list = std::env::var("DBBENCH_PGBENCH_PIN").unwrap_or_else(|_| "0".into());
    if list.trim() == "none" {
        return Ok(None);
    }
    // SAFETY: an all-zero cpu_set_t is the empty set.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    for cpu in list.split(',') {
        match cpu.trim().parse::<usize>() {
            // SAFETY: CPU_SET writes one bit inside `set` for a CPU number below its size.
            Ok(n) if n < libc::CPU_SETSIZE as usize => unsafe { libc::CPU_SET(n, &mut set) },
            _ => {
                return Err(Error::msg(format!(
                    "DBBENCH_PGBENCH_PIN: `{cpu}` is not a CPU number (in `{list}`; `none` skips \
                     the pinned rounds)"
                )))
            }
        }
    }
    Ok(Some((list, set)))
}

/// Restricts the calling thread (a process's first thread: the process) to `set`.
fn pin_current_thread(set: &libc::cpu_set_t) -> std::io::Result<()> {
    // SAFETY: `set` is a valid cpu_set_t of the size passed; pid 0 is the calling thread.
    let rc = unsafe { libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), set) };
    if rc == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

thread_local! {
    /// Whether this worker thread was pinned already (each load starts fresh threads).
    static PINNED: Cell<bool> = const { Cell::new(false) };
}

fn pgbench_path() -> String {
    let beside = std::env::var("DBBENCH_PG_BINDIR")
        .ok()
        .map(|d| format!("{d}/pgbench"))
        .or_else(|| {
            let out = Command::new("pg_config").arg("--bindir").output().ok()?;
            Some(format!(
                "{}/pgbench",
                String::from_utf8_lossy(&out.stdout).trim()
            ))
        });
    match beside {
        Some(p) if std::path::Path::new(&p).is_file() => p,
        _ => "pgbench".into(),
    }
}

/// CPU time (user + system) of this process's waited-for children so far.
fn children_cpu() -> Duration {
    // SAFETY: getrusage fills the zeroed struct it is given.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe { libc::getrusage(libc::RUSAGE_CHILDREN, &mut usage) };
    let time = |t: libc::timeval| Duration::new(t.tv_sec as u64, t.tv_usec as u32 * 1000);
    time(usage.ru_utime) + time(usage.ru_stime)
}

/// One run's throughput and its client's CPU time per transaction.
#[derive(Clone, Copy, Default)]
struct Run {
    tps: f64,
    cpu_us_per_tx: f64,
}

/// One pgbench run: its tps (without initial connection time) and CPU per transaction (its
/// whole process, connection setup included).
fn pgbench(
    target: &dbbench_core::__internals::postgres::LibpqTarget,
    script: &str,
    c: u32,
    secs: u64,
    placement: Placement,
) -> Result<Run> {
    let mut command = Command::new(pgbench_path());
    if let Placement::Pinned(set) = placement {
        // SAFETY: sched_setaffinity is a plain system call, safe between fork and exec; its
        // threads (`-j`) inherit the mask.
        unsafe { command.pre_exec(move || pin_current_thread(&set)) };
    }
    let cpu_before = children_cpu();
    let out = command
        .args(["-n", "-M", "prepared", "-f", script])
        .args([
            "-c",
            &c.to_string(),
            "-j",
            &c.to_string(),
            "-T",
            &secs.to_string(),
        ])
        .args([
            "-h",
            &target.host,
            "-p",
            &target.port.to_string(),
            "-U",
            &target.user,
        ])
        .arg(&target.dbname)
        .output()
        .map_err(|e| Error::msg(format!("cannot run pgbench: {e}")))?;
    let text = String::from_utf8_lossy(&out.stdout);
    if !out.status.success() {
        return Err(Error::msg(format!(
            "pgbench failed: {}{}",
            text,
            String::from_utf8_lossy(&out.stderr)
        )));
    }
    let cpu = children_cpu().saturating_sub(cpu_before);
    let number = |prefix: &str| -> Option<f64> {
        let line = text.lines().find(|l| l.starts_with(prefix))?;
        line[prefix.len()..].split_whitespace().next()?.parse().ok()
    };
    let tps = number("tps = ")
        .ok_or_else(|| Error::msg(format!("no tps in pgbench's output: {text}")))?;
    let transactions = number("number of transactions actually processed: ").unwrap_or(0.0);
    Ok(Run {
        tps,
        cpu_us_per_tx: cpu.as_secs_f64() * 1e6 / transactions.max(1.0),
    })
}

/// One driver run: its transactions per second and the process's CPU per transaction over the
/// measured load (the server is another process).
async fn driver(
    db: &mut Session,
    c: u32,
    secs: u64,
    label: String,
    placement: Placement,
) -> Result<Run> {
    let load = Load::new(c, Work::Duration(Duration::from_secs(secs)))
        .statements_per_transaction(1)
        .name(label);
    let report = db
        .load(load)
        .run(async move |conn: &mut Connection, op: Op| {
            if let Placement::Pinned(set) = placement {
                // Once per worker thread, at its first statement.
                if !PINNED.replace(true) {
                    pin_current_thread(&set).map_err(|e| Error::msg(format!("pinning: {e}")))?;
                }
            }
            let params = [
                Value::Int(op.worker.into()),
                Value::Int((op.sequence % 1001) as i64),
            ];
            conn.execute_with(
                "INSERT INTO ins_driver (worker, v) VALUES ($1, $2)",
                &params,
            )
            .await
        })
        .await?;
    let stats = &report.stats;
    Ok(Run {
        tps: stats.transactions_per_s,
        cpu_us_per_tx: stats.saturation.process_cpu_s.unwrap_or(0.0) * 1e6
            / (stats.transactions.max(1) as f64),
    })
}

fn body(db: &mut Session) -> BodyFuture<'_> {
    Box::pin(async move {
        let secs = env_u64("DBBENCH_PGBENCH_SECS", 2);
        let rounds = env_u64("DBBENCH_PGBENCH_ROUNDS", 10);
        for table in ["ins_driver", "ins_pgbench"] {
            db.execute(&format!(
                "CREATE TABLE {table} (id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY, \
                 worker integer NOT NULL, v integer NOT NULL) WITH (autovacuum_enabled = false)"
            ))
            .await?;
        }
        let target = match db.connection().downcast_mut::<PostgresConnection>() {
            Some(c) => c.libpq_target().clone(),
            None => return Err(Error::msg("this example runs on the PostgreSQL backend")),
        };
        let script =
            std::env::temp_dir().join(format!("dbbench-pgbench-{}.sql", std::process::id()));
        std::fs::write(
            &script,
            "\\set v random(0, 1000)\nBEGIN;\nINSERT INTO ins_pgbench (worker, v) VALUES (:client_id, :v);\nEND;\n",
        )
        .map_err(|e| Error::io("cannot write", &script, e))?;
        let script_path = script.display().to_string();
        println!(
            "{secs} s per run, {rounds} ABBA rounds, insert of one row per transaction, fsync on; \
             pgbench -M prepared on the driver's socket ({}:{})",
            target.host, target.port
        );
        println!(
            "{:>3}  {:>12}  {:>12}  {:>11}  {:>12}  clients",
            "C", "driver tx/s", "pgbench tx/s", "driver µs/tx", "pgbench µs/tx"
        );
        let pinned = pin_cpus()?;
        let mut placements = vec![Placement::Free];
        placements.extend(pinned.as_ref().map(|(_, set)| Placement::Pinned(*set)));
        let cpus = pinned.as_ref().map_or("", |(list, _)| list.as_str());
        for c in connections()? {
            for (p, &placement) in placements.iter().enumerate() {
                let place = placement.label(cpus);
                let (mut d_sum, mut p_sum) = (0.0, 0.0);
                let (mut d_cpu, mut p_cpu) = (0.0, 0.0);
                let mut pair_ratios = Vec::new();
                for round in 0..rounds {
                    // ABBA: A B in even rounds, B A in odd ones.
                    let driver_first = round % 2 == 0;
                    let mut pair = [Run::default(); 2];
                    for side in 0..2 {
                        let is_driver = (side == 0) == driver_first;
                        // Every run starts from a fresh checkpoint, so neither inherits the
                        // other's dirty buffers or writes the first full-page images after one
                        // (autovacuum is off on both tables for the same reason).
                        db.execute("CHECKPOINT").await?;
                        if is_driver {
                            let label = format!("c{c}_p{p}_r{round}");
                            pair[0] = driver(db, c, secs, label, placement).await?;
                        } else {
                            pair[1] = pgbench(&target, &script_path, c, secs, placement)?;
                        }
                    }
                    println!(
                        "{c:>3}  {:>12.1}  {:>12.1}  {:>11.1}  {:>12.1}  {place}",
                        pair[0].tps, pair[1].tps, pair[0].cpu_us_per_tx, pair[1].cpu_us_per_tx
                    );
                    d_sum += pair[0].tps;
                    p_sum += pair[1].tps;
                    d_cpu += pair[0].cpu_us_per_tx;
                    p_cpu += pair[1].cpu_us_per_tx;
                    pair_ratios.push(pair[0].tps / pair[1].tps);
                }
                let ratio = d_sum / p_sum;
                let (low, high) = pair_ratios
                    .iter()
                    .fold((f64::MAX, f64::MIN), |(l, h), r| (l.min(*r), h.max(*r)));
                let n = rounds as f64;
                println!(
                    "C = {c:>2}, {place}: driver {:.1} tx/s, pgbench {:.1} tx/s, ratio {ratio:.3} \
                     (rounds {low:.3}–{high:.3}; {}); client CPU {:.1} vs {:.1} µs/tx",
                    d_sum / n,
                    p_sum / n,
                    if ratio >= TARGET {
                        "meets the 0.95 target"
                    } else {
                        "below the 0.95 target"
                    },
                    d_cpu / n,
                    p_cpu / n,
                );
                let key = match placement {
                    Placement::Free => format!("ratio_c{c}_free"),
                    Placement::Pinned(_) => format!("ratio_c{c}_pinned"),
                };
                db.record_value(key, ratio);
            }
        }
        let _ = std::fs::remove_file(&script);
        Ok(())
    })
}

static CELLS: [CellSpec; 1] = [CellSpec {
    name: "managed",
    storage: StorageSpec::DEFAULT,
    backends: &[],
}];

static BENCH: BenchmarkSpec = BenchmarkSpec {
    name: "pg_driver_vs_pgbench",
    module_path: "examples::pg_driver_vs_pgbench",
    manifest_dir: env!("CARGO_MANIFEST_DIR"),
    source_file: file!(),
    title: "The driver against pgbench on one managed cluster",
    run: RunSpec::DEFAULT,
    cells: &CELLS,
    body,
};

fn main() -> Result<()> {
    let work_dir =
        std::env::temp_dir().join(format!("dbbench-pgbench-example-{}", std::process::id()));
    let ctx = RunContext {
        scale: Scale::smoke(),
        volumes: Default::default(),
        work_dir: work_dir.clone(),
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|e| Error::msg(e.to_string()))?;
    let result = runtime.block_on(async {
        let mut backend = Backend::new(PostgresBackend::managed()?);
        run_benchmark(&BENCH, None, &ctx, &mut backend).await
    })?;
    let _ = std::fs::remove_dir_all(&work_dir);
    match &result.cells[0].status {
        CellStatus::Ok => Ok(()),
        other => Err(Error::msg(format!("{other:?}"))),
    }
}
