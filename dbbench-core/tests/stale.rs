//! Leftovers of killed runs on the embedded engine: a database directory whose marker names a
//! process that is gone is removed at the next start (with its files on other volumes) and
//! reported; one whose owner still runs, and one without a marker, are left alone.

mod support;

use dbbench_core::__internals::config::{FixtureKind, RunSpec, StorageSpec};
use dbbench_core::__internals::storage::Layout;
use dbbench_core::__internals::{Backend, BodyFuture, EmbeddedBackend, Volumes};
use dbbench_core::Session;
use std::path::{Path, PathBuf};
use support::cell;

/// The PID of a process that has exited (a child that was reaped).
fn dead_pid() -> u32 {
    let mut child = std::process::Command::new("true").spawn().unwrap();
    let pid = child.id();
    child.wait().unwrap();
    pid
}

fn hostname() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .unwrap()
        .trim()
        .to_string()
}

/// A database directory as a killed embedded run leaves it: marker, database, data file on the
/// volume `elsewhere`.
fn leftover(work_dir: &Path, name: &str, marker: Option<String>, elsewhere: &Path) -> PathBuf {
    let dir = work_dir.join("db").join(name);
    std::fs::create_dir_all(&dir).unwrap();
    if let Some(marker) = marker {
        std::fs::write(dir.join(".dbbench-owned"), marker).unwrap();
    }
    let mut volumes = Volumes::default();
    volumes.bind("v", elsewhere);
    let spec = StorageSpec {
        data_on: &["v"],
        ..StorageSpec::DEFAULT
    };
    // Dropped without `remove`, as a killed process leaves it.
    drop(Layout::create(&dir.join(format!("{name}.db")), &spec, &volumes).unwrap());
    dir
}

fn files_in(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

#[tokio::test]
async fn a_dead_owners_leftover_is_removed_and_reported_others_are_left() {
    let work = support::scratch("stale-sweep");
    let elsewhere = work.join("volume");
    std::fs::create_dir_all(&elsewhere).unwrap();
    let me = std::process::id();
    let my_start: u64 = {
        let stat = std::fs::read_to_string("/proc/self/stat").unwrap();
        let after = &stat[stat.rfind(')').unwrap() + 1..];
        after.split_whitespace().nth(19).unwrap().parse().unwrap()
    };
    let host = hostname();
    let dead = leftover(
        &work,
        "dbbench_dead_r0_1",
        Some(format!(
            "created by dbbench\nowner_host={host}\nowner_pid={}\nowner_start=1\n",
            dead_pid()
        )),
        &elsewhere,
    );
    // This process's PID with another start time: the PID was reused, the owner is gone.
    let reused = leftover(
        &work,
        "dbbench_reused_r0_1",
        Some(format!(
            "created by dbbench\nowner_host={host}\nowner_pid={me}\nowner_start={}\n",
            my_start + 1
        )),
        &elsewhere,
    );
    let live = leftover(
        &work,
        "dbbench_live_r0_1",
        Some(format!(
            "created by dbbench\nowner_host={host}\nowner_pid={me}\nowner_start={my_start}\n"
        )),
        &elsewhere,
    );
    let unmarked = leftover(&work, "dbbench_unmarked_r0_1", None, &elsewhere);
    let on_volume_before = files_in(&elsewhere);
    assert_eq!(on_volume_before.len(), 4, "{on_volume_before:?}");

    let mut backend = Backend::new(EmbeddedBackend::new());
    let report = backend.sweep_stale(&work).await;
    assert_eq!(report.len(), 2, "{report:?}");
    assert!(report
        .iter()
        .any(|l| l.contains("dbbench_dead_r0_1") && l.contains("which is gone")));
    assert!(report.iter().any(|l| l.contains("dbbench_reused_r0_1")));
    assert!(!dead.exists() && !reused.exists());
    assert!(
        live.exists() && unmarked.exists(),
        "live and unmarked directories are kept"
    );
    let on_volume = files_in(&elsewhere);
    assert_eq!(
        on_volume.len(),
        2,
        "the dead databases' data files went too: {on_volume:?}"
    );
    assert!(on_volume
        .iter()
        .all(|f| f.contains("live") || f.contains("unmarked")));
    assert!(
        backend.sweep_stale(&work).await.is_empty(),
        "nothing more to remove"
    );
}

fn quick(db: &mut Session) -> BodyFuture<'_> {
    Box::pin(async move { db.execute("CREATE TABLE t (x integer)").await.map(|_| ()) })
}

support::benchmark! {
    static QUICK = quick,
    title: "stale cleanup at start",
    run: RunSpec {
        repeat: 1,
        warmup: 0,
        fixture: FixtureKind::None,
        ..RunSpec::DEFAULT
    },
    cells: [cell("only", StorageSpec::DEFAULT)],
}

#[test]
fn a_run_sweeps_before_it_starts() {
    let ctx = support::context(
        "stale-at-start",
        dbbench_core::Scale::smoke(),
        Volumes::default(),
    );
    let elsewhere = ctx.work_dir.join("volume");
    std::fs::create_dir_all(&elsewhere).unwrap();
    let dead = leftover(
        &ctx.work_dir,
        "dbbench_killed_r0_1",
        Some(format!("created by dbbench, pid {}\n", dead_pid())),
        &elsewhere,
    );
    let result = support::run_embedded(&QUICK, &ctx);
    assert_eq!(result.cells[0].runs.len(), 1);
    assert!(
        !dead.exists(),
        "an older marker (pid only) of a gone process is swept too"
    );
    assert!(files_in(&ctx.work_dir.join("db")).is_empty());
}
