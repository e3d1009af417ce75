//! Pre-grown logs kept between repetitions, so a cell with a large pre-sized log does not write
//! gigabytes of zeros before every window.
//!
//! A log is created zero-initialised and flushed (`log_file`): every byte written with zeros,
//! nothing left unwritten. After a window only the range SQLite wrote differs from that; a log
//! that did not grow is re-zeroed over exactly that range and flushed, which brings it back to
//! the state creation makes (same size, every byte zero and written, nothing dirty), and is kept
//! here. The next database whose log has the same shape (the size it is created at and the size
//! it is pre-grown to, which decide its bytes and its segments) takes it instead of zero-filling
//! a new one. A copy would write the same bytes again: this file system has no reflink.
//!
//! The pool is a directory `<work_dir>/db/kept-logs-<pid>-<n>/` with the same ownership marker as a
//! database directory: the backend removes it when the benchmark ends or the backend is dropped,
//! and the stale sweep (`embedded::stale`) removes one whose process is gone. A kept log moves
//! by hard link, which never replaces a file and fails across file systems; a log on a volume on
//! another file system is then removed as before and the next one created anew.

use super::error::StorageError;
use std::path::{Path, PathBuf};

/// The name every pool directory starts with (the stale sweep knows it has no manifest).
pub const POOL_PREFIX: &str = "kept-logs-";

/// The kept logs of one process, by shape.
#[derive(Debug)]
pub struct LogPool {
    dir: PathBuf,
}

/// Where a kept log of one shape lives in the pool.
fn entry(dir: &Path, initial: u64, target: u64) -> PathBuf {
    dir.join(format!("log-{initial}-{target}.ldf"))
}

impl LogPool {
    /// A new pool under `db_dir` (`<work_dir>/db`), its own even beside another backend of the
    /// same process (tests run several); nothing is created until a log is kept.
    pub fn new(db_dir: &Path) -> LogPool {
        static POOLS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let n = POOLS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        LogPool {
            dir: db_dir.join(format!("{POOL_PREFIX}{}-{n}", std::process::id())),
        }
    }

    /// The pool's directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Moves the kept log of the shape (`initial`, `target`) to `path`, which must not exist;
    /// `false` when none is kept or it cannot move there (another file system).
    pub fn take(&self, initial: u64, target: u64, path: &Path) -> bool {
        let kept = entry(&self.dir, initial, target);
        if std::fs::hard_link(&kept, path).is_err() {
            return false;
        }
        if std::fs::remove_file(&kept).is_err() {
            // Two names for one file: the database's must not be changed through the pool's.
            let _ = std::fs::remove_file(path);
            return false;
        }
        true
    }

    /// Keeps the log at `path` (re-zeroed by the caller) as the log of shape (`initial`,
    /// `target`); the caller then removes `path` as usual. `false` when it cannot be kept: one
    /// of the shape is kept already, or it lives on another file system.
    pub fn keep(&self, path: &Path, initial: u64, target: u64) -> bool {
        if self.claim().is_err() {
            return false;
        }
        std::fs::hard_link(path, entry(&self.dir, initial, target)).is_ok()
    }

    fn claim(&self) -> Result<(), StorageError> {
        let marker = self.dir.join(crate::engine::embedded::OWNER_MARKER);
        if marker.exists() {
            return Ok(());
        }
        std::fs::create_dir_all(&self.dir)
            .map_err(|e| StorageError::io("cannot create log pool", &self.dir, e))?;
        std::fs::write(
            &marker,
            format!(
                "created by dbbench\n{}",
                crate::util::owner::Owner::this().lines()
            ),
        )
        .map_err(|e| StorageError::io("cannot write ownership marker", &marker, e))
    }

    /// Removes every kept log and the pool's directory, if there is one.
    pub fn clear(&self) -> Result<(), StorageError> {
        if !self
            .dir
            .join(crate::engine::embedded::OWNER_MARKER)
            .exists()
        {
            return Ok(());
        }
        std::fs::remove_dir_all(&self.dir)
            .map_err(|e| StorageError::io("cannot remove log pool", &self.dir, e))
    }
}

