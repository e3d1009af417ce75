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
use crate::util::deadline::{spoken, Deadline};
use crate::util::unwind::CatchUnwind;
use std::sync::Arc;
use std::time::{Duration, Instant};

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
    // Named while it exists, for a run the interrupt's deadline ends (`util::leftover`).
    let held = crate::util::leftover::hold(
        format!(
            "the {} database {}",
            backend.kind().keyword(),
            rep.plan.name
        ),
        "its ownership marker keeps it for the next run's sweep, which removes it",
        None,
    );
    let create_s = created.elapsed().as_secs_f64();
    let cancel = database.cancel().clone();
    let outcome = measure(&database, &rep, create_s, &server)
        .await
        .map_err(|e| stopped(&cancel, e, rep.number));
    let dropped = Instant::now();
    let teardown = match sole(database).await {
        Ok(database) => database.drop_database().await,
        Err(_) => Err(Error::msg(
            "the database is still in use after the body returned; it was not dropped",
        )),
    };
    let teardown_s = dropped.elapsed().as_secs_f64();
    let teardown = teardown.map_err(|e| {
        Error::msg(format!(
            "{e}; the database {} was left: its ownership marker keeps it for the next run's \
             sweep, which removes it (on a managed server, it goes with the server when the run \
             ends)",
            rep.plan.name
        ))
    });
    if teardown.is_ok() {
        drop(held);
    } else {
        // Left for the next run: nothing more this run can do about it.
        std::mem::forget(held);
    }
    match (outcome, teardown) {
        (Ok((mut run, window)), Ok(())) => {
            if let Some(preparation) = run.start.as_mut().and_then(|s| s.preparation.as_mut()) {
                preparation.teardown_s = teardown_s;
            }
            Ok((run, window))
        }
        (Ok(_), Err(teardown)) => Err(Error::msg(format!("teardown failed: {teardown}"))),
        (Err(e), Ok(())) => Err(e),
        // A signal stays a signal, so the runner stops instead of failing the cell.
        // Said here too: the runner reports an interruption by what it kept.
        (Err(Error::Interrupted { signal, detail }), Err(teardown)) => {
            crate::util::console::say(&format!(
                "dbbench › {}: teardown did not finish: {teardown}",
                rep.cell.name
            ));
            Err(Error::Interrupted {
                signal,
                detail: format!("{detail}\n(teardown also failed: {teardown})"),
            })
        }
        (Err(e), Err(teardown)) => Err(Error::msg(format!(
            "{e}\n(teardown also failed: {teardown})"
        ))),
    }
}

