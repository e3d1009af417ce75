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
use super::undo::Undo;
use super::{ifi, MssqlConnection};

/// `Ok` when the server shows `undo` in effect; `Err` says what it shows instead. Also run after
/// an undo batch that failed: a shrink that returned Msg 8909 may have worked ("Shrink the tempdb
/// database": "Although an 8909 message is returned … the shrink operations won't fail"), and a
/// removal owed from an earlier attempt may be done already (finding N4).
pub async fn verify(conn: &mut MssqlConnection, undo: &Undo) -> Result<(), String> {
    if let Undo::TraceOff { flags } = undo {
        for flag in flags {
            let rows = conn
                .query(&ifi::trace_status_sql(*flag), &[])
                .await
                .map_err(|e| format!("could not read trace flag {flag} back: {e}"))?;
            if ifi::is_on_globally(&rows).map_err(|e| e.to_string())? {
                return Err(format!(
                    "trace flag {flag} is still on globally after DBCC TRACEOFF"
                ));
            }
        }
        return Ok(());
    }
    let rows = conn
        .query(TEMPDB_FILES_SQL, &[])
        .await
        .map_err(|e| format!("could not read tempdb's files back: {e}"))?;
    let files = tempdb_files(&rows).map_err(|e| e.to_string())?;
    tempdb_restored(undo, &files)
}

/// `Ok` when tempdb's `files`, read back after `undo` ran, show it in effect: a removed file
/// gone, a shrunk one at or below its target startup size, a growth set back.
pub fn tempdb_restored(undo: &Undo, files: &[TempdbFile]) -> Result<(), String> {
    let find = |name: &str| files.iter().find(|f| f.name == name);
    match undo {
        Undo::TraceOff { .. } => Ok(()),
        Undo::RemoveTempdbFile { file } => match find(file) {
            Some(_) => Err(format!("tempdb file {file} is still there")),
            None => Ok(()),
        },
        Undo::ShrinkTempdbFile { file, mb } => match find(file) {
            Some(f) if f.size_pages > mb * 128 => Err(format!(
                "tempdb file {file} starts at {} MB, not {mb} MB: the shrink stopped part-way",
                f.size_pages / 128
            )),
            _ => Ok(()),
        },
        Undo::TempdbGrowth { file, .. } => {
            let wanted = undo.growth_sql().unwrap_or_default();
            match find(file) {
                Some(f) if f.growth_sql() != wanted => Err(format!(
                    "tempdb file {file} grows by {}, not {wanted}: its growth was not set back",
                    f.growth_sql()
                )),
                _ => Ok(()),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
        let growth = Undo::TempdbGrowth {
            file: "temp'dev".into(),
            growth: 8192,
            percent: false,
        };
        // 65536 KB is 8192 pages: set back.
        assert_eq!(
            tempdb_restored(&growth, &[file("temp'dev", 1024, 8192, false)]),
            Ok(())
        );
        // Still the benchmark's 1 MB (128 pages): not set back.
        let err = tempdb_restored(&growth, &[file("temp'dev", 1024, 128, false)]).unwrap_err();
        assert!(err.contains("grows by 1024KB, not 65536KB"), "{err}");
        let percent = Undo::TempdbGrowth {
            file: "tempdev".into(),
            growth: 10,
            percent: true,
        };
        assert_eq!(
            tempdb_restored(&percent, &[file("tempdev", 1024, 10, true)]),
            Ok(())
        );
        assert!(tempdb_restored(&percent, &[file("tempdev", 1024, 8192, false)]).is_err());
        let shrink = Undo::ShrinkTempdbFile {
            file: "tempdev".into(),
            mb: 8,
        };
        assert_eq!(
            tempdb_restored(&shrink, &[file("tempdev", 1024, 8192, false)]),
            Ok(())
        );
        assert!(
            tempdb_restored(&shrink, &[file("tempdev", 2048, 8192, false)])
                .unwrap_err()
                .contains("stopped part-way")
        );
        let remove = Undo::RemoveTempdbFile {
            file: "dbbench_temp_9".into(),
        };
        assert!(tempdb_restored(&remove, &[file("dbbench_temp_9", 8, 8, false)]).is_err());
        assert_eq!(
            tempdb_restored(&remove, &[file("tempdev", 1024, 8192, false)]),
            Ok(())
        );
    }
}
