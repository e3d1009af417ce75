//! Proof that an undo statement of an instance change took effect, read back from the server
//! before its ledger entry is removed ([`super::owed`]).
//!
//! Why: `DBCC TRACEOFF` is accepted whatever it did, and `DBCC SHRINKFILE` on a busy tempdb can
//! stop part-way without an error ("Shrink the tempdb database": shrinking while tempdb is in
//! use can be blocked or prevented), so a successful batch is no proof (finding B5 of the third
//! review). A trace flag is read back with `DBCC TRACESTATUS(n, -1)`; a removed tempdb file must
//! be gone from `sys.master_files`; a shrunk one must have its startup size at or below the
//! target; a `FILEGROWTH` set back must read back as the value it names.

use super::instance::{tempdb_files, TempdbFile, TEMPDB_FILES_SQL};
use super::{ifi, MssqlConnection};

/// The trace flags `statement` turns off (`DBCC TRACEOFF(1805, 1806, -1)`).
fn flags_turned_off(statement: &str) -> Vec<u32> {
    let Some(at) = statement.find("DBCC TRACEOFF(") else {
        return Vec::new();
    };
    let args = &statement[at + "DBCC TRACEOFF(".len()..];
    args.split(')')
        .next()
        .unwrap_or_default()
        .split(',')
        .filter_map(|n| n.trim().parse::<u32>().ok())
        .collect()
}

/// The text between `start` and the next `end` in `statement`.
fn between<'a>(statement: &'a str, start: &str, end: char) -> Option<&'a str> {
    let at = statement.find(start)? + start.len();
    statement[at..].split(end).next()
}

/// `Ok` when the server shows `statement`'s undo in effect; `Err` says what it shows instead.
pub async fn verify(conn: &mut MssqlConnection, statement: &str) -> Result<(), String> {
    for flag in flags_turned_off(statement) {
        let rows = conn
            .query(&ifi::trace_status_sql(flag), &[])
            .await
            .map_err(|e| format!("could not read trace flag {flag} back: {e}"))?;
        if ifi::is_on_globally(&rows).map_err(|e| e.to_string())? {
            return Err(format!(
                "trace flag {flag} is still on globally after DBCC TRACEOFF"
            ));
        }
    }
    if !names_tempdb_file(statement) {
        return Ok(());
    }
    let rows = conn
        .query(TEMPDB_FILES_SQL, &[])
        .await
        .map_err(|e| format!("could not read tempdb's files back: {e}"))?;
    let files = tempdb_files(&rows).map_err(|e| e.to_string())?;
    tempdb_restored(statement, &files)
}

/// Whether `statement` undoes a change to one of tempdb's files (what [`tempdb_restored`] reads).
fn names_tempdb_file(statement: &str) -> bool {
    [
        "REMOVE FILE [",
        "DBCC SHRINKFILE (N'",
        "MODIFY FILE (NAME = N'",
    ]
    .iter()
    .any(|s| statement.contains(s))
}

/// The logical name in a `MODIFY FILE (NAME = N'…', …)`, its doubled quotes undone.
fn modified_file(statement: &str) -> Option<String> {
    let start = "MODIFY FILE (NAME = N'";
    let at = statement.find(start)? + start.len();
    let rest = &statement[at..];
    let end = rest.find("', ")?;
    Some(rest[..end].replace("''", "'"))
}

