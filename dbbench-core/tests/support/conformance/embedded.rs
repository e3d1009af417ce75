//! The embedded engine as a conformance target: each database is a directory under the work
//! dir's `db/` (its data file on a volume elsewhere when staged), marked by `.dbbench-owned`.

use super::{Owner, Target};
use crate::support::{listing, my_start};
use dbbench_core::__internals::config::StorageSpec;
use dbbench_core::__internals::embedded::storage::Layout;
use dbbench_core::__internals::{embedded::EmbeddedBackend, Backend, RunContext, Volumes};
use dbbench_core::Connection;
use std::path::PathBuf;

/// The embedded engine in the test's work dir.
pub struct Embedded;

fn dir(ctx: &RunContext, name: &str) -> PathBuf {
    ctx.work_dir.join("db").join(name)
}

/// Where staged databases put their data file: a volume outside the database's directory, so
/// the sweep must find it from the layout.
fn elsewhere(ctx: &RunContext) -> PathBuf {
    let dir = ctx.work_dir.join("volume");
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// A PID of a process that has exited (a child that was reaped).
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

/// A database directory as a killed run leaves it: marker (when given), database, data file on
/// the other volume.
fn leave(ctx: &RunContext, name: &str, marker: Option<String>) {
    let dir = dir(ctx, name);
    std::fs::create_dir_all(&dir).unwrap();
    if let Some(marker) = marker {
        std::fs::write(dir.join(".dbbench-owned"), marker).unwrap();
    }
    let mut volumes = Volumes::default();
    volumes.bind("v", elsewhere(ctx));
    let spec = StorageSpec {
        data_on: &["v"],
        ..StorageSpec::DEFAULT
    };
    // Dropped without `remove`, as a killed process leaves it.
    drop(Layout::create(&dir.join(format!("{name}.db")), &spec, &volumes).unwrap());
}

impl Target for Embedded {
    async fn backend(&self) -> Option<Backend> {
        Some(Backend::new(EmbeddedBackend::new()))
    }

    async fn leftovers(&self, ctx: &RunContext) -> Vec<String> {
        let mut left = listing(&ctx.work_dir.join("db"));
        // Staged data files on the other volume go with their database.
        left.extend(listing(&ctx.work_dir.join("volume")));
        left
    }

    fn placeholder(&self, n: usize) -> String {
        format!("?{n}")
    }

    fn settings(&self) -> &'static [&'static str] {
        &["pragma.synchronous", "pragma.journal_mode"]
    }

    fn missing_table_error(&self) -> &'static [&'static str] {
        &["no such table: no_such_table"]
    }

    fn runaway(&self) -> &'static str {
        "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r) SELECT count(*) FROM r"
    }

    async fn stage_foreign(&self, ctx: &RunContext, _: &mut Connection, name: &str, half: bool) {
        if half {
            // A database dbbench could have made, without the marker.
            leave(ctx, name, None);
        } else {
            let dir = dir(ctx, name);
            std::fs::create_dir_all(&dir).unwrap();
            std::fs::write(dir.join("precious.txt"), "keep me").unwrap();
        }
    }

    async fn stage_owned(
        &self,
        ctx: &RunContext,
        _: &mut Connection,
        name: &str,
        owner: Owner,
    ) -> bool {
        let host = hostname();
        let me = std::process::id();
        let (pid, start) = match owner {
            Owner::Gone => (dead_pid(), 1),
            Owner::Reused => (me, my_start() + 1),
            Owner::Me => (me, my_start()),
        };
        let marker = format!(
            "created by dbbench\nowner_host={host}\nowner_pid={pid}\nowner_start={start}\n"
        );
        leave(ctx, name, Some(marker));
        true
    }

    async fn exists(&self, ctx: &RunContext, _: &mut Connection, name: &str) -> bool {
        let present = dir(ctx, name).exists();
        let data_files = listing(&elsewhere(ctx))
            .into_iter()
            .filter(|f| f.contains(name))
            .count();
        // A removed database takes its files on other volumes with it.
        assert!(present || data_files == 0, "{name}: its data file was left");
        let precious = dir(ctx, name).join("precious.txt");
        let intact = !precious.exists() || std::fs::read_to_string(&precious).unwrap() == "keep me";
        present && intact
    }

    async fn remove(&self, ctx: &RunContext, _: &mut Connection, name: &str) {
        let _ = std::fs::remove_dir_all(dir(ctx, name));
        for file in listing(&elsewhere(ctx)).iter().filter(|f| f.contains(name)) {
            let _ = std::fs::remove_file(elsewhere(ctx).join(file));
        }
    }
}
