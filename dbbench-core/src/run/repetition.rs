//! One repetition of one cell: create the database, load the fixture, open the measured window,
//! run the body, close the window, tear down. Teardown runs whatever the body did.
//!
//! The body runs under the database's stop switch: a watchdog thread fires it when the cell's
//! `timeout` passes, the signal handler on Ctrl-C or SIGTERM; either stops the statement in
//! flight on every connection, the body fails, and the error says why and where
//! ("timed out after 500ms in repetition 2 (statement: …)").

use crate::engine::{Backend, Database};
use crate::model::error::{Error, Result};
use crate::model::plan::DatabasePlan;
use crate::model::results::{RunResult, WindowTimes};
use crate::model::scale::Scale;
use crate::model::start::Preparation;
use crate::run::session::Session;
use crate::run::spec::{BenchmarkSpec, CellSpec};
use crate::util::cancel::{Cancel, Stop, Watchdog};
use crate::util::unwind::CatchUnwind;
use std::sync::Arc;
use std::time::Instant;

/// How long a body may take to return after its statements were cancelled, before it is
/// abandoned: long enough for SQL Server's `KILL` from a new login, short for a body that waits
/// on no statement at all.
const CANCEL_GRACE: std::time::Duration = std::time::Duration::from_secs(3);

/// Everything one repetition needs besides the backend.
pub struct Repetition<'a> {
    /// The benchmark.
    pub bench: &'static BenchmarkSpec,
    /// The cell.
    pub cell: &'a CellSpec,
    /// What to create (storage already scaled).
    pub plan: DatabasePlan,
    /// The data scale.
    pub scale: &'a Scale,
    /// Which repetition of the cell this is, from 1 (warm-ups included).
    pub number: u32,
}

/// Runs one repetition and returns its measurements and when its window was open; the database
/// is dropped in every case.
///
/// When the body fails and teardown fails too, the body's error is returned with the teardown
/// error appended, so the user sees the original cause first.
pub async fn run_repetition(
    backend: &mut Backend,
    rep: Repetition<'_>,
) -> Result<(RunResult, WindowTimes)> {
    // A server on this machine is the workload, not a neighbour, to the busy-machine guard.
    let server: Vec<u32> = backend.server_on_host().iter().map(|s| s.pid).collect();
    let created = Instant::now();
    let database = Arc::new(backend.create(&rep.plan).await?);
    let create_s = created.elapsed().as_secs_f64();
    let cancel = database.cancel().clone();
    let outcome = measure(&database, &rep, create_s, &server)
        .await
        .map_err(|e| stopped(&cancel, e, rep.number));
    let dropped = Instant::now();
    let teardown = match Arc::try_unwrap(database) {
        Ok(database) => database.drop_database().await,
        Err(_) => Err(Error::msg(
            "the database is still in use after the body returned; it was not dropped",
        )),
    };
    let teardown_s = dropped.elapsed().as_secs_f64();
    match (outcome, teardown) {
        (Ok((mut run, window)), Ok(())) => {
            if let Some(preparation) = run.start.as_mut().and_then(|s| s.preparation.as_mut()) {
                preparation.teardown_s = teardown_s;
            }
            Ok((run, window))
        }
        (Ok(_), Err(teardown)) => Err(Error::msg(format!("teardown failed: {teardown}"))),
        (Err(e), Ok(())) => Err(e),
        (Err(e), Err(teardown)) => Err(Error::msg(format!(
            "{e}\n(teardown also failed: {teardown})"
        ))),
    }
}

