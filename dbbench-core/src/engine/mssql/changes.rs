//! Applying and undoing one repetition's instance changes ([`InstanceChanges`]): the server lock
//! taken before the first read of instance state ([`InstanceChanges::hold`], [`super::applock`]),
//! every undo recorded on the server ([`super::record`]) and in the user's ledger
//! ([`super::owed`]) before its change and removed once verified ([`super::attempt`]), and the
//! undo run again from `Drop` on a fresh connection, within the teardown deadline, when the
//! repetition never got to it.

use super::applock::{Mode, ServerLock};
use super::attempt::Outcome;
use super::connect::ConnectSettings;
use super::instance::Change;
use super::undo::Undo;
use crate::model::error::{Error, Result};
use std::sync::{Arc, Mutex};

/// One undo in memory, with its ledger entry and its server record.
#[derive(Debug, Clone)]
struct Pending {
    undo: Undo,
    /// The ledger entry, when a ledger is kept.
    id: Option<u64>,
    /// The server record's name, once written.
    record: Option<String>,
}

/// The server lock shared by the change lists of one repetition (its instance changes and the
/// zero-fill logging probe): taken by [`InstanceChanges::hold`] or the first change, given back
/// when the last user leaves.
#[derive(Default)]
struct Shared {
    lock: Option<ServerLock>,
    users: usize,
    mode: Mode,
    /// The ledger's key for this server: its own name once the lock has read it.
    key: Option<String>,
    /// The server's major version, 0 when unknown.
    major: u32,
    /// Records written so far, for unique names.
    written: u64,
}

/// Changes applied to the instance for one repetition, with their undo.
pub struct InstanceChanges {
    settings: ConnectSettings,
    /// Undo, applied in reverse order of the changes.
    undo: Vec<Pending>,
    /// Descriptions of the applied changes, for the results.
    applied: Vec<String>,
    /// The directory of the ledger that records every undo before its change.
    owed_in: Option<std::path::PathBuf>,
    /// Why each undo still in `undo` failed at the last `restore` (same order).
    failed: Vec<String>,
    shared: Arc<Mutex<Shared>>,
    /// Whether this list counts among the lock's users.
    entered: bool,
    /// Whether the lock is kept after the last undo, until [`InstanceChanges::release`].
    kept: bool,
}

impl std::fmt::Debug for InstanceChanges {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("InstanceChanges")
            .field("applied", &self.applied)
            .finish()
    }
}

impl InstanceChanges {
    /// No changes yet.
    pub fn new(settings: ConnectSettings) -> Self {
        InstanceChanges {
            settings,
            undo: Vec::new(),
            applied: Vec::new(),
            owed_in: None,
            failed: Vec::new(),
            shared: Arc::new(Mutex::new(Shared::default())),
            entered: false,
            kept: false,
        }
    }

    /// Records every undo in the ledger in directory `dir` before its change is applied.
    pub fn owed_in(mut self, dir: &std::path::Path) -> Self {
        self.owed_in = Some(dir.to_path_buf());
        self
    }

    /// Another, empty list of the same repetition, sharing this one's server lock.
    pub fn sibling(&self) -> Self {
        InstanceChanges {
            settings: self.settings.clone(),
            undo: Vec::new(),
            applied: Vec::new(),
            owed_in: self.owed_in.clone(),
            failed: Vec::new(),
            shared: self.shared.clone(),
            entered: false,
            kept: false,
        }
    }

    fn shared(&self) -> std::sync::MutexGuard<'_, Shared> {
        self.shared.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Takes the server lock in `mode` before the repetition reads any instance state its result
    /// depends on, and keeps it through the window until [`InstanceChanges::release`] (findings
    /// N1, N3): exclusive for a repetition that may change the instance, shared for one that only
    /// relies on it.
    pub async fn hold(&mut self, mode: Mode) -> Result<()> {
        self.shared().mode = mode;
        self.enter().await?;
        self.kept = true;
        Ok(())
    }

