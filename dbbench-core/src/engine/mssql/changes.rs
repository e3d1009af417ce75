//! Applying and undoing one repetition's instance changes ([`InstanceChanges`]): the server lock
//! taken before the first change ([`super::applock`]), every undo written to the ledger before
//! its change ([`super::owed`]) and removed once verified ([`super::undo_check`]), and the undo
//! run again from `Drop` on a fresh connection when the repetition never got to it.

use super::applock::ServerLock;
use super::connect::ConnectSettings;
use super::instance::Change;
use crate::model::error::{Error, Result};
use std::sync::{Arc, Mutex};

/// One undo statement in memory, with its ledger entry.
#[derive(Debug, Clone)]
struct Undo {
    statement: String,
    /// The ledger entry, when a ledger is kept.
    id: Option<u64>,
}

/// The server lock shared by the change lists of one repetition (its instance changes and the
/// zero-fill logging probe): taken by the first that has undo outstanding, given back when the
/// last has none.
#[derive(Default)]
struct Shared {
    lock: Option<ServerLock>,
    users: usize,
}

/// Changes applied to the instance for one repetition, with their undo statements.
pub struct InstanceChanges {
    settings: ConnectSettings,
    /// Undo batches, applied in reverse order of the changes.
    undo: Vec<Undo>,
    /// Descriptions of the applied changes, for the results.
    applied: Vec<String>,
    /// The directory of the ledger that records every undo before its change.
    owed_in: Option<std::path::PathBuf>,
    /// Why each statement still in `undo` failed at the last `restore` (same order).
    failed: Vec<String>,
    shared: Arc<Mutex<Shared>>,
    /// Whether this list counts among the lock's users.
    entered: bool,
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
        }
    }

    fn shared(&self) -> std::sync::MutexGuard<'_, Shared> {
        self.shared.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Counts this list among the lock's users, taking the lock if nobody holds it yet.
    async fn enter(&mut self) -> Result<()> {
        if self.entered {
            return Ok(());
        }
        let need = {
            let mut shared = self.shared();
            shared.users += 1;
            shared.lock.is_none()
        };
        self.entered = true;
        if need {
            match ServerLock::acquire(&self.settings, super::applock::PATIENCE).await {
                Ok(lock) => self.shared().lock = Some(lock),
                Err(e) => {
                    self.leave();
                    return Err(e);
                }
            }
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

    /// Applies one change through `conn`. The server lock is taken first, and the undo is
    /// written to the ledger before the statement is sent, so a kill while it runs still leaves
    /// the undo on record; a statement the server rejects changed nothing, so its undo is
    /// dropped again and the error returned.
    pub async fn apply(
        &mut self,
        conn: &mut super::MssqlConnection,
        change: &Change,
    ) -> Result<()> {
        self.enter().await?;
        let server = self.settings.server().to_string();
        let ids: Vec<Option<u64>> = match &self.owed_in {
            Some(dir) => super::owed::pending(dir, &server, &change.undo)?
                .into_iter()
                .map(Some)
                .collect(),
            None => vec![None; change.undo.len()],
        };
        let mark = self.undo.len();
        // Undo batches run last-first, so this change's own batches are pushed reversed.
        for (statement, id) in change.undo.iter().zip(ids).rev() {
            self.undo.push(Undo {
                statement: statement.clone(),
                id,
            });
        }
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
                self.forget(&undo);
            }
            if self.undo.is_empty() {
                self.leave();
            }
            return Err(e);
        }
        self.applied.push(change.what.clone());
        Ok(())
    }

    /// Removes `undo`'s ledger entry.
    fn forget(&self, undo: &Undo) {
        if let (Some(dir), Some(id)) = (&self.owed_in, undo.id) {
            if let Err(e) = super::owed::clear(dir, self.settings.server(), id) {
                crate::util::console::say(&format!("dbbench › mssql: {e}"));
            }
        }
    }

    /// What was changed, in order.
    pub fn applied(&self) -> &[String] {
        &self.applied
    }

    /// Undoes every change through `conn`, each undo verified on the server before its ledger
    /// entry is removed; every undo batch is tried, the errors are joined. An undo that fails is
    /// kept (it is still owed): a later `restore`, and at the latest the drop of these changes,
    /// runs it again on a fresh connection, and what still fails then stays in the ledger for
    /// the next start against this server ([`super::owed`]).
    pub async fn restore(&mut self, conn: &mut super::MssqlConnection) -> Result<()> {
        let mut errors = Vec::new();
        let mut kept = Vec::new();
        let server = self.settings.server().to_string();
        while let Some(undo) = self.undo.pop() {
            let outcome = match conn.batch(&undo.statement).await {
                Ok(()) => super::undo_check::verify(conn, &undo.statement)
                    .await
                    .map_err(|why| (why, false)),
                Err(e) => Err((
                    e.to_string(),
                    super::owed::can_wait_for_restart(&undo.statement, &e),
                )),
            };
            let headline = super::connection::headline(&undo.statement);
            match (outcome, &self.owed_in, undo.id) {
                (Ok(()), ..) => self.forget(&undo),
                (Err((why, true)), Some(dir), Some(id)) => {
                    let _ = super::owed::failed(dir, &server, id, &why);
                    crate::util::console::say(&format!(
                        "dbbench › mssql: `{headline}` failed ({why}); an added tempdb file is \
                         only empty after a restart of SQL Server, so the undo stays owed in {} \
                         and dbbench finishes it at its next start against {server}",
                        super::owed::path(dir).display()
                    ));
                }
                (Err((why, _)), ..) => {
                    if let (Some(dir), Some(id)) = (&self.owed_in, undo.id) {
                        let _ = super::owed::failed(dir, &server, id, &why);
                    }
                    errors.push(format!("`{headline}`: {why}"));
                    kept.push((undo, why));
                }
            }
        }
        // Popped last-first; put back so the next attempt runs them in the same order.
        kept.reverse();
        self.failed = kept.iter().map(|(_, why)| why.clone()).collect();
        self.undo = kept.into_iter().map(|(undo, _)| undo).collect();
        self.applied.clear();
        if self.undo.is_empty() {
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

    /// Undoes every change on a fresh connection, blocking: the safety net for `Drop`. Returns
    /// the undo still failing, with why.
    fn restore_blocking(&mut self) -> Vec<(String, String)> {
        let undo = std::mem::take(&mut self.undo);
        let mut changes = self.sibling();
        changes.undo = undo;
        changes.entered = std::mem::take(&mut self.entered);
        let worker = std::thread::spawn(move || -> Vec<(String, String)> {
            let fail_all = |changes: &mut InstanceChanges, why: String| {
                std::mem::take(&mut changes.undo)
                    .into_iter()
                    .map(|u| (u.statement, why.clone()))
                    .collect()
            };
            let runtime = match tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
            {
                Ok(runtime) => runtime,
                Err(e) => {
                    return fail_all(
                        &mut changes,
                        format!("cannot start a runtime to undo changes: {e}"),
                    )
                }
            };
            runtime.block_on(async move {
                let mut conn = match changes.settings.connect(Some("master")).await {
                    Ok(conn) => conn,
                    Err(e) => return fail_all(&mut changes, e.to_string()),
                };
                let _ = changes.restore(&mut conn).await;
                // Taken out, so dropping `changes` does not start this safety net again; their
                // ledger entries stay.
                let failed = std::mem::take(&mut changes.failed);
                let left: Vec<(String, String)> = std::mem::take(&mut changes.undo)
                    .into_iter()
                    .map(|u| u.statement)
                    .zip(failed)
                    .collect();
                changes.leave();
                left
            })
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
        for (statement, why) in self.restore_blocking() {
            let headline = super::connection::headline(&statement);
            crate::util::console::say(&match &self.owed_in {
                Some(dir) => format!(
                    "dbbench › mssql: `{headline}` failed again on a fresh connection ({why}); it \
                     stays owed in {} and dbbench runs it at its next start against {server} \
                     once this process has ended",
                    super::owed::path(dir).display()
                ),
                None => format!(
                    "dbbench › mssql: could not undo an instance change; run it by hand on \
                     {server}: `{statement}` ({why})"
                ),
            });
        }
        self.leave();
    }
}
