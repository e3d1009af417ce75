//! Space before work: a cell whose files need more than the work dir's file system has free is
//! refused before it creates a file, with both numbers and what to try; a cell that fits runs. A
//! file the fixture fills needs its first growth too. On the embedded engine and on a managed PostgreSQL cluster (whose WAL kept for `log_size` is too
//! large: no cluster is started for it).

mod support;

use dbbench_core::__internals::config::{FixtureKind, Growth, RunSpec, Size, StorageSpec};
use dbbench_core::__internals::{BodyFuture, Volumes};
use dbbench_core::results::CellStatus;
use dbbench_core::{Scale, Session};
use support::cell;

fn quick(db: &mut Session) -> BodyFuture<'_> {
    Box::pin(async move { db.execute("CREATE TABLE t (x integer)").await.map(|_| ()) })
}

/// A petabyte: more than any test machine's disk.
const HUGE: Size = Size::new(1 << 50, "1PB");

support::benchmark! {
    static FIXED = quick,
    title: "a data file larger than the disk",
    run: RunSpec {
        repeat: 1,
        warmup: 0,
        fixture: FixtureKind::None,
        ..RunSpec::DEFAULT
    },
    cells: [
        cell("too_big", StorageSpec { data_size: Some(HUGE), ..StorageSpec::DEFAULT }),
        cell("fits", StorageSpec::DEFAULT),
    ],
}

support::benchmark! {
    static SCALED = quick,
    title: "a scaled data file larger than the disk",
    run: RunSpec {
        repeat: 1,
        warmup: 0,
        fixture: FixtureKind::None,
        scale_storage: true,
        smoke_divisor: 16,
        ..RunSpec::DEFAULT
    },
    cells: [cell("too_big", StorageSpec { data_size: Some(HUGE), ..StorageSpec::DEFAULT })],
}

#[cfg(feature = "postgres")]
support::benchmark! {
    static WAL_TOO_BIG = quick,
    title: "WAL kept for log_size larger than the disk",
    run: RunSpec {
        repeat: 1,
        warmup: 0,
        fixture: FixtureKind::None,
        ..RunSpec::DEFAULT
    },
    cells: [
        cell("too_big", StorageSpec { log_size: Some(HUGE), ..StorageSpec::DEFAULT }),
        cell("fits", StorageSpec::DEFAULT),
    ],
}

/// 128 KiB: less than the credit fixture's 3,125 rows at smoke scale (150,000 bytes) fill.
const SMALL: Size = Size::new(128 << 10, "128KB");

support::benchmark! {
    static FIRST_GROWTH = quick,
    title: "files the fixture fills, whose first growth is larger than the disk",
    run: RunSpec {
        repeat: 1,
        warmup: 0,
        fixture: FixtureKind::Credit,
        ..RunSpec::DEFAULT
    },
    cells: [
        cell("data_growth_too_big", StorageSpec {
            data_size: Some(SMALL),
            growth: Some(Growth::Fixed(HUGE)),
            ..StorageSpec::DEFAULT
        }),
        cell("log_growth_too_big", StorageSpec {
            log_size: Some(SMALL),
            log_growth: Some(Growth::Fixed(HUGE)),
            ..StorageSpec::DEFAULT
        }),
        // The same growth on a file the fixture leaves room in: nothing says it will grow.
        cell("room_left", StorageSpec {
            data_size: Some(support::mib(16, "16MB")),
            growth: Some(Growth::Fixed(HUGE)),
            ..StorageSpec::DEFAULT
        }),
        cell("small_growth", StorageSpec {
            data_size: Some(SMALL),
            growth: Some(support::grow_mib(1, "1MB")),
            ..StorageSpec::DEFAULT
        }),
    ],
}

fn databases_made(ctx: &dbbench_core::__internals::RunContext) -> usize {
    std::fs::read_dir(ctx.work_dir.join("db"))
        .into_iter()
        .flatten()
        .count()
}

