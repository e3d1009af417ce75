//! The results store: one SQLite database per work dir (`<work_dir>/results.sqlite`) that keeps
//! every invocation, every cell run and every repetition, each repetition committed as soon as it
//! finishes. Nothing in it is overwritten or deleted except by an explicit command; the results
//! JSON, CSV, report and snapshot are views of it ([`view`]).
//!
//! Many processes append at once (nextest runs one process per test): the database is in WAL mode
//! with a busy timeout, every write is one short transaction, and processes of one nextest run
//! share one invocation through `NEXTEST_RUN_ID`.

mod merge;
mod recorder;
mod schema;
mod share;
mod view;

pub use recorder::StoreRecorder;

use crate::model::error::{Error, Result};
use rusqlite::{params, Connection, OptionalExtension};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// How long a write waits for another process's write to finish.
const BUSY_TIMEOUT: Duration = Duration::from_secs(60);

/// Creates a new store's file readable and writable by this user only (0600, whatever the
/// umask), before SQLite opens it: SQLite gives the `-wal` and `-shm` files it makes beside a
/// database the database file's mode, so all three stay this user's. What the store keeps (the
/// runs' errors, hosts, servers' versions) is no secret, but no other local user needs to read or
/// lock it. An existing file (another process made it first, a store given to `merge`) is left
/// as it is.
fn create_private(path: &Path) -> Result<()> {
    use std::os::unix::fs::OpenOptionsExt;
    match std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
        .open(path)
    {
        Ok(_) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Ok(()),
        Err(e) => Err(Error::io("cannot create the results store", path, e)),
    }
}

/// The store's file in a work dir.
pub fn store_file(work_dir: &Path) -> PathBuf {
    work_dir.join("results.sqlite")
}

/// An open results store.
#[derive(Debug)]
pub struct Store {
    conn: Connection,
    path: PathBuf,
}

/// What an invocation is, as it starts.
#[derive(Debug, Clone, PartialEq)]
pub struct InvocationStart {
    /// The command line, arguments joined by spaces.
    pub command_line: String,
    /// The git commit of the benchmarks' source, if any.
    pub git_commit: Option<String>,
    /// The machine's host name.
    pub host: String,
    /// The backend's keyword.
    pub backend: String,
    /// The scale's name.
    pub scale: String,
    /// Processes that share this key share one invocation (a nextest run's id).
    pub run_key: Option<String>,
}

/// How an invocation ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InvocationStatus {
    /// Still running, or stopped without saying (a killed process).
    Running,
    /// Every cell it ran succeeded or was skipped.
    Completed,
    /// A cell failed, or the invocation could not run.
    Failed,
    /// Stopped by Ctrl-C or SIGTERM; its finished repetitions are kept and `--resume` (or
    /// `DBBENCH_RESUME=1`) continues it.
    Interrupted,
}

impl InvocationStatus {
    /// The word stored and shown.
    pub fn keyword(self) -> &'static str {
        match self {
            InvocationStatus::Running => "running",
            InvocationStatus::Completed => "completed",
            InvocationStatus::Failed => "failed",
            InvocationStatus::Interrupted => "interrupted",
        }
    }
}

/// SQLite's "database is busy" or "locked", extended codes included.
fn is_locked(e: &rusqlite::Error) -> bool {
    matches!(
        e.sqlite_error_code(),
        Some(rusqlite::ErrorCode::DatabaseBusy | rusqlite::ErrorCode::DatabaseLocked)
    )
}

fn sql_error(path: &Path, e: rusqlite::Error) -> Error {
    Error::msg(format!("results store `{}`: {e}", path.display()))
}

pub(crate) fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0)
}

impl Store {
    /// Opens (creating and migrating as needed) the store of `work_dir`.
    pub fn open(work_dir: &Path) -> Result<Store> {
        Store::open_file(&store_file(work_dir))
    }

