//! A process killed in the middle of writing leaves a database that reopens consistent, with
//! every transaction it reported as committed.
//!
//! The test runs itself a second time as the writer: the child process (this same test, with
//! `DBBENCH_STORAGE_CRASH_CHILD` set) creates the database and writes from two threads until it is
//! killed with SIGKILL; the parent then reattaches the layout, checks integrity and the rows.

mod support;

use dbbench_core::__internals::config::StorageSpec;
use dbbench_core::__internals::embedded::storage::Layout;
use dbbench_core::__internals::Volumes;
use std::io::BufRead;
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};
use support::*;

const CHILD: &str = "DBBENCH_STORAGE_CRASH_CHILD";
const TEST: &str = "a_killed_writer_leaves_a_database_that_reopens_consistent";
const ROWS_PER_COMMIT: u64 = 200;

const SPEC: StorageSpec = StorageSpec {
    data_files: 3,
    growth: Some(grow_mib(1, "1MB")),
    ifi: Some(false),
    log_size: Some(mib(1, "1MB")),
    log_growth: Some(grow_mib(1, "1MB")),
    ..StorageSpec::DEFAULT
};

/// The writer: never returns; the parent kills it.
fn write_until_killed(dir: &Path) -> ! {
    let layout = Layout::create(&dir.join("db.db"), &SPEC, &Volumes::default()).unwrap();
    connect(&layout)
        .execute_batch("CREATE TABLE t (id INTEGER PRIMARY KEY, pad BLOB)")
        .unwrap();
    let committed = AtomicU64::new(0);
    std::thread::scope(|s| {
        for _ in 0..2 {
            s.spawn(|| {
                let mut c = connect(&layout);
                loop {
                    insert(&mut c, ROWS_PER_COMMIT);
                    let total = committed.fetch_add(ROWS_PER_COMMIT, Ordering::SeqCst);
                    println!("committed {}", total + ROWS_PER_COMMIT);
                }
            });
        }
    });
    unreachable!("the writers never stop")
}

#[test]
fn a_killed_writer_leaves_a_database_that_reopens_consistent() {
    if let Some(dir) = std::env::var_os(CHILD) {
        write_until_killed(Path::new(&dir));
    }
    let dir = scratch("crash");
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args([TEST, "--exact", "--nocapture", "--test-threads=1"])
        .env(CHILD, &dir)
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let started = Instant::now();
    let mut reported = 0;
    let lines = std::io::BufReader::new(child.stdout.take().unwrap()).lines();
    for line in lines {
        if let Some(n) = line.unwrap().strip_prefix("committed ") {
            reported = reported.max(n.trim().parse::<u64>().unwrap());
        }
        // Enough work for several growths of every file and many checkpoints.
        if reported >= 100_000 || started.elapsed() > Duration::from_secs(120) {
            break;
        }
    }
    child.kill().unwrap();
    child.wait().unwrap();
    assert!(
        reported >= 40_000,
        "the writer only committed {reported} rows"
    );

    let layout = Layout::attach(&dir.join("db.db")).unwrap();
    assert!(
        layout.data_usage().iter().all(|u| u.size_bytes > 1 << 20),
        "every data file grew: {:?}",
        layout.data_usage()
    );
    let mut c = connect(&layout);
    assert_intact(&c);
    let rows: i64 = c
        .query_row("SELECT count(*) FROM t", [], |r| r.get(0))
        .unwrap();
    assert!(
        rows as u64 >= reported,
        "{rows} rows survived, {reported} were reported committed"
    );
    assert_eq!(
        rows as u64 % ROWS_PER_COMMIT,
        0,
        "no transaction survived in part"
    );
    insert(&mut c, 1000);
    c.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()))
        .unwrap();
    assert_intact(&c);
    drop(c);
    layout.remove().unwrap();
    let left: Vec<String> = listing(&dir);
    assert!(left.is_empty(), "{left:?}");
}
