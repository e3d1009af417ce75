//! One measurement at a time on this machine: an exclusive OS file lock held around every
//! measured repetition, in a place shared by every work dir of the user (`$XDG_RUNTIME_DIR/dbbench`
//! or `<tmp>/dbbench-<uid>`, or `DBBENCH_LOCK_DIR`), so that `cargo test` threads, nextest
//! processes and two terminals never make two cells measure each other. The lock is the kernel's
//! (`flock` through std's `File::lock`): a process that dies releases it.

use crate::model::error::{Error, Result};
use crate::util::console::say;
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::PathBuf;
use std::time::Instant;

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

/// The directory of the lock file.
pub fn lock_dir() -> PathBuf {
    if let Some(dir) = std::env::var_os("DBBENCH_LOCK_DIR").filter(|d| !d.is_empty()) {
        return PathBuf::from(dir);
    }
    if let Some(dir) = std::env::var_os("XDG_RUNTIME_DIR").filter(|d| !d.is_empty()) {
        return PathBuf::from(dir).join("dbbench");
    }
    // SAFETY: getuid has no preconditions and cannot fail.
    let uid = unsafe { libc::getuid() };
    std::env::temp_dir().join(format!("dbbench-{uid}"))
}

/// Takes the machine-wide measurement lock, waiting (and saying so, with who holds it) while
/// another dbbench process measures.
pub fn acquire(what: &str) -> Result<MachineLock> {
    let dir = lock_dir();
    std::fs::create_dir_all(&dir)
        .map_err(|e| Error::io("cannot create lock directory", &dir, e))?;
    let path = dir.join("measure.lock");
    let file = OpenOptions::new()
        .create(true)
        .truncate(false)
        .read(true)
        .write(true)
        .open(&path)
        .map_err(|e| Error::io("cannot open the measurement lock", &path, e))?;
    let started = Instant::now();
    match file.try_lock() {
        Ok(()) => {}
        Err(std::fs::TryLockError::WouldBlock) => {
            let holder = std::fs::read_to_string(dir.join("measure.holder")).unwrap_or_default();
            say(&format!(
                "dbbench › waiting for another measurement on this machine to finish ({}) before {what}",
                holder.trim()
            ));
            wait_for(&file, &path)?;
            say(&format!(
                "dbbench › waited {:.1} s for the measurement lock",
                started.elapsed().as_secs_f64()
            ));
        }
        Err(std::fs::TryLockError::Error(e)) => {
            return Err(Error::io("cannot take the measurement lock", &path, e))
        }
    }
    let holder = dir.join("measure.holder");
    if let Ok(mut f) = File::create(&holder) {
        let _ = writeln!(f, "pid {}: {what}", std::process::id());
    }
    Ok(MachineLock { file })
}

/// Waits for `file`'s lock, polling, so that a Ctrl-C or SIGTERM ends the wait at once (a
/// blocking `flock` would hold the run until the signal's forced exit): nothing was measured or
/// created yet, so the run stops as interrupted.
fn wait_for(file: &File, path: &std::path::Path) -> Result<()> {
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
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_second_lock_waits_for_the_first() {
        let dir = tempfile::tempdir().unwrap();
        // Two handles of one file lock each other like two processes do (flock is per handle).
        let path = dir.path().join("l");
        let a = File::create(&path).unwrap();
        a.lock().unwrap();
        let b = File::open(&path).unwrap();
        assert!(matches!(
            b.try_lock(),
            Err(std::fs::TryLockError::WouldBlock)
        ));
        a.unlock().unwrap();
        b.try_lock().unwrap();
    }
}
