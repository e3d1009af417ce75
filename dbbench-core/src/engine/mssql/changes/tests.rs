//! The server lock before the first read of instance state (findings N1, N3, N9 of the fourth
//! review) and the server's record of owed undo (N2): two processes against one scripted server,
//! and a run killed between a change and its undo.

use super::*;
use crate::engine::mssql::applock::RESOURCE;
use crate::engine::mssql::double::{Api, InstanceModel, ScriptedServer};
use crate::engine::mssql::ifi::{self, trace_flags_change};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

fn server() -> ScriptedServer {
    ScriptedServer::new()
        .with_sessions()
        .with_instance(InstanceModel::sql_server_2022_linux())
}

fn settings(server: &ScriptedServer, host: &str) -> ConnectSettings {
    ConnectSettings::scripted(
        &format!("Server=tcp:{host},1433;User Id=u;Password=p"),
        server,
    )
    .unwrap()
}

/// Finding N1/N3: process A (`ifi = false`) holds the lock exclusively from before its reads
/// through its window; process B (`ifi = true`) asks for it shared before it reads the flags,
/// so it neither plans from A's flags nor measures under them; and while B's window holds the
/// lock shared, a changer's TRACEON waits.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_ifi_false_and_an_ifi_true_process_never_see_each_others_flags() {
    let server = server();
    let a_settings = settings(&server, "h");
    let mut a_conn = a_settings.connect(Some("master")).await.unwrap();
    let mut a = InstanceChanges::new(a_settings.clone());
    a.hold(Mode::Exclusive).await.unwrap();
    assert!(ifi::flags_on(&mut a_conn).await.unwrap().is_empty());
    a.apply(
        &mut a_conn,
        &trace_flags_change(&ifi::TF_NO_IFI, "ifi = false"),
    )
    .await
    .unwrap();

    let b_settings = settings(&server, "h");
    let b_planned = std::sync::Arc::new(AtomicBool::new(false));
    let planned = b_planned.clone();
    let b = tokio::spawn(async move {
        let mut conn = b_settings.connect(Some("master")).await.unwrap();
        let mut b = InstanceChanges::new(b_settings);
        b.hold(Mode::Shared).await.unwrap();
        planned.store(true, Ordering::SeqCst);
        // B's plan and its window's flags, read under the shared lock.
        let seen = ifi::flags_on(&mut conn).await.unwrap();
        (b, conn, seen)
    });
    tokio::time::sleep(Duration::from_millis(800)).await;
    assert!(
        !b_planned.load(Ordering::SeqCst),
        "B read instance state while A had IFI off for the instance"
    );
    a.restore(&mut a_conn).await.unwrap();
    a.release();
    let (mut b, _b_conn, seen) = b.await.unwrap();
    assert!(seen.is_empty(), "B planned from A's flags: {seen:?}");

    // B's window: A's next repetition may not turn IFI off under it.
    let a_settings2 = a_settings.clone();
    let a_next = tokio::spawn(async move {
        let mut conn = a_settings2.connect(Some("master")).await.unwrap();
        let mut a = InstanceChanges::new(a_settings2);
        a.hold(Mode::Exclusive).await.unwrap();
        a.apply(
            &mut conn,
            &trace_flags_change(&ifi::TF_NO_IFI, "ifi = false"),
        )
        .await
        .unwrap();
        a.restore(&mut conn).await.unwrap();
        a.release();
    });
    tokio::time::sleep(Duration::from_millis(800)).await;
    assert!(
        server.calls_with("DBCC TRACEON(").len() == 1,
        "A turned IFI off while B's ifi = true window held the lock"
    );
    assert!(b.lock_held().await.is_ok());
    b.release();
    a_next.await.unwrap();
    assert_eq!(server.calls_with("DBCC TRACEON(").len(), 2);
    assert!(server.lock_holder(RESOURCE).is_none(), "given back");
}

/// Finding N2: a run is killed between its changes and their undo (its lock session ends with
/// it). A run with another state directory and another name for the server finds the changes
/// in the server's own record when it takes the lock, undoes and verifies them, and drops the
/// record.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_killed_runs_changes_are_undone_from_the_servers_record_by_another_client() {
    let server = server();
    let first_dir = tempfile::tempdir().unwrap();
    let first_settings = settings(&server, "sql-a.example");
    let mut conn = first_settings.connect(Some("master")).await.unwrap();
    let mut first = InstanceChanges::new(first_settings).owed_in(first_dir.path());
    first.hold(Mode::Exclusive).await.unwrap();
    first
        .apply(
            &mut conn,
            &trace_flags_change(&ifi::TF_NO_IFI, "ifi = false"),
        )
        .await
        .unwrap();
    let add = crate::engine::mssql::instance::Change {
        what: "tempdb file dbbench_temp_1 added".into(),
        apply: "ALTER DATABASE tempdb ADD FILE (NAME = N'dbbench_temp_1', FILENAME = \
                N'/var/opt/mssql/data/dbbench_temp_1_9.ndf', SIZE = 8192KB, FILEGROWTH = 65536KB);"
            .into(),
        undo: vec![Undo::RemoveTempdbFile {
            file: "dbbench_temp_1".into(),
        }],
    };
    first.apply(&mut conn, &add).await.unwrap();
    assert_eq!(server.instance().unwrap().master_properties.len(), 2);
    // The kill: no destructor runs, and the server ends the process's sessions.
    let holder = server.lock_holder(RESOURCE).unwrap();
    std::mem::forget(first);
    std::mem::forget(conn);
    server.answer(Api::Batch, &format!("KILL {}", holder.spid));
    assert!(server.lock_holder(RESOURCE).is_none());

    let second_dir = tempfile::tempdir().unwrap();
    let mut second = InstanceChanges::new(settings(&server, "10.0.0.7")).owed_in(second_dir.path());
    second.hold(Mode::Exclusive).await.unwrap();
    let instance = server.instance().unwrap();
    assert!(instance.flags_on.is_empty(), "{:?}", instance.flags_on);
    assert_eq!(instance.tempdb.len(), 8, "the added file is removed");
    assert!(instance.master_properties.is_empty(), "record dropped");
    assert!(!crate::engine::mssql::owed::path(second_dir.path()).exists());
    second.release();
}

/// Finding N9: a lock whose session was ended (a KILL, a reset connection) is noticed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lost_lock_is_noticed() {
    let server = server();
    let mut changes = InstanceChanges::new(settings(&server, "h"));
    changes.hold(Mode::Shared).await.unwrap();
    assert!(changes.lock_held().await.is_ok());
    let holder = server.lock_holder(RESOURCE).unwrap();
    server.answer(Api::Batch, &format!("KILL {}", holder.spid));
    let err = changes.lock_held().await.unwrap_err();
    assert!(err.contains("was lost"), "{err}");
}
