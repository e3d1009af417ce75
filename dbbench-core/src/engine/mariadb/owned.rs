//! What a managed instance owns on disk and how it is ended without its help: the marker in
//! each directory it owns (with its owner, for the next run's sweep), the removal of a
//! directory only when it carries that marker, and SIGKILL to whatever still works in its data
//! directory.

use crate::model::error::{Error, Result};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The marker file in every directory an instance owns.
pub const MARKER: &str = "dbbench-mariadb-instance";

/// What ends an instance from the signal thread, without the server's help and without the
/// `Instance` (which the runner's thread holds): SIGKILL to the server and to whatever works in
/// its data directory, then its directories removed.
pub(super) fn ender(
    pid: Arc<AtomicU32>,
    datadir: PathBuf,
    owned: Vec<PathBuf>,
) -> Box<dyn Fn() -> std::result::Result<(), String> + Send + Sync> {
    Box::new(move || {
        let pid = pid.load(Ordering::SeqCst);
        if pid > 0 {
            // SAFETY: kill has no memory preconditions; the server is our child.
            unsafe { libc::kill(pid as libc::pid_t, libc::SIGKILL) };
        }
        kill_working_in(&datadir);
        let problems: Vec<String> = owned
            .iter()
            .rev()
            .filter_map(|dir| remove_owned(dir).err().map(|e| e.to_string()))
            .collect();
        if problems.is_empty() {
            Ok(())
        } else {
            Err(problems.join("; "))
        }
    })
}

/// Processes whose working directory is `dir` (mariadbd works in its data directory).
pub fn working_in(dir: &Path) -> Vec<u32> {
    let Ok(target) = std::fs::canonicalize(dir) else {
        return Vec::new();
    };
    std::fs::read_dir("/proc")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| std::fs::read_link(format!("/proc/{pid}/cwd")).is_ok_and(|cwd| cwd == target))
        .collect()
}

/// SIGKILLs what still works in `dir` and waits up to five seconds for it to go.
pub(super) fn kill_working_in(dir: &Path) {
    let started = Instant::now();
    loop {
        let pids = working_in(dir);
        if pids.is_empty() || started.elapsed() > Duration::from_secs(5) {
            return;
        }
        for pid in pids {
            // SAFETY: kill has no memory preconditions; these are the instance's processes.
            unsafe { libc::kill(pid as libc::pid_t, libc::SIGKILL) };
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Removes `dir` if it carries the instance marker; refuses otherwise.
pub(super) fn remove_owned(dir: &Path) -> Result<()> {
    if !dir.exists() {
        return Ok(());
    }
    if !dir.join(MARKER).is_file() {
        return Err(Error::NotOwned(dir.display().to_string()));
    }
    std::fs::remove_dir_all(dir).map_err(|e| Error::io("cannot remove", dir, e))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refuses_to_remove_a_directory_without_the_marker() {
        let dir = std::env::temp_dir().join(format!("dbbench-mdb-nomarker-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        assert!(matches!(remove_owned(&dir), Err(Error::NotOwned(_))));
        std::fs::write(dir.join(MARKER), "x").unwrap();
        remove_owned(&dir).unwrap();
        assert!(!dir.exists());
    }
}
