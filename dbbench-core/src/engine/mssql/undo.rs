//! One owed undo of an instance change, as data ([`Undo`]): what the ledger on the client
//! ([`super::owed`]) and the record on the server ([`super::record`]) store, rendered to T-SQL
//! by dbbench itself ([`Undo::sql`]) only when it runs, and read back by
//! [`super::undo_check`].
//!
//! Why (security finding 7): a ledger of statements is code, and whoever can write the file (or
//! the server's record) would have the next run execute anything on a sysadmin login. A
//! structured entry can name only the four undo kinds dbbench makes, and [`Undo::check`] admits
//! only the trace flags and tempdb files dbbench itself changes; anything else is never run.

use super::tsql::{ident, kb, literal};
use serde::{Deserialize, Serialize};

/// The trace flags dbbench turns on, and so the only ones an undo may turn off: 1805/1806 (IFI
/// off, [`super::ifi::TF_NO_IFI`]) and 3004/3605 (zero-fill logging, [`super::ifi::TF_LOG_ZEROING`]).
const FLAGS: [u32; 4] = [1805, 1806, 3004, 3605];

/// The prefix of the tempdb files dbbench adds, and so of the only ones an undo may remove.
pub const ADDED_FILE_PREFIX: &str = "dbbench_temp_";

/// One undo of an instance change.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Undo {
    /// `DBCC TRACEOFF(<flags>, -1)`.
    TraceOff {
        /// The flags turned on.
        flags: Vec<u32>,
    },
    /// `DBCC SHRINKFILE (<file>, <mb>)` in tempdb: a raised size taken back to its startup size.
    ShrinkTempdbFile {
        /// Logical name.
        file: String,
        /// The startup size to restore, in MB.
        mb: u64,
    },
    /// `MODIFY FILE (NAME = <file>, FILEGROWTH = …)` on tempdb: a growth set back.
    TempdbGrowth {
        /// Logical name.
        file: String,
        /// The growth to restore: pages, or percent when `percent` is set.
        growth: u64,
        /// Whether `growth` is a percent.
        percent: bool,
    },
    /// `DBCC SHRINKFILE (<file>, EMPTYFILE)` then `REMOVE FILE`: an added tempdb file removed.
    RemoveTempdbFile {
        /// Logical name (`dbbench_temp_…`).
        file: String,
    },
}

impl Undo {
    /// `Err` says why an entry read from a ledger or the server's record is not one dbbench
    /// could have written: a flag it never sets, a file it never adds, a name no file has.
    pub fn check(&self) -> Result<(), String> {
        let name_ok = |file: &str| {
            !file.is_empty() && file.chars().count() <= 128 && !file.chars().any(char::is_control)
        };
        match self {
            Undo::TraceOff { flags } => match flags.iter().find(|f| !FLAGS.contains(f)) {
                _ if flags.is_empty() => Err("turns off no trace flag".into()),
                Some(f) => Err(format!(
                    "turns off trace flag {f}, which dbbench never sets"
                )),
                None => Ok(()),
            },
            Undo::ShrinkTempdbFile { file, mb } if name_ok(file) && *mb > 0 => Ok(()),
            Undo::TempdbGrowth { file, .. } if name_ok(file) => Ok(()),
            Undo::RemoveTempdbFile { file }
                if name_ok(file) && file.starts_with(ADDED_FILE_PREFIX) =>
            {
                Ok(())
            }
            Undo::RemoveTempdbFile { file } => Err(format!(
                "removes tempdb file {file:?}, which dbbench did not add (its files are named \
                 {ADDED_FILE_PREFIX}…)"
            )),
            other => Err(format!("names no valid tempdb file: {other:?}")),
        }
    }

    /// Whether it shrinks a tempdb file (and so may wait for snapshot transactions and block
    /// other sessions' tempdb work: see [`Undo::sql`]).
    pub fn shrinks(&self) -> bool {
        matches!(
            self,
            Undo::ShrinkTempdbFile { .. } | Undo::RemoveTempdbFile { .. }
        )
    }

