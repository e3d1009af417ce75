//! The confounder check on a managed PostgreSQL cluster: every window reads `pg_settings` back;
//! two cells that differ only in their WAL segment size differ in no other setting (what the
//! server would derive from it, `wal_buffers`, `min_wal_size`/`max_wal_size`, is pinned), and
//! a server setting changed behind dbbench's back between two cells is listed with both values.

mod support;

use dbbench_core::__internals::RunContext;
use dbbench_core::__internals::Volumes;
use dbbench_core::__private::{BodyFuture, FixtureKind, RunSpec, StorageSpec};
use dbbench_core::results::{confounders, BenchmarkResult, CellStatus, ConfounderKind, RunResult};
use dbbench_core::{Scale, Session};
use support::{cell, double, grow_mib, run_postgres};

fn context(name: &str) -> RunContext {
    support::context(
        &format!("pg-settings-{name}"),
        Scale::parse("0.002").unwrap(),
        Volumes::default(),
    )
}

fn doubling<'a>(db: &'a mut Session) -> BodyFuture<'a> {
    Box::pin(async move { double(db, 2).await })
}

/// Cell `a` (the baseline, which runs first) changes `commit_delay` server-wide as a DBA would,
/// with `ALTER SYSTEM` and a reload, and waits until a new session sees it: behind dbbench's
/// back, between `a`'s window and `b`'s.
fn changes_commit_delay<'a>(db: &'a mut Session) -> BodyFuture<'a> {
    Box::pin(async move {
        double(db, 1).await?;
        if db.cell() == "a" {
            db.execute("ALTER SYSTEM SET commit_delay = 10").await?;
            db.execute("SELECT pg_reload_conf()").await?;
            for _ in 0..500 {
                let mut fresh = db.connect().await?;
                let now: String = fresh
                    .query_scalar("SELECT current_setting('commit_delay')")
                    .await?;
                if now == "10" {
                    break;
                }
                tokio::time::sleep(std::time::Duration::from_millis(10)).await;
            }
        }
        Ok(())
    })
}

support::benchmark! {
    static SEGMENTS = doubling,
    title: "",
    run: RunSpec {
        repeat: 2,
        warmup: 0,
        fixture: FixtureKind::Credit,
        ..RunSpec::DEFAULT
    },
    cells: [
        cell(
            "small",
            StorageSpec {
                log_growth: Some(grow_mib(1, "1MB")),
                ..StorageSpec::DEFAULT
            }
        ),
        cell(
            "large",
            StorageSpec {
                log_growth: Some(grow_mib(64, "64MB")),
                ..StorageSpec::DEFAULT
            }
        ),
    ],
}

support::benchmark! {
    static BEHIND = changes_commit_delay,
    title: "",
    run: RunSpec {
        repeat: 1,
        warmup: 0,
        fixture: FixtureKind::Credit,
        ..RunSpec::DEFAULT
    },
    cells: [cell("a", StorageSpec::DEFAULT), cell("b", StorageSpec::DEFAULT)],
}

fn measured<'a>(result: &'a BenchmarkResult, name: &str) -> Vec<&'a RunResult> {
    let cell = result.cells.iter().find(|c| c.name == name).unwrap();
    assert_eq!(cell.status, CellStatus::Ok, "{name}: {:?}", cell.status);
    cell.measured().collect()
}

fn value<'a>(run: &'a RunResult, name: &str) -> &'a str {
    run.settings
        .get(name)
        .map(|s| s.value.as_str())
        .unwrap_or_else(|| panic!("{name} not recorded: {:?}", run.settings.keys()))
}

#[test]
fn cells_that_differ_by_segment_size_differ_in_no_other_setting() {
    if !dbbench_core::__internals::postgres::cluster::available_for_tests() {
        return;
    }
    let ctx = context("segments");
    let result = run_postgres(&SEGMENTS, &ctx);
    let found = confounders(&result);
    assert!(found.is_empty(), "{found:#?}");
    for (name, segment) in [("small", "1MB"), ("large", "64MB")] {
        let runs = measured(&result, name);
        assert_eq!(runs.len(), 2);
        for run in runs {
            // The declared difference is there, marked as declared.
            assert_eq!(value(run, "pg.wal_segment_size"), segment);
            assert_eq!(
                run.settings["pg.wal_segment_size"].set_by.as_deref(),
                Some("log_growth")
            );
            // What the server would have derived from it is pinned alike.
            assert_eq!(value(run, "pg.wal_buffers"), "4MB", "{name}");
            assert_eq!(value(run, "pg.jit"), "off");
            assert_eq!(value(run, "pg.autovacuum"), "off");
            assert_eq!(value(run, "pg.max_wal_size"), "1GB", "{name}");
            // Paths are not settings that differ.
            assert!(!run.settings.contains_key("pg.data_directory"));
            // No segment made ahead at the window's start, no autovacuum inside it.
            assert_eq!(run.values["pg_wal_segments_ahead_before"], 0.0, "{name}");
            assert!(run.values.contains_key("pg_wal_segments_removed_ahead"));
            assert_eq!(run.counts["pg_autovacuum_runs"], 0);
            assert_eq!(run.counts["pg_autovacuum_workers_at_close"], 0);
            assert!(run.facts["jit"].starts_with("off"), "{:?}", run.facts);
        }
    }
    // 64 MB segments: two of them (128MB) exceed the 80MB default, so the segment size sets it.
    let large = measured(&result, "large")[0];
    assert_eq!(value(large, "pg.min_wal_size"), "128MB");
    assert_eq!(
        value(measured(&result, "small")[0], "pg.min_wal_size"),
        "80MB"
    );
}

#[test]
fn a_server_setting_changed_behind_dbbenchs_back_is_listed_with_both_values() {
    if !dbbench_core::__internals::postgres::cluster::available_for_tests() {
        return;
    }
    let ctx = context("behind");
    let result = run_postgres(&BEHIND, &ctx);
    let a = measured(&result, "a")[0];
    let b = measured(&result, "b")[0];
    // `a`'s window started at 0 and ended at 10; `b`'s ran at 10 throughout.
    assert_eq!(value(a, "pg.commit_delay"), "0");
    assert_eq!(value(a, "pg.commit_delay@close"), "10");
    assert_eq!(value(b, "pg.commit_delay"), "10");
    assert!(!b.settings.contains_key("pg.commit_delay@close"));
    let found = confounders(&result);
    let listed: Vec<String> = found.iter().map(|c| c.describe("a")).collect();
    let delay = found
        .iter()
        .find(|c| c.setting == "pg.commit_delay")
        .unwrap_or_else(|| panic!("commit_delay not listed: {listed:#?}"));
    assert_eq!(delay.cell, "b");
    assert_eq!(
        delay.kind,
        ConfounderKind::FromBaseline {
            baseline: Some("0".into()),
            cell: Some("10".into())
        }
    );
    assert!(
        listed.contains(&"pg.commit_delay: 0 in a (baseline), 10 in b".to_string()),
        "{listed:#?}"
    );
    // Nothing else differs: the change is the only entry besides `a`'s own close value.
    let others: Vec<&String> = found
        .iter()
        .filter(|c| !c.setting.starts_with("pg.commit_delay"))
        .map(|c| &c.setting)
        .collect();
    assert!(others.is_empty(), "{listed:#?}");
}
