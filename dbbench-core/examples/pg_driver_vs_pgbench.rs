//! The concurrent driver against pgbench on the same managed PostgreSQL cluster: the same
//! connection counts (C = 1, 4, 16), the same single-statement insert in a transaction of its own
//! (`BEGIN; INSERT …; END;`, three round trips of prepared statements on both sides: pgbench runs
//! with `-M prepared`, and the driver sends BEGIN and COMMIT from its statement cache), over the
//! same Unix socket, alternating driver and pgbench in ABBA order per round so drift favours
//! neither. Prints each run's transactions per second and the ratio driver / pgbench of the
//! pooled throughput per C (target ≥ 0.95).
//!
//! ```text
//! cargo run --release -j2 -p dbbench-core --example pg_driver_vs_pgbench
//! ```
//!
//! `DBBENCH_PGBENCH_SECS` (default 5) sets the seconds per run, `DBBENCH_PGBENCH_ROUNDS`
//! (default 2) the ABBA rounds, `DBBENCH_PGBENCH_CONNECTIONS` (default `1,4,16`) the connection
//! counts. pgbench is found beside the server binaries or on PATH.

use dbbench_core::__internals::config::{RunSpec, StorageSpec};
use dbbench_core::__internals::postgres::PostgresBackend;
use dbbench_core::__internals::Backend;
use dbbench_core::__internals::{run_benchmark, RunContext};
use dbbench_core::__internals::{BenchmarkSpec, BodyFuture, CellSpec};
use dbbench_core::driver::{Load, Op, Work};
use dbbench_core::results::CellStatus;
use dbbench_core::{Connection, Error, Result, Scale, Session, Value};
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

/// One pgbench run; returns its tps (without initial connection time).
fn pgbench(
    target: &dbbench_core::__internals::postgres::LibpqTarget,
    script: &str,
    c: u32,
    secs: u64,
) -> Result<f64> {
    let out = Command::new(pgbench_path())
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
    text.lines()
        .find(|l| l.starts_with("tps = "))
        .and_then(|l| l["tps = ".len()..].split_whitespace().next()?.parse().ok())
        .ok_or_else(|| Error::msg(format!("no tps in pgbench's output: {text}")))
}

/// One driver run; returns its transactions per second.
async fn driver(db: &mut Session, c: u32, secs: u64, label: String) -> Result<f64> {
    let load = Load::new(c, Work::Duration(Duration::from_secs(secs)))
        .statements_per_transaction(1)
        .name(label);
    let report = db
        .load(load)
        .run(async move |conn: &mut Connection, op: Op| {
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
    Ok(report.stats.transactions_per_s)
}

fn body(db: &mut Session) -> BodyFuture<'_> {
    Box::pin(async move {
        let secs = env_u64("DBBENCH_PGBENCH_SECS", 5);
        let rounds = env_u64("DBBENCH_PGBENCH_ROUNDS", 2);
        for table in ["ins_driver", "ins_pgbench"] {
            db.execute(&format!(
                "CREATE TABLE {table} (id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY, \
                 worker integer NOT NULL, v integer NOT NULL)"
            ))
            .await?;
        }
        let target = match db.connection() {
            Connection::Postgres(c) => c.libpq_target().clone(),
            _ => return Err(Error::msg("this example runs on the PostgreSQL backend")),
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
        println!("{:>3}  {:>12}  {:>12}", "C", "driver tx/s", "pgbench tx/s");
        for c in connections()? {
            let (mut d_sum, mut p_sum) = (0.0, 0.0);
            for round in 0..rounds {
                // ABBA: A B in even rounds, B A in odd ones.
                let driver_first = round % 2 == 0;
                let mut pair = [0.0f64; 2];
                for side in 0..2 {
                    let is_driver = (side == 0) == driver_first;
                    if is_driver {
                        pair[0] = driver(db, c, secs, format!("c{c}_r{round}")).await?;
                    } else {
                        pair[1] = pgbench(&target, &script_path, c, secs)?;
                    }
                }
                println!("{c:>3}  {:>12.1}  {:>12.1}", pair[0], pair[1]);
                d_sum += pair[0];
                p_sum += pair[1];
            }
            let ratio = d_sum / p_sum;
            println!(
                "C = {c:>2}: driver {:.1} tx/s, pgbench {:.1} tx/s, ratio {ratio:.3} ({})",
                d_sum / rounds as f64,
                p_sum / rounds as f64,
                if ratio >= TARGET {
                    "meets the 0.95 target"
                } else {
                    "below the 0.95 target"
                }
            );
            db.record_value(format!("ratio_c{c}"), ratio);
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
        let mut backend = Backend::Postgres(Box::new(PostgresBackend::managed()?));
        run_benchmark(&BENCH, None, &ctx, &mut backend).await
    })?;
    let _ = std::fs::remove_dir_all(&work_dir);
    match &result.cells[0].status {
        CellStatus::Ok => Ok(()),
        other => Err(Error::msg(format!("{other:?}"))),
    }
}
