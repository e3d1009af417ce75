//! Proof that an undo statement of an instance change took effect, read back from the server
//! before its ledger entry is removed ([`super::owed`]).
//!
//! Why: `DBCC TRACEOFF` is accepted whatever it did, and `DBCC SHRINKFILE` on a busy tempdb can
//! stop part-way without an error ("Shrink the tempdb database": shrinking while tempdb is in
//! use can be blocked or prevented), so a successful batch is no proof (finding B5 of the third
//! review). A trace flag is read back with `DBCC TRACESTATUS(n, -1)`; a removed tempdb file must
//! be gone from `sys.master_files`; a shrunk one must have its startup size at or below the
//! target. A `FILEGROWTH` undo is taken as done when the batch succeeds: `MODIFY FILE` either
//! sets it or fails.

use super::instance::{tempdb_files, TEMPDB_FILES_SQL};
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
    let removed = between(statement, "REMOVE FILE [", ']');
    let shrunk = between(statement, "DBCC SHRINKFILE (N'", '\'')
        .filter(|_| !statement.contains("EMPTYFILE"))
        .zip(between(statement, "', ", ')').and_then(|mb| mb.trim().parse::<u64>().ok()));
    if removed.is_none() && shrunk.is_none() {
        return Ok(());
    }
    let rows = conn
        .query(TEMPDB_FILES_SQL, &[])
        .await
        .map_err(|e| format!("could not read tempdb's files back: {e}"))?;
    let files = tempdb_files(&rows).map_err(|e| e.to_string())?;
    if let Some(name) = removed {
        if files.iter().any(|f| f.name == name) {
            return Err(format!("tempdb file {name} is still there"));
        }
    }
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
}
