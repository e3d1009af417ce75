//! Helpers shared by the storage integration tests.
#![allow(dead_code)]

use dbbench_core::config::{Growth, Size, StorageSpec};
use dbbench_core::storage::Layout;
use dbbench_core::volume::Volumes;
use std::path::{Path, PathBuf};

/// A fresh, empty directory for one test, below cargo's scratch directory for tests.
/// Directories that earlier runs of the same test left are removed.
pub fn scratch(name: &str) -> PathBuf {
    let tmp = Path::new(env!("CARGO_TARGET_TMPDIR"));
    for entry in std::fs::read_dir(tmp).into_iter().flatten().flatten() {
        let file_name = entry.file_name().to_string_lossy().into_owned();
        let earlier = file_name
            .strip_prefix(name)
            .and_then(|rest| rest.strip_prefix('-'))
            .is_some_and(|pid| pid.chars().all(|c| c.is_ascii_digit()));
        if earlier {
            let _ = std::fs::remove_dir_all(entry.path());
        }
    }
    let dir = tmp.join(format!("{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// `mib` mebibytes, as a fixed size.
pub const fn mib(mib: u64, text: &'static str) -> Size {
    Size::new(mib << 20, text)
}

/// A fixed growth of `mib` mebibytes.
pub const fn grow_mib(mib: u64, text: &'static str) -> Growth {
    Growth::Fixed(Size::new(mib << 20, text))
}

/// Creates a layout for `spec` at `dir/db.db`.
pub fn layout(dir: &Path, spec: &StorageSpec, volumes: &Volumes) -> Layout {
    Layout::create(&dir.join("db.db"), spec, volumes).unwrap()
}

/// Opens a connection with the embedded backend's settings.
pub fn connect(layout: &Layout) -> rusqlite::Connection {
    let c = layout.open().unwrap();
    c.busy_timeout(std::time::Duration::from_secs(60)).unwrap();
    c.execute_batch(
        "PRAGMA page_size = 8192; PRAGMA journal_mode = WAL; PRAGMA synchronous = FULL;",
    )
    .unwrap();
    c
}

/// Creates table `t` and inserts `rows` rows of 200 bytes in one transaction.
pub fn fill(c: &mut rusqlite::Connection, rows: u64) {
    c.execute_batch("CREATE TABLE IF NOT EXISTS t (id INTEGER PRIMARY KEY, pad BLOB)")
        .unwrap();
    insert(c, rows);
}

/// Inserts `rows` rows of 200 bytes into `t` in one transaction.
pub fn insert(c: &mut rusqlite::Connection, rows: u64) {
    let tx = c.transaction().unwrap();
    {
        let mut stmt = tx
            .prepare("INSERT INTO t (pad) VALUES (randomblob(200))")
            .unwrap();
        for _ in 0..rows {
            stmt.execute([]).unwrap();
        }
    }
    tx.commit().unwrap();
}

/// `PRAGMA integrity_check` must say ok.
pub fn assert_intact(c: &rusqlite::Connection) {
    let verdict: String = c
        .query_row("PRAGMA integrity_check", [], |r| r.get(0))
        .unwrap();
    assert_eq!(verdict, "ok");
}

/// The files in `dir`, sorted.
pub fn listing(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .map(|entries| {
            entries
                .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    names
}
