//! End-to-end runner lifecycle on the embedded engine: create, fixture, body, metrics, teardown —
//! including teardown after a failing, a panicking and a timed-out body.

mod support;

use dbbench_core::__internals::RunContext;
use dbbench_core::__internals::Volumes;
use dbbench_core::__private::{BodyFuture, FixtureKind, RunSpec, StorageSpec};
use dbbench_core::results::CellStatus;
use dbbench_core::{Error, Scale, Session};
use std::path::{Path, PathBuf};
use std::time::Duration;
use support::{cell, double, run};

fn context(name: &str) -> RunContext {
    support::context(
        &format!("lifecycle-{name}"),
        Scale::parse("0.002").unwrap(),
        Volumes::default(),
    )
}

/// Database directories left under the work dir (there must be none after teardown).
fn leftovers(work_dir: &Path) -> Vec<PathBuf> {
    std::fs::read_dir(work_dir.join("db"))
        .map(|dir| dir.filter_map(|e| e.ok().map(|e| e.path())).collect())
        .unwrap_or_default()
}

fn doubling<'a>(db: &'a mut Session) -> BodyFuture<'a> {
    Box::pin(async move {
        let before: i64 = db.query_scalar("SELECT count(*) FROM charge").await?;
        double(db, 2).await?;
        let after: i64 = db.query_scalar("SELECT count(*) FROM charge").await?;
        db.record_count("rows_after", after);
        assert_eq!(after, before * 4);
        Ok(())
    })
}

fn failing<'a>(db: &'a mut Session) -> BodyFuture<'a> {
    Box::pin(async move {
        db.execute("CREATE TABLE t (x INTEGER)").await?;
        db.execute("INSERT INTO no_such_table VALUES (1)").await?;
        Ok(())
    })
}

fn panicking<'a>(db: &'a mut Session) -> BodyFuture<'a> {
    Box::pin(async move {
        db.execute("CREATE TABLE t (x INTEGER)").await?;
        panic!("the body gave up");
    })
}

fn slow<'a>(_db: &'a mut Session) -> BodyFuture<'a> {
    Box::pin(async move {
        tokio::time::sleep(Duration::from_secs(30)).await;
        Err(Error::msg("not reached"))
    })
}

support::benchmark! {
    static DOUBLING = doubling,
    title: "",
    run: RunSpec {
        repeat: 2,
        warmup: 1,
        fixture: FixtureKind::Credit,
        ..RunSpec::DEFAULT
    },
    cells: [
        cell("a", StorageSpec::DEFAULT),
        cell(
            "b",
            StorageSpec {
                maxdop: Some(2),
                ..StorageSpec::DEFAULT
            }
        ),
    ],
}
support::benchmark! {
    static FAILING = failing,
    title: "",
    run: RunSpec::DEFAULT,
    cells: [cell("only", StorageSpec::DEFAULT)],
}
support::benchmark! {
    static PANICKING = panicking,
    title: "",
    run: RunSpec::DEFAULT,
    cells: [cell("only", StorageSpec::DEFAULT)],
}
support::benchmark! {
    static SLOW = slow,
    title: "",
    run: RunSpec {
        timeout: Some(Duration::from_millis(200)),
        ..RunSpec::DEFAULT
    },
    cells: [cell("only", StorageSpec::DEFAULT)],
}
support::benchmark! {
    static TEMPDB = doubling,
    title: "",
    run: RunSpec::DEFAULT,
    cells: [cell(
        "only",
        StorageSpec {
            tempdb_files: Some(4),
            ..StorageSpec::DEFAULT
        }
    )],
}

