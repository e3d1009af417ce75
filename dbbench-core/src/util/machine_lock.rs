//! One measurement at a time on this machine: an exclusive OS file lock held around every
//! measured repetition, in a place shared by every work dir of the user (`$XDG_RUNTIME_DIR/dbbench`
//! or `<tmp>/dbbench-<uid>`, or `DBBENCH_LOCK_DIR`), so that `cargo test` threads, nextest
//! processes and two terminals never make two cells measure each other. The lock is the kernel's
//! (`flock` through std's `File::lock`): a process that dies releases it.
//!
//! The directory is a private place (`util::private_dir`): made 0700, or taken only when it is a
//! real directory of this user that no other user may read or write, so one made first by another
//! user, or a link, is refused in one sentence. The lock file is opened without following links,
//! and the holder's words are written into the lock file itself once the lock is held, so no
//! second file is ever opened by name. The wait is bounded (`DBBENCH_DEADLINE_MACHINE_LOCK`): a
//! holder that never lets go (stopped, or not dbbench at all) ends the wait with its name.

use crate::model::error::{Error, Result};
use crate::util::console::say;
use crate::util::deadline::{spoken, Deadline};
use crate::util::private_dir::{self, Reach};
use std::fs::File;
use std::io::{Read, Seek, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// The most of the holder's words that are read back and shown.
const HOLDER_MAX: u64 = 200;

/// The held lock; dropping it lets the next measurement start.
#[derive(Debug)]
pub struct MachineLock {
    file: File,
}

impl Drop for MachineLock {
    fn drop(&mut self) {
        let _ = self.file.unlock();
    }
}

/// The directory of the lock file, and whether dbbench chose it (and so makes it private) or the
/// user named it (`DBBENCH_LOCK_DIR`, used as given).
pub fn lock_dir() -> (PathBuf, bool) {
    if let Some(dir) = std::env::var_os("DBBENCH_LOCK_DIR").filter(|d| !d.is_empty()) {
        return (PathBuf::from(dir), false);
    }
    if let Some(dir) = std::env::var_os("XDG_RUNTIME_DIR").filter(|d| !d.is_empty()) {
        return (PathBuf::from(dir).join("dbbench"), true);
    }
    let uid = private_dir::euid();
    (std::env::temp_dir().join(format!("dbbench-{uid}")), true)
}

/// Takes the machine-wide measurement lock, waiting (and saying so, with who holds it) while
/// another dbbench process measures, at most [`Deadline::MachineLock`].
pub fn acquire(what: &str) -> Result<MachineLock> {
    let (dir, ours) = lock_dir();
    acquire_in(&dir, ours, what, Deadline::MachineLock.limit()?)
}

/// [`acquire`] in `dir` (made private when `ours`), waiting at most `limit`.
fn acquire_in(dir: &Path, ours: bool, what: &str, limit: Duration) -> Result<MachineLock> {
    if ours {
        private_dir::ensure(dir, Reach::Owner)?;
    } else {
        std::fs::create_dir_all(dir)
            .map_err(|e| Error::io("cannot create lock directory", dir, e))?;
    }
    let path = dir.join("measure.lock");
    let mut file = private_dir::open_own_file(&path)?;
    let started = Instant::now();
    match file.try_lock() {
        Ok(()) => {}
        Err(std::fs::TryLockError::WouldBlock) => {
            say(&format!(
                "dbbench › waiting for another measurement on this machine to finish ({}) before {what}",
                holder(&file)
            ));
            wait_for(&file, &path, limit)?;
            say(&format!(
                "dbbench › waited {:.1} s for the measurement lock",
                started.elapsed().as_secs_f64()
            ));
        }
        Err(std::fs::TryLockError::Error(e)) => {
            return Err(Error::io("cannot take the measurement lock", &path, e))
        }
    }
    // Held: the holder's words replace the last holder's, in the lock file itself.
    let _ = file
        .set_len(0)
        .and_then(|()| file.rewind())
        .and_then(|()| writeln!(file, "pid {}: {what}", std::process::id()));
    Ok(MachineLock { file })
}

/// Who holds the lock, as the holder wrote it: its first line, at most [`HOLDER_MAX`] bytes,
/// printable characters only (the file is another process's words, shown on this console).
fn holder(file: &File) -> String {
    let mut text = String::new();
    let mut reader = file;
    let _ = reader.rewind();
    let _ = reader.take(HOLDER_MAX).read_to_string(&mut text);
    let line = text.lines().next().unwrap_or("").trim();
    let shown: String = line.chars().filter(|c| !c.is_control()).collect();
    if shown.is_empty() {
        "its holder is not named".into()
    } else {
        shown
    }
}

/// Waits for `file`'s lock, polling (`LOCK_NB`), so that a Ctrl-C or SIGTERM ends the wait at
/// once (a blocking `flock` would hold the run until the signal's forced exit), and at most
/// `limit`: nothing was measured or created yet, so the run stops as interrupted or with the
/// holder named.
fn wait_for(file: &File, path: &Path, limit: Duration) -> Result<()> {
    let started = Instant::now();
    loop {
        match file.try_lock() {
            Ok(()) => return Ok(()),
            Err(std::fs::TryLockError::WouldBlock) => {}
            Err(std::fs::TryLockError::Error(e)) => {
                return Err(Error::io("cannot take the measurement lock", path, e))
            }
        }
        if let Some(signal) = crate::util::signals::received() {
            return Err(Error::Interrupted {
                signal,
                detail: "while waiting for another measurement on this machine to finish; \
                         nothing was measured or created"
                    .into(),
            });
        }
        if started.elapsed() >= limit {
            return Err(Error::msg(format!(
                "another measurement on this machine ({}) held the measurement lock `{}` for \
                 longer than {} ({} sets this limit); nothing was measured or created",
                holder(file),
                path.display(),
                spoken(limit),
                Deadline::MachineLock.env()
            )));
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[cfg(test)]
mod tests;
