//! The write-ahead ledger of instance changes on the client, `mssql-owed-undo.json` in the user's
//! dbbench state directory ([`home`]), keyed by the server's own name for itself
//! (`@@SERVERNAME/MachineName`, [`super::applock::IDENTITY_SQL`]; the connection string's server
//! where the server gave none): every undo of an instance change (trace flags 1805/1806 and
//! 3004/3605, tempdb files added, sizes and growths raised) is written here as data
//! ([`Undo`]), with its owner ([`Whose`]) and the name of its copy in the server's own record
//! ([`super::record`]), *before* the change is applied, and removed only after the undo ran and
//! was verified ([`super::undo_check`]).
//!
//! Entries are structured, never SQL text, and the directory is private (security finding 7): it
//! must be a directory owned by this user with no access for group or others (created `0700`),
//! the files are `0600` and opened without following symlinks, and every write is synced (file,
//! rename, directory) so that a power loss leaves the old ledger or the new one, never none.
//! Entries that older versions wrote as statements are never run: they are said, for whoever
//! owns them to run by hand.
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

use super::undo::Undo;
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
    use std::os::unix::fs::MetadataExt;
    let old = path(old_dir);
    if old_dir == dir || !old.exists() {
        return Ok(0);
    }
    // A work directory need not be private; a file there that another user owns is not this
    // user's record, and is left alone.
    let meta = std::fs::symlink_metadata(&old).map_err(|e| Error::io("cannot read", &old, e))?;
    // SAFETY: geteuid has no preconditions and cannot fail.
    if !meta.is_file() || meta.uid() != unsafe { libc::geteuid() } {
        return Ok(0);
    }
    let text = std::fs::read_to_string(&old).map_err(|e| Error::io("cannot read", &old, e))?;
    let moved: Ledger = serde_json::from_str(&text)
        .map_err(|e| Error::msg(format!("{} is not valid: {e}", old.display())))?;
    let count = moved.values().map(Vec::len).sum();
    // Written to the new ledger before the old one is removed: a kill in between leaves an entry
    // twice, never nowhere.
    with_ledger(dir, |ledger| {
        let mut next = ledger.values().flatten().map(|o| o.id).max().unwrap_or(0);
        for (server, list) in &moved {
            for owed in list {
                next += 1;
                let owed = Owed {
                    id: next,
                    ..owed.clone()
                };
                ledger.entry(server.clone()).or_default().push(owed);
            }
        }
    })?;
    std::fs::remove_file(&old).map_err(|e| Error::io("cannot remove", &old, e))?;
    Ok(count)
}

/// One undo owed on a server.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Owed {
    /// The undo still to run; `None` in entries older versions wrote as SQL text.
    #[serde(default)]
    pub undo: Option<Undo>,
    /// The SQL text an older version wrote instead: never run, only said.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub statement: Option<String>,
    /// The name of the entry's copy in the server's record ([`super::record`]), if written.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub record: Option<String>,
    /// Why it is owed: the change it undoes is applied (or being applied), or the undo failed.
    pub why: String,
    /// Who made the change; `None` in ledgers of older versions.
    #[serde(default)]
    pub owner: Option<Whose>,
    /// Names the entry within the ledger, so its owner can remove exactly it.
    #[serde(default)]
    pub id: u64,
}

impl Owed {
    /// What it undoes, for console lines.
    pub fn what(&self) -> String {
        match (&self.undo, &self.statement) {
            (Some(undo), _) => undo.what(),
            (None, Some(statement)) => super::connection::headline(statement),
            (None, None) => "an empty entry".into(),
        }
    }
}

type Ledger = BTreeMap<String, Vec<Owed>>;

fn read(work_dir: &Path) -> Result<Ledger> {
    use std::io::Read;
    let file = path(work_dir);
    let mut text = String::new();
    match open_private(&file, false) {
        Ok(mut f) => f
            .read_to_string(&mut text)
            .map_err(|e| Error::io("cannot read", &file, e))?,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Ledger::new()),
        Err(e) => return Err(Error::io("cannot read", &file, e)),
    };
    serde_json::from_str(&text)
        .map_err(|e| Error::msg(format!("{} is not valid: {e}", file.display())))
}