    /// The T-SQL for a server of major version `major`. From SQL Server 2022 (16) a shrink waits
    /// at low priority and gives up itself rather than queue other sessions' schema locks behind
    /// its own (DBCC SHRINKFILE, "WAIT_AT_LOW_PRIORITY with shrink operations",
    /// https://learn.microsoft.com/sql/t-sql/database-console-commands/dbcc-shrinkfile-transact-sql).
    pub fn sql(&self, major: u32) -> String {
        let low = if major >= 16 {
            " WITH WAIT_AT_LOW_PRIORITY (ABORT_AFTER_WAIT = SELF)"
        } else {
            ""
        };
        match self {
            Undo::TraceOff { flags } => format!(
                "DBCC TRACEOFF({}, -1) WITH NO_INFOMSGS;",
                flags
                    .iter()
                    .map(u32::to_string)
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            Undo::ShrinkTempdbFile { file, mb } => format!(
                "USE tempdb; DBCC SHRINKFILE ({}, {mb}){low}; USE master;",
                literal(file)
            ),
            Undo::TempdbGrowth { file, .. } => format!(
                "ALTER DATABASE tempdb MODIFY FILE (NAME = {}, FILEGROWTH = {});",
                literal(file),
                self.growth_sql().unwrap_or_default()
            ),
            Undo::RemoveTempdbFile { file } => format!(
                "USE tempdb; DBCC SHRINKFILE ({}, EMPTYFILE){low}; USE master; ALTER DATABASE \
                 tempdb REMOVE FILE {};",
                literal(file),
                ident(file)
            ),
        }
    }

    /// The growth a [`Undo::TempdbGrowth`] restores, as `FILEGROWTH` writes it (`65536KB`, `10%`).
    pub fn growth_sql(&self) -> Option<String> {
        match self {
            Undo::TempdbGrowth {
                growth,
                percent: true,
                ..
            } => Some(format!("{growth}%")),
            Undo::TempdbGrowth { growth, .. } => Some(kb(growth * crate::model::units::PAGE)),
            _ => None,
        }
    }

    /// A short description for console lines.
    pub fn what(&self) -> String {
        match self {
            Undo::TraceOff { flags } => format!(
                "trace flag {} off",
                flags
                    .iter()
                    .map(u32::to_string)
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            Undo::ShrinkTempdbFile { file, mb } => format!("tempdb file {file} back to {mb} MB"),
            Undo::TempdbGrowth { file, .. } => format!(
                "tempdb file {file} growth back to {}",
                self.growth_sql().unwrap_or_default()
            ),
            Undo::RemoveTempdbFile { file } => format!("tempdb file {file} removed"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Security finding 7: an entry that names a flag or a file dbbench never changes is refused
    /// (never rendered to SQL and run), whatever wrote it.
    #[test]
    fn only_what_dbbench_changes_passes_the_check() {
        assert!(Undo::TraceOff {
            flags: vec![1805, 1806]
        }
        .check()
        .is_ok());
        assert!(Undo::TraceOff { flags: vec![1222] }.check().is_err());
        assert!(Undo::TraceOff { flags: vec![] }.check().is_err());
        assert!(Undo::RemoveTempdbFile {
            file: "dbbench_temp_3".into()
        }
        .check()
        .is_ok());
        assert!(Undo::RemoveTempdbFile {
            file: "templog".into()
        }
        .check()
        .is_err());
        let hostile: Result<Undo, _> = serde_json::from_str(
            r#"{"kind":"statement","sql":"CREATE LOGIN m WITH PASSWORD = 'x'"}"#,
        );
        assert!(hostile.is_err(), "no kind carries SQL text");
    }

    /// Finding N4: the shrinks wait at low priority from SQL Server 2022 on, and not before
    /// (the option is a syntax error there); names are quoted.
    #[test]
    fn shrinks_wait_at_low_priority_from_2022() {
        let shrink = Undo::ShrinkTempdbFile {
            file: "temp'dev".into(),
            mb: 8,
        };
        assert_eq!(
            shrink.sql(16),
            "USE tempdb; DBCC SHRINKFILE (N'temp''dev', 8) WITH WAIT_AT_LOW_PRIORITY \
             (ABORT_AFTER_WAIT = SELF); USE master;"
        );
        assert_eq!(
            shrink.sql(15),
            "USE tempdb; DBCC SHRINKFILE (N'temp''dev', 8); USE master;"
        );
        let remove = Undo::RemoveTempdbFile {
            file: "dbbench_temp_2".into(),
        };
        assert!(remove
            .sql(16)
            .contains("EMPTYFILE) WITH WAIT_AT_LOW_PRIORITY"));
        assert!(remove.sql(16).ends_with("REMOVE FILE [dbbench_temp_2];"));
        let growth = Undo::TempdbGrowth {
            file: "tempdev".into(),
            growth: 8192,
            percent: false,
        };
        assert_eq!(
            growth.sql(16),
            "ALTER DATABASE tempdb MODIFY FILE (NAME = N'tempdev', FILEGROWTH = 65536KB);"
        );
    }
}
