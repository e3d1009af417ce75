//! The write-ahead ledger of instance changes, `mssql-owed-undo.json` in the user's dbbench
//! state directory ([`home`]), keyed by server: every undo statement of an instance change (trace flags 1805/1806 and 3004/3605,
//! tempdb files added and sizes raised) is written here, with its owner ([`Whose`]), *before*
//! the change is applied, and removed only after the undo ran and was verified
//! ([`super::undo_check`]).
//!
//! Why: the undo otherwise lives in memory only, and `kill -9`, an OOM kill, a lost client or the
//! second Ctrl-C (`_exit`, teardown skipped) leave the flags on for every database of the
//! instance and tempdb's files and sizes in place across restarts (finding B2 of the third
//! review). The next start against the server ([`settle`]) and the stale sweep run what an owner
//! that is gone left, under the server-wide lock ([`super::applock`]) so that no live dbbench
//! run is in the middle of changes of its own, and leave what a live run, or a process this host
//! cannot judge, still owns. An undo that fails stays owed; removing a tempdb file often has to
//! wait for a restart of SQL Server (Msg 2555, 5042).
//!
//! The ledger is one per user and machine, not per work directory: a run killed in one checkout
//! or terminal is finished by the next run from any other ([`home`]). Ledgers that versions
//! before this one kept in a work directory are taken over when that work directory is used
//! ([`adopt`]). Every read-modify-write of the file holds an exclusive `flock` on
//! `mssql-owed-undo.json.lock`, since dbbench processes share it.

use super::errors;
use super::whose::Whose;
use super::MssqlConnection;
use crate::model::error::{Error, Result};
use crate::util::owner::Liveness;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The ledger file under `dir` (its directory: [`home`], or a test's own).
pub fn path(dir: &Path) -> PathBuf {
    dir.join("mssql-owed-undo.json")
}

/// The directory of the user's ledger: `DBBENCH_STATE_DIR`, else `$XDG_STATE_HOME/dbbench`,
/// else `~/.local/state/dbbench` (persistent: an added tempdb file outlives a reboot of this
/// machine, and so must the record of its undo), else `<tmp>/dbbench-state-<uid>`.
pub fn home() -> PathBuf {
    let var = |name: &str| std::env::var_os(name).filter(|v| !v.is_empty());
    if let Some(dir) = var("DBBENCH_STATE_DIR") {
        return PathBuf::from(dir);
    }
    if let Some(dir) = var("XDG_STATE_HOME") {
        return PathBuf::from(dir).join("dbbench");
    }
    if let Some(dir) = var("HOME") {
        return PathBuf::from(dir).join(".local/state/dbbench");
    }
    // SAFETY: getuid has no preconditions and cannot fail.
    let uid = unsafe { libc::getuid() };
    std::env::temp_dir().join(format!("dbbench-state-{uid}"))
}

/// Moves what an older version's ledger in `old_dir` (a work directory) still owes into the
/// ledger in `dir`, and removes the old file; returns how many statements it moved. Ids are
/// renumbered in `dir`'s ledger; owners are kept.
pub fn adopt(old_dir: &Path, dir: &Path) -> Result<usize> {
    if old_dir == dir || !path(old_dir).exists() {
        return Ok(0);
    }
    // Written to the new ledger before the old one is emptied, both under their locks (always
    // the old first): a kill in between leaves an entry twice, never nowhere.
    with_ledger(old_dir, |old| {
        let moved = std::mem::take(old);
        let count = moved.values().map(Vec::len).sum();
        let kept = with_ledger(dir, |ledger| {
            let mut next = ledger.values().flatten().map(|o| o.id).max().unwrap_or(0);
            for (server, list) in &moved {
                for owed in list {
                    next += 1;
                    let owed = Owed { id: next, ..owed.clone() };
                    ledger.entry(server.clone()).or_default().push(owed);
                }
            }
        });
        if kept.is_err() {
            *old = moved;
        }
        kept.map(|()| count)
    })?
}

/// One undo statement owed on a server.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Owed {
    /// The statement still to run.
    pub statement: String,
    /// Why it is owed: the change it undoes is applied (or being applied), or the undo failed.
    pub why: String,
    /// Who made the change; `None` in ledgers of older versions (anyone may finish those).
    #[serde(default)]
    pub owner: Option<Whose>,
    /// Names the entry within the ledger, so its owner can remove exactly it.
    #[serde(default)]
    pub id: u64,
}