#[test]
fn runs_every_repetition_interleaved_and_tears_down() {
    let ctx = context("doubling");
    let result = run(&DOUBLING, &ctx);
    assert_eq!(result.cells.len(), 2);
    for cell in &result.cells {
        assert_eq!(cell.status, CellStatus::Ok, "{}", cell.name);
        assert_eq!(cell.runs.len(), 3, "one warm-up and two measured runs");
        assert!(cell.runs[0].warmup && !cell.runs[1].warmup);
        let run = &cell.runs[1];
        assert_eq!(
            run.laps.iter().map(|l| l.name.as_str()).collect::<Vec<_>>(),
            ["loop 1", "loop 2"]
        );
        assert_eq!(run.counts["rows_after"], 4 * run.counts["fixture_rows"]);
        assert!(run.elapsed_s > 0.0);
    }
    // Interleaved, in a balanced order: the warm-up round and round 1 a, b; round 2 b, a.
    let mut order: Vec<(u32, &str)> = result
        .cells
        .iter()
        .flat_map(|c| c.runs.iter().map(move |r| (r.sequence, c.name.as_str())))
        .collect();
    order.sort();
    assert_eq!(order.iter().map(|o| o.1).collect::<String>(), "ababba");
    assert!(
        leftovers(&ctx.work_dir).is_empty(),
        "{:?}",
        leftovers(&ctx.work_dir)
    );
    let json = dbbench_core::__internals::paths::results_file(&ctx.work_dir, &DOUBLING.file_stem());
    let read = dbbench_core::__internals::json::read(&json).unwrap();
    assert_eq!(read, result);
}

#[test]
fn a_failing_body_reports_its_own_error_and_is_torn_down() {
    let ctx = context("failing");
    let result = run(&FAILING, &ctx);
    match &result.cells[0].status {
        CellStatus::Failed(e) => assert!(e.contains("no such table: no_such_table"), "{e}"),
        other => panic!("expected failure, got {other:?}"),
    }
    assert!(leftovers(&ctx.work_dir).is_empty());
}

#[test]
fn a_panicking_body_is_torn_down_and_reported() {
    let ctx = context("panicking");
    let result = run(&PANICKING, &ctx);
    match &result.cells[0].status {
        CellStatus::Failed(e) => assert!(e.contains("panicked: the body gave up"), "{e}"),
        other => panic!("expected failure, got {other:?}"),
    }
    assert!(leftovers(&ctx.work_dir).is_empty());
}

#[test]
fn a_body_over_its_timeout_fails_and_is_torn_down() {
    let ctx = context("slow");
    let result = run(&SLOW, &ctx);
    match &result.cells[0].status {
        // A body that waits on no statement is stopped by the async timer.
        CellStatus::Failed(e) => assert_eq!(e, "timed out after 200ms in repetition 1"),
        other => panic!("expected failure, got {other:?}"),
    }
    assert!(leftovers(&ctx.work_dir).is_empty());
}

#[test]
fn an_option_the_backend_cannot_honour_skips_the_cell_by_name() {
    let ctx = context("tempdb");
    let result = run(&TEMPDB, &ctx);
    match &result.cells[0].status {
        CellStatus::Skipped(e) => {
            assert!(
                e.contains("option `tempdb_files` is not supported by the embedded backend")
                    && e.contains("backends = [\"mssql\"]"),
                "{e}"
            )
        }
        other => panic!("expected a skip with the reason, got {other:?}"),
    }
    assert!(result.cells[0].runs.is_empty(), "nothing ran");
}

#[test]
fn refuses_a_directory_it_did_not_create() {
    let ctx = context("foreign");
    let name = dbbench_core::__internals::database_name(&FAILING, &FAILING.cells[0], 0);
    let foreign = ctx.work_dir.join("db").join(&name);
    std::fs::create_dir_all(&foreign).unwrap();
    std::fs::write(foreign.join("precious.txt"), "keep me").unwrap();
    let result = run(&FAILING, &ctx);
    match &result.cells[0].status {
        CellStatus::Failed(e) => assert!(e.contains("not created by dbbench"), "{e}"),
        other => panic!("expected refusal, got {other:?}"),
    }
    assert_eq!(
        std::fs::read_to_string(foreign.join("precious.txt")).unwrap(),
        "keep me"
    );
}