/// The database once the body's last user let it go: the driver's workers, on threads of their
/// own, may hold it a moment after an abandoned body (their statements end when their
/// connections do). Waits at most the cancel's grace.
async fn sole(database: Arc<Database>) -> std::result::Result<Database, Arc<Database>> {
    let grace = Deadline::Cancel
        .limit()
        .unwrap_or(Deadline::Cancel.default_limit());
    let waited = Instant::now();
    let mut database = database;
    loop {
        match Arc::try_unwrap(database) {
            Ok(sole) => return Ok(sole),
            Err(shared) if waited.elapsed() >= grace => return Err(shared),
            Err(shared) => database = shared,
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
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
    let cancel = database.cancel().clone();
    // The watchdog stops blocking statements (the embedded engine's); the race below stops a
    // body that waits on a server.
    let watchdog = rep
        .bench
        .run
        .timeout
        .map(|limit| Watchdog::start(limit, cancel.clone()));
    // A bad value is an error before the body runs, not when it is needed.
    Deadline::Cancel.configured()?;
    let raced = {
        let body = CatchUnwind::new((rep.bench.body)(&mut session));
        race(body, &cancel, rep.bench.run.timeout, grace).await
    };
    if let Some(watchdog) = watchdog {
        watchdog.stop();
    }
    let elapsed = started.elapsed();
    let interference = monitor.close();
    let loads = session.take_loads();
    let (mut conn, laps, counts, values) = session.into_parts();
    let outcome = match raced {
        Raced::Returned(outcome) => outcome,
        Raced::Abandoned(grace) => {
            // The body's futures are gone with their sockets; the connection it ran on goes
            // now (bounded: `Deadline::Close`), and teardown opens a fresh one.
            let statement = conn.in_flight();
            drop(conn);
            drop(loads);
            let error = unanswered(&cancel, grace, statement.as_deref(), rep.number);
            if statement.is_some() {
                // Said at once: teardown on a server that does not answer takes its deadline.
                crate::util::console::say(&format!("dbbench › {}: {error}", rep.cell.name));
            }
            return Err(error);
        }
    };
    match outcome {
        Err(panic) => return Err(Error::Panic(panic)),
        Ok(Err(e)) => return Err(e),
        Ok(Ok(())) => {}
    }
    let mut run = RunResult {
        elapsed_s: elapsed.as_secs_f64(),
        laps,
        counts,
        interference: Some(interference),
        start: Some(start),
        ..RunResult::default()
    };
    run.record_values(values);
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

/// The cancel's grace as it stands when the switch fires (a signal's budget may have cut it).
fn grace() -> Duration {
    Deadline::Cancel
        .limit()
        .unwrap_or(Deadline::Cancel.default_limit())
}

/// How the body's race against its stop switch ended.
enum Raced {
    /// The body returned (its result, or its panic).
    Returned(std::result::Result<Result<()>, String>),
    /// The switch was fired and the body did not return within the grace: its server does not
    /// answer the cancel. The body was dropped. (The grace it had.)
    Abandoned(Duration),
}

/// Runs `body` until it returns, or until its switch is fired (the `timeout` passed, which this
/// fires too, or a signal) and the cancel's grace (`Deadline::Cancel`, cut by a signal's budget)
/// has passed without it returning.
async fn race<F>(
    body: F,
    cancel: &Arc<Cancel>,
    timeout: Option<Duration>,
    grace: fn() -> Duration,
) -> Raced
where
    F: std::future::Future<Output = std::result::Result<Result<()>, String>>,
{
    let mut body = std::pin::pin!(body);
    let stopped = async {
        match timeout {
            Some(limit) => {
                tokio::select! {
                    () = tokio::time::sleep(limit) => {
                        // Fired here too: the timer may beat the watchdog thread.
                        cancel.fire(Stop::Timeout(limit));
                    }
                    () = cancel.wait() => {}
                }
            }
            None => cancel.wait().await,
        }
    };
    tokio::select! {
        biased;
        outcome = &mut body => return Raced::Returned(outcome),
        () = stopped => {}
    }
    // The cancel reached the statement when the body returns with its error (which names the
    // statement); a server that does not answer never lets it return.
    let grace = grace();
    match tokio::time::timeout(grace, &mut body).await {
        Ok(outcome) => Raced::Returned(outcome),
        Err(_) => Raced::Abandoned(grace),
    }
}

/// The error of a body abandoned because its server did not answer the cancel within `grace`:
/// after the timeout the cell fails with it; after a signal the run is interrupted.
///
/// A body that was waiting on no statement of its connection (a sleep, its own future) says
/// nothing about the server: it fails as a plain timeout or interruption.
fn unanswered(cancel: &Cancel, grace: Duration, statement: Option<&str>, number: u32) -> Error {
    let Some(statement) = statement else {
        return match cancel.fired() {
            Some(Stop::Signal(signal)) => Error::Interrupted {
                signal,
                detail: format!("in repetition {number}"),
            },
            Some(Stop::Timeout(limit)) => Error::Timeout {
                limit,
                repetition: number,
                statement: None,
            },
            None => Error::msg(format!("the body stopped in repetition {number}")),
        };
    };
    let statement = format!(" (statement: {statement})");
    match cancel.fired() {
        Some(Stop::Signal(signal)) => Error::Interrupted {
            signal,
            detail: format!(
                "in repetition {number}{statement}; the server stopped answering: no reply to \
                 the cancel request within {}",
                spoken(grace)
            ),
        },
        Some(Stop::Timeout(limit)) => Error::Unanswered(format!(
            "the server stopped answering: no reply to the cancel request within {} after the \
             {} timeout{statement} in repetition {number}; its connection was closed",
            spoken(grace),
            spoken(limit)
        )),
        None => Error::Unanswered(format!(
            "the server stopped answering{statement} in repetition {number}"
        )),
    }
}

/// The error of a repetition whose database's switch was fired: why it stopped (timeout or
/// signal) and the statement that was running, instead of the backend's "interrupted".
fn stopped(cancel: &Cancel, error: Error, number: u32) -> Error {
    if matches!(error, Error::Unanswered(_) | Error::Interrupted { .. }) {
        // Already says why the body stopped, and more than a timeout would.
        return error;
    }
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
mod tests;
