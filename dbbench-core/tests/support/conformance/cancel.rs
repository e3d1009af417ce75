//! Cancel: a body over its timeout, and a runaway statement stopped by the stop switch.

#[allow(unused_imports)]
use super::lifecycle::failure;
use super::*;

fn idle(_db: &mut Session) -> BodyFuture<'_> {
    Box::pin(async move {
        tokio::time::sleep(Duration::from_secs(30)).await;
        Err(Error::msg("not reached"))
    })
}

super::super::benchmark! {
    static IDLE = idle,
    module: "conformance",
    title: "",
    run: RunSpec {
        timeout: Some(Duration::from_millis(200)),
        ..RunSpec::DEFAULT
    },
    cells: [cell("only", StorageSpec::DEFAULT)],
}

pub fn cancel_idle<T: Target>(target: &T, name: &str) {
    if let Some(e) = failure(target, name, &IDLE) {
        // A body that waits on no statement is stopped by the async timer.
        assert_eq!(e, "timed out after 200ms in repetition 1");
    }
}

/// The runaway statement of this test binary's target (one target per binary).
static RUNAWAY: OnceLock<&'static str> = OnceLock::new();
/// Counts the runaway cell's repetitions, so that its second one runs away.
static RUNAWAY_REPS: AtomicU32 = AtomicU32::new(0);
/// How long the runaway statement ran before it returned, in milliseconds.
static STOPPED_MS: AtomicU32 = AtomicU32::new(0);

fn runaway<'a>(db: &'a mut Session) -> BodyFuture<'a> {
    Box::pin(async move {
        db.execute("CREATE TABLE t (x integer)").await?;
        db.execute("INSERT INTO t VALUES (1)").await?;
        if db.cell() == "stop" && RUNAWAY_REPS.fetch_add(1, Ordering::SeqCst) == 1 {
            let sql = RUNAWAY.get().expect("the target's runaway statement");
            let started = Instant::now();
            let stopped = loop {
                if let Err(e) = db.execute(sql).await {
                    break e;
                }
                tokio::task::yield_now().await;
            };
            STOPPED_MS.store(started.elapsed().as_millis() as u32, Ordering::SeqCst);
            return Err(stopped);
        }
        Ok(())
    })
}

super::super::benchmark! {
    static RUNAWAY_CELLS = runaway,
    module: "conformance",
    title: "timeout",
    run: RunSpec {
        repeat: 3,
        warmup: 0,
        fixture: FixtureKind::None,
        timeout: Some(Duration::from_secs(1)),
        ..RunSpec::DEFAULT
    },
    cells: [cell("stop", StorageSpec::DEFAULT), cell("quick", StorageSpec::DEFAULT)],
}

/// A statement stopped by the database's stop switch when the timeout fires: a readable error
/// naming the repetition (and the statement), the database torn down, the other cell run.
pub fn cancel_runaway<T: Target>(target: &T, name: &str) {
    let sql = *RUNAWAY.get_or_init(|| target.runaway());
    let ctx = context(name, "runaway");
    let Some((result, left)) = on_backend(target, &ctx, async |backend: &mut Backend| {
        run_on(backend, &RUNAWAY_CELLS, &ctx).await
    }) else {
        return;
    };
    assert_nothing_left(&left);
    let ms = STOPPED_MS.load(Ordering::SeqCst);
    // The limit counts from the body's start, a little before the statement's.
    assert!(
        ms >= 500 && u128::from(ms) < target.stop_within().as_millis(),
        "the runaway statement ran {ms} ms"
    );
    let runaway = &result.cells[0];
    let CellStatus::Failed(why) = &runaway.status else {
        panic!("the runaway cell was not stopped: {:?}", runaway.status);
    };
    let timed_out = "timed out after 1s in repetition 2";
    let shown: String = sql.chars().take(80).collect();
    let named = why.starts_with(&format!("{timed_out} (statement: {shown}"));
    assert!(
        named || (!target.names_statement() && why.starts_with(timed_out)),
        "{why}"
    );
    assert_eq!(runaway.runs.len(), 1, "the repetition before is kept");
    let quick = &result.cells[1];
    assert_eq!(quick.status, CellStatus::Ok);
    assert_eq!(quick.runs.len(), 3, "the other cell runs every repetition");
}
