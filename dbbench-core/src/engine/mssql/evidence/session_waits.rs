//! The body's own waits: `sys.dm_exec_session_wait_stats` (SQL Server 2016+) for the window's
//! connection, snapshotted when the window opens and when it closes, benign waits left out as for
//! the server's waits. Recorded as `counts.session_wait_ms.<WAIT_TYPE>`.
//!
//! Why (finding C5 of the third review): `sys.dm_os_wait_stats` is the whole instance's, so on a
//! shared server the `waits` table includes every other workload. The session view names this
//! session's waits alone; a login sees its own session without any permission
//! (https://learn.microsoft.com/sql/relational-databases/system-dynamic-management-views/sys-dm-exec-session-wait-stats-transact-sql).
//! It covers the window's connection, which runs the body's statements; the counters of a
//! session are reset when it closes, so extra connections a body opens and closes (load workers)
//! are not in it.

use super::waits::{self, WaitSnapshot};
use super::{rows, Outcome};
use crate::engine::mssql::MssqlConnection;
use std::collections::BTreeMap;

/// This session's cumulative waits.
pub const SNAPSHOT_SQL: &str = "SELECT CAST(wait_type AS nvarchar(60)) AS wait_type, \
     waiting_tasks_count, wait_time_ms, signal_wait_time_ms \
     FROM sys.dm_exec_session_wait_stats WHERE session_id = @@SPID \
     AND (wait_time_ms > 0 OR waiting_tasks_count > 0);";

/// The prefix of the counts this module records.
pub const PREFIX: &str = "session_wait_ms.";

/// This session's waits through `conn`.
pub async fn snapshot(conn: &mut MssqlConnection) -> Outcome<WaitSnapshot> {
    waits::snapshot_from_rows(&rows(conn, SNAPSHOT_SQL).await?).map_err(|e| e.to_string())
}

/// The window's waits of this session, in milliseconds per wait type (benign waits left out).
pub fn counts(before: &WaitSnapshot, after: &WaitSnapshot) -> BTreeMap<String, i64> {
    waits::window_delta(before, after)
        .into_iter()
        .map(|(wait, c)| (format!("{PREFIX}{wait}"), c.wait_ms as i64))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::mssql::evidence::waits::WaitCounters;

    #[test]
    fn the_window_delta_of_this_sessions_waits() {
        let at = |ms: u64| WaitCounters {
            tasks: ms / 10,
            wait_ms: ms,
            signal_ms: 0,
        };
        let before = BTreeMap::from([("WRITELOG".to_string(), at(100))]);
        let after = BTreeMap::from([
            ("WRITELOG".to_string(), at(350)),
            ("PAGEIOLATCH_SH".to_string(), at(40)),
            ("SLEEP_TASK".to_string(), at(9000)),
        ]);
        assert_eq!(
            counts(&before, &after),
            BTreeMap::from([
                ("session_wait_ms.PAGEIOLATCH_SH".to_string(), 40),
                ("session_wait_ms.WRITELOG".to_string(), 250),
            ])
        );
    }
}
