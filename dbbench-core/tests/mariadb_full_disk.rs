//! A full disk under a managed MariaDB instance, made with a small tmpfs (which needs root: the
//! test says so and is skipped for any other user):
//!
//! - the instance's folder on a 96 MB file system, and a body that inserts 200 MB: InnoDB's
//!   extension fails with ENOSPC and MariaDB 10.11 aborts; the cell fails saying so with the
//!   server's own error lines (not the dump that ends its log), the instance is removed and the
//!   file system is left empty;
//! - the redo log's volume (`log_on`) on an 8 MB file system, with a 16 MB redo log: the cell is
//!   refused before anything is made, naming the volume and the sizes.
//!
//! Skipped without MariaDB's programs unless `DBBENCH_REQUIRE_MARIADB=1`.

mod support;

use dbbench_core::__internals::config::{Size, StorageSpec};
use dbbench_core::__internals::mariadb::{self, MariaDbBackend};
use dbbench_core::__internals::{run_benchmark, Backend, BodyFuture, RunContext, Volumes};
use dbbench_core::__private::{FixtureKind, RunSpec};
use dbbench_core::results::{BenchmarkResult, CellStatus};
use dbbench_core::{Scale, Session};
use std::path::{Path, PathBuf};
use std::process::Command;
use support::cell;

const MB: u64 = 1 << 20;

/// A tmpfs of `mb` MB mounted at `dir` for the test's life.
struct Tmpfs(PathBuf);

impl Tmpfs {
    /// `None`, saying why, where this user may not mount one.
    fn mount(dir: &Path, mb: u64) -> Option<Tmpfs> {
        std::fs::create_dir_all(dir).unwrap();
        // SAFETY: geteuid has no preconditions.
        if unsafe { libc::geteuid() } != 0 {
            eprintln!("skipped: mounting a small tmpfs to fill needs root");
            return None;
        }
        let status = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={mb}m"), "tmpfs"])
            .arg(dir)
            .status()
            .unwrap();
        assert!(
            status.success(),
            "mount a {mb} MB tmpfs at {}",
            dir.display()
        );
        Some(Tmpfs(dir.to_path_buf()))
    }

    /// What is left on it.
    fn entries(&self) -> Vec<String> {
        support::listing(&self.0)
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg("-l").arg(&self.0).status();
    }
}

fn filling_body(db: &mut Session) -> BodyFuture<'_> {
    Box::pin(async move {
        db.execute("CREATE TABLE t (b longblob NOT NULL)").await?;
        // 200 rows of 1 MB: more than the file system holds.
        db.execute("INSERT INTO t SELECT repeat('a', 1000000) FROM seq_1_to_200")
            .await?;
        Ok(())
    })
}

support::benchmark! {
    static FILLING = filling_body,
    title: "a MariaDB instance whose disk fills",
    run: RunSpec {
        repeat: 1,
        warmup: 0,
        fixture: FixtureKind::None,
        ..RunSpec::DEFAULT
    },
    cells: [
        cell("fills", StorageSpec {
            log_size: Some(Size::new(4 * MB, "4MB")),
            ..StorageSpec::DEFAULT
        }),
        cell("redo_too_big", StorageSpec {
            log_size: Some(Size::new(16 * MB, "16MB")),
            log_on: Some("log"),
            ..StorageSpec::DEFAULT
        }),
    ],
}

fn run(ctx: &RunContext) -> BenchmarkResult {
    support::exclusively(async {
        let mut backend = Backend::new(MariaDbBackend::managed().unwrap());
        run_benchmark(&FILLING, None, ctx, &mut backend).await
    })
    .unwrap()
}

fn status<'r>(result: &'r BenchmarkResult, name: &str) -> &'r CellStatus {
    &result.cells.iter().find(|c| c.name == name).unwrap().status
}

#[test]
fn a_full_disk_fails_the_cell_and_leaves_nothing() {
    if !mariadb::available_for_tests() {
        return;
    }
    let dir = support::scratch("mariadb-full-disk");
    let work_dir = dir.join("work");
    let Some(instances) = Tmpfs::mount(&MariaDbBackend::work_base(&work_dir), 96) else {
        return;
    };
    let Some(redo) = Tmpfs::mount(&dir.join("redo"), 8) else {
        return;
    };
    let mut volumes = Volumes::default();
    volumes.bind("log", redo.0.clone());
    let ctx = RunContext {
        scale: Scale::full(),
        volumes,
        work_dir,
    };
    let result = run(&ctx);

    let fills = format!("{:?}", status(&result, "fills"));
    eprintln!("fills: {fills}");
    // MariaDB 10.11 does not answer a failed extension with "table is full" here: InnoDB's
    // preallocation of the table's file fails with ENOSPC (error 28) and the server aborts
    // (SIGABRT). The cell says both, from the server's log, not its dump of limits.
    assert!(
        fills.contains("Failed(")
            && fills.contains("the managed MariaDB server is gone")
            && fills.contains("failed with error 28"),
        "{fills}"
    );
    let refused = format!("{:?}", status(&result, "redo_too_big"));
    eprintln!("redo_too_big: {refused}");
    assert!(
        !refused.contains("Ok")
            && refused.contains("redo log")
            && refused.contains(&redo.0.display().to_string()),
        "{refused}"
    );
    assert_eq!(
        instances.entries(),
        Vec::<String>::new(),
        "left on the full disk"
    );
    assert_eq!(
        redo.entries(),
        Vec::<String>::new(),
        "left on the redo volume"
    );
    assert_eq!(support::processes_under(&dir), Vec::<u32>::new());
}
