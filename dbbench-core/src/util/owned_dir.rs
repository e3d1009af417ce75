//! The directories of a server dbbench manages itself (a PostgreSQL cluster, a MariaDB
//! instance): each carries a marker file naming its owner (`util::owner`) and every directory
//! the server owns (`owns=` lines, [`marker`]); nothing is removed without that marker. Ending a server
//! without its help (from the signal thread, or for a server an earlier, gone run left) is the
//! same for every engine: SIGKILL to the server and to whatever still works in its data
//! directory, then its directories removed.
//!
//! Why here and not in each engine: the marker, the refusal and the kill are the same logic for
//! every managed server; only the marker's file name, the data directory and the messages
//! differ, and those each engine passes in. Why the processes working in the data directory are
//! killed too: a server's workers (PostgreSQL's backends) outlive a killed parent and keep the
//! files open.

use crate::model::error::{Error, Result};
use crate::util::leftover::Ender;
use crate::util::owner::{Liveness, Owner};
use crate::util::procfs::ProcFs;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// How long the processes working in a data directory are given to go after their SIGKILL.
const KILL_WAIT: Duration = Duration::from_secs(5);

/// The text of a server's marker: `title` (what it is, for a reader), its owner (this process),
/// then an `owns=` line for every directory in `owned`, its root first, which the sweep of a gone
/// owner's directories reads back ([`Stale::listed`]).
pub fn marker(title: &str, owned: &[PathBuf]) -> String {
    let mut text = format!("{title}\n{}", Owner::this().lines());
    for dir in owned {
        text.push_str(&format!("owns={}\n", dir.display()));
    }
    text
}

/// Removes `dir` when it carries the file `marker`; refuses ([`Error::NotOwned`]) a directory
/// without it; nothing when `dir` is not there.
pub fn remove_owned(dir: &Path, marker: &str) -> Result<()> {
    if !dir.exists() {
        return Ok(());
    }
    if !dir.join(marker).is_file() {
        return Err(Error::NotOwned(dir.display().to_string()));
    }
    std::fs::remove_dir_all(dir).map_err(|e| Error::io("cannot remove", dir, e))
}

/// SIGKILLs what still works in `dir` and waits up to five seconds for it to go.
pub fn kill_working_in(dir: &Path) {
    let procfs = ProcFs::system();
    let started = Instant::now();
    loop {
        let pids = procfs.working_in(dir);
        if pids.is_empty() || started.elapsed() > KILL_WAIT {
            return;
        }
        for pid in pids {
            // SAFETY: kill has no memory preconditions; these are the managed server's processes.
            unsafe { libc::kill(pid as libc::pid_t, libc::SIGKILL) };
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// What ends a managed server from the signal thread, without its help and without the value
/// that owns it (which the runner's thread holds): SIGKILL to the server (`pid`, once spawned)
/// and to whatever works in `datadir`, then `then(datadir)` (what else the engine removes once
/// nothing runs there), then the `owned` directories that carry `marker`, last first.
pub fn ender(
    pid: Arc<AtomicU32>,
    datadir: PathBuf,
    owned: Vec<PathBuf>,
    marker: &'static str,
    then: fn(&Path),
) -> Ender {
    Box::new(move || {
        let pid = pid.load(Ordering::SeqCst);
        if pid > 0 {
            // SAFETY: kill has no memory preconditions; the server is our child, not yet reaped
            // (the process exits right after).
            unsafe { libc::kill(pid as libc::pid_t, libc::SIGKILL) };
        }
        kill_working_in(&datadir);
        then(&datadir);
        let problems: Vec<String> = owned
            .iter()
            .rev()
            .filter_map(|dir| remove_owned(dir, marker).err().map(|e| e.to_string()))
            .collect();
        if problems.is_empty() {
            Ok(())
        } else {
            Err(problems.join("; "))
        }
    })
}

/// A server's directory that an earlier dbbench process left: its marker names an owner that is
/// gone.
#[derive(Debug)]
pub struct Stale {
    /// The directory whose marker was read (the server's root).
    pub dir: PathBuf,
    /// Who made it.
    pub owner: Owner,
    /// The marker's text.
    text: String,
}

impl Stale {
    /// The paths of the marker's lines `key…` (`owns=`: every directory the server owns, its
    /// root first).
    pub fn listed(&self, key: &str) -> Vec<PathBuf> {
        self.text
            .lines()
            .filter_map(|l| l.strip_prefix(key))
            .map(PathBuf::from)
            .collect()
    }
}

/// The directories under `base` whose file `marker` names an owner that is gone. Those of live
/// runs, of other hosts and PID namespaces, and those without a readable marker are left out.
pub fn stale(base: &Path, marker: &str) -> Vec<Stale> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir(base).into_iter().flatten().flatten() {
        let Ok(text) = std::fs::read_to_string(entry.path().join(marker)) else {
            continue;
        };
        let Some(owner) = Owner::parse(&text) else {
            continue;
        };
        if owner.liveness() != Liveness::Gone {
            continue;
        }
        found.push(Stale {
            dir: entry.path(),
            owner,
            text,
        });
    }
    found
}

#[cfg(test)]
mod tests;