/// Opens `file` without following a symlink, created `0600` when `create` is set.
fn open_private(file: &Path, create: bool) -> std::io::Result<std::fs::File> {
    use std::os::unix::fs::OpenOptionsExt;
    let mut options = std::fs::OpenOptions::new();
    options.read(true).custom_flags(libc::O_NOFOLLOW);
    if create {
        options.write(true).create(true).truncate(true).mode(0o600);
    }
    options.open(file)
}

/// Creates `dir` (`0700`) if missing, refuses it unless it is a directory (not a symlink) owned
/// by this user, and closes it to group and others when it was open (a directory an older
/// version made with the default mode): a ledger another user could write would choose what
/// this user's next run undoes.
pub fn private_dir(dir: &Path) -> Result<()> {
    use std::os::unix::fs::{DirBuilderExt, MetadataExt, PermissionsExt};
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
        .map_err(|e| Error::io("cannot create", dir, e))?;
    let meta = std::fs::symlink_metadata(dir).map_err(|e| Error::io("cannot read", dir, e))?;
    // SAFETY: geteuid has no preconditions and cannot fail.
    let euid = unsafe { libc::geteuid() };
    let refuse = |why: String| {
        Err(Error::msg(format!(
            "the dbbench state directory {} {why}: dbbench keeps its record of owed instance \
             undo only where no other user can write",
            dir.display()
        )))
    };
    if !meta.is_dir() {
        return refuse("is not a directory (a symlink?)".into());
    }
    if meta.uid() != euid {
        return refuse(format!(
            "is owned by uid {}, not by this user ({euid})",
            meta.uid()
        ));
    }
    if meta.permissions().mode() & 0o077 != 0 {
        std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))
            .map_err(|e| Error::io("cannot chmod 700", dir, e))?;
    }
    Ok(())
}

fn write(work_dir: &Path, ledger: &Ledger) -> Result<()> {
    use std::io::Write;
    let file = path(work_dir);
    if ledger.values().all(Vec::is_empty) {
        return match std::fs::remove_file(&file) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                Err(Error::io("cannot remove", &file, e))
            }
            _ => sync_dir(work_dir),
        };
    }
    let text = serde_json::to_string_pretty(ledger).map_err(|e| Error::msg(e.to_string()))?;
    // Written whole to a new file, synced, and renamed over the old, then the directory synced:
    // a kill or a power loss leaves the old ledger or the new one, never half of one.
    let fresh = file.with_extension("json.new");
    let _ = std::fs::remove_file(&fresh);
    let mut out = open_private(&fresh, true).map_err(|e| Error::io("cannot write", &fresh, e))?;
    out.write_all(text.as_bytes())
        .and_then(|()| out.sync_all())
        .map_err(|e| Error::io("cannot write", &fresh, e))?;
    std::fs::rename(&fresh, &file).map_err(|e| Error::io("cannot write", &file, e))?;
    sync_dir(work_dir)
}

fn sync_dir(dir: &Path) -> Result<()> {
    std::fs::File::open(dir)
        .and_then(|d| d.sync_all())
        .map_err(|e| Error::io("cannot sync", dir, e))
}

/// How long a read-modify-write waits for another process's (security finding 12: a stopped
/// holder must not hang every later run).
const LOCK_PATIENCE: std::time::Duration = std::time::Duration::from_secs(10);

