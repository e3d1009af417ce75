//! One repetition of one cell: create the database, load the fixture, open the measured window,
//! run the body, close the window, tear down. Teardown runs whatever the body did.

use crate::engine::{Backend, Database, DatabasePlan};
use crate::model::error::{Error, Result};
use crate::model::results::{RunResult, WindowTimes};
use crate::model::scale::Scale;
use crate::run::session::Session;
use crate::run::spec::{BenchmarkSpec, CellSpec};
use crate::util::unwind::CatchUnwind;
use std::sync::Arc;
use std::time::Instant;

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
    let database = Arc::new(backend.create(&rep.plan).await?);
    let outcome = measure(&database, &rep).await;
    let teardown = match Arc::try_unwrap(database) {
        Ok(database) => database.drop_database().await,
        Err(_) => Err(Error::msg(
            "the database is still in use after the body returned; it was not dropped",
        )),
    };
    match (outcome, teardown) {
        (Ok(run), Ok(())) => Ok(run),
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
) -> Result<(RunResult, WindowTimes)> {
    let mut conn = database.connect().await?;
    let fixture_rows = database
        .load_fixture(&mut conn, rep.bench.run.fixture, rep.scale)
        .await?;
    database.open_window(&mut conn).await?;
    let mut session = Session::new(
        conn,
        database.clone(),
        rep.scale.clone(),
        fixture_rows,
        rep.cell.name,
    );
    session.start_clock();
    let started = Instant::now();
    let window_start = WindowTimes::now_ns();
    let body = CatchUnwind::new((rep.bench.body)(&mut session));
    let outcome = match rep.bench.run.timeout {
        Some(limit) => match tokio::time::timeout(limit, body).await {
            Ok(outcome) => outcome,
            Err(_) => Ok(Err(Error::Timeout(limit))),
        },
        None => body.await,
    };
    let elapsed = started.elapsed();
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
    Ok((run, window))
}
