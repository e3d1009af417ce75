//! The write-ahead ledger: failed undo stays owed; a process killed with SIGKILL between its
//! instance changes and their undo leaves them on record, and the next start undoes them and
//! says so; a live owner's changes are left alone.

use super::*;
use crate::engine::mssql::double::{InstanceModel, Reply, ScriptedServer};
use crate::engine::mssql::instance::{tempdb_plan, Change, InstanceChanges, TempdbFile};
use crate::engine::mssql::undo::Undo;
use crate::engine::mssql::{ifi, provision::Platform, ConnectSettings};
use crate::model::config::StorageSpec;

const ADO: &str = "server=tcp:h,1433;user id=u;password=p";
/// The ledger's key on the scripted SQL Server 2022: the server's own name
/// (`@@SERVERNAME/MachineName`), not the connection string's.
const KEY: &str = "sql2022lx/sql2022lx";
fn off() -> Undo {
    Undo::TraceOff { flags: vec![1806] }
}

fn scripted(server: &ScriptedServer) -> ConnectSettings {
    ConnectSettings::scripted(ADO, server).unwrap()
}

/// Finding 5 of issue 29: an undo that fails is kept, not forgotten. The drop of the changes
/// runs it again on a fresh connection; what still fails there stays owed and is finished at
/// the next start (once its owner, this process, is gone: here the ledger entry is handed to a
/// dead owner, as the next process would find it).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failed_undo_stays_owed_until_it_succeeds() {
    let change = Change {
        what: "trace flag 1806 on (ifi = false)".into(),
        apply: "DBCC TRACEON(1806, -1) WITH NO_INFOMSGS;".into(),
        undo: vec![off()],
    };
    let dir = tempfile::tempdir().unwrap();
    let server = ScriptedServer::new().with_instance(InstanceModel::sql_server_2022_linux());
    let settings = scripted(&server);
    let failing = || Reply::error(2812, "Could not find stored procedure (scripted failure)");

    // Fails once, then succeeds at the drop's retry on a fresh connection.
    let mut conn = settings.connect(Some("master")).await.unwrap();
    let mut changes = InstanceChanges::new(settings.clone()).owed_in(dir.path());
    changes.apply(&mut conn, &change).await.unwrap();
    assert_eq!(owed(dir.path(), KEY).unwrap().len(), 1, "on record");
    server.times("TRACEOFF", 1, failing());
    assert!(changes.restore(&mut conn).await.is_err());
    drop(changes);
    assert_eq!(server.calls_with("TRACEOFF").len(), 2, "tried again");
    assert!(owed(dir.path(), KEY).unwrap().is_empty());
    assert!(!path(dir.path()).exists());

    // Fails at the restore and at the drop: owed, and finished at the next start.
    let mut changes = InstanceChanges::new(settings.clone()).owed_in(dir.path());
    changes.apply(&mut conn, &change).await.unwrap();
    server.times("TRACEOFF", 2, failing());
    assert!(changes.restore(&mut conn).await.is_err());
    drop(changes);
    let left = owed(dir.path(), KEY).unwrap();
    assert_eq!(left.len(), 1, "{left:?}");
    assert_eq!(left[0].undo, Some(off()));
    // This process still runs: the entry is its own, left alone.
    let settled = settle(&mut conn, dir.path(), KEY, 16).await.unwrap();
    assert_eq!(settled.left.len(), 1, "{settled:?}");
    hand_to_dead_owner(dir.path());
    let settled = settle(&mut conn, dir.path(), KEY, 16).await.unwrap();
    assert_eq!((settled.done.len(), settled.still.len()), (1, 0));
    assert_eq!(server.calls_with("TRACEOFF").len(), 5);
    assert!(!path(dir.path()).exists());
}

/// Rewrites every entry's owner as a process of this host that is gone.
fn hand_to_dead_owner(dir: &Path) {
    with_ledger(dir, |ledger| {
        for owed in ledger.values_mut().flatten() {
            if let Some(owner) = owed.owner.as_mut() {
                owner.start = owner.start.map(|s| s + 1);
            }
        }
    })
    .unwrap();
}

/// The instance changes the crash test's child makes: both IFI-off flags, and a ninth tempdb
/// file on a tempdb of eight.
fn crash_changes() -> Vec<Change> {
    let spec = StorageSpec {
        tempdb_files: Some(9),
        ..StorageSpec::DEFAULT
    };
    let current: Vec<TempdbFile> = InstanceModel::sql_server_2022_linux()
        .tempdb
        .into_iter()
        .map(|f| TempdbFile {
            name: f.name,
            physical: f.physical,
            size_pages: f.startup_pages,
            current_pages: f.current_pages,
            growth: f.growth,
            is_percent: f.is_percent,
        })
        .collect();
    let tempdb = tempdb_plan(&spec, &current, Platform::Linux).unwrap();
    let mut changes = vec![ifi::trace_flags_change(&ifi::TF_NO_IFI, "ifi = false")];
    changes.extend(tempdb.changes);
    changes
}