    /// Opens the store at `path`, creating it and its directory if needed.
    pub fn open_file(path: &Path) -> Result<Store> {
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir)
                .map_err(|e| Error::io("cannot create directory", dir, e))?;
        }
        let fail = |e| sql_error(path, e);
        create_private(path)?;
        let mut conn = Connection::open(path).map_err(fail)?;
        conn.busy_timeout(BUSY_TIMEOUT).map_err(fail)?;
        // WAL lets readers and one writer work at once; FULL makes each commit durable, so a
        // repetition reported as kept survives a crash of the machine too.
        let setup = |conn: &mut Connection| {
            conn.query_row("PRAGMA journal_mode = WAL", [], |_| Ok(()))?;
            conn.execute_batch("PRAGMA synchronous = FULL; PRAGMA foreign_keys = ON;")?;
            schema::migrate(conn)
        };
        // Two processes opening a new store at once (two terminals, nextest's processes): while
        // one turns the new file into WAL mode and creates the tables, the other can get
        // "database is locked" at once, without the busy handler, where waiting could deadlock.
        // So the setup is tried again, for as long as a busy store is waited for anyway.
        let started = std::time::Instant::now();
        let migrated = loop {
            match setup(&mut conn) {
                Err(e) if is_locked(&e) && started.elapsed() < BUSY_TIMEOUT => {
                    std::thread::sleep(Duration::from_millis(10));
                }
                other => break other.map_err(fail)?,
            }
        };
        match migrated {
            Ok(()) => {}
            Err(newer) => {
                return Err(Error::Config(format!(
                    "results store `{}` has schema version {newer}; this dbbench reads up to {} \
                     (upgrade dbbench, or choose another work dir with DBBENCH_DIR)",
                    path.display(),
                    schema::VERSION
                )))
            }
        }
        Ok(Store {
            conn,
            path: path.to_path_buf(),
        })
    }

    /// Where the store is.
    pub fn path(&self) -> &Path {
        &self.path
    }

    fn fail(&self, e: rusqlite::Error) -> Error {
        sql_error(&self.path, e)
    }

    /// Starts an invocation, or joins the one of the same `run_key`; returns its id.
    pub fn begin(&self, start: &InvocationStart) -> Result<i64> {
        if let Some(key) = &start.run_key {
            let found: Option<i64> = self
                .conn
                .query_row(
                    "SELECT id FROM invocations WHERE run_key = ?1",
                    [key],
                    |r| r.get(0),
                )
                .optional()
                .map_err(|e| self.fail(e))?;
            if let Some(id) = found {
                return Ok(id);
            }
        }
        // Two processes of one nextest run may race here: the UNIQUE run_key keeps one row.
        self.conn
            .execute(
                "INSERT OR IGNORE INTO invocations (uid, run_key, started_at_unix_ms, command_line, \
                 git_commit, host, backend, scale, status) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
                params![
                    new_uid(),
                    start.run_key,
                    now_ms(),
                    start.command_line,
                    start.git_commit,
                    start.host,
                    start.backend,
                    start.scale,
                    InvocationStatus::Running.keyword()
                ],
            )
            .map_err(|e| self.fail(e))?;
        match &start.run_key {
            Some(key) => self
                .conn
                .query_row(
                    "SELECT id FROM invocations WHERE run_key = ?1",
                    [key],
                    |r| r.get(0),
                )
                .map_err(|e| self.fail(e)),
            None => Ok(self.conn.last_insert_rowid()),
        }
    }

    /// Records how (a part of) invocation `id` ended. `failed` and `interrupted` are kept once
    /// set, so one failing process of a nextest run marks the whole run.
    pub fn finish(&self, id: i64, status: InvocationStatus, detail: Option<&str>) -> Result<()> {
        self.conn
            .execute(
                "UPDATE invocations SET ended_at_unix_ms = ?2, \
                 status = CASE WHEN status IN ('failed', 'interrupted') THEN status ELSE ?3 END, \
                 detail = COALESCE(?4, detail) WHERE id = ?1",
                params![id, now_ms(), status.keyword(), detail],
            )
            .map_err(|e| self.fail(e))?;
        Ok(())
    }

    /// Names invocation `id` (default: the newest completed one) as the baseline `name`; a name
    /// in use is moved to it.
    pub fn save_baseline(&self, name: &str, id: Option<i64>) -> Result<i64> {
        let id = match id {
            Some(id) => id,
            None => self
                .conn
                .query_row(
                    "SELECT max(id) FROM invocations WHERE status = 'completed'",
                    [],
                    |r| r.get::<_, Option<i64>>(0),
                )
                .map_err(|e| self.fail(e))?
                .ok_or_else(|| {
                    Error::Config(format!(
                        "`{}` has no completed invocation to save as baseline `{name}`",
                        self.path.display()
                    ))
                })?,
        };
        let tx = self
            .conn
            .unchecked_transaction()
            .map_err(|e| self.fail(e))?;
        tx.execute(
            "UPDATE invocations SET baseline = NULL WHERE baseline = ?1",
            [name],
        )
        .map_err(|e| self.fail(e))?;
        let changed = tx
            .execute(
                "UPDATE invocations SET baseline = ?1 WHERE id = ?2",
                params![name, id],
            )
            .map_err(|e| self.fail(e))?;
        if changed == 0 {
            return Err(Error::Config(format!(
                "`{}` has no invocation {id}",
                self.path.display()
            )));
        }
        tx.commit().map_err(|e| self.fail(e))?;
        Ok(id)
    }

    /// The invocation saved as baseline `name`.
    pub fn baseline(&self, name: &str) -> Result<i64> {
        self.conn
            .query_row(
                "SELECT id FROM invocations WHERE baseline = ?1",
                [name],
                |r| r.get(0),
            )
            .optional()
            .map_err(|e| self.fail(e))?
            .ok_or_else(|| {
                Error::Config(format!(
                    "`{}` has no baseline named `{name}`; `history` lists the invocations and \
                     `baseline save NAME [INVOCATION]` names one",
                    self.path.display()
                ))
            })
    }

    /// A recorder that writes the runs of invocation `id` into this store.
    pub fn recorder(&self, invocation: i64) -> StoreRecorder<'_> {
        StoreRecorder::new(self, invocation, false)
    }

    /// A recorder that continues the interrupted invocation `id`: it adds to the invocation's
    /// benchmark and cell runs and tells the runner which repetitions they already hold.
    pub fn resuming_recorder(&self, invocation: i64) -> StoreRecorder<'_> {
        StoreRecorder::new(self, invocation, true)
    }

    /// The newest interrupted invocation, if there is one.
    pub fn newest_interrupted(&self) -> Result<Option<i64>> {
        self.conn
            .query_row(
                "SELECT max(id) FROM invocations WHERE status = 'interrupted'",
                [],
                |r| r.get(0),
            )
            .map_err(|e| self.fail(e))
    }

    /// Marks the interrupted invocation `id` running again, for `--resume`. The one place an
    /// `interrupted` status is overwritten.
    pub fn reopen(&self, id: i64) -> Result<()> {
        let changed = self
            .conn
            .execute(
                "UPDATE invocations SET status = 'running', ended_at_unix_ms = NULL, \
                 detail = NULL WHERE id = ?1 AND status = 'interrupted'",
                [id],
            )
            .map_err(|e| self.fail(e))?;
        if changed == 0 {
            return Err(Error::Config(format!(
                "`{}` has no interrupted invocation {id} to resume",
                self.path.display()
            )));
        }
        Ok(())
    }
}