#[test]
fn a_cell_larger_than_the_disk_is_refused_before_creating_anything() {
    let ctx = support::context("space-fixed", Scale::smoke(), Volumes::default());
    let result = support::run_embedded(&FIXED, &ctx);
    match &result.cells[0].status {
        CellStatus::Failed(why) => {
            assert!(
                why.starts_with("not enough space, nothing was created"),
                "{why}"
            );
            assert!(
                why.contains("needs 1024.0 TB on the file system of"),
                "{why}"
            );
            assert!(why.contains("are free"), "{why}");
            assert!(why.contains("scale_storage is off"), "{why}");
        }
        other => panic!("the cell was not refused: {other:?}"),
    }
    assert!(result.cells[0].runs.is_empty());
    assert_eq!(
        result.cells[1].status,
        CellStatus::Ok,
        "the cell that fits runs"
    );
    assert_eq!(
        databases_made(&ctx),
        0,
        "nothing left, and the refused cell made nothing"
    );
}

#[test]
fn a_file_the_fixture_fills_needs_its_first_growth() {
    let ctx = support::context("space-first-growth", Scale::smoke(), Volumes::default());
    let result = support::run_embedded(&FIRST_GROWTH, &ctx);
    let refusal = |i: usize| match &result.cells[i].status {
        CellStatus::Failed(why) => {
            assert!(
                why.starts_with("not enough space, nothing was created"),
                "{why}"
            );
            assert!(why.contains("are free"), "{why}");
            assert!(result.cells[i].runs.is_empty());
            why.clone()
        }
        other => panic!("{} was not refused: {other:?}", result.cells[i].name),
    };
    // 128 KiB and one growth of 1 PB: the total, then each part with the growth that makes it.
    let data = refusal(0);
    assert!(
        data.contains("needs 1024.0 TB on the file system of"),
        "{data}"
    );
    assert!(
        data.contains(
            "data_1 with the fixture, grown by its first growth of 1024.0 TB to 1024.0 TB"
        ),
        "{data}"
    );
    let log = refusal(1);
    assert!(
        log.contains("needs 1024.0 TB on the file system of"),
        "{log}"
    );
    assert!(
        log.contains("log with the fixture, grown by its first growth of 1024.0 TB to 1024.0 TB"),
        "{log}"
    );
    for i in [2, 3] {
        assert_eq!(
            result.cells[i].status,
            CellStatus::Ok,
            "{} fits and runs",
            result.cells[i].name
        );
    }
    assert_eq!(databases_made(&ctx), 0, "nothing left behind");
}

#[test]
fn a_scaled_cell_is_told_the_scale_that_fits() {
    let ctx = support::context("space-scaled", Scale::smoke(), Volumes::default());
    let result = support::run_embedded(&SCALED, &ctx);
    match &result.cells[0].status {
        CellStatus::Failed(why) => {
            // 1 PB at 1/16 is 64 TB.
            assert!(why.contains("needs 64.0 TB"), "{why}");
            assert!(why.contains("try DBBENCH_SCALE=0.0000"), "{why}");
            assert!(!why.contains("99999"), "{why}");
            assert!(why.contains("at scale smoke, factor 0.0625"), "{why}");
        }
        other => panic!("the cell was not refused: {other:?}"),
    }
    assert_eq!(databases_made(&ctx), 0);
}

#[cfg(feature = "postgres")]
#[test]
fn a_postgres_cell_whose_wal_cannot_fit_starts_no_cluster() {
    if !dbbench_core::__internals::postgres::cluster::available_for_tests() {
        return;
    }
    let ctx = support::context("space-postgres", Scale::smoke(), Volumes::default());
    let result = support::run_postgres(&WAL_TOO_BIG, &ctx);
    match &result.cells[0].status {
        CellStatus::Failed(why) => {
            assert!(
                why.starts_with("not enough space, nothing was created"),
                "{why}"
            );
            assert!(why.contains("WAL kept for log_size 1024.0 TB"), "{why}");
            assert!(why.contains("postgres"), "{why}");
            assert!(why.contains("are free"), "{why}");
        }
        other => panic!("the cell was not refused: {other:?}"),
    }
    assert!(result.cells[0].runs.is_empty());
    assert_eq!(
        result.cells[1].status,
        CellStatus::Ok,
        "the cell that fits runs"
    );
    assert_eq!(result.cells[1].runs.len(), 1);
    support::assert_no_cluster_left(&ctx);
}
