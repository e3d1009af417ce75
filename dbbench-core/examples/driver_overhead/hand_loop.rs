//! The hand-written side of the comparison: the same inserts as the driver's workers, on
//! connections opened and warmed the same way, one OS thread each with the same single-threaded
//! runtime, released together after the clock is read.

use crate::{insert_sql, Cost, Run, PER_TRANSACTION, ROW_BYTES};
use dbbench_core::{Error, Result, Session, Value};
use std::sync::{Arc, Barrier};
use std::time::{Duration, Instant};

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

/// Statements per worker: the driver's equal shares, first workers taking the remainder.
fn shares(statements: u64, workers: u32) -> Vec<u64> {
    let w = u64::from(workers);
    (0..w)
        .map(|i| statements / w + u64::from(i < statements % w))
        .collect()
}

/// The hand-written loop on the same kind of connections and threads.
pub async fn by_hand(db: &mut Session, run: &Run<'_>) -> Result<Cost> {
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
            let thread = std::thread::Builder::new().name(format!("hand-worker-{worker}"));
            thread.spawn(move || -> Result<(Instant, Duration)> {
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
        .collect::<std::io::Result<Vec<_>>>()
        .map_err(|e| Error::msg(format!("cannot start a hand-written worker: {e}")))?;
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
        driver_share: 0.0,
    })
}
