//! A managed PostgreSQL cluster from a checkout the server's user cannot reach: run as root, the
//! server runs as `postgres`, and a work dir under a mode-700 directory (a clone in `/root`) is
//! out of its reach. The cluster and the directories of unbound volumes then go to dbbench's
//! directory under the temp dir and the cells run; a volume the user bound to an unreachable
//! directory is refused with the directory in the way; the user's directory keeps its mode.

mod support;

use dbbench_core::__internals::postgres::cluster;
use dbbench_core::__internals::{BodyFuture, RunContext, Volumes};
use dbbench_core::__private::{FixtureKind, RunSpec, StorageSpec};
use dbbench_core::results::CellStatus;
use dbbench_core::{Scale, Session};
use std::os::unix::fs::PermissionsExt;
use support::cell;

fn quick(db: &mut Session) -> BodyFuture<'_> {
    Box::pin(async move { db.execute("CREATE TABLE t (x integer)").await.map(|_| ()) })
}

support::benchmark! {
    static PRIVATE = quick,
    title: "a cluster from a private checkout",
    run: RunSpec {
        repeat: 1,
        warmup: 0,
        fixture: FixtureKind::None,
        ..RunSpec::DEFAULT
    },
    cells: [
        cell("defaults", StorageSpec::DEFAULT),
        // `wal` is not bound: dbbench gives it a directory under the work dir, which moves too.
        cell("own_wal_volume", StorageSpec { log_on: Some("wal"), ..StorageSpec::DEFAULT }),
        cell("users_wal_volume", StorageSpec { log_on: Some("mine"), ..StorageSpec::DEFAULT }),
    ],
}

#[test]
fn a_checkout_the_server_user_cannot_reach_still_gets_its_clusters() {
    if !cluster::available_for_tests() {
        return;
    }
    if cluster::run_as().unwrap().is_none() {
        // The server runs as this user, who reaches its own directories.
        println!("skipped: not root, so no directory is out of the server's reach");
        return;
    }
    let home = tempfile::tempdir().unwrap();
    std::fs::set_permissions(home.path(), std::fs::Permissions::from_mode(0o700)).unwrap();
    let mine = home.path().join("wal-disk");
    std::fs::create_dir_all(&mine).unwrap();
    let mut volumes = Volumes::default();
    volumes.bind("mine", &mine);
    let ctx = RunContext {
        scale: Scale::smoke(),
        volumes,
        work_dir: home.path().join("checkout/target/dbbench"),
    };
    let result = support::run_postgres(&PRIVATE, &ctx);
    for i in [0, 1] {
        let cell = &result.cells[i];
        assert_eq!(cell.status, CellStatus::Ok, "{} runs", cell.name);
        assert_eq!(cell.runs.len(), 1, "{}", cell.name);
    }
    match &result.cells[2].status {
        CellStatus::Failed(why) => {
            assert!(why.contains("cannot reach"), "{why}");
            assert!(
                why.contains(&format!("`{}`", home.path().display())),
                "the directory in the way is named: {why}"
            );
        }
        other => panic!("a volume bound to an unreachable directory ran: {other:?}"),
    }
    let mode = std::fs::metadata(home.path()).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o700, "the user's directory keeps its mode");
    assert!(
        !ctx.work_dir.join("postgres").exists()
            || support::listing(&ctx.work_dir.join("postgres")).is_empty(),
        "nothing went under the unreachable work dir"
    );
    // The clusters were in dbbench's directory under the temp dir, and are gone.
    support::assert_no_cluster_left(&ctx);
}
