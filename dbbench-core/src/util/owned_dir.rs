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
use crate::util::held_dir::HeldDir;
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
/// without it, a link in its place, and a marker that is not a regular file of this user;
/// nothing when `dir` is not there.
pub fn remove_owned(dir: &Path, marker: &str) -> Result<()> {
    remove_marked(dir, marker, None)
}

/// [`remove_owned`], the marker read and the contents removed through one descriptor of `dir`
/// (`util::held_dir`): a link swapped in for `dir` or for a directory above it after the check
/// leads the removal nowhere else. With `text`, the marker must also say exactly that.
fn remove_marked(dir: &Path, marker: &str, text: Option<&str>) -> Result<()> {
    let held = match HeldDir::open(dir) {
        Ok(held) => held,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(_) => return Err(Error::NotOwned(dir.display().to_string())),
    };
    match held_marker(&held, marker) {
        Some(found) if text.is_none_or(|t| t == found) => {}
        _ => return Err(Error::NotOwned(dir.display().to_string())),
    }
    held.remove()
        .map_err(|e| Error::io("cannot remove", dir, e))
}

/// Whether a marker's metadata is that of a file this user wrote alone: a regular file (not a
/// link), one name, no other user may write it. A marker another user could have written names
/// nothing.
fn ours(meta: &std::fs::Metadata) -> bool {
    use std::os::unix::fs::MetadataExt;
    meta.is_file()
        && meta.uid() == crate::util::private_dir::euid()
        && meta.nlink() == 1
        && meta.mode() & 0o022 == 0
}

/// The text of the held directory's marker file when it is [`ours`].
fn held_marker(held: &HeldDir, marker: &str) -> Option<String> {
    let (meta, text) = held.read(marker).ok()?;
    ours(&meta).then_some(text)
}

/// The text of `dir`'s marker file when it is [`ours`] (read through a descriptor of `dir`).
fn marker_text(dir: &Path, marker: &str) -> Option<String> {
    held_marker(&HeldDir::open(dir).ok()?, marker)
}

/// Whose processes a managed server's are: the uid they run as and the names the kernel gives
/// them (`comm`). Only such processes are killed for working in a server's data directory, and
/// only those of the server's own tree ([`server_working_in`]): a user's shell `cd`'d there to
/// read a failed server's files, what it starts there, or any process of another user, is not
/// the server's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Workers {
    /// The uid the server runs as.
    pub uid: u32,
    /// The names of its processes (`postgres`, `mariadbd`).
    pub names: &'static [&'static str],
}

/// The server's processes (`workers`) that work in `dir`, as `procfs` shows them: of its uid, of
/// one of its names, and of its tree. A process's parent places it in the tree when it is
/// `this` process (the server dbbench spawned), another such process in `dir` (a backend under
/// its postmaster), or an ancestor of `this` that does not work in `dir` (init or a subreaper,
/// which adopt a server whose dbbench is gone). Any other parent (a user's shell, a program it
/// started there) is someone else's, even when the name matches: left alone.
pub fn server_working_in(procfs: &ProcFs, dir: &Path, workers: Workers, this: u32) -> Vec<u32> {
    let named: Vec<(u32, u32)> = procfs
        .working_in(dir)
        .into_iter()
        .filter(|&pid| procfs.uid(pid) == Some(workers.uid))
        .filter_map(|pid| {
            let stat = procfs.stat(pid)?;
            workers
                .names
                .contains(&stat.comm.as_str())
                .then_some((pid, stat.ppid))
        })
        .collect();
    let ancestors = procfs.ancestors(this);
    let working: Vec<u32> = named.iter().map(|&(pid, _)| pid).collect();
    named
        .iter()
        .filter(|&&(_, ppid)| {
            ppid == this
                || working.contains(&ppid)
                || (ancestors.contains(&ppid) && !procfs.works_in(ppid, dir))
        })
        .map(|&(pid, _)| pid)
        .collect()
}

/// SIGKILLs the server's processes (`workers`) that still work in `dir` and waits up to five
/// seconds for them to go.
pub fn kill_working_in(dir: &Path, workers: Workers) {
    let procfs = ProcFs::system();
    let started = Instant::now();
    loop {
        let pids = server_working_in(&procfs, dir, workers, std::process::id());
        if pids.is_empty() || started.elapsed() > KILL_WAIT {
            return;
        }
        for pid in pids {
            // SAFETY: kill has no memory preconditions; these are the managed server's processes
            // (its uid, its name, its tree, in its data directory).
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
    workers: Workers,
    then: fn(&Path),
) -> Ender {
    Box::new(move || {
        let pid = pid.load(Ordering::SeqCst);
        if pid > 0 {
            // SAFETY: kill has no memory preconditions; the server is our child, not yet reaped
            // (its PID is 0 again once reaped, `ServerProcess`; the process exits right after).
            unsafe { libc::kill(pid as libc::pid_t, libc::SIGKILL) };
        }
        kill_working_in(&datadir, workers);
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
    /// The marker file's name.
    marker: String,
}

impl Stale {
    /// The directories of the marker's lines `key…` (`owns=`: every directory the server owns,
    /// its root first; `datadir=`) that dbbench would have made for this server and that it may
    /// act on now: a directory (not a link) with no `..` in its path, named after the server's id
    /// (its root, `<id>-…` on a volume, `dbbench-<id>-…` for a socket directory), and, for
    /// `owns=`, carrying a marker of this user with the same text. A path another user wrote
    /// into a marker is left alone: nothing is killed, removed or detached for it.
    pub fn listed(&self, key: &str) -> Vec<PathBuf> {
        let id = self.dir.file_name().and_then(|n| n.to_str()).unwrap_or("");
        self.text
            .lines()
            .filter_map(|l| l.strip_prefix(key))
            .map(PathBuf::from)
            .filter(|path| {
                let named = path == &self.dir
                    || path.file_name().and_then(|n| n.to_str()).is_some_and(|n| {
                        n.starts_with(&format!("{id}-"))
                            || n.starts_with(&format!("dbbench-{id}-"))
                            || (n == "data" && path.parent() == Some(self.dir.as_path()))
                    });
                named
                    && !id.is_empty()
                    && !path
                        .components()
                        .any(|c| c == std::path::Component::ParentDir)
                    && std::fs::symlink_metadata(path).is_ok_and(|m| m.is_dir())
                    && (key != "owns="
                        || marker_text(path, &self.marker).as_deref() == Some(&self.text))
            })
            .collect()
    }

    /// Whether `dir` still carries this marker, word for word: asked again just before a
    /// removal, so a marker changed since the sweep read it stops it.
    pub fn still_marks(&self, dir: &Path) -> bool {
        marker_text(dir, &self.marker).as_deref() == Some(&self.text)
    }

    /// Removes `dir` if it still carries this marker, word for word, read through the same
    /// descriptor the removal goes through ([`remove_owned`]).
    pub fn remove(&self, dir: &Path) -> Result<()> {
        remove_marked(dir, &self.marker, Some(&self.text))
    }
}

/// The directories under `base` whose file `marker` names an owner that is gone. Those of live
/// runs, of other hosts and PID namespaces, those without a readable marker, and those whose
/// marker or directory is not this user's (a link, another user's file, one others may write)
/// are left out.
pub fn stale(base: &Path, marker: &str) -> Vec<Stale> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir(base).into_iter().flatten().flatten() {
        if !entry.file_type().is_ok_and(|t| t.is_dir()) {
            continue;
        }
        let Some(text) = marker_text(&entry.path(), marker) else {
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
            marker: marker.to_string(),
        });
    }
    found
}

#[cfg(test)]
mod tests;
