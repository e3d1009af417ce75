//! A stale dbbench database on an existing MariaDB server whose table another session holds in
//! an open transaction (a DBA's `BEGIN; SELECT … FOR UPDATE`): `DROP DATABASE` waits for that
//! metadata lock up to `lock_wait_timeout`, a year by default, so an unbounded sweep would hang
//! every later run at its start (security finding 12). Here the next run's sweep gives up within
//! the teardown deadline (`DBBENCH_DEADLINE_TEARDOWN`, 10 s for this binary alone; a drop waits
//! half of it) with one line naming the database and the session that holds it; a run goes on
//! and its cell is measured; once the transaction ends the next sweep drops it. The server is the
//! conformance suite's existing-server target (`support::conformance::mariadb::Existing`).
//! Skipped without MariaDB's programs unless `DBBENCH_REQUIRE_MARIADB=1`.

mod support;

use dbbench_core::__internals::run_benchmark;
use dbbench_core::__private::{BodyFuture, FixtureKind, RunSpec, StorageSpec};
use dbbench_core::results::CellStatus;
use dbbench_core::{Scale, Session};
use std::time::{Duration, Instant};
use support::conformance::mariadb::Existing;
use support::conformance::Target;

fn quick(db: &mut Session) -> BodyFuture<'_> {
    Box::pin(async move { db.execute("CREATE TABLE t (x integer)").await.map(|_| ()) })
}

support::benchmark! {
    static QUICK = quick,
    title: "",
    run: RunSpec {
        repeat: 1,
        warmup: 0,
        fixture: FixtureKind::None,
        ..RunSpec::DEFAULT
    },
    cells: [support::cell("only", StorageSpec::DEFAULT)],
}

#[test]
fn a_stale_database_held_by_an_open_transaction_is_left_with_a_line_naming_its_holder() {
    // Before anything reads it; this binary holds this one test.
    std::env::set_var("DBBENCH_DEADLINE_TEARDOWN", "10s");
    let target = Existing::default();
    let ctx = support::context(
        "mariadb-existing-locked",
        Scale::parse("0.002").unwrap(),
        Default::default(),
    );
    let stale = format!("dbbench_locked_{}", std::process::id());
    support::exclusively(async {
        let Some(mut backend) = target.backend().await else {
            return;
        };
        // Left by a run that is gone, as the sweep judges it (`engine/mariadb/owner.rs`).
        let host = std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap();
        let mut admin = target.admin().await;
        admin
            .batch(&format!(
                "CREATE DATABASE `{stale}` COMMENT 'dbbench:owned owner_host={} owner_pid={} \
                 owner_start=1'; CREATE TABLE `{stale}`.t (x integer) ENGINE=InnoDB; \
                 INSERT INTO `{stale}`.t VALUES (1)",
                host.trim(),
                support::no_such_pid()
            ))
            .await
            .unwrap();
        let mut dba = target.admin().await;
        dba.batch("BEGIN").await.unwrap();
        dba.query(&format!("SELECT x FROM `{stale}`.t FOR UPDATE"), &[])
            .await
            .unwrap();

        let started = Instant::now();
        let lines = backend.sweep_stale(&ctx.work_dir).await;
        let took = started.elapsed();
        eprintln!("the sweep gave up after {took:?}: {lines:?}");
        assert!(took < Duration::from_secs(10), "{took:?}");
        let line = lines
            .iter()
            .find(|l| l.contains(&stale))
            .unwrap_or_else(|| panic!("no line names {stale}: {lines:?}"));
        assert!(line.contains("could not drop the database"), "{line}");
        assert!(line.contains("another session holds a lock"), "{line}");
        assert!(line.contains(&format!("session {} of", dba.id())), "{line}");
        assert_eq!(lines.len(), 1, "one line: {lines:?}");

        // A run goes on: its sweep gives up alike, and its cell is measured.
        let result = run_benchmark(&QUICK, None, &ctx, &mut backend)
            .await
            .unwrap();
        assert_eq!(result.cells[0].status, CellStatus::Ok);
        let rows: i64 = admin
            .query(&format!("SELECT count(*) FROM `{stale}`.t"), &[])
            .await
            .unwrap()[0]
            .get(0)
            .unwrap();
        assert_eq!(rows, 1, "the held database is left as it is");

        // The transaction ended: the next sweep drops it.
        dba.batch("COMMIT").await.unwrap();
        let lines = backend.sweep_stale(&ctx.work_dir).await;
        assert!(
            lines
                .iter()
                .any(|l| l.contains(&stale) && l.contains("dropped the database")),
            "{lines:?}"
        );
        let _ = dba.close().await;
        let _ = admin.close().await;
    });
}
