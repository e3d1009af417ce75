//! One bounded attempt at an owed undo ([`attempt`]): every statement has a deadline, a shrink
//! that would wait for snapshot transactions on a version without `WAIT_AT_LOW_PRIORITY` is left
//! owed rather than sent, and the state is read back whatever the batch answered.
//!
//! Why (finding N4 of the fourth review, security finding 12): a tempdb shrink waits for snapshot
//! transactions and queues other sessions' schema locks behind its own (DBCC SHRINKFILE,
//! "Understand concurrency issues"), and no command timeout is set by default, so an undo could
//! block a shared server's tempdb work and hang a teardown. Msg 8909 is returned by shrinks that
//! succeed ("Shrink the tempdb database"), and a removal that must wait for a restart answers Msg
//! 2555 or 5042: only the state read back says what happened.

use super::undo::Undo;
use super::MssqlConnection;
use std::time::Duration;

/// How long one undo batch, or one read-back, may take.
pub const LIMIT: Duration = Duration::from_secs(30);

/// Snapshot transactions active now (SQL Server 2016–2019: a shrink would wait for them).
pub const SNAPSHOT_SQL: &str =
    "SELECT COUNT(*) AS active FROM sys.dm_tran_active_snapshot_database_transactions;";

/// What came of an attempt.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// Run (or found already in effect) and verified.
    Done,
    /// Left owed on purpose: it must wait (a restart, snapshot transactions); not an error.
    Owed(String),
    /// Failed; why.
    Failed(String),
}

/// Runs `undo` through `conn` on a server of major version `major` and reads its effect back.
/// After a timeout the connection is replaced with a fresh one to master (the old one may still
/// be in the middle of the statement), which the read-back uses.
pub async fn attempt(conn: &mut MssqlConnection, undo: &Undo, major: u32) -> Outcome {
    if let Err(why) = undo.check() {
        return Outcome::Failed(why);
    }
    if undo.shrinks() && major < 16 {
        match bounded(conn.query(SNAPSHOT_SQL, &[])).await {
            Ok(rows) => {
                let active = rows
                    .first()
                    .and_then(|r| r.get_named::<Option<i64>>("active").ok().flatten())
                    .unwrap_or(0);
                if active > 0 {
                    return Outcome::Owed(format!(
                        "{active} snapshot transaction(s) are active: before SQL Server 2022 a \
                         shrink cannot wait at low priority, and would wait for them while \
                         holding up other sessions' tempdb work (DBCC SHRINKFILE)"
                    ));
                }
            }
            Err(why) => return Outcome::Failed(why),
        }
    }
    // `None`: no answer within the limit.
    let ran = match tokio::time::timeout(LIMIT, conn.batch(&undo.sql(major))).await {
        Ok(result) => result.map_err(Some),
        Err(_) => Err(None),
    };
    if matches!(ran, Err(None)) {
        match conn.settings().connect(Some("master")).await {
            Ok(fresh) => *conn = fresh,
            Err(e) => return Outcome::Failed(format!("{TIMED_OUT}; reconnecting: {e}")),
        }
    }
    let verified = match bounded_verify(conn, undo).await {
        Ok(()) => return Outcome::Done,
        Err(why) => why,
    };
    match ran {
        Err(Some(e)) if waits_for_restart(undo, &e) => Outcome::Owed(format!(
            "{e}; an added tempdb file is often only empty after a restart of SQL Server"
        )),
        Err(Some(e)) => Outcome::Failed(format!("{e}; read back: {verified}")),
        Err(None) => Outcome::Failed(format!(
            "{TIMED_OUT} {} s; read back: {verified}",
            LIMIT.as_secs()
        )),
        Ok(()) => Outcome::Failed(verified),
    }
}

const TIMED_OUT: &str = "no answer within";

async fn bounded<T>(
    work: impl std::future::Future<Output = crate::model::error::Result<T>>,
) -> Result<T, String> {
    match tokio::time::timeout(LIMIT, work).await {
        Ok(result) => result.map_err(|e| e.to_string()),
        Err(_) => Err(format!("{TIMED_OUT} {} s", LIMIT.as_secs())),
    }
}

async fn bounded_verify(conn: &mut MssqlConnection, undo: &Undo) -> Result<(), String> {
    match tokio::time::timeout(LIMIT, super::undo_check::verify(conn, undo)).await {
        Ok(result) => result,
        Err(_) => Err(format!("the read-back: {TIMED_OUT} {} s", LIMIT.as_secs())),
    }
}

/// Whether a failed removal of an added tempdb file must wait for a restart: Msg 2555 (the file
/// could not be emptied) or 5042 (not empty) (Database Engine errors).
fn waits_for_restart(undo: &Undo, error: &crate::model::error::Error) -> bool {
    matches!(undo, Undo::RemoveTempdbFile { .. })
        && matches!(super::errors::code_of(error), Some(2555 | 5042))
}

#[cfg(test)]
mod tests;
