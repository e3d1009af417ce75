//! Leftovers of killed runs on the embedded engine: a directory whose marker is of the older form
//! (a PID only) and names a process that is gone is swept at the next start too. (The sweep of
//! today's markers, what it leaves and files on other volumes are the conformance suite's:
//! `conformance_embedded.rs`.)

mod support;

use dbbench_core::__internals::config::{FixtureKind, RunSpec, StorageSpec};
use dbbench_core::__internals::embedded::storage::Layout;
use dbbench_core::__internals::{BodyFuture, Volumes};
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
    // An older marker names a pid and no host or machine: no owner this host can judge
    // (security review, finding 19), so it is left, never swept.
    assert!(
        dead.exists(),
        "an older marker (pid only) names no host and is left"
    );
    assert_eq!(
        files_in(&ctx.work_dir.join("db")).len(),
        1,
        "only the older marker's directory"
    );
}
