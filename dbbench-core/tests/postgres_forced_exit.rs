//! What the interrupt's forced exit does to a managed PostgreSQL cluster whose every process is
//! stopped (SIGSTOP): `util::leftover::end_all`, which the signal thread runs when Ctrl-C's
//! budget is spent, kills them (SIGKILL reaches a stopped process) and removes the cluster's
//! directories, and says so. Its own test binary: `end_all` ends everything this process holds.

mod support;

use dbbench_core::__internals::leftover;
use dbbench_core::__internals::postgres::cluster::{self, Binaries, Cluster, ClusterSpec};
use std::path::Path;
use std::time::{Duration, Instant};

#[test]
fn a_stopped_managed_cluster_is_killed_and_removed_by_the_forced_exit() {
    if !cluster::available_for_tests() {
        return;
    }
    let dir = support::scratch("forced-exit");
    let binaries = Binaries::find().unwrap();
    let (work_base, _) =
        dbbench_core::__internals::postgres::place::work_base(&dir, cluster::run_as().unwrap());
    std::fs::create_dir_all(&work_base).unwrap();
    let spec = ClusterSpec {
        work_base,
        data_base: None,
        wal_base: None,
        wal_segsize_mb: None,
        settings: Vec::new(),
    };
    let cluster = Cluster::start(&binaries, spec, format!("forced-{}", std::process::id()))
        .expect("the cluster starts");
    let pgdata = cluster.pgdata().to_path_buf();
    let pids = support::processes_under(&pgdata);
    assert!(pids.len() >= 3, "the postmaster and its workers: {pids:?}");
    for pid in &pids {
        // SAFETY: kill has no memory preconditions; the cluster is this test's.
        unsafe { libc::kill(*pid as i32, libc::SIGSTOP) };
    }

    let lines = leftover::end_all();
    let said = "removed the managed PostgreSQL cluster ";
    assert!(lines.iter().any(|l| l.starts_with(said)), "{lines:?}");
    // Reaped by their parent (the postmaster is this process's child: a zombie until then).
    let alive = || {
        pids.iter()
            .filter(|pid| {
                std::fs::read_to_string(format!("/proc/{pid}/stat"))
                    .is_ok_and(|stat| !stat.contains(") Z "))
            })
            .count()
    };
    let started = Instant::now();
    while alive() > 0 && started.elapsed() < Duration::from_secs(5) {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert_eq!(alive(), 0, "processes of the stopped cluster left");
    assert!(!Path::new(&pgdata).exists(), "{} left", pgdata.display());
    // The orderly teardown after it finds nothing to do and does not fail.
    drop(cluster);
}
