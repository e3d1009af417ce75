//! Other schemas' activity on an existing server during a window ([`ServerActivity`]), from
//! `performance_schema`: the rows other schemas' tables had inserted, updated and deleted
//! (`table_io_waits_summary_by_table`, differences), and the connections of other schemas that
//! worked in the window (`threads`: running a command at the open or the close, or having run
//! statements in between, `events_statements_summary_by_thread_by_event_name`).
//!
//! Everything dbbench does in a window happens in the benchmark's own schema (the body's
//! connection, the driver's workers), so "another schema" is exactly "not dbbench". The system
//! schemas are left out: their tables are the server's own bookkeeping. A server started
//! without `performance_schema` gives none of it, and the activity says so. A managed instance is
//! not read: nothing but dbbench runs there.

use super::connection::MariaDbConnection;
use crate::model::interference::ServerActivity;
use crate::model::value::Value;
use std::collections::{BTreeMap, BTreeSet};

const SOURCE: &str = "performance_schema (table_io_waits_summary_by_table of other schemas, \
    threads of other schemas and their statements)";

/// Rows written per table of another schema, as summed since the server started.
const TABLES_SQL: &str = "SELECT CONCAT(OBJECT_SCHEMA, '.', OBJECT_NAME), \
    COUNT_INSERT + COUNT_UPDATE + COUNT_DELETE \
    FROM performance_schema.table_io_waits_summary_by_table \
    WHERE OBJECT_TYPE = 'TABLE' AND OBJECT_SCHEMA <> ? \
    AND OBJECT_SCHEMA NOT IN ('mysql', 'performance_schema', 'information_schema', 'sys')";

/// Other schemas' connections (and those in no schema): their thread, the statements it has run
/// (`events_statements_summary_by_thread_by_event_name`, summed over its statement kinds) and
/// whether it runs a command now.
const THREADS_SQL: &str = "SELECT t.THREAD_ID, CAST(COALESCE(SUM(s.COUNT_STAR), 0) AS SIGNED), \
    MAX(t.PROCESSLIST_COMMAND <> 'Sleep') \
    FROM performance_schema.threads AS t \
    LEFT JOIN performance_schema.events_statements_summary_by_thread_by_event_name AS s \
    ON s.THREAD_ID = t.THREAD_ID \
    WHERE t.TYPE = 'FOREGROUND' AND t.PROCESSLIST_ID <> CONNECTION_ID() \
    AND (t.PROCESSLIST_DB IS NULL OR t.PROCESSLIST_DB <> ?) GROUP BY t.THREAD_ID";

type Outcome<T> = std::result::Result<T, String>;

/// A connection's statements run so far, and whether it runs one now.
type Thread = (u64, bool);

/// What one read found: rows written per table, and threads.
struct Found {
    tables: BTreeMap<String, u64>,
    threads: BTreeMap<u64, Thread>,
}

/// What the window's open read.
pub struct Reading {
    opened: Outcome<Found>,
}

impl Reading {
    /// Reads the server's counters at the window's open; `schema` is the benchmark's.
    pub async fn open(conn: &mut MariaDbConnection, schema: &str) -> Reading {
        Reading {
            opened: read(conn, schema).await,
        }
    }

    /// Reads them again at the close: what other schemas did in between.
    pub async fn close(self, conn: &mut MariaDbConnection, schema: &str) -> ServerActivity {
        let mut activity = ServerActivity {
            source: SOURCE.into(),
            ..ServerActivity::default()
        };
        match (self.opened, read(conn, schema).await) {
            (Ok(before), Ok(after)) => {
                activity.other_rows_written = Some(written(&before.tables, &after.tables));
                activity.other_sessions = Some(worked(&before.threads, &after.threads));
            }
            (Err(why), _) | (_, Err(why)) => {
                activity.unavailable.insert("other_schemas".into(), why);
            }
        }
        activity
    }
}

/// Rows other schemas' tables had written between two reads; a table first seen at the close
/// counts whole, and a counter that fell (a truncated summary) from zero.
fn written(before: &BTreeMap<String, u64>, after: &BTreeMap<String, u64>) -> u64 {
    after
        .iter()
        .map(|(table, now)| match before.get(table) {
            Some(then) if now >= then => now - then,
            _ => *now,
        })
        .sum()
}

/// The connections that worked in the window: running a command at the open or at the close,
/// or having run statements in between (a connection made since the open, all it ran).
fn worked(before: &BTreeMap<u64, Thread>, after: &BTreeMap<u64, Thread>) -> u64 {
    let mut seen: BTreeSet<u64> = before.iter().filter(|t| t.1 .1).map(|t| *t.0).collect();
    for (thread, (statements, working)) in after {
        let earlier = before.get(thread).map_or(0, |t| t.0);
        if *working || *statements > earlier {
            seen.insert(*thread);
        }
    }
    seen.len() as u64
}

async fn read(conn: &mut MariaDbConnection, schema: &str) -> Outcome<Found> {
    let on: i64 = match conn.query("SELECT @@performance_schema", &[]).await {
        Ok(rows) => rows
            .first()
            .map(|r| r.get(0))
            .transpose()
            .map_err(|e| e.to_string())?
            .unwrap_or(0),
        Err(e) => return Err(e.to_string()),
    };
    if on == 0 {
        return Err(super::waits::SCHEMA_OFF.into());
    }
    let name = [Value::Text(schema.to_string())];
    let mut found = Found {
        tables: BTreeMap::new(),
        threads: BTreeMap::new(),
    };
    let read = |e: crate::model::error::Error| format!("cannot read performance_schema: {e}");
    for row in conn.query(TABLES_SQL, &name).await.map_err(read)? {
        let table: String = row.get(0).map_err(read)?;
        found.tables.insert(table, row.get(1).map_err(read)?);
    }
    for row in conn.query(THREADS_SQL, &name).await.map_err(read)? {
        let statements: i64 = row.get(1).map_err(read)?;
        let working: Option<i64> = row.get(2).map_err(read)?;
        found.threads.insert(
            row.get(0).map_err(read)?,
            (statements.max(0) as u64, working.unwrap_or(0) != 0),
        );
    }
    Ok(found)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_written_count_new_tables_whole_and_truncated_ones_from_zero() {
        let before = BTreeMap::from([("app.orders".to_string(), 100), ("app.log".into(), 50)]);
        let after = BTreeMap::from([
            ("app.orders".to_string(), 400),
            ("app.log".into(), 10),
            ("other.t".into(), 7),
        ]);
        assert_eq!(written(&before, &after), 300 + 10 + 7);
    }

    #[test]
    fn a_connection_counts_when_it_worked_in_the_window() {
        // 1 slept throughout, 2 ran at the open and is gone, 3 runs at the close, 4 connected
        // in the window and sleeps, 5 ran statements in the window and sleeps at both reads, 6
        // connected in the window and ran nothing.
        let before = BTreeMap::from([
            (1, (9, false)),
            (2, (4, true)),
            (3, (1, false)),
            (5, (7, false)),
        ]);
        let after = BTreeMap::from([
            (1, (9, false)),
            (3, (1, true)),
            (4, (2, false)),
            (5, (900, false)),
            (6, (0, false)),
        ]);
        assert_eq!(worked(&before, &after), 4);
    }
}