type Ledger = BTreeMap<String, Vec<Owed>>;

fn read(work_dir: &Path) -> Result<Ledger> {
    let file = path(work_dir);
    match std::fs::read_to_string(&file) {
        Ok(text) => serde_json::from_str(&text)
            .map_err(|e| Error::msg(format!("{} is not valid: {e}", file.display()))),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Ledger::new()),
        Err(e) => Err(Error::io("cannot read", &file, e)),
    }
}

fn write(work_dir: &Path, ledger: &Ledger) -> Result<()> {
    let file = path(work_dir);
    if ledger.values().all(Vec::is_empty) {
        return match std::fs::remove_file(&file) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                Err(Error::io("cannot remove", &file, e))
            }
            _ => Ok(()),
        };
    }
    std::fs::create_dir_all(work_dir).map_err(|e| Error::io("cannot create", work_dir, e))?;
    let text = serde_json::to_string_pretty(ledger).map_err(|e| Error::msg(e.to_string()))?;
    // Written whole to a new file and renamed over the old: a kill mid-write leaves the old
    // ledger, never half of one.
    let fresh = file.with_extension("json.new");
    std::fs::write(&fresh, text).map_err(|e| Error::io("cannot write", &fresh, e))?;
    std::fs::rename(&fresh, &file).map_err(|e| Error::io("cannot write", &file, e))
}

/// Runs `change` on the ledger under an exclusive lock of the work directory's lock file.
fn with_ledger<T>(work_dir: &Path, change: impl FnOnce(&mut Ledger) -> T) -> Result<T> {
    use std::os::unix::io::AsRawFd;
    std::fs::create_dir_all(work_dir).map_err(|e| Error::io("cannot create", work_dir, e))?;
    let lock_path = work_dir.join("mssql-owed-undo.json.lock");
    let lock = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&lock_path)
        .map_err(|e| Error::io("cannot open", &lock_path, e))?;
    // SAFETY: flock on a descriptor this function owns; released when `lock` closes.
    if unsafe { libc::flock(lock.as_raw_fd(), libc::LOCK_EX) } != 0 {
        return Err(Error::io(
            "cannot lock",
            &lock_path,
            std::io::Error::last_os_error(),
        ));
    }
    let mut ledger = read(work_dir)?;
    let out = change(&mut ledger);
    write(work_dir, &ledger)?;
    Ok(out)
}

/// Writes `statements` (undo of one change, in the order they must run) as owed by this process
/// on `server`, before the change is applied; returns their ids.
pub fn pending(work_dir: &Path, server: &str, statements: &[String]) -> Result<Vec<u64>> {
    let owner = Whose::this();
    with_ledger(work_dir, |ledger| {
        let next = ledger.values().flatten().map(|o| o.id).max().unwrap_or(0) + 1;
        let list = ledger.entry(server.to_string()).or_default();
        statements
            .iter()
            .enumerate()
            .map(|(i, statement)| {
                let id = next + i as u64;
                list.push(Owed {
                    statement: statement.clone(),
                    why: format!("applied by {}; not yet undone", owner.describe()),
                    owner: Some(owner.clone()),
                    id,
                });
                id
            })
            .collect()
    })
}

/// Removes entry `id` on `server`: its undo ran and was verified, or its change never applied.
pub fn clear(work_dir: &Path, server: &str, id: u64) -> Result<()> {
    with_ledger(work_dir, |ledger| {
        if let Some(list) = ledger.get_mut(server) {
            list.retain(|o| o.id != id);
        }
        ledger.retain(|_, list| !list.is_empty());
    })
}