async fn measure(
    database: &Arc<Database>,
    rep: &Repetition<'_>,
    create_s: f64,
    server: &[u32],
) -> Result<(RunResult, WindowTimes)> {
    let loading = Instant::now();
    let mut conn = database.connect().await?;
    let fixture_rows = database
        .load_fixture(&mut conn, rep.bench.run.fixture, rep.scale)
        .await?;
    let fixture_s = loading.elapsed().as_secs_f64();
    let checkpoint = Instant::now();
    database.open_window(&mut conn, rep.bench.run.cache).await?;
    let checkpoint_s = checkpoint.elapsed().as_secs_f64();
    // Every window starts from the same state: nothing earlier work wrote is still on its way
    // to disk (and, for a cold cache, nothing of it in memory). Only a local engine's files are
    // this machine's to drop from its cache; a server empties its own (above).
    let cache = if database.profile().local_page_cache {
        rep.bench.run.cache
    } else {
        crate::model::start::CacheState::Warm
    };
    let mut start = crate::util::settle::settle(cache)?;
    start.cache = rep.bench.run.cache;
    start.preparation = Some(Preparation {
        create_s,
        fixture_s,
        checkpoint_s,
        // Known once the database is dropped (`run_repetition`).
        teardown_s: 0.0,
        // Known to the runner, which waits for the machine's measurement lock.
        lock_wait_s: 0.0,
        // Known once the window's connection is closed (below).
        close_s: 0.0,
        reused: database.reused(),
    });
    let mut session = Session::new(
        conn,
        database.clone(),
        rep.scale.clone(),
        fixture_rows,
        rep.cell.name,
    );
    // The busy-machine guard reads its counters just before the clock starts and just after it
    // stops, so its reads (a file per kernel thread) are outside the measured time.
    let monitor = crate::util::monitor::Monitor::open_with(server);
    session.start_clock();
    let started = Instant::now();
    let window_start = WindowTimes::now_ns();
    let body = CatchUnwind::new((rep.bench.body)(&mut session));
    let outcome = match rep.bench.run.timeout {
        Some(limit) => {
            // The watchdog stops blocking statements (the embedded engine's); the async timer
            // stops a body that waits on something else.
            let watchdog = Watchdog::start(limit, database.cancel().clone());
            let mut body = std::pin::pin!(body);
            let outcome = match tokio::time::timeout(limit, &mut body).await {
                Ok(outcome) => outcome,
                Err(_) => {
                    // Fired here (the timer may beat the watchdog thread); the body then gets
                    // its cancelled statement's error, which names the statement, unless it
                    // waits on something that is no statement.
                    database.cancel().fire(Stop::Timeout(limit));
                    match tokio::time::timeout(CANCEL_GRACE, &mut body).await {
                        Ok(outcome) => outcome,
                        Err(_) => Ok(Err(Error::Timeout {
                            limit,
                            repetition: rep.number,
                            statement: None,
                        })),
                    }
                }
            };
            watchdog.stop();
            outcome
        }
        None => body.await,
    };
    let elapsed = started.elapsed();
    let interference = monitor.close();
    let loads = session.take_loads();
    let (mut conn, laps, counts, values) = session.into_parts();
    match outcome {
        Err(panic) => return Err(Error::Panic(panic)),
        Ok(Err(e)) => return Err(e),
        Ok(Ok(())) => {}
    }
    let mut run = RunResult {
        elapsed_s: elapsed.as_secs_f64(),
        laps,
        counts,
        values,
        interference: Some(interference),
        start: Some(start),
        ..RunResult::default()
    };
    run.counts
        .insert("fixture_rows".into(), fixture_rows as i64);
    for load in loads {
        load.record(&mut run);
    }
    run.absorb(database.close_window(&mut conn).await?);
    let window = WindowTimes {
        start_unix_ns: window_start,
        end_unix_ns: WindowTimes::now_ns(),
    };
    // Closing the connection is timed apart: SQLite checkpoints what the window left in the
    // WAL as its last connection closes.
    let closing = Instant::now();
    drop(conn);
    if let Some(preparation) = run.start.as_mut().and_then(|s| s.preparation.as_mut()) {
        preparation.close_s = closing.elapsed().as_secs_f64();
    }
    Ok((run, window))
}

/// The error of a repetition whose database's switch was fired: why it stopped (timeout or
/// signal) and the statement that was running, instead of the backend's "interrupted".
fn stopped(cancel: &Cancel, error: Error, number: u32) -> Error {
    let statement = statement_of(&error);
    match cancel.fired() {
        Some(Stop::Timeout(limit)) => Error::Timeout {
            limit,
            repetition: number,
            statement,
        },
        Some(Stop::Signal(signal)) => Error::Interrupted {
            signal,
            detail: match statement {
                Some(s) => format!("in repetition {number} (statement: {s})"),
                None => format!("in repetition {number}"),
            },
        },
        None => error,
    }
}

/// The cancelled statement named in `error`, also when a driver worker wrapped it in its own
/// message.
fn statement_of(error: &Error) -> Option<String> {
    match error {
        Error::Cancelled { statement } => Some(statement.clone()),
        Error::Timeout { statement, .. } => statement.clone(),
        other => {
            let text = other.to_string();
            let start = text.find("cancelled (statement: ")? + "cancelled (statement: ".len();
            let end = text[start..].rfind(')')? + start;
            Some(text[start..end].to_string())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn a_fired_switch_names_the_reason_and_the_statement() {
        let cancel = Cancel::new();
        let cancelled = || Error::Cancelled {
            statement: "WITH RECURSIVE r(n)".into(),
        };
        assert!(matches!(
            stopped(&cancel, cancelled(), 2),
            Error::Cancelled { .. }
        ));
        cancel.fire(Stop::Timeout(Duration::from_millis(500)));
        assert_eq!(
            stopped(&cancel, cancelled(), 2).to_string(),
            "timed out after 500ms in repetition 2 (statement: WITH RECURSIVE r(n))"
        );
        let wrapped = Error::msg(
            "transaction 3 failed (timeout) after 0 retries: cancelled (statement: INSERT x)",
        );
        assert_eq!(
            stopped(&cancel, wrapped, 1).to_string(),
            "timed out after 500ms in repetition 1 (statement: INSERT x)"
        );
        let signalled = Cancel::new();
        signalled.fire(Stop::Signal("SIGINT"));
        assert_eq!(
            stopped(&signalled, cancelled(), 3).to_string(),
            "interrupted by SIGINT: in repetition 3 (statement: WITH RECURSIVE r(n))"
        );
    }
}
