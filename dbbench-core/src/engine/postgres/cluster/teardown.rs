//! Ending a cluster without its server's help: SIGKILL to what works in its data directory, the
//! System V segment a killed postmaster leaves, the directories that carry the marker; from the
//! signal thread (`ender`) and for clusters that earlier, gone processes left (`sweep_stale`).
//! Apart from the cluster's own lifecycle because it needs no `Cluster`, only its paths.

use super::MARKER;
use crate::model::error::Result;
use crate::util::leftover::Ender;
use crate::util::owned_dir::{self, kill_working_in, Workers};
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicU32;
use std::sync::Arc;

/// What ends a cluster from the signal thread, without its server's help and without the
/// `Cluster` (which the runner's thread holds): SIGKILL to the postmaster and to every process
/// working in its data directory, its shared memory segment and its directories removed.
pub(super) fn ender(
    postmaster: Arc<AtomicU32>,
    pgdata: PathBuf,
    owned: Vec<PathBuf>,
    workers: Workers,
) -> Ender {
    owned_dir::ender(
        postmaster,
        pgdata,
        owned,
        MARKER,
        workers,
        remove_leftover_segment,
    )
}

/// A cluster's processes: every one is named `postgres` and runs as the server's user (the
/// `postgres` account when dbbench runs as root, `run_as`; else this user).
pub fn workers(run_as: Option<super::RunAs>) -> Workers {
    Workers {
        uid: run_as.map_or_else(crate::util::private_dir::euid, |who| who.uid),
        names: &["postgres"],
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
    owned_dir::remove_owned(dir, MARKER)
}

/// Removes clusters that earlier dbbench processes left under `base` (their owner is gone, by
/// PID and start time): kills what of the server (`workers`) still runs in them, then removes
/// every directory their marker lists, and says so. Only directories that dbbench would have
/// made for that cluster and that carry the same marker are touched ([`owned_dir::Stale::listed`]),
/// and each is checked again just before its removal.
pub fn sweep_stale(base: &Path, workers: Workers) {
    for stale in owned_dir::stale(base, MARKER) {
        crate::util::console::say(&format!(
            "dbbench › removing PostgreSQL cluster {} left by {}, which is gone",
            stale.dir.display(),
            stale.owner.describe()
        ));
        let dirs = stale.listed("owns=");
        for dir in &dirs {
            kill_working_in(&dir.join("data"), workers);
            if stale.still_marks(dir) {
                remove_leftover_segment(&dir.join("data"));
            }
        }
        for dir in dirs.iter().rev() {
            let _ = stale.remove(dir);
        }
    }
}