/// Records why entry `id` is still owed (its undo failed), keeping its owner.
pub fn failed(work_dir: &Path, server: &str, id: u64, why: &str) -> Result<()> {
    with_ledger(work_dir, |ledger| {
        for owed in ledger.get_mut(server).into_iter().flatten() {
            if owed.id == id {
                owed.why = why.to_string();
            }
        }
    })
}

/// Whether a failed undo `statement` can be finished after a restart: removing a tempdb file
/// that could not be emptied.
pub fn can_wait_for_restart(statement: &str, error: &Error) -> bool {
    statement.contains("REMOVE FILE") && matches!(errors::code_of(error), Some(2555 | 5042))
}

/// The undo owed on `server`.
pub fn owed(work_dir: &Path, server: &str) -> Result<Vec<Owed>> {
    Ok(read(work_dir)?.remove(server).unwrap_or_default())
}

/// What [`settle`] did, one phrase per statement.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Settled {
    /// Undone (and verified) for an owner that is gone.
    pub done: Vec<String>,
    /// Still owed after a failed attempt.
    pub still: Vec<String>,
    /// Left to an owner that still runs or that this host cannot judge.
    pub left: Vec<String>,
}

impl Settled {
    /// The one console line that says what was found, or `None` when nothing was.
    pub fn line(&self, server: &str) -> Option<String> {
        if self.done.is_empty() && self.still.is_empty() && self.left.is_empty() {
            return None;
        }
        let mut parts = Vec::new();
        if !self.done.is_empty() {
            parts.push(format!(
                "undid instance changes an earlier dbbench run left on {server} (its process is \
                 gone): {}",
                self.done.join("; ")
            ));
        }
        if !self.still.is_empty() {
            parts.push(format!(
                "undo still owed (restart SQL Server or run it by hand): {}",
                self.still.join("; ")
            ));
        }
        if !self.left.is_empty() {
            parts.push(format!(
                "left to their owners, which still run or ran elsewhere: {}",
                self.left.join("; ")
            ));
        }
        Some(format!("dbbench › mssql: {}", parts.join("; ")))
    }
}

/// Runs through `conn` every undo owed on `server` whose owner is gone (or unnamed), verifying
/// each ([`super::undo_check`]); an undo still needed by a live owner's entry for the same
/// statement is not run (that owner undoes it). The caller holds the server-wide lock.
pub async fn settle(conn: &mut MssqlConnection, work_dir: &Path, server: &str) -> Result<Settled> {
    let here = Whose::this();
    let list = owed(work_dir, server)?;
    let mut settled = Settled::default();
    let live = |o: &Owed| {
        o.owner
            .as_ref()
            .map(|w| w.liveness_from(&here))
            .unwrap_or(Liveness::Gone)
    };
    for item in &list {
        let headline = super::connection::headline(&item.statement)
            .trim_end_matches(';')
            .to_string();
        match live(item) {
            Liveness::Alive | Liveness::Elsewhere => {
                let who = item.owner.as_ref().map(Whose::describe).unwrap_or_default();
                settled.left.push(format!("{headline} ({who})"));
                continue;
            }
            Liveness::Gone => {}
        }
        let relied_on = list.iter().any(|o| {
            o.id != item.id && o.statement == item.statement && live(o) == Liveness::Alive
        });
        if !relied_on {
            let ran = conn.batch(&item.statement).await;
            let verified = match ran {
                Ok(()) => super::undo_check::verify(conn, &item.statement).await,
                Err(e) => Err(e.to_string()),
            };
            if let Err(why) = verified {
                settled.still.push(format!("{headline} ({why})"));
                failed(work_dir, server, item.id, &why)?;
                continue;
            }
        }
        settled.done.push(headline);
        clear(work_dir, server, item.id)?;
    }
    Ok(settled)
}

#[cfg(test)]
mod tests;