/// A random id that stays the invocation's own across stores (merging keeps it).
fn new_uid() -> String {
    format!(
        "{:016x}{:016x}",
        fastrand::u64(..),
        now_ms() as u64 ^ u64::from(std::process::id())
    )
}

#[cfg(test)]
mod open_tests {
    use super::*;

    /// Many openers of one new store at once (two terminals, nextest's processes): each gets
    /// the store, none "database is locked".
    #[test]
    fn a_new_store_opened_by_many_at_once() {
        for round in 0..5 {
            let tmp = tempfile::tempdir().unwrap();
            let start = std::sync::Arc::new(std::sync::Barrier::new(8));
            let openers: Vec<_> = (0..8)
                .map(|_| {
                    let (dir, start) = (tmp.path().to_path_buf(), start.clone());
                    std::thread::spawn(move || {
                        start.wait();
                        Store::open(&dir).map(drop)
                    })
                })
                .collect();
            for opener in openers {
                let opened = opener.join().unwrap();
                assert!(opened.is_ok(), "round {round}: {opened:?}");
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn a_new_store_and_its_wal_and_shm_are_this_user_s_only() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path()).unwrap();
        let file = store_file(dir.path());
        for suffix in ["", "-wal", "-shm"] {
            let path = PathBuf::from(format!("{}{suffix}", file.display()));
            let mode = std::fs::metadata(&path).unwrap().permissions().mode();
            assert_eq!(mode & 0o077, 0, "{} is {mode:o}", path.display());
        }
        drop(store);
    }
}
