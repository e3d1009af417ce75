//! A disk that refuses to take more data fails the cell with an error naming the file, and
//! teardown still removes every file.
//!
//! The full disk is made with `RLIMIT_FSIZE`, which needs no privileges: past the limit the kernel
//! refuses writes and allocations (EFBIG), exactly where a full disk refuses them (ENOSPC), and the
//! layer treats both the same way. The limit is process-wide, so this file holds a single test.

mod support;

use dbbench_core::__internals::config::{FixtureKind, RunSpec, StorageSpec};
use dbbench_core::__internals::BodyFuture;
use dbbench_core::results::CellStatus;
use dbbench_core::Scale;
use dbbench_core::Session;
use support::*;

fn full_disk(db: &mut Session) -> BodyFuture<'_> {
    Box::pin(async move {
        db.batch("CREATE TABLE t (id INTEGER PRIMARY KEY, pad BLOB)")
            .await?;
        for _ in 0..80 {
            db.execute(
                "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 1000) \
                 INSERT INTO t (pad) SELECT randomblob(200) FROM n",
            )
            .await?;
        }
        Ok(())
    })
}

support::benchmark! {
    static FULL_DISK = full_disk,
    title: "a full disk",
    run: RunSpec {
        fixture: FixtureKind::None,
        ..RunSpec::DEFAULT
    },
    cells: [
        cell(
            "data_file_cannot_grow",
            StorageSpec {
                data_size: Some(mib(1, "1MB")),
                growth: Some(grow_mib(1, "1MB")),
                ifi: Some(false),
                // Above the 8 MB SQLite checkpoints at: this log never grows.
                log_size: Some(mib(10, "10MB")),
                data_on: &["small"],
                ..StorageSpec::DEFAULT
            }
        ),
        cell(
            "log_cannot_grow",
            StorageSpec {
                growth: Some(grow_mib(1, "1MB")),
                log_size: Some(mib(1, "1MB")),
                // One growth past the 12 MB the "disk" takes.
                log_growth: Some(grow_mib(16, "16MB")),
                log_on: Some("small"),
                ..StorageSpec::DEFAULT
            }
        ),
        cell(
            "log_cannot_be_created",
            StorageSpec {
                log_size: Some(mib(64, "64MB")),
                log_on: Some("small"),
                ..StorageSpec::DEFAULT
            }
        ),
    ],
}

/// Limits the size of any file this process writes to `bytes` (SIGXFSZ ignored, so writes fail
/// with EFBIG instead of killing the process).
fn limit_file_size(bytes: u64) -> libc::rlimit {
    // SAFETY: plain system calls with valid arguments.
    unsafe {
        libc::signal(libc::SIGXFSZ, libc::SIG_IGN);
        let mut old = std::mem::zeroed::<libc::rlimit>();
        assert_eq!(libc::getrlimit(libc::RLIMIT_FSIZE, &mut old), 0);
        let new = libc::rlimit {
            rlim_cur: bytes,
            rlim_max: old.rlim_max,
        };
        assert_eq!(libc::setrlimit(libc::RLIMIT_FSIZE, &new), 0);
        old
    }
}

#[test]
fn a_full_disk_names_the_file_and_teardown_removes_everything() {
    let base = scratch("full-disk-volumes");
    let small = base.join("small");
    let ctx = context("full-disk", Scale::smoke(), volumes(&base, &["small"]));
    let old = limit_file_size(12 << 20);
    let result = try_run(&FULL_DISK, &ctx);
    // SAFETY: restores the limit read above.
    unsafe { libc::setrlimit(libc::RLIMIT_FSIZE, &old) };
    let result = result.unwrap();

    let failure = |cell: &str| match &result.cells.iter().find(|c| c.name == cell).unwrap().status {
        CellStatus::Failed(e) => e.clone(),
        other => panic!("{cell} should fail on a full disk, got {other:?}"),
    };
    let data = failure("data_file_cannot_grow");
    assert!(data.contains("_data_1.mdf"), "{data}");
    assert!(data.contains("File too large"), "{data}");
    let log = failure("log_cannot_grow");
    assert!(
        log.contains("_log.ldf") && log.contains("File too large"),
        "{log}"
    );
    let created = failure("log_cannot_be_created");
    assert!(
        created.contains("_log.ldf") && created.contains("File too large"),
        "{created}"
    );

    assert!(listing(&small).is_empty(), "{:?}", listing(&small));
    assert!(
        listing(&ctx.work_dir.join("db")).is_empty(),
        "{:?}",
        listing(&ctx.work_dir.join("db"))
    );
}