    /// Stops keeping the lock for the window; it is given back once no undo is outstanding.
    pub fn release(&mut self) {
        self.kept = false;
        if self.undo.is_empty() {
            self.leave();
        }
    }

    /// Counts this list among the lock's users, taking the lock if nobody holds it yet.
    async fn enter(&mut self) -> Result<()> {
        if self.entered {
            return Ok(());
        }
        let (need, mode) = {
            let mut shared = self.shared();
            shared.users += 1;
            (shared.lock.is_none(), shared.mode)
        };
        self.entered = true;
        if need {
            match self.take(mode).await {
                Ok(lock) => {
                    let mut shared = self.shared();
                    shared.key = lock.identity().map(str::to_string);
                    shared.major = lock.major();
                    shared.lock = Some(lock);
                }
                Err(e) => {
                    self.leave();
                    return Err(e);
                }
            }
        }
        Ok(())
    }

    /// The lock in `mode`, after the server's record of owed undo was replayed: by this process
    /// when it holds the lock exclusively, and when a shared holder finds records, under an
    /// exclusive lock taken for the replay alone (an owed IFI-off flag would otherwise stay on
    /// under every later `ifi = true` window).
    async fn take(&self, mode: Mode) -> Result<ServerLock> {
        let patience = super::applock::patience();
        let mut lock = ServerLock::acquire(&self.settings, mode, patience).await?;
        if mode == Mode::Shared {
            if super::record::list(lock.conn()).await?.is_empty() {
                return Ok(lock);
            }
            lock.release().await;
            let mut exclusive =
                ServerLock::acquire(&self.settings, Mode::Exclusive, patience).await?;
            self.replay(&mut exclusive).await?;
            exclusive.release().await;
            return ServerLock::acquire(&self.settings, Mode::Shared, patience).await;
        }
        self.replay(&mut lock).await?;
        Ok(lock)
    }

    async fn replay(&self, lock: &mut ServerLock) -> Result<()> {
        let line =
            super::record::replay(lock, self.owed_in.as_deref(), self.settings.server()).await?;
        if let Some(line) = line {
            crate::util::console::say(&line);
        }
        Ok(())
    }

    /// Stops counting this list among the lock's users; the last one gives the lock back (its
    /// connection closes, which ends the session and so the session-scope lock).
    fn leave(&mut self) {
        if !std::mem::take(&mut self.entered) {
            return;
        }
        let lock = {
            let mut shared = self.shared();
            shared.users = shared.users.saturating_sub(1);
            if shared.users == 0 {
                shared.lock.take()
            } else {
                None
            }
        };
        drop(lock);
    }

    /// The ledger's key for this server.
    fn key(&self) -> String {
        self.shared()
            .key
            .clone()
            .unwrap_or_else(|| self.settings.server().to_string())
    }

    /// `Ok` while the lock's session still holds it (finding N9); `Err` says how it was lost.
    /// Nothing to check when this repetition holds no lock.
    pub async fn lock_held(&self) -> std::result::Result<(), String> {
        let lock = self.shared().lock.take();
        let Some(mut lock) = lock else {
            return Ok(());
        };
        let held = lock.still_held().await;
        self.shared().lock = Some(lock);
        held.map_err(|why| {
            format!(
                "the server lock {} was lost ({why}): another dbbench process may have read or \
                 changed the instance state this repetition relies on",
                super::applock::RESOURCE
            )
        })
    }

