//! Instance-level changes a cell needs (trace flags, tempdb files) and their undo.
//!
//! Each change's undo is written to the work directory's ledger ([`super::owed`]) *before* the
//! change is applied, and the server-wide lock ([`super::applock`]) is held from the first
//! change until the last undo is verified ([`super::undo_check`]), so no other dbbench process
//! changes the instance meanwhile. The undo runs when the repetition's database is dropped; if
//! that never happens because of an error or a panic, [`InstanceChanges`]'s `Drop` runs it on a
//! fresh connection from a helper thread; if the process dies, the ledger still names it, and the
//! next start (or the stale sweep) against the server runs it.

use super::applock::ServerLock;
use super::connect::ConnectSettings;
use super::tsql::{filegrowth, ident, kb, literal, whole_mb_from_pages};
use crate::model::config::{Growth, StorageSpec};
use crate::model::error::{Error, Result};
use std::sync::{Arc, Mutex};

/// The environment variable that allows changes to the whole instance (trace flags, cold
/// cache, tempdb files).
pub const ALLOW_ENV: &str = "DBBENCH_MSSQL_ALLOW_INSTANCE_CHANGES";

/// Whether `DBBENCH_MSSQL_ALLOW_INSTANCE_CHANGES=1` is set.
pub fn allowed_by_env() -> bool {
    std::env::var(ALLOW_ENV).is_ok_and(|v| v.trim() == "1")
}

/// One undo statement in memory, with its ledger entry.
#[derive(Debug, Clone)]
struct Undo {
    statement: String,
    /// The ledger entry, when a work directory keeps one.
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
    /// The work directory whose ledger records every undo before its change.
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

