//! One publisher of a benchmark's views at a time: an exclusive `flock` on
//! `<work dir>/results/.<stem>.lock`, held while its results JSON, CSV, report pages and charts
//! are written.
//!
//! Why: every file is written whole (`util::fs`), but a benchmark's views are several files, and
//! the harness of each nextest process publishes the whole benchmark; without the lock two
//! processes interleave, and the JSON of one run sits beside the CSV and the charts of another.
//! Why polled under a deadline: a publisher that stops (`SIGSTOP`, a debugger) must not hold every
//! later one forever, and a Ctrl-C ends the wait at once (`DBBENCH_DEADLINE_PUBLISH`,
//! docs/deadlines.md). The lock file is opened without following a link and is never removed
//! (removing it would let a second process lock a new file while the first holds the old one).

use crate::model::error::{Error, Result};
use crate::util::deadline::{spoken, Deadline};
use std::fs::File;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// How often a held lock is tried again.
const POLL: Duration = Duration::from_millis(20);

/// The held lock of one stem; dropping it lets the next publisher in.
#[derive(Debug)]
pub struct StemLock {
    _file: File,
}

/// The lock file of `stem` in the work dir's results directory.
pub fn lock_file(work_dir: &Path, stem: &str) -> PathBuf {
    crate::util::paths::results_dir(work_dir).join(format!(".{stem}.lock"))
}

/// Takes `stem`'s lock in `work_dir`, waiting at most [`Deadline::Publish`].
pub fn hold(work_dir: &Path, stem: &str) -> Result<StemLock> {
    hold_within(work_dir, stem, Deadline::Publish.limit()?)
}

/// [`hold`], waiting at most `limit`.
pub fn hold_within(work_dir: &Path, stem: &str, limit: Duration) -> Result<StemLock> {
    let path = lock_file(work_dir, stem);
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(|e| Error::io("cannot create directory", dir, e))?;
    }
    let file = crate::util::fs::open_unfollowed(&path)
        .map_err(|e| Error::io("cannot open the publishing lock", &path, e))?;
    let started = Instant::now();
    loop {
        match file.try_lock() {
            Ok(()) => return Ok(StemLock { _file: file }),
            Err(std::fs::TryLockError::WouldBlock) => {}
            Err(std::fs::TryLockError::Error(e)) => {
                return Err(Error::io("cannot take the publishing lock", &path, e))
            }
        }
        if let Some(signal) = crate::util::signals::received() {
            return Err(Error::Interrupted {
                signal,
                detail: format!("while waiting to write the views of {stem}; not written"),
            });
        }
        if started.elapsed() >= limit {
            return Err(Error::msg(format!(
                "another process held `{}` while writing the views of {stem} for longer than {} \
                 ({} sets this limit); not written",
                path.display(),
                spoken(limit),
                Deadline::Publish.env()
            )));
        }
        std::thread::sleep(POLL);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_second_holder_waits_and_gives_up_at_its_deadline_naming_the_lock() {
        let dir = tempfile::tempdir().unwrap();
        let first = hold_within(dir.path(), "b", Duration::from_secs(1)).unwrap();
        let started = Instant::now();
        let e = hold_within(dir.path(), "b", Duration::from_millis(200)).unwrap_err();
        assert!(started.elapsed() >= Duration::from_millis(200));
        let said = e.to_string();
        assert!(
            said.contains(".b.lock") && said.contains("DBBENCH_DEADLINE_PUBLISH"),
            "{said}"
        );
        // Another stem is not held up; the same one is free once dropped.
        hold_within(dir.path(), "c", Duration::ZERO).unwrap();
        drop(first);
        hold_within(dir.path(), "b", Duration::ZERO).unwrap();
    }

    #[test]
    fn a_link_in_the_lock_s_place_is_not_followed() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("elsewhere");
        std::fs::write(&target, "keep").unwrap();
        std::fs::create_dir_all(crate::util::paths::results_dir(dir.path())).unwrap();
        std::os::unix::fs::symlink(&target, lock_file(dir.path(), "b")).unwrap();
        assert!(hold_within(dir.path(), "b", Duration::ZERO).is_err());
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "keep");
    }
}