impl Drop for LogPool {
    fn drop(&mut self) {
        let _ = self.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::super::log_file::LogFile;
    use super::super::plan::PlacedFile;
    use super::*;
    use dbbench_options::size::Growth;
    use std::os::unix::fs::FileExt;

    const KIB: u64 = 1024;

    fn placed(dir: &Path, name: &str) -> PlacedFile {
        PlacedFile {
            name: "log".into(),
            path: dir.join(name),
            volume: None,
        }
    }

    fn create(dir: &Path, name: &str, pool: Option<&LogPool>) -> LogFile {
        let mut created = Vec::new();
        // 256 KiB pre-grown to 1 MiB in 256 KiB steps: 4 steps of 4 segments.
        LogFile::create(
            placed(dir, name),
            256 * KIB,
            1024 * KIB,
            Growth::Fixed(256 * KIB),
            &mut created,
            pool,
        )
        .unwrap()
    }

    /// Where the first hole at or after 0 is: the file's length when every block is allocated.
    fn first_hole(path: &Path) -> u64 {
        use std::os::fd::AsRawFd;
        let file = std::fs::File::open(path).unwrap();
        // SAFETY: a plain system call on a descriptor `file` owns.
        let at = unsafe { libc::lseek(file.as_raw_fd(), 0, libc::SEEK_HOLE) };
        assert!(at >= 0, "{}", std::io::Error::last_os_error());
        at as u64
    }

    /// A kept log starts the next database exactly as a newly zero-filled one: same length,
    /// every byte zero (what SQLite sees as "no WAL"), every block allocated, same segments.
    #[test]
    fn a_kept_log_starts_as_a_new_one() {
        let tmp = tempfile::tempdir().unwrap();
        let pool = LogPool::new(tmp.path());
        let first = create(tmp.path(), "a.ldf", Some(&pool));
        assert!(!first.taken());
        // A WAL header, frames across the first half, and a cleared header.
        let mut header = [0u8; 32];
        header[..4].copy_from_slice(&[0x37, 0x7f, 0x06, 0x82]);
        header[8..12].copy_from_slice(&8192u32.to_be_bytes());
        first.write(&header, 0).unwrap();
        first.write(&[0xAB; 8216 * 3], 32).unwrap();
        first.write(&[0xCD; 4096], 500 * KIB).unwrap();
        assert!(first.holds_wal().unwrap());
        assert!(first.keep_in(&pool), "a log that did not grow is kept");
        drop(first);
        std::fs::remove_file(tmp.path().join("a.ldf")).unwrap();

        let fresh = create(tmp.path(), "fresh.ldf", None);
        let again = create(tmp.path(), "b.ldf", Some(&pool));
        assert!(again.taken(), "the kept log is taken");
        assert!(!fresh.taken());
        assert_eq!(again.size(), fresh.size());
        assert_eq!(again.segments(), fresh.segments());
        assert_eq!(again.page_size(), 0);
        assert!(!again.holds_wal().unwrap());
        let bytes = |p: &str| std::fs::read(tmp.path().join(p)).unwrap();
        assert_eq!(bytes("b.ldf"), bytes("fresh.ldf"));
        assert!(bytes("b.ldf").iter().all(|b| *b == 0));
        assert_eq!(first_hole(&tmp.path().join("b.ldf")), 1024 * KIB);
        assert_eq!(first_hole(&tmp.path().join("fresh.ldf")), 1024 * KIB);
        // Taken means moved: the pool holds nothing of that shape until it is kept again.
        assert!(!create(tmp.path(), "c.ldf", Some(&pool)).taken());
    }

    #[test]
    fn a_log_that_grew_is_not_kept_and_the_pool_clears() {
        let tmp = tempfile::tempdir().unwrap();
        let pool = LogPool::new(tmp.path());
        let log = create(tmp.path(), "a.ldf", Some(&pool));
        log.write(&[1; 4096], 1024 * KIB).unwrap();
        assert!(log.size() > 1024 * KIB);
        assert!(!log.keep_in(&pool));
        assert!(!pool.dir().exists(), "nothing kept, nothing created");
        let other = create(tmp.path(), "b.ldf", Some(&pool));
        assert!(other.keep_in(&pool));
        // One of a shape at a time; a second is removed as usual by its database. (Made without
        // the pool: with it, it would take the kept one.)
        let third = create(tmp.path(), "c.ldf", None);
        assert!(!third.keep_in(&pool));
        assert!(pool
            .dir()
            .join(crate::engine::embedded::OWNER_MARKER)
            .exists());
        let kept_ino = |p: &Path| {
            use std::os::unix::fs::MetadataExt;
            std::fs::metadata(p).unwrap().ino()
        };
        let entry = entry(pool.dir(), 256 * KIB, 1024 * KIB);
        assert_eq!(kept_ino(&entry), kept_ino(&tmp.path().join("b.ldf")));
        let mut byte = [9u8; 1];
        std::fs::File::open(&entry)
            .unwrap()
            .read_exact_at(&mut byte, 0)
            .unwrap();
        assert_eq!(byte, [0]);
        pool.clear().unwrap();
        assert!(!pool.dir().exists());
    }
}
