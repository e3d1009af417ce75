//! Instance-level changes a cell needs (trace flags, tempdb files) and their undo: the tempdb
//! plan here, the applying and undoing in [`super::changes`].
//!
//! Each change's undo is written to the user's ledger ([`super::owed`]) *before* the
//! change is applied, and the server-wide lock ([`super::applock`]) is held from the first
//! change until the last undo is verified ([`super::undo_check`]), so no other dbbench process
//! changes the instance meanwhile. The undo runs when the repetition's database is dropped; if
//! that never happens because of an error or a panic, [`InstanceChanges`]'s `Drop` runs it on a
//! fresh connection from a helper thread; if the process dies, the ledger still names it, and the
//! next start (or the stale sweep) against the server runs it.

use super::tsql::{filegrowth, kb, literal, whole_mb_from_pages};
use super::undo::{Undo, ADDED_FILE_PREFIX};
use crate::model::config::{Growth, StorageSpec};
use crate::model::error::{Error, Result};

pub use super::changes::InstanceChanges;

/// The environment variable that allows changes to the whole instance (trace flags, cold
/// cache, tempdb files).
pub const ALLOW_ENV: &str = "DBBENCH_MSSQL_ALLOW_INSTANCE_CHANGES";

/// Whether `DBBENCH_MSSQL_ALLOW_INSTANCE_CHANGES=1` is set.
pub fn allowed_by_env() -> bool {
    std::env::var(ALLOW_ENV).is_ok_and(|v| v.trim() == "1")
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
    pub(crate) fn growth_sql(&self) -> String {
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
    /// Files an earlier repetition added whose removal waits for a restart, among `files`.
    pub leftovers: usize,
    /// The size of each added file, in bytes (0 when none is added).
    pub added_file_bytes: u64,
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
            (
                "tempdb_dbbench_leftover_files".into(),
                self.leftovers as i64,
            ),
            (
                "tempdb_added_file_bytes".into(),
                self.added_file_bytes as i64,
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

/// One instance-level change: a statement and the undo that takes it back.
#[derive(Debug, Clone, PartialEq)]
pub struct Change {
    /// What the change does, for the results.
    pub what: String,
    /// The statement that makes the change.
    pub apply: String,
    /// Its undo, in order, as data ([`Undo`]).
    pub undo: Vec<Undo>,
}

/// The major version the reviewable texts render undo for: SQL Server 2022, the version the
/// scripted server models (earlier versions leave out the shrinks' `WAIT_AT_LOW_PRIORITY`).
pub const RENDERED_MAJOR: u32 = 16;

/// `changes` as reviewable text: each statement followed by its undo.
pub fn render(changes: &[Change]) -> String {
    let mut out = String::new();
    for change in changes {
        out.push_str(&format!("-- {}\n", change.what));
        for undo in &change.undo {
            // Before the change: its undo as data, on the server and in the user's ledger.
            out.push_str(&format!(
                "{}\n",
                super::record::add_sql(
                    "dbbench_owed:<when>:<pid>:<n>",
                    &super::record::Entry {
                        undo: undo.clone(),
                        by: "<host> pid <pid>".into(),
                    }
                )
            ));
        }
        out.push_str(&format!("{}\n", change.apply));
        for undo in &change.undo {
            out.push_str(&format!("--   undo: {}\n", undo.sql(RENDERED_MAJOR)));
        }
    }
    out
}

/// Plans tempdb for `spec` from its current data files. `tempdb_files = N` means *at least* N
/// data files: files are added up to N (named `dbbench_temp_<n>` with the first `n` not in use,
/// beside the first file, at the declared `tempdb_size` or the first file's startup size), and a
/// tempdb that already has more (SQL Server setup creates one per core, up to 8, since 2016)
/// runs with all of them, the real count recorded: removing the server's own files needs a
/// restart. Sizes are only raised, above the *current* size (a file already larger is left as it
/// is and said); growth is set on every data file.
pub fn tempdb_plan(
    spec: &StorageSpec,
    current: &[TempdbFile],
    platform: super::provision::Platform,
) -> Result<TempdbPlan> {
    tempdb_plan_for(spec, current, platform, std::process::id())
}

/// [`tempdb_plan`] for the process `pid`, whose id goes into the added files' physical names, so
/// that two processes' files never share a path (finding A6).
pub fn tempdb_plan_for(
    spec: &StorageSpec,
    current: &[TempdbFile],
    platform: super::provision::Platform,
    pid: u32,
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
    // SIZE and FILEGROWTH are sent as two statements, each with its own undo: "Only one
    // <filespec> property can be changed at a time" (ALTER DATABASE File and Filegroup Options,
    // finding N11).
    for file in current {
        match size {
            Some(size) if size > file.current_pages * page => plan.push(Change {
                what: format!("tempdb file {}: SIZE = {}", file.name, kb(size)),
                apply: format!(
                    "ALTER DATABASE tempdb MODIFY FILE (NAME = {}, SIZE = {});",
                    literal(&file.name),
                    kb(size)
                ),
                // tempdb cannot MODIFY FILE to a smaller size; SHRINKFILE takes it back down to
                // the startup size (which it sets as well).
                undo: vec![Undo::ShrinkTempdbFile {
                    file: file.name.clone(),
                    mb: whole_mb_from_pages(file.size_pages),
                }],
            }),
            Some(size) if size < file.current_pages * page => {
                larger.push(format!("{} ({})", file.name, kb(file.current_pages * page)))
            }
            _ => {}
        }
        if let Some(growth) = growth {
            plan.push(Change {
                what: format!(
                    "tempdb file {}: FILEGROWTH = {}",
                    file.name,
                    filegrowth(&growth)
                ),
                apply: format!(
                    "ALTER DATABASE tempdb MODIFY FILE (NAME = {}, FILEGROWTH = {});",
                    literal(&file.name),
                    filegrowth(&growth)
                ),
                undo: vec![Undo::TempdbGrowth {
                    file: file.name.clone(),
                    growth: file.growth,
                    percent: file.is_percent,
                }],
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
    // An added file starts at the declared size, or without one at the first file's startup
    // size: never at what the largest file has autogrown to, which on a long-running server can
    // be tens of GB per file on tempdb's volume (finding N6). Unequal files are said, not
    // "fixed" by growing the new ones.
    let added_size = size.unwrap_or(first.size_pages * page);
    if wanted > current.len() {
        let (lo, hi) = current.iter().fold((u64::MAX, 0), |(lo, hi), f| {
            (lo.min(f.current_pages), hi.max(f.current_pages))
        });
        if lo * page != added_size || hi * page != added_size {
            notes.push(format!(
                "tempdb's data files are {} to {} now; the added files start at {} ({}), so \
                 the files are unequal and proportional fill favours the larger ones",
                kb(lo * page),
                kb(hi * page),
                kb(added_size),
                if size.is_some() {
                    "the declared tempdb_size"
                } else {
                    "the first file's startup size"
                }
            ));
        }
    }
    // Names not in use: a file an earlier repetition added stays until a restart when its
    // removal failed (Msg 2555/5042), and adding its name again fails with Msg 1828 (finding N5).
    let taken: std::collections::BTreeSet<&str> = current.iter().map(|f| f.name.as_str()).collect();
    let mut names = (1..)
        .map(|n| format!("{ADDED_FILE_PREFIX}{n}"))
        .filter(|name| !taken.contains(name.as_str()));
    let leftovers = current
        .iter()
        .filter(|f| f.name.starts_with(ADDED_FILE_PREFIX))
        .count();
    for _ in current.len()..wanted {
        let name = names.next().expect("an endless supply of names");
        let path = super::provision::join(&dir, &format!("{name}_{pid}.ndf"), platform);
        plan.push(Change {
            what: format!("tempdb file {name} added"),
            apply: format!(
                "ALTER DATABASE tempdb ADD FILE (NAME = {}, FILENAME = {}, SIZE = {}, FILEGROWTH = {});",
                literal(&name),
                literal(&path),
                kb(added_size),
                growth.map_or_else(|| first.growth_sql(), |g| filegrowth(&g))
            ),
            undo: vec![Undo::RemoveTempdbFile { file: name }],
        });
    }
    Ok(TempdbPlan {
        changes: plan,
        files: wanted,
        larger_than_declared: larger.len(),
        leftovers,
        added_file_bytes: if wanted > current.len() {
            added_size
        } else {
            0
        },
        notes,
    })
}

#[cfg(test)]
mod tests;
