//! End to end on a managed PostgreSQL cluster: a two-cell benchmark with the credit fixture
//! (create, COPY, PostgreSQL's own window evidence, `maxdop` as parallel workers, body,
//! teardown, cluster removed), and options PostgreSQL cannot honour. (A failing body and a
//! database of dbbench's name without the markers, which is never dropped, are the conformance
//! suite's: `conformance_postgres.rs`.)

mod support;

use dbbench_core::__internals::config::{Growth, Recovery, Size};
use dbbench_core::__internals::RunContext;
use dbbench_core::__internals::Volumes;
use dbbench_core::__private::{BodyFuture, FixtureKind, RunSpec, StorageSpec};
use dbbench_core::results::CellStatus;
use dbbench_core::{Scale, Session};
use support::{assert_no_cluster_left, cell, double, run_postgres};

fn context(name: &str) -> RunContext {
    support::context(
        &format!("pg-lifecycle-{name}"),
        Scale::parse("0.002").unwrap(),
        Volumes::default(),
    )
}

fn doubling<'a>(db: &'a mut Session) -> BodyFuture<'a> {
    Box::pin(async move {
        let before: i64 = db.query_scalar("SELECT count(*) FROM charge").await?;
        double(db, 2).await?;
        let after: i64 = db.query_scalar("SELECT count(*) FROM charge").await?;
        db.record_count("rows_after", after);
        assert_eq!(after, before * 4);
        let workers: String = db
            .query_scalar("SELECT current_setting('max_parallel_workers_per_gather')")
            .await?;
        db.record_count("parallel_workers", workers.parse().unwrap());
        Ok(())
    })
}

support::benchmark! {
    static DOUBLING = doubling,
    title: "",
    run: RunSpec {
        repeat: 1,
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
    static UNHONOURABLE = doubling,
    title: "",
    run: RunSpec {
        fixture: FixtureKind::Credit,
        ..RunSpec::DEFAULT
    },
    cells: [
        cell(
            "percent_log_growth",
            StorageSpec {
                log_growth: Some(Growth::Percent(10)),
                ..StorageSpec::DEFAULT
            }
        ),
        cell(
            "data_size",
            StorageSpec {
                data_size: Some(Size::new(64 << 20, "64MB")),
                ..StorageSpec::DEFAULT
            }
        ),
        cell(
            "simple",
            StorageSpec {
                recovery: Some(Recovery::Simple),
                ..StorageSpec::DEFAULT
            }
        ),
    ],
}

#[test]
fn two_cells_run_interleaved_with_evidence_and_leave_nothing_behind() {
    if !dbbench_core::__internals::postgres::cluster::available_for_tests() {
        return;
    }
    let ctx = context("doubling");
    let result = run_postgres(&DOUBLING, &ctx);
    assert_eq!(result.backend.kind, "postgres");
    assert!(
        result.backend.version.contains("PostgreSQL"),
        "{}",
        result.backend.version
    );
    for cell in &result.cells {
        assert_eq!(cell.status, CellStatus::Ok, "{}", cell.name);
        assert_eq!(cell.runs.len(), 2);
        let run = &cell.runs[1];
        assert_eq!(
            run.laps.iter().map(|l| l.name.as_str()).collect::<Vec<_>>(),
            ["loop 1", "loop 2"]
        );
        assert_eq!(run.counts["rows_after"], 4 * run.counts["fixture_rows"]);
        assert_eq!(run.counts["fixture_rows"] as u64, result.run.fixture_rows);
        // The window's evidence: WAL written by the inserts, the table grown, segments counted.
        assert!(run.values["pg_wal_records"] > 0.0, "{:?}", run.values);
        assert!(run.values["pg_wal_bytes"] > 0.0);
        assert!(run.values["pg_db_tup_inserted"] >= 3.0 * run.counts["fixture_rows"] as f64);
        let table = |when: &str| run.values.get(&format!("pg_table_charge_{when}_bytes"));
        assert!(
            table("after") > table("before") && table("before").is_some(),
            "{:?} {:?}",
            run.values,
            run.unavailable
        );
        let log = run.log.as_ref().expect("WAL segment counts");
        assert!(
            log.segments_after >= 1 && log.size_after_bytes > 0,
            "{log:?}"
        );
        assert!(run.values["pg_wait_samples"] >= 0.0);
        assert!(run.unavailable.contains_key("files"));
        assert!(
            !run.unavailable.contains_key("pg_stat_wal"),
            "{:?}",
            run.unavailable
        );
        assert!(
            !run.unavailable.contains_key("checkpointer"),
            "{:?}",
            run.unavailable
        );
    }
    // maxdop 2 is one worker besides the leader; cell a keeps the server's default of 2.
    assert_eq!(result.cells[0].runs[1].counts["parallel_workers"], 2);
    assert_eq!(result.cells[1].runs[1].counts["parallel_workers"], 1);
    let mut order: Vec<(u32, &str)> = result
        .cells
        .iter()
        .flat_map(|c| c.runs.iter().map(move |r| (r.sequence, c.name.as_str())))
        .collect();
    order.sort();
    assert_eq!(order.iter().map(|o| o.1).collect::<String>(), "abab");
    assert_no_cluster_left(&ctx);
}

#[test]
fn options_without_an_equivalent_skip_by_name_and_others_run() {
    if !dbbench_core::__internals::postgres::cluster::available_for_tests() {
        return;
    }
    let ctx = context("unhonourable");
    let result = run_postgres(&UNHONOURABLE, &ctx);
    let status = |i: usize| &result.cells[i].status;
    match status(0) {
        CellStatus::Skipped(e) => {
            assert!(e.contains("`log_growth`") && e.contains("postgres"), "{e}");
            assert!(e.contains("percentage"), "{e}");
        }
        other => panic!("expected a skip with the reason, got {other:?}"),
    }
    match status(1) {
        CellStatus::Skipped(e) => {
            assert!(e.contains("`data_size`") && e.contains("backends"), "{e}")
        }
        other => panic!("expected a skip with the reason, got {other:?}"),
    }
    assert!(result.cells[0].runs.is_empty() && result.cells[1].runs.is_empty());
    // recovery = "simple" is wal_level = minimal on a cluster of its own.
    assert_eq!(*status(2), CellStatus::Ok);
    assert_no_cluster_left(&ctx);
}
