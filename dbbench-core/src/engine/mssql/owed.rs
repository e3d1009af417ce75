//! Instance undo that could not be finished yet. Removing a tempdb file dbbench added needs the
//! file empty, and `DBCC SHRINKFILE (…, EMPTYFILE)` often fails on a busy tempdb (work-table pages
//! it cannot move: Msg 2555; `REMOVE FILE` then fails with Msg 5042). After a restart of the
//! service the file is empty and removable. Such an undo is written to
//! `<work_dir>/mssql-owed-undo.json`, keyed by server, reported, and finished at the next start
//! of dbbench against that server.

use super::MssqlConnection;
use crate::model::error::{Error, Result};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The file of owed undo statements under the work directory.
pub fn path(work_dir: &Path) -> PathBuf {
    work_dir.join("mssql-owed-undo.json")
}

/// One owed undo statement.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Owed {
    /// The statement still to run.
    pub statement: String,
    /// Why it could not run.
    pub why: String,
}

type Ledger = BTreeMap<String, Vec<Owed>>;

fn read(work_dir: &Path) -> Result<Ledger> {
    let file = path(work_dir);
    match std::fs::read_to_string(&file) {
        Ok(text) => serde_json::from_str(&text)
            .map_err(|e| Error::msg(format!("{} is not valid: {e}", file.display()))),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Ledger::new()),
        Err(e) => Err(Error::io("cannot read", &file, e)),
    }
}

fn write(work_dir: &Path, ledger: &Ledger) -> Result<()> {
    let file = path(work_dir);
    if ledger.values().all(Vec::is_empty) {
        return match std::fs::remove_file(&file) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                Err(Error::io("cannot remove", &file, e))
            }
            _ => Ok(()),
        };
    }
    std::fs::create_dir_all(work_dir).map_err(|e| Error::io("cannot create", work_dir, e))?;
    let text = serde_json::to_string_pretty(ledger).map_err(|e| Error::msg(e.to_string()))?;
    std::fs::write(&file, text).map_err(|e| Error::io("cannot write", &file, e))
}

/// Whether a failed undo `statement` can be finished after a restart: removing a tempdb file
/// that could not be emptied.
pub fn can_wait_for_restart(statement: &str, error: &Error) -> bool {
    statement.contains("REMOVE FILE")
        && matches!(
            error,
            Error::Server {
                code: 2555 | 5042,
                ..
            }
        )
}

/// Records `statement` as owed on `server`.
pub fn record(work_dir: &Path, server: &str, statement: &str, why: &str) -> Result<()> {
    let mut ledger = read(work_dir)?;
    let owed = ledger.entry(server.to_string()).or_default();
    if !owed.iter().any(|o| o.statement == statement) {
        owed.push(Owed {
            statement: statement.to_string(),
            why: why.to_string(),
        });
    }
    write(work_dir, &ledger)
}

/// The undo owed on `server`.
pub fn owed(work_dir: &Path, server: &str) -> Result<Vec<Owed>> {
    Ok(read(work_dir)?.remove(server).unwrap_or_default())
}