    /// Records every undo in the ledger under `work_dir` before its change is applied.
    pub fn owed_in(mut self, work_dir: &std::path::Path) -> Self {
        self.owed_in = Some(work_dir.to_path_buf());
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

/// One tempdb data file: its configured (startup) size from `sys.master_files` and its current
/// size from `tempdb.sys.database_files`.
#[derive(Debug, Clone, PartialEq)]
pub struct TempdbFile {
    /// Logical name.
    pub name: String,
    /// Path on the server.
    pub physical: String,
    /// Startup size in 8 KiB pages: tempdb is recreated with it at every start.
    pub size_pages: u64,
    /// Current size in 8 KiB pages (autogrowth since the start raises it): `MODIFY FILE` must
    /// name a larger size than this one (error 5039 otherwise).
    pub current_pages: u64,
    /// Growth in pages, or percent when `is_percent` is set.
    pub growth: u64,
    /// Whether `growth` is a percent.
    pub is_percent: bool,
}

impl TempdbFile {
    fn growth_sql(&self) -> String {
        if self.is_percent {
            format!("{}%", self.growth)
        } else {
            kb(self.growth * crate::model::units::PAGE)
        }
    }
}

/// The `SELECT` of tempdb's data files with their startup sizes (`sys.master_files`: what
/// tempdb is recreated with, and what the undo restores; DBCC SHRINKFILE also sets it) and their
/// current sizes (`tempdb.sys.database_files`: what `MODIFY FILE … SIZE` must exceed).
pub const TEMPDB_FILES_SQL: &str = "SELECT CAST(m.name AS nvarchar(128)) AS name, \
     CAST(m.physical_name AS nvarchar(260)) AS physical_name, CAST(m.size AS bigint) AS size_pages, \
     CAST(COALESCE(d.size, m.size) AS bigint) AS current_pages, \
     CAST(m.growth AS bigint) AS growth, CAST(m.is_percent_growth AS int) AS is_percent_growth \
     FROM sys.master_files AS m LEFT JOIN tempdb.sys.database_files AS d ON d.file_id = m.file_id \
     WHERE m.database_id = 2 AND m.type = 0 ORDER BY m.file_id;";

/// tempdb's data files from the rows of [`TEMPDB_FILES_SQL`].
pub fn tempdb_files(rows: &[crate::model::value::Row]) -> Result<Vec<TempdbFile>> {
    rows.iter()
        .map(|r| {
            let size_pages = r.get_named("size_pages")?;
            Ok(TempdbFile {
                name: r.get_named::<String>("name")?.trim().to_string(),
                physical: r.get_named::<String>("physical_name")?.trim().to_string(),
                size_pages,
                current_pages: r
                    .get_named::<Option<u64>>("current_pages")?
                    .unwrap_or(size_pages),
                growth: r.get_named("growth")?,
                is_percent: r.get_named::<i64>("is_percent_growth")? == 1,
            })
        })
        .collect()
}

/// tempdb's plan for one cell: the changes, the data files it will have, and what was left
/// as it is.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TempdbPlan {
    /// The changes, each with its undo.
    pub changes: Vec<Change>,
    /// How many data files tempdb has during the run (recorded as `counts.tempdb_data_files`).
    pub files: usize,
    /// Files already larger than the declared `tempdb_size`, left as they are.
    pub larger_than_declared: usize,
    /// Sentences for the console about what differs from the declaration.
    pub notes: Vec<String>,
}

impl TempdbPlan {
    /// The counts the results record.
    pub fn counts(&self) -> Vec<(String, i64)> {
        vec![
            ("tempdb_data_files".into(), self.files as i64),
            (
                "tempdb_files_larger_than_declared".into(),
                self.larger_than_declared as i64,
            ),
        ]
    }
}

/// Reads tempdb's files through `conn` and plans `spec`'s changes; the notes are said on the
/// console.
pub async fn read_and_plan_tempdb(
    conn: &mut super::MssqlConnection,
    spec: &StorageSpec,
    platform: super::provision::Platform,
) -> Result<TempdbPlan> {
    let rows = conn.query(TEMPDB_FILES_SQL, &[]).await?;
    let plan = tempdb_plan(spec, &tempdb_files(&rows)?, platform)?;
    for note in &plan.notes {
        crate::util::console::say(&format!("dbbench › mssql: {note}"));
    }
    Ok(plan)
}

/// One instance-level change: a statement and the statements that undo it.
#[derive(Debug, Clone, PartialEq)]
pub struct Change {
    /// What the change does, for the results.
    pub what: String,
    /// The statement that makes the change.
    pub apply: String,
    /// The statements that undo it, in order.
    pub undo: Vec<String>,
}

/// `changes` as reviewable text: each statement followed by its undo.
pub fn render(changes: &[Change]) -> String {
    let mut out = String::new();
    for change in changes {
        out.push_str(&format!("-- {}\n{}\n", change.what, change.apply));
        for undo in &change.undo {
            out.push_str(&format!("--   undo: {undo}\n"));
        }
    }
    out
}

/// Plans tempdb for `spec` from its current data files. `tempdb_files = N` means *at least* N
/// data files: files are added up to N (named `dbbench_temp_N`, beside the first file), and a
/// tempdb that already has more (SQL Server setup creates one per core, up to 8, since 2016)
/// runs with all of them, the real count recorded: removing the server's own files needs a
/// restart. Sizes are only raised, above the *current* size (a file already larger is left as it
/// is and said); growth is set on every data file.
pub fn tempdb_plan(
    spec: &StorageSpec,
    current: &[TempdbFile],
    platform: super::provision::Platform,
) -> Result<TempdbPlan> {
    let page = crate::model::units::PAGE;
    let first = current
        .first()
        .ok_or_else(|| Error::msg("tempdb reports no data files"))?;
    let wanted = (spec.tempdb_files.unwrap_or(0) as usize).max(current.len());
    let mut notes = Vec::new();
    if let Some(declared) = spec.tempdb_files.filter(|n| (*n as usize) < current.len()) {
        notes.push(format!(
            "tempdb already has {} data files, more than tempdb_files = {declared}: the run uses \
             all {} (tempdb_files means at least {declared}; removing the server's own tempdb \
             files needs a restart); the results record counts.tempdb_data_files = {}",
            current.len(),
            current.len(),
            current.len()
        ));
    }
    let size = spec.tempdb_size.map(|s| s.bytes);
    let growth: Option<Growth> = spec.tempdb_growth;
    let mut plan = Vec::new();
    let mut larger = Vec::new();
    for file in current {
        let mut parts = Vec::new();
        let mut undo = Vec::new();
        match size {
            Some(size) if size > file.current_pages * page => {
                parts.push(format!("SIZE = {}", kb(size)));
                // tempdb cannot MODIFY FILE to a smaller size; SHRINKFILE takes it back down to
                // the startup size (which it sets as well).
                undo.push(format!(
                    "USE tempdb; DBCC SHRINKFILE ({}, {}); USE master;",
                    literal(&file.name),
                    whole_mb_from_pages(file.size_pages)
                ));
            }
            Some(size) if size < file.current_pages * page => {
                larger.push(format!("{} ({})", file.name, kb(file.current_pages * page)))
            }
            _ => {}
        }
        if let Some(growth) = growth {
            parts.push(format!("FILEGROWTH = {}", filegrowth(&growth)));
            undo.push(format!(
                "ALTER DATABASE tempdb MODIFY FILE (NAME = {}, FILEGROWTH = {});",
                literal(&file.name),
                file.growth_sql()
            ));
        }
        if !parts.is_empty() {
            plan.push(Change {
                what: format!("tempdb file {}: {}", file.name, parts.join(", ")),
                apply: format!(
                    "ALTER DATABASE tempdb MODIFY FILE (NAME = {}, {});",
                    literal(&file.name),
                    parts.join(", ")
                ),
                undo,
            });
        }
    }
    if let (false, Some(size)) = (larger.is_empty(), size) {
        notes.push(format!(
            "{} tempdb data file(s) already larger than tempdb_size = {}: {}; MODIFY FILE can \
             only grow a file (error 5039), so they are left as they are and the results record \
             counts.tempdb_files_larger_than_declared = {}",
            larger.len(),
            kb(size),
            larger.join(", "),
            larger.len()
        ));
    }
    let dir = match first.physical.rfind(['\\', '/']) {
        Some(pos) => first.physical[..pos].to_string(),
        None => first.physical.clone(),
    };
    for n in current.len() + 1..=wanted {
        let name = format!("dbbench_temp_{n}");
        let path = super::provision::join(&dir, &format!("{name}.ndf"), platform);
        plan.push(Change {
            what: format!("tempdb file {name} added"),
            apply: format!(
                "ALTER DATABASE tempdb ADD FILE (NAME = {}, FILENAME = {}, SIZE = {}, FILEGROWTH = {});",
                literal(&name),
                literal(&path),
                kb(size.unwrap_or(first.size_pages * page)),
                growth.map_or_else(|| first.growth_sql(), |g| filegrowth(&g))
            ),
            undo: vec![format!(
                "USE tempdb; DBCC SHRINKFILE ({}, EMPTYFILE); USE master; ALTER DATABASE tempdb REMOVE FILE {};",
                literal(&name),
                ident(&name)
            )],
        });
    }
    Ok(TempdbPlan {
        changes: plan,
        files: wanted,
        larger_than_declared: larger.len(),
        notes,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::mssql::provision::Platform;
    use crate::model::config::Size;

    fn current() -> Vec<TempdbFile> {
        vec![TempdbFile {
            name: "tempdev".into(),
            physical: "C:\\SQLData\\tempdb.mdf".into(),
            size_pages: 1024,
            current_pages: 1024,
            growth: 10,
            is_percent: true,
        }]
    }

    #[test]
    fn tempdb_four_files_of_2048mb() {
        // Test 6 of the VLF article: four tempdb data files of 2048 MB growing by 1024 MB.
        let spec = StorageSpec {
            tempdb_files: Some(4),
            tempdb_size: Some(Size::new(2048 << 20, "2048MB")),
            tempdb_growth: Some(Growth::Fixed(Size::new(1024 << 20, "1024MB"))),
            ..StorageSpec::DEFAULT
        };
        let plan = tempdb_plan(&spec, &current(), Platform::Windows).unwrap();
        insta::assert_snapshot!(render(&plan.changes));
    }

    #[test]
    fn more_tempdb_files_than_declared_run_as_they_are() {
        // SQL Server 2016+ setup: one tempdb data file per core up to 8, so Test 6's
        // tempdb_files = 4 meets 8 files on most machines.
        let spec = StorageSpec {
            tempdb_files: Some(4),
            ..StorageSpec::DEFAULT
        };
        let eight: Vec<TempdbFile> = (1..=8)
            .map(|i| TempdbFile {
                name: format!("temp{i}"),
                ..current()[0].clone()
            })
            .collect();
        let plan = tempdb_plan(&spec, &eight, Platform::Linux).unwrap();
        assert!(plan.changes.is_empty(), "{:?}", plan.changes);
        assert_eq!(plan.files, 8);
        assert!(plan.notes[0].contains("already has 8"), "{:?}", plan.notes);
    }

    #[test]
    fn sizes_compare_with_the_current_size() {
        // Autogrown since the start: 1024 pages (8 MB) at startup, 4096 (32 MB) now.
        let grown = vec![TempdbFile {
            current_pages: 4096,
            ..current()[0].clone()
        }];
        let at = |mb: u64| StorageSpec {
            tempdb_size: Some(Size::new(mb << 20, "declared")),
            ..StorageSpec::DEFAULT
        };
        let plan = tempdb_plan(&at(16), &grown, Platform::Linux).unwrap();
        assert!(plan.changes.is_empty(), "{:?}", plan.changes);
        assert_eq!(plan.larger_than_declared, 1);
        assert!(
            plan.notes[0]
                .contains("tempdev (32768KB); MODIFY FILE can only grow a file (error 5039)"),
            "{:?}",
            plan.notes
        );
        let plan = tempdb_plan(&at(64), &grown, Platform::Linux).unwrap();
        assert_eq!(
            plan.changes[0].apply,
            "ALTER DATABASE tempdb MODIFY FILE (NAME = N'tempdev', SIZE = 65536KB);"
        );
        // The undo restores the startup size, not the autogrown one.
        assert_eq!(
            plan.changes[0].undo,
            vec!["USE tempdb; DBCC SHRINKFILE (N'tempdev', 8); USE master;"]
        );
    }

    #[test]
    fn unchanged_tempdb_needs_no_statement() {
        let spec = StorageSpec {
            tempdb_files: Some(1),
            ..StorageSpec::DEFAULT
        };
        let plan = tempdb_plan(&spec, &current(), Platform::Linux).unwrap();
        assert!(plan.changes.is_empty());
        assert_eq!(plan.files, 1);
    }
}
