//! The conformance suite on an existing MariaDB server (`DBBENCH_MARIADB`'s kind: dbbench did
//! not make it), here an instance the target starts for each test; skipped without MariaDB's
//! programs unless `DBBENCH_REQUIRE_MARIADB=1`.

mod support;

support::backend_conformance!(
    mariadb_existing,
    support::conformance::mariadb::Existing::default()
);

/// `cache = "cold"` needs the server's restart (InnoDB cannot empty its buffer pool otherwise),
/// which dbbench does not make on a server it did not start: the window's opening refuses it,
/// saying so and what to do instead, and the database is dropped as after any failed cell.
#[tokio::test(flavor = "current_thread")]
async fn a_cold_window_is_refused_on_an_existing_server() {
    use dbbench_core::__internals::DatabasePlan;
    use dbbench_core::results::CacheState;
    use dbbench_core::Scale;
    use support::conformance::Target;

    let target = support::conformance::mariadb::Existing::default();
    let Some(mut backend) = target.backend().await else {
        return;
    };
    let ctx = support::context_from_env("mariadb-existing-cold");
    let plan = DatabasePlan {
        name: "dbbench_mdb_existing_cold_1".into(),
        storage: dbbench_core::__internals::config::StorageSpec::DEFAULT,
        volumes: ctx.volumes.clone(),
        work_dir: ctx.work_dir.clone(),
        scale: Scale::smoke(),
    };
    let db = backend.create(&plan).await.unwrap();
    let mut conn = db.connect().await.unwrap();
    let refused = db
        .open_window(&mut conn, CacheState::Cold)
        .await
        .unwrap_err()
        .to_string();
    assert!(
        refused.contains("does not restart a server it did not start")
            && refused.contains("cache = \"warm\""),
        "{refused}"
    );
    // The connection is the one it was: nothing restarted the server.
    let one: i64 = conn.query_scalar("SELECT 1").await.unwrap();
    assert_eq!(one, 1);
    drop(conn);
    db.drop_database().await.unwrap();
    drop(backend);
    assert_eq!(target.leftovers(&ctx).await, Vec::<String>::new());
}

/// A server on this machine is found as the workload's, not as a neighbour's: the busy-machine
/// guard counts its CPU with the run's (`util::local_server`). Found by its pid file (root may
/// read it), the process checked to be a `mariadbd`.
#[tokio::test(flavor = "current_thread")]
async fn an_existing_server_on_this_machine_is_the_workload() {
    use support::conformance::Target;

    let target = support::conformance::mariadb::Existing::default();
    let Some(backend) = target.backend().await else {
        return;
    };
    let found = backend
        .server_on_host()
        .expect("the server on this machine is found");
    assert_eq!(found.pid, target.server_pid());
    assert_eq!(found.name, "mariadbd");
    assert!(found.found_by.contains("its pid file"), "{found:?}");
}