/// `Ok` when tempdb's `files`, read back after `statement` ran, show its undo in effect: a
/// removed file gone, a shrunk one at or below its target startup size, a growth set back.
pub fn tempdb_restored(statement: &str, files: &[TempdbFile]) -> Result<(), String> {
    if let Some(name) = between(statement, "REMOVE FILE [", ']') {
        if files.iter().any(|f| f.name == name) {
            return Err(format!("tempdb file {name} is still there"));
        }
    }
    let shrunk = between(statement, "DBCC SHRINKFILE (N'", '\'')
        .filter(|_| !statement.contains("EMPTYFILE"))
        .zip(between(statement, "', ", ')').and_then(|mb| mb.trim().parse::<u64>().ok()));
    if let Some((name, mb)) = shrunk {
        if let Some(file) = files.iter().find(|f| f.name == name) {
            if file.size_pages > mb * 128 {
                return Err(format!(
                    "tempdb file {name} starts at {} MB, not {mb} MB: the shrink stopped part-way",
                    file.size_pages / 128
                ));
            }
        }
    }
    let growth = modified_file(statement).zip(between(statement, "FILEGROWTH = ", ')'));
    if let Some((name, wanted)) = growth {
        if let Some(file) = files.iter().find(|f| f.name == name) {
            if file.growth_sql() != wanted.trim() {
                return Err(format!(
                    "tempdb file {name} grows by {}, not {}: its growth was not set back",
                    file.growth_sql(),
                    wanted.trim()
                ));
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_what_each_undo_names() {
        assert_eq!(
            flags_turned_off("DBCC TRACEOFF(1805, 1806, -1) WITH NO_INFOMSGS;"),
            vec![1805, 1806]
        );
        let remove = "USE tempdb; DBCC SHRINKFILE (N'dbbench_temp_9', EMPTYFILE); USE master; \
                      ALTER DATABASE tempdb REMOVE FILE [dbbench_temp_9];";
        assert_eq!(
            between(remove, "REMOVE FILE [", ']'),
            Some("dbbench_temp_9")
        );
        let shrink = "USE tempdb; DBCC SHRINKFILE (N'tempdev', 8); USE master;";
        assert_eq!(
            between(shrink, "DBCC SHRINKFILE (N'", '\''),
            Some("tempdev")
        );
        assert_eq!(between(shrink, "', ", ')'), Some("8"));
    }

    fn file(name: &str, size_pages: u64, growth: u64, is_percent: bool) -> TempdbFile {
        TempdbFile {
            name: name.into(),
            physical: format!("/var/opt/mssql/data/{name}.mdf"),
            size_pages,
            current_pages: size_pages,
            growth,
            is_percent,
        }
    }

    #[test]
    fn tempdb_undos_are_read_back() {
        let growth =
            "ALTER DATABASE tempdb MODIFY FILE (NAME = N'temp''dev', FILEGROWTH = 65536KB);";
        assert!(names_tempdb_file(growth));
        assert_eq!(modified_file(growth).as_deref(), Some("temp'dev"));
        // 65536 KB is 8192 pages: set back.
        assert_eq!(
            tempdb_restored(growth, &[file("temp'dev", 1024, 8192, false)]),
            Ok(())
        );
        // Still the benchmark's 1 MB (128 pages): not set back.
        let err = tempdb_restored(growth, &[file("temp'dev", 1024, 128, false)]).unwrap_err();
        assert!(err.contains("grows by 1024KB, not 65536KB"), "{err}");
        let percent = "ALTER DATABASE tempdb MODIFY FILE (NAME = N'tempdev', FILEGROWTH = 10%);";
        assert_eq!(
            tempdb_restored(percent, &[file("tempdev", 1024, 10, true)]),
            Ok(())
        );
        assert!(tempdb_restored(percent, &[file("tempdev", 1024, 8192, false)]).is_err());
        let shrink = "USE tempdb; DBCC SHRINKFILE (N'tempdev', 8); USE master;";
        assert_eq!(
            tempdb_restored(shrink, &[file("tempdev", 1024, 8192, false)]),
            Ok(())
        );
        assert!(
            tempdb_restored(shrink, &[file("tempdev", 2048, 8192, false)])
                .unwrap_err()
                .contains("stopped part-way")
        );
        let remove = "USE tempdb; DBCC SHRINKFILE (N'dbbench_temp_9', EMPTYFILE); USE master; \
                      ALTER DATABASE tempdb REMOVE FILE [dbbench_temp_9];";
        assert!(tempdb_restored(remove, &[file("dbbench_temp_9", 8, 8, false)]).is_err());
        assert_eq!(
            tempdb_restored(remove, &[file("tempdev", 1024, 8192, false)]),
            Ok(())
        );
        assert!(!names_tempdb_file("DBCC TRACEOFF(1805, -1);"));
    }
}
