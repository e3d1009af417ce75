//! The embedded storage layer: how the embedded engine's files are laid out, grown and measured.
//!
//! This first version keeps SQLite's own files (one database file and its WAL in the database
//! directory) and measures their sizes; the storage options that need a file layer of dbbench's
//! own are refused with a clear error.

use crate::config::StorageSpec;
use crate::error::{Error, Result};
use crate::results::{FileKind, FileStats, RunResult};
use crate::volume::Volumes;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// Refuses storage options this layer cannot honour yet.
pub fn check(storage: &StorageSpec) -> Result<()> {
    let refuse = |option: &'static str| Error::Unsupported {
        option,
        backend: "embedded",
        reason: "the embedded storage layer does not implement it".into(),
    };
    if storage.data_files != 1 {
        return Err(refuse("data_files"));
    }
    let set = [
        ("data_size", storage.data_size.is_some()),
        ("growth", storage.growth.is_some()),
        ("log_size", storage.log_size.is_some()),
        ("log_growth", storage.log_growth.is_some()),
        ("log_pregrow", storage.log_pregrow.is_some()),
        ("ifi", storage.ifi.is_some()),
        ("data_on", !storage.data_on.is_empty()),
        ("log_on", storage.log_on.is_some()),
    ];
    match set.iter().find(|(_, on)| *on) {
        Some((option, _)) => Err(refuse(option)),
        None => Ok(()),
    }
}

/// The files of one embedded database.
pub struct Layout {
    path: PathBuf,
    before: Mutex<(u64, u64)>,
}

impl Layout {
    /// Plans the files of the database whose main file is `path`.
    pub fn create(path: &Path, storage: &StorageSpec, _volumes: &Volumes) -> Result<Layout> {
        check(storage)?;
        Ok(Layout {
            path: path.to_path_buf(),
            before: Mutex::new((0, 0)),
        })
    }

    /// Opens a connection to the database.
    pub fn open(&self) -> Result<rusqlite::Connection> {
        Ok(rusqlite::Connection::open(&self.path)?)
    }

    fn sizes(&self) -> (u64, u64) {
        let size = |p: &Path| std::fs::metadata(p).map(|m| m.len()).unwrap_or(0);
        (size(&self.path), size(&wal_path(&self.path)))
    }

    /// Snapshots the file sizes.
    pub fn open_window(&self) {
        *self.before.lock().unwrap_or_else(|e| e.into_inner()) = self.sizes();
    }

    /// Records the data and log file sizes into `run`.
    pub fn close_window(&self, run: &mut RunResult) {
        let (data0, log0) = *self.before.lock().unwrap_or_else(|e| e.into_inner());
        let (data1, log1) = self.sizes();
        for (name, kind, before, after) in [
            ("data_1", FileKind::Data, data0, data1),
            ("log", FileKind::Log, log0, log1),
        ] {
            run.files.push(FileStats {
                name: name.into(),
                kind,
                volume: None,
                size_before_bytes: before,
                size_after_bytes: after,
                reads: 0,
                writes: 0,
                bytes_read: 0,
                bytes_written: 0,
                read_stall_ms: 0.0,
                write_stall_ms: 0.0,
                flushes: 0,
                growth_events: 0,
                growth_bytes: 0,
                zero_fill_bytes: 0,
                growth_total_ms: 0.0,
                growth_max_ms: 0.0,
            });
        }
    }

    /// Removes files placed outside the database directory (none in this layout).
    pub fn remove(self) -> Result<()> {
        Ok(())
    }
}

fn wal_path(path: &Path) -> PathBuf {
    let mut s = path.as_os_str().to_owned();
    s.push("-wal");
    PathBuf::from(s)
}