const CHILD_ENV: &str = "DBBENCH_TEST_OWED_CRASH_CHILD";

/// The child of [`a_run_killed_mid_repetition_is_undone_by_the_next_and_said`]: when that test
/// starts this binary with a directory in `DBBENCH_TEST_OWED_CRASH_CHILD` (and the same in
/// `DBBENCH_STATE_DIR`), it applies the instance changes with the user's ledger ([`home`]), says
/// it is ready, and waits to be killed. Run on its own it does nothing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn crash_child_applies_changes_and_waits_to_be_killed() {
    let Ok(dir) = std::env::var(CHILD_ENV) else {
        return;
    };
    let dir = PathBuf::from(dir);
    let server = ScriptedServer::new().with_instance(InstanceModel::sql_server_2022_linux());
    let settings = scripted(&server);
    let mut conn = settings.connect(Some("master")).await.unwrap();
    let mut changes = InstanceChanges::new(settings.clone()).owed_in(&home());
    for change in crash_changes() {
        changes.apply(&mut conn, &change).await.unwrap();
    }
    std::fs::write(dir.join("ready"), b"").unwrap();
    std::thread::sleep(std::time::Duration::from_secs(120));
}

/// Finding B2 of the third review, the crash test: a dbbench process is killed with
/// SIGKILL after it turned IFI off for the instance (TF 1805, 1806) and added a tempdb file,
/// before it undid either. The next start against the server finds both in the ledger, sees
/// that their owner is gone, undoes and verifies both, and says so in one line.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_killed_mid_repetition_is_undone_by_the_next_and_said() {
    let dir = tempfile::tempdir().unwrap();
    let mut child = std::process::Command::new(std::env::current_exe().unwrap())
        .args([
            "engine::mssql::owed::tests::crash_child_applies_changes_and_waits_to_be_killed",
            "--exact",
            "--test-threads=1",
        ])
        .env(CHILD_ENV, dir.path())
        .env("DBBENCH_STATE_DIR", dir.path())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let started = std::time::Instant::now();
    while !dir.path().join("ready").exists() {
        assert!(
            started.elapsed().as_secs() < 60,
            "the child never got ready"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    child.kill().unwrap(); // SIGKILL: no destructor, no teardown runs.
    child.wait().unwrap();
    let left = owed(dir.path(), KEY).unwrap();
    assert_eq!(left.len(), 2, "{left:?}");
    assert!(left
        .iter()
        .all(|o| o.owner.as_ref().is_some_and(|w| w.pid == child.id())));

    // The server as the killed process left it: both flags on, the ninth tempdb file there.
    let mut model = InstanceModel::sql_server_2022_linux();
    model.flags_on.extend(ifi::TF_NO_IFI);
    let server = ScriptedServer::new().with_instance(model);
    let settings = scripted(&server);
    for change in crash_changes().iter().skip(1) {
        server.answer(crate::engine::mssql::double::Api::Batch, &change.apply);
    }
    assert_eq!(server.instance().unwrap().tempdb.len(), 9);

    let line = crate::engine::mssql::settle_owed(&settings, dir.path())
        .await
        .unwrap()
        .expect("a line that says what was undone");
    let instance = server.instance().unwrap();
    assert!(instance.flags_on.is_empty(), "{:?}", instance.flags_on);
    assert_eq!(instance.tempdb.len(), 8, "the added file is removed");
    assert!(
        line.contains("undid instance changes an earlier dbbench run left on h,1433")
            && line.contains("trace flag 1805, 1806 off")
            && line.contains("tempdb file dbbench_temp_1 removed"),
        "{line}"
    );
    assert!(!path(dir.path()).exists(), "the ledger is empty");
    // Verified on the server before the entries were removed.
    assert!(!server.calls_with("DBCC TRACESTATUS(1805, -1)").is_empty());
}

/// A change whose statement never answered (a command timeout: tiberius sends no Attention and
/// the server may still apply it) stays owed: its undo is kept in memory and in the ledger, and
/// the restore runs it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_undo_of_a_timed_out_change_stays_owed() {
    let dir = tempfile::tempdir().unwrap();
    let server = ScriptedServer::new();
    server.times("TRACEON", 1, Reply::Timeout);
    let settings = scripted(&server);
    let mut conn = settings.connect(Some("master")).await.unwrap();
    let mut changes = InstanceChanges::new(settings.clone()).owed_in(dir.path());
    let change = ifi::trace_flags_change(&[1806], "ifi = false");
    assert!(changes.apply(&mut conn, &change).await.is_err());
    assert_eq!(owed(dir.path(), "h,1433").unwrap().len(), 1);
    let mut fresh = settings.connect(Some("master")).await.unwrap();
    changes.restore(&mut fresh).await.unwrap();
    assert_eq!(server.calls_with("TRACEOFF(1806").len(), 1);
    assert!(!path(dir.path()).exists());
}