    /// Applies one change through `conn`. The server lock is taken first (exclusively), and the
    /// undo is recorded on the server and in the ledger before the statement is sent, so a kill
    /// while it runs still leaves the undo on record; a statement the server rejects changed
    /// nothing, so its undo is dropped again and the error returned.
    pub async fn apply(
        &mut self,
        conn: &mut super::MssqlConnection,
        change: &Change,
    ) -> Result<()> {
        self.enter().await?;
        if self.shared().mode == Mode::Shared {
            return Err(Error::msg(format!(
                "{} was planned under the shared server lock; dbbench changes the instance only \
                 under the exclusive one",
                change.what
            )));
        }
        let mark = self.undo.len();
        let mut pending = Vec::new();
        for undo in &change.undo {
            let name = {
                let mut shared = self.shared();
                shared.written += 1;
                super::record::name(shared.written)
            };
            if let Err(e) = super::record::write(conn, &name, undo).await {
                for written in std::mem::take(&mut pending) {
                    self.forget(conn, &written).await;
                }
                return Err(e);
            }
            pending.push(Pending {
                undo: undo.clone(),
                id: None,
                record: Some(name),
            });
        }
        if let Some(dir) = &self.owed_in {
            let entries: Vec<(Undo, Option<String>)> = pending
                .iter()
                .map(|p| (p.undo.clone(), p.record.clone()))
                .collect();
            let ids = super::owed::pending(dir, &self.key(), &entries);
            match ids {
                Ok(ids) => {
                    for (p, id) in pending.iter_mut().zip(ids) {
                        p.id = Some(id);
                    }
                }
                Err(e) => {
                    for written in pending {
                        self.forget(conn, &written).await;
                    }
                    return Err(e);
                }
            }
        }
        // Undo runs last-first, so this change's own undo is pushed reversed.
        self.undo.extend(pending.into_iter().rev());
        if let Err(e) = conn.batch(&change.apply).await {
            // A command timeout leaves the statement running on the server, which may still
            // apply it: its undo stays owed.
            if super::errors::is_command_timeout(&e) {
                self.applied.push(format!(
                    "{} (timed out; may have been applied)",
                    change.what
                ));
                return Err(e);
            }
            for undo in self.undo.split_off(mark) {
                self.forget(conn, &undo).await;
            }
            return Err(e);
        }
        self.applied.push(change.what.clone());
        Ok(())
    }

    /// Removes `undo`'s server record and ledger entry.
    async fn forget(&self, conn: &mut super::MssqlConnection, undo: &Pending) {
        if let Some(record) = &undo.record {
            if let Err(e) = super::record::forget(conn, record).await {
                crate::util::console::say(&format!(
                    "dbbench › mssql: could not drop the server's record {record} ({e}); the \
                     next run holding the server lock finds its undo already in effect"
                ));
            }
        }
        if let (Some(dir), Some(id)) = (&self.owed_in, undo.id) {
            if let Err(e) = super::owed::clear(dir, &self.key(), id) {
                crate::util::console::say(&format!("dbbench › mssql: {e}"));
            }
        }
    }

    /// What was changed, in order.
    pub fn applied(&self) -> &[String] {
        &self.applied
    }

