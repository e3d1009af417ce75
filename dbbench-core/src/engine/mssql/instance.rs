//! Instance-level changes a cell needs (trace flags, tempdb files) and their undo.
//!
//! Each change is recorded with the statements that undo it *before* it is applied. The undo runs
//! when the repetition's database is dropped; if that never happens because of an error or a panic,
//! [`InstanceChanges`]'s `Drop` runs it on a fresh connection from a helper thread, so a failed
//! benchmark does not leave a server with IFI switched off or extra tempdb files.

use super::connect::ConnectSettings;
use super::tsql::{filegrowth, ident, kb, literal, whole_mb_from_pages};
use crate::model::config::{Growth, StorageSpec};
use crate::model::error::{Error, Result};

/// The environment variable that allows changes to the whole instance (tempdb files).
pub const ALLOW_ENV: &str = "DBBENCH_MSSQL_ALLOW_INSTANCE_CHANGES";

/// Whether `DBBENCH_MSSQL_ALLOW_INSTANCE_CHANGES=1` is set.
pub fn allowed_by_env() -> bool {
    std::env::var(ALLOW_ENV).is_ok_and(|v| v.trim() == "1")
}

/// Changes applied to the instance for one repetition, with their undo statements.
pub struct InstanceChanges {
    settings: ConnectSettings,
    /// Undo batches, applied in reverse order of the changes.
    undo: Vec<String>,
    /// Descriptions of the applied changes, for the results.
    applied: Vec<String>,
    /// The work directory where undo that must wait for a restart is recorded.
    owed_in: Option<std::path::PathBuf>,
    /// Why each statement still in `undo` failed at the last `restore` (same order).
    failed: Vec<String>,
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
        }
    }

    /// Records undo that can only finish after a restart under `work_dir` instead of failing.
    pub fn owed_in(mut self, work_dir: &std::path::Path) -> Self {
        self.owed_in = Some(work_dir.to_path_buf());
        self
    }

    /// Applies one change through `conn`. Its undo is recorded first, so a panic while the
    /// statement runs still undoes it; a statement the server rejects changed nothing, so its
    /// undo is dropped again and the error returned.
    pub async fn apply(
        &mut self,
        conn: &mut super::MssqlConnection,
        change: &Change,
    ) -> Result<()> {
        let mark = self.undo.len();
        // Undo batches run last-first, so this change's own batches are pushed reversed.
        self.undo.extend(change.undo.iter().rev().cloned());
        if let Err(e) = conn.batch(&change.apply).await {
            self.undo.truncate(mark);
            return Err(e);
        }
        self.applied.push(change.what.clone());
        Ok(())
    }

    /// What was changed, in order.
    pub fn applied(&self) -> &[String] {
        &self.applied
    }

    /// Undoes every change through `conn`; every undo batch is tried, the errors are joined. An
    /// undo that fails is kept (it is still owed): a later `restore`, and at the latest the drop
    /// of these changes, runs it again on a fresh connection, and what still fails then is
    /// recorded as owed for the next start against this server ([`super::owed`]).
    pub async fn restore(&mut self, conn: &mut super::MssqlConnection) -> Result<()> {
        let mut errors = Vec::new();
        let mut kept = Vec::new();
        while let Some(statement) = self.undo.pop() {
            let Err(e) = conn.batch(&statement).await else {
                continue;
            };
            let server = self.settings.server().to_string();
            let owed = match &self.owed_in {
                Some(dir) if super::owed::can_wait_for_restart(&statement, &e) => {
                    super::owed::record(dir, &server, &statement, &e.to_string())
                        .map(|()| dir)
                        .map_err(|_| ())
                }
                _ => Err(()),
            };
            match owed {
                Ok(dir) => crate::util::console::say(&format!(
                    "dbbench › mssql: `{}` failed ({e}); an added tempdb file is only empty after \
                     a restart of SQL Server, so the undo is recorded as owed in {} and dbbench \
                     finishes it at its next start against {server}",
                    super::connection::headline(&statement),
                    super::owed::path(dir).display()
                )),
                Err(()) => {
                    errors.push(format!(
                        "`{}`: {e}",
                        super::connection::headline(&statement)
                    ));
                    kept.push((statement, e.to_string()));
                }
            }
        }
        // Popped last-first; put back so the next attempt runs them in the same order.
        kept.reverse();
        self.failed = kept.iter().map(|(_, why)| why.clone()).collect();
        self.undo = kept.into_iter().map(|(statement, _)| statement).collect();
        self.applied.clear();
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
        let settings = self.settings.clone();
        let owed_in = self.owed_in.clone();
        let worker = std::thread::spawn(move || -> Vec<(String, String)> {
            let runtime = match tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
            {
                Ok(runtime) => runtime,
                Err(e) => {
                    let why = format!("cannot start a runtime to undo changes: {e}");
                    return undo.into_iter().map(|u| (u, why.clone())).collect();
                }
            };
            runtime.block_on(async move {
                let mut conn = match settings.connect(Some("master")).await {
                    Ok(conn) => conn,
                    Err(e) => return undo.into_iter().map(|u| (u, e.to_string())).collect(),
                };
                let mut changes = InstanceChanges {
                    settings,
                    undo,
                    applied: Vec::new(),
                    owed_in,
                    failed: Vec::new(),
                };
                let _ = changes.restore(&mut conn).await;
                // Taken out, so dropping `changes` does not start this safety net again.
                let failed = std::mem::take(&mut changes.failed);
                std::mem::take(&mut changes.undo)
                    .into_iter()
                    .zip(failed)
                    .collect()
            })
        });
        worker.join().unwrap_or_default()
    }
}