/// The next start does not undo a dead run's changes while another dbbench process holds the
/// server lock (it may be in the middle of changes of its own): it says so and leaves them owed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn owed_undo_waits_while_another_process_holds_the_lock() {
    let dir = tempfile::tempdir().unwrap();
    let server = ScriptedServer::new().with_sessions();
    let settings = scripted(&server);
    pending(dir.path(), "h,1433", &[(off(), None)]).unwrap();
    hand_to_dead_owner(dir.path());
    let other = crate::engine::mssql::applock::ServerLock::acquire(
        &settings,
        crate::engine::mssql::applock::Mode::Exclusive,
        std::time::Duration::ZERO,
    )
    .await
    .unwrap();
    let line = crate::engine::mssql::settle_owed(&settings, dir.path())
        .await
        .unwrap()
        .unwrap();
    assert!(line.contains("tried again at the next start"), "{line}");
    assert!(server.calls_with("TRACEOFF").is_empty());
    assert_eq!(owed(dir.path(), "h,1433").unwrap().len(), 1);
    drop(other);
    let line = crate::engine::mssql::settle_owed(&settings, dir.path())
        .await
        .unwrap()
        .unwrap();
    assert!(line.contains("undid instance changes"), "{line}");
    assert!(!path(dir.path()).exists());
}

/// A ledger that an older version kept in a work directory is taken over whole by the user's:
/// every entry with its owner and statement, renumbered after the entries already there, and
/// the old file removed; a second take-over moves nothing.
#[test]
fn a_work_directory_ledger_is_taken_over_by_the_users() {
    let old = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    let ids = pending(
        home.path(),
        "h,1433",
        &[(Undo::TraceOff { flags: vec![1805] }, None)],
    )
    .unwrap();
    pending(
        old.path(),
        "h,1433",
        &[(Undo::TraceOff { flags: vec![3004] }, None)],
    )
    .unwrap();
    pending(
        old.path(),
        "other,1433",
        &[(Undo::TraceOff { flags: vec![3605] }, None)],
    )
    .unwrap();
    let before = owed(old.path(), "h,1433").unwrap();

    assert_eq!(adopt(old.path(), home.path()).unwrap(), 2);
    assert!(!path(old.path()).exists(), "the old ledger is removed");
    let here = owed(home.path(), "h,1433").unwrap();
    assert_eq!(here.len(), 2, "{here:?}");
    assert_eq!(here[0].id, ids[0]);
    assert_eq!(here[1].undo, before[0].undo);
    assert_eq!(here[1].owner, before[0].owner);
    assert!(here[1].id > ids[0], "renumbered after the entries there");
    assert_eq!(owed(home.path(), "other,1433").unwrap().len(), 1);
    assert_eq!(adopt(old.path(), home.path()).unwrap(), 0);
    assert_eq!(
        adopt(home.path(), home.path()).unwrap(),
        0,
        "itself: nothing"
    );
}

/// Security finding 7: the ledger lives only in a directory of this user's that no one else can
/// write: a symlink in its place is refused, an open directory is closed (0700), and the file is
/// written 0600.
#[test]
fn the_ledger_is_kept_only_in_a_private_directory() {
    use std::os::unix::fs::PermissionsExt;
    let base = tempfile::tempdir().unwrap();
    let real = base.path().join("real");
    std::fs::create_dir(&real).unwrap();
    let link = base.path().join("link");
    std::os::unix::fs::symlink(&real, &link).unwrap();
    let err = pending(&link, KEY, &[(off(), None)])
        .unwrap_err()
        .to_string();
    assert!(err.contains("not a directory"), "{err}");
    assert!(!path(&real).exists(), "nothing written through the symlink");

    std::fs::set_permissions(&real, std::fs::Permissions::from_mode(0o755)).unwrap();
    pending(&real, KEY, &[(off(), None)]).unwrap();
    let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(&real), 0o700);
    assert_eq!(mode(&path(&real)), 0o600);
}