/// Runs `change` on the ledger under an exclusive lock of the directory's lock file.
fn with_ledger<T>(work_dir: &Path, change: impl FnOnce(&mut Ledger) -> T) -> Result<T> {
    use std::os::unix::fs::OpenOptionsExt;
    use std::os::unix::io::AsRawFd;
    private_dir(work_dir)?;
    let lock_path = work_dir.join("mssql-owed-undo.json.lock");
    let lock = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .mode(0o600)
        .custom_flags(libc::O_NOFOLLOW)
        .open(&lock_path)
        .map_err(|e| Error::io("cannot open", &lock_path, e))?;
    let started = std::time::Instant::now();
    // SAFETY: flock on a descriptor this function owns; released when `lock` closes.
    while unsafe { libc::flock(lock.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } != 0 {
        let e = std::io::Error::last_os_error();
        if e.raw_os_error() != Some(libc::EWOULDBLOCK) || started.elapsed() > LOCK_PATIENCE {
            return Err(Error::io("cannot lock", &lock_path, e));
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let mut ledger = read(work_dir)?;
    let out = change(&mut ledger);
    write(work_dir, &ledger)?;
    Ok(out)
}

/// Writes `undo` (of one change, in the order it must run, each with the name of its record on
/// the server) as owed by this process on `server`, before the change is applied; returns the
/// ids.
pub fn pending(work_dir: &Path, server: &str, undo: &[(Undo, Option<String>)]) -> Result<Vec<u64>> {
    let owner = Whose::this();
    with_ledger(work_dir, |ledger| {
        let next = ledger.values().flatten().map(|o| o.id).max().unwrap_or(0) + 1;
        let list = ledger.entry(server.to_string()).or_default();
        undo.iter()
            .enumerate()
            .map(|(i, (undo, record))| {
                let id = next + i as u64;
                list.push(Owed {
                    undo: Some(undo.clone()),
                    statement: None,
                    record: record.clone(),
                    why: format!("applied by {}; not yet undone", owner.describe()),
                    owner: Some(owner.clone()),
                    id,
                });
                id
            })
            .collect()
    })
}

/// Removes the entry whose server record is `record`, under whichever server it is kept: the
/// record was replayed and verified ([`super::record::replay`]).
pub fn clear_record(work_dir: &Path, record: &str) -> Result<()> {
    if !path(work_dir).exists() {
        return Ok(());
    }
    with_ledger(work_dir, |ledger| {
        for list in ledger.values_mut() {
            list.retain(|o| o.record.as_deref() != Some(record));
        }
        ledger.retain(|_, list| !list.is_empty());
    })
}

/// Whether anything at all is owed in the ledger in `work_dir`, under any server.
pub fn any(work_dir: &Path) -> Result<bool> {
    Ok(path(work_dir).exists() && read(work_dir)?.values().any(|l| !l.is_empty()))
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

/// Runs through `conn` (a server of major version `major`) every undo owed on `server` whose
/// owner is gone (or unnamed), verifying each ([`super::attempt`]); an undo still needed by a
/// live owner's entry for the same change is not run (that owner undoes it), and an entry an
/// older version wrote as SQL text is never run, only said. The caller holds the server-wide lock
/// exclusively, and has replayed the server's record ([`super::record::replay`]) first.
pub async fn settle(
    conn: &mut MssqlConnection,
    work_dir: &Path,
    server: &str,
    major: u32,
) -> Result<Settled> {
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
        let what = item.what();
        let Some(undo) = &item.undo else {
            settled.left.push(format!(
                "{what} (written as SQL text by an older dbbench, which this one never runs; \
                 run it by hand if it is yours, then remove it from {})",
                path(work_dir).display()
            ));
            continue;
        };
        match live(item) {
            Liveness::Alive | Liveness::Elsewhere => {
                let who = item.owner.as_ref().map(Whose::describe).unwrap_or_default();
                settled.left.push(format!("{what} ({who})"));
                continue;
            }
            Liveness::Gone => {}
        }
        let relied_on = list
            .iter()
            .any(|o| o.id != item.id && o.undo == item.undo && live(o) == Liveness::Alive);
        if !relied_on {
            use super::attempt::Outcome;
            match super::attempt::attempt(conn, undo, major).await {
                Outcome::Done => {}
                Outcome::Owed(why) | Outcome::Failed(why) => {
                    settled.still.push(format!("{what} ({why})"));
                    failed(work_dir, server, item.id, &why)?;
                    continue;
                }
            }
        }
        if let Some(record) = &item.record {
            super::record::forget(conn, record).await?;
        }
        settled.done.push(what);
        clear(work_dir, server, item.id)?;
    }
    Ok(settled)
}

#[cfg(test)]
mod tests;