/// Runs every undo owed on `server`; those that still fail stay owed. Returns what was finished
/// and what is still owed, one phrase each.
pub async fn settle(
    conn: &mut MssqlConnection,
    work_dir: &Path,
    server: &str,
) -> Result<(Vec<String>, Vec<String>)> {
    let mut ledger = read(work_dir)?;
    let Some(list) = ledger.remove(server) else {
        return Ok((Vec::new(), Vec::new()));
    };
    let (mut done, mut left, mut still) = (Vec::new(), Vec::new(), Vec::new());
    for item in list {
        match conn.batch(&item.statement).await {
            Ok(()) => done.push(super::connection::headline(&item.statement)),
            Err(e) => {
                still.push(format!(
                    "{} ({e})",
                    super::connection::headline(&item.statement)
                ));
                left.push(Owed {
                    why: e.to_string(),
                    ..item
                });
            }
        }
    }
    if !left.is_empty() {
        ledger.insert(server.to_string(), left);
    }
    write(work_dir, &ledger)?;
    Ok((done, still))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::mssql::double::{Api, Reply, ScriptedServer};
    use crate::engine::mssql::ConnectSettings;

    const REMOVE: &str = "USE tempdb; DBCC SHRINKFILE (N'dbbench_temp_2', EMPTYFILE); USE master; \
                          ALTER DATABASE tempdb REMOVE FILE [dbbench_temp_2];";

    #[tokio::test]
    async fn owed_undo_is_kept_and_finished_at_the_next_start() {
        let dir = tempfile::tempdir().unwrap();
        let busy = Error::Server {
            code: 2555,
            message: "Cannot move all contents of file \"dbbench_temp_2\" to other places".into(),
        };
        assert!(can_wait_for_restart(REMOVE, &busy));
        assert!(!can_wait_for_restart("DBCC TRACEOFF(1806, -1);", &busy));
        record(dir.path(), "h,1433", REMOVE, &busy.to_string()).unwrap();
        record(dir.path(), "h,1433", REMOVE, "again").unwrap();
        assert_eq!(
            owed(dir.path(), "h,1433").unwrap().len(),
            1,
            "recorded once"
        );
        assert!(
            owed(dir.path(), "other,1433").unwrap().is_empty(),
            "keyed by server"
        );

        let server = ScriptedServer::new();
        let settings =
            ConnectSettings::scripted("server=tcp:h,1433;user id=u;password=p", &server).unwrap();
        let mut conn = settings.connect(Some("master")).await.unwrap();
        // Still busy at this start: stays owed.
        server.times(
            "REMOVE FILE",
            1,
            Reply::error(
                5042,
                "The file 'dbbench_temp_2' cannot be removed because it is not empty.",
            ),
        );
        let (done, still) = settle(&mut conn, dir.path(), "h,1433").await.unwrap();
        assert!(done.is_empty() && still[0].contains("5042"), "{still:?}");
        assert!(path(dir.path()).exists());
        // After a restart the file is empty: finished and forgotten.
        let (done, still) = settle(&mut conn, dir.path(), "h,1433").await.unwrap();
        assert_eq!((done.len(), still.len()), (1, 0));
        assert!(!path(dir.path()).exists());
        assert_eq!(
            server
                .calls_with("REMOVE FILE")
                .iter()
                .filter(|c| c.api == Api::Batch)
                .count(),
            2
        );
    }

    /// Finding 5 of issue 29: an undo that fails is kept, not forgotten. The drop of the changes
    /// runs it again on a fresh connection; what still fails there is recorded as owed and
    /// finished at the next start.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_failed_undo_stays_owed_until_it_succeeds() {
        use crate::engine::mssql::instance::{Change, InstanceChanges};
        const OFF: &str = "DBCC TRACEOFF(1806, -1) WITH NO_INFOMSGS;";
        let change = Change {
            what: "trace flag 1806 on (ifi = false)".into(),
            apply: "DBCC TRACEON(1806, -1) WITH NO_INFOMSGS;".into(),
            undo: vec![OFF.into()],
        };
        let dir = tempfile::tempdir().unwrap();
        let server = ScriptedServer::new();
        let settings =
            ConnectSettings::scripted("server=tcp:h,1433;user id=u;password=p", &server).unwrap();
        let failing = || Reply::error(2812, "Could not find stored procedure (scripted failure)");

        // Fails once, then succeeds at the drop's retry on a fresh connection.
        let mut conn = settings.connect(Some("master")).await.unwrap();
        let mut changes = InstanceChanges::new(settings.clone()).owed_in(dir.path());
        changes.apply(&mut conn, &change).await.unwrap();
        server.times("TRACEOFF", 1, failing());
        assert!(changes.restore(&mut conn).await.is_err());
        drop(changes);
        assert_eq!(
            server.calls_with("TRACEOFF").len(),
            2,
            "tried again at the drop"
        );
        assert!(owed(dir.path(), "h,1433").unwrap().is_empty());

        // Fails at the restore and at the drop: owed, and finished at the next start.
        let mut changes = InstanceChanges::new(settings.clone()).owed_in(dir.path());
        changes.apply(&mut conn, &change).await.unwrap();
        server.times("TRACEOFF", 2, failing());
        assert!(changes.restore(&mut conn).await.is_err());
        drop(changes);
        let left = owed(dir.path(), "h,1433").unwrap();
        assert_eq!(left.len(), 1, "{left:?}");
        assert_eq!(left[0].statement, OFF);
        let (done, still) = settle(&mut conn, dir.path(), "h,1433").await.unwrap();
        assert_eq!((done.len(), still.len()), (1, 0));
        assert_eq!(server.calls_with("TRACEOFF").len(), 5);
        assert!(!path(dir.path()).exists());
    }
}
