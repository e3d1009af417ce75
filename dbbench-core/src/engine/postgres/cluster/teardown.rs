//! Ending a cluster without its server's help: SIGKILL to what works in its data directory, the
//! System V segment a killed postmaster leaves, the directories that carry the marker; from the
//! signal thread (`ender`) and for clusters that earlier, gone processes left (`sweep_stale`).
//! Apart from the cluster's own lifecycle because it needs no `Cluster`, only its paths.

use super::MARKER;
use crate::model::error::{Error, Result};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// What ends a cluster from the signal thread, without its server's help and without the
/// `Cluster` (which the runner's thread holds): SIGKILL to the postmaster and to every process
/// working in its data directory, its shared memory segment and its directories removed.
pub(super) fn ender(
    postmaster: std::sync::Arc<std::sync::atomic::AtomicU32>,
    pgdata: PathBuf,
    owned: Vec<PathBuf>,
) -> Box<dyn Fn() -> std::result::Result<(), String> + Send + Sync> {
    Box::new(move || {
        let pid = postmaster.load(std::sync::atomic::Ordering::SeqCst);
        if pid > 0 {
            // SAFETY: kill has no memory preconditions; the postmaster is our child, not yet
            // reaped (the process exits right after).
            unsafe { libc::kill(pid as libc::pid_t, libc::SIGKILL) };
        }
        kill_working_in(&pgdata);
        remove_leftover_segment(&pgdata);
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

/// Processes whose working directory is `dir` (PostgreSQL's processes work in the data
/// directory).
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

/// SIGKILLs what still works in `dir` (backends whose postmaster was killed) and waits up to
/// five seconds for them to go.
pub(super) fn kill_working_in(dir: &Path) {
    let started = Instant::now();
    loop {
        let pids = working_in(dir);
        if pids.is_empty() || started.elapsed() > Duration::from_secs(5) {
            return;
        }
        for pid in pids {
            // SAFETY: kill has no memory preconditions; these are the cluster's processes.
            unsafe { libc::kill(pid as libc::pid_t, libc::SIGKILL) };
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Removes the small System V segment a killed postmaster leaves (its id is in line 7 of
/// `postmaster.pid`), once nothing is attached to it.
pub(super) fn remove_leftover_segment(pgdata: &Path) {
    let Ok(text) = std::fs::read_to_string(pgdata.join("postmaster.pid")) else {
        return;
    };
    let Some(shmid) = text
        .lines()
        .nth(6)
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|s| s.parse::<libc::c_int>().ok())
    else {
        return;
    };
    // SAFETY: shmid_ds is plain data; IPC_STAT fills it or fails.
    unsafe {
        let mut ds: libc::shmid_ds = std::mem::zeroed();
        if libc::shmctl(shmid, libc::IPC_STAT, &mut ds) == 0 && ds.shm_nattch == 0 {
            libc::shmctl(shmid, libc::IPC_RMID, std::ptr::null_mut());
        }
    }
}

/// Removes `dir` if it carries the cluster marker; refuses otherwise.
pub(super) fn remove_owned(dir: &Path) -> Result<()> {
    if !dir.exists() {
        return Ok(());
    }
    if !dir.join(MARKER).is_file() {
        return Err(Error::NotOwned(dir.display().to_string()));
    }
    std::fs::remove_dir_all(dir).map_err(|e| Error::io("cannot remove", dir, e))
}

/// Removes clusters that earlier dbbench processes left under `base` (their owner is gone, by
/// PID and start time): kills what still runs in them, then removes every directory their
/// marker lists, and says so.
pub fn sweep_stale(base: &Path) {
    use crate::util::owner::{Liveness, Owner};
    for entry in std::fs::read_dir(base).into_iter().flatten().flatten() {
        let marker = entry.path().join(MARKER);
        let Ok(text) = std::fs::read_to_string(&marker) else {
            continue;
        };
        let Some(owner) = Owner::parse(&text) else {
            continue;
        };
        if owner.liveness() != Liveness::Gone {
            continue;
        }
        crate::util::console::say(&format!(
            "dbbench › removing PostgreSQL cluster {} left by {}, which is gone",
            entry.path().display(),
            owner.describe()
        ));
        let dirs: Vec<PathBuf> = text
            .lines()
            .filter_map(|l| l.strip_prefix("owns="))
            .map(PathBuf::from)
            .collect();
        for dir in &dirs {
            kill_working_in(&dir.join("data"));
            remove_leftover_segment(&dir.join("data"));
        }
        for dir in dirs.iter().rev() {
            let _ = remove_owned(dir);
        }
    }
}