    /// Undoes every change through `conn`, each bounded and verified on the server before its
    /// record and ledger entry are removed ([`super::attempt`]); every undo is tried, the errors
    /// are joined. The lock is checked first (finding N9). An undo that must wait (a restart, or
    /// snapshot transactions before SQL Server 2022) stays recorded for the next run that holds
    /// the lock exclusively; one that fails is kept: a later `restore`, and at the latest the drop
    /// of these changes, runs it again on a fresh connection.
    pub async fn restore(&mut self, conn: &mut super::MssqlConnection) -> Result<()> {
        let mut errors = Vec::new();
        let mut kept = Vec::new();
        if !self.undo.is_empty() {
            if let Err(why) = self.lock_held().await {
                crate::util::console::say(&format!("dbbench › mssql: {why}"));
            }
        }
        let (server, major) = (self.settings.server().to_string(), self.shared().major);
        while let Some(undo) = self.undo.pop() {
            let what = undo.undo.what();
            match super::attempt::attempt(conn, &undo.undo, major).await {
                Outcome::Done => self.forget(conn, &undo).await,
                Outcome::Owed(why) => {
                    if let (Some(dir), Some(id)) = (&self.owed_in, undo.id) {
                        let _ = super::owed::failed(dir, &self.key(), id, &why);
                    }
                    crate::util::console::say(&format!(
                        "dbbench › mssql: {what} is left owed ({why}); it stays in the server's \
                         record, and the next dbbench run holding the server lock on {server} \
                         finishes it"
                    ));
                }
                Outcome::Failed(why) => {
                    if let (Some(dir), Some(id)) = (&self.owed_in, undo.id) {
                        let _ = super::owed::failed(dir, &self.key(), id, &why);
                    }
                    errors.push(format!("{what}: {why}"));
                    kept.push((undo, why));
                }
            }
        }
        // Popped last-first; put back so the next attempt runs them in the same order.
        kept.reverse();
        self.failed = kept.iter().map(|(_, why)| why.clone()).collect();
        self.undo = kept.into_iter().map(|(undo, _)| undo).collect();
        self.applied.clear();
        if self.undo.is_empty() && !self.kept {
            self.leave();
        }
        if errors.is_empty() {
            Ok(())
        } else {
            Err(Error::msg(format!(
                "could not undo instance changes; restore them by hand: {}",
                errors.join("; ")
            )))
        }
    }

    /// Undoes every change on a fresh connection, blocking, within the teardown deadline: the
    /// safety net for `Drop`. Returns the undo still failing, with why.
    fn restore_blocking(&mut self) -> Vec<(String, String)> {
        let undo = std::mem::take(&mut self.undo);
        let mut changes = self.sibling();
        changes.undo = undo;
        changes.entered = std::mem::take(&mut self.entered);
        let limit = crate::util::deadline::Deadline::Teardown
            .limit()
            .unwrap_or_else(|_| crate::util::deadline::Deadline::Teardown.default_limit());
        let worker = std::thread::spawn(move || -> Vec<(String, String)> {
            let all = |changes: &InstanceChanges, why: &str| -> Vec<(String, String)> {
                changes
                    .undo
                    .iter()
                    .map(|u| (u.undo.what(), why.to_string()))
                    .collect()
            };
            let runtime = match tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
            {
                Ok(runtime) => runtime,
                Err(e) => return all(&changes, &format!("cannot start a runtime: {e}")),
            };
            let left = runtime.block_on(async {
                let work = async {
                    let mut conn = changes.settings.connect(Some("master")).await?;
                    let _ = changes.restore(&mut conn).await;
                    Ok::<(), Error>(())
                };
                match tokio::time::timeout(limit, work).await {
                    Ok(Ok(())) => changes
                        .undo
                        .iter()
                        .map(|u| u.undo.what())
                        .zip(changes.failed.iter().cloned())
                        .collect(),
                    Ok(Err(e)) => all(&changes, &e.to_string()),
                    Err(_) => all(
                        &changes,
                        &format!(
                            "not done within the teardown deadline ({})",
                            crate::util::deadline::spoken(limit)
                        ),
                    ),
                }
            });
            // Taken out, so dropping `changes` does not start this safety net again; their
            // records and ledger entries stay.
            changes.undo.clear();
            changes.leave();
            left
        });
        worker.join().unwrap_or_default()
    }
}

impl Drop for InstanceChanges {
    fn drop(&mut self) {
        if self.undo.is_empty() {
            self.leave();
            return;
        }
        let server = self.settings.server().to_string();
        for (what, why) in self.restore_blocking() {
            crate::util::console::say(&format!(
                "dbbench › mssql: {what} failed again on a fresh connection ({why}); it stays \
                 owed in the server's record{}, and the next dbbench run holding the server lock \
                 on {server} runs it",
                match &self.owed_in {
                    Some(dir) => format!(" and in {}", super::owed::path(dir).display()),
                    None => String::new(),
                }
            ));
        }
        self.leave();
    }
}

#[cfg(test)]
mod tests;