impl Drop for InstanceChanges {
    fn drop(&mut self) {
        if self.undo.is_empty() {
            return;
        }
        let server = self.settings.server().to_string();
        for (statement, why) in self.restore_blocking() {
            let headline = super::connection::headline(&statement);
            let recorded = self
                .owed_in
                .as_ref()
                .map(|dir| super::owed::record(dir, &server, &statement, &why).map(|()| dir));
            crate::util::console::say(&match recorded {
                Some(Ok(dir)) => format!(
                    "dbbench › mssql: `{headline}` failed again on a fresh connection ({why}); it \
                     is recorded as owed in {} and dbbench runs it at its next start against \
                     {server}",
                    super::owed::path(dir).display()
                ),
                _ => format!(
                    "dbbench › mssql: could not undo an instance change; run it by hand on \
                     {server}: `{statement}` ({why})"
                ),
            });
        }
    }
}

/// One tempdb data file as `sys.master_files` describes it (its configured, startup size).
#[derive(Debug, Clone, PartialEq)]
pub struct TempdbFile {
    /// Logical name.
    pub name: String,
    /// Path on the server.
    pub physical: String,
    /// Size in 8 KiB pages.
    pub size_pages: u64,
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

/// The `SELECT` of tempdb's data files with their configured sizes. `sys.master_files` holds the
/// size tempdb is recreated with at startup; `tempdb.sys.database_files` holds the current,
/// possibly autogrown size, and shrinking back to that would change the startup size (DBCC
/// SHRINKFILE sets it).
pub const TEMPDB_FILES_SQL: &str = "SELECT CAST(name AS nvarchar(128)) AS name, \
     CAST(physical_name AS nvarchar(260)) AS physical_name, CAST(size AS bigint) AS size_pages, \
     CAST(growth AS bigint) AS growth, CAST(is_percent_growth AS int) AS is_percent_growth \
     FROM sys.master_files WHERE database_id = 2 AND type = 0 ORDER BY file_id;";

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

/// Plans tempdb for `spec` from its current data files. Files are added up to `tempdb_files`
/// (named `dbbench_temp_N`, beside the first file); sizes are only raised and growth set on every
/// data file. Existing files are never removed: asking for fewer files than tempdb has is an error.
pub fn tempdb_plan(
    spec: &StorageSpec,
    current: &[TempdbFile],
    platform: super::provision::Platform,
) -> Result<Vec<Change>> {
    let first = current
        .first()
        .ok_or_else(|| Error::msg("tempdb reports no data files"))?;
    let wanted = spec.tempdb_files.unwrap_or(current.len() as u32) as usize;
    if wanted < current.len() {
        return Err(Error::Config(format!(
            "tempdb_files = {wanted}, but tempdb already has {} data files; dbbench only adds \
             files (removing the server's own tempdb files needs a restart)",
            current.len()
        )));
    }
    let size = spec.tempdb_size.map(|s| s.bytes);
    let growth: Option<Growth> = spec.tempdb_growth;
    let mut plan = Vec::new();
    for file in current {
        let mut parts = Vec::new();
        let mut undo = Vec::new();
        if let Some(size) = size.filter(|s| *s > file.size_pages * crate::model::units::PAGE) {
            parts.push(format!("SIZE = {}", kb(size)));
            // tempdb cannot MODIFY FILE to a smaller size; SHRINKFILE takes it back down.
            undo.push(format!(
                "USE tempdb; DBCC SHRINKFILE ({}, {}); USE master;",
                literal(&file.name),
                whole_mb_from_pages(file.size_pages)
            ));
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
                kb(size.unwrap_or(first.size_pages * crate::model::units::PAGE)),
                growth.map_or_else(|| first.growth_sql(), |g| filegrowth(&g))
            ),
            undo: vec![format!(
                "USE tempdb; DBCC SHRINKFILE ({}, EMPTYFILE); USE master; ALTER DATABASE tempdb REMOVE FILE {};",
                literal(&name),
                ident(&name)
            )],
        });
    }
    Ok(plan)
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
        insta::assert_snapshot!(render(&plan));
    }

    #[test]
    fn never_removes_existing_tempdb_files() {
        let spec = StorageSpec {
            tempdb_files: Some(1),
            ..StorageSpec::DEFAULT
        };
        let mut two = current();
        two.push(TempdbFile {
            name: "temp2".into(),
            ..current()[0].clone()
        });
        let err = tempdb_plan(&spec, &two, Platform::Linux)
            .unwrap_err()
            .to_string();
        assert!(err.contains("already has 2"), "{err}");
    }

    #[test]
    fn unchanged_tempdb_needs_no_statement() {
        let spec = StorageSpec {
            tempdb_files: Some(1),
            ..StorageSpec::DEFAULT
        };
        let plan = tempdb_plan(&spec, &current(), Platform::Linux).unwrap();
        assert!(plan.is_empty());
    }
}
