//! The window's waits as `performance_schema` times them: the deltas of
//! `events_waits_summary_global_by_event_name` between the window's opening and its close, in
//! the shape of SQL Server's wait table (by time, with percentage and running percentage).
//!
//! Unlike PostgreSQL (whose waits dbbench samples), MariaDB keeps cumulative wait times, exact
//! to the timer, for the instruments that are enabled and timed. The managed instance runs with
//! the schema's defaults: file I/O (InnoDB's data files as `wait/io/file/innodb/innodb_data_file`,
//! the binary log as `wait/io/file/sql/binlog`; MariaDB 10.11 has no instrument for the redo log's
//! I/O), table I/O and table locks. Table I/O (`wait/io/table/…`) is left out of the table: it is
//! the time a statement spends in the storage engine's row calls, which holds the waits nested in
//! them, so its share would count them twice, and it would be most of any window (SQL Server's
//! wait table, whose shape this one has, lists waits for a resource, none inside another). Mutex
//! and rwlock waits (`wait/synch/…`) stay off, as MariaDB ships them, because instrumenting every
//! latch costs throughput the window would measure. On an existing server the sums are the whole
//! server's, as its status counters are, and a server started without `performance_schema` has
//! none (the evidence says so).

use super::connection::MariaDbConnection;
use crate::model::error::Result;
use crate::model::evidence::WaitStat;
use std::collections::BTreeMap;

/// Per event: waits counted and picoseconds waited, as summed since the server started.
pub type Sums = BTreeMap<String, (u64, u64)>;

const WAITS_SQL: &str = "SELECT EVENT_NAME, COUNT_STAR, SUM_TIMER_WAIT \
     FROM performance_schema.events_waits_summary_global_by_event_name \
     WHERE COUNT_STAR > 0 AND EVENT_NAME <> 'idle' AND EVENT_NAME NOT LIKE 'wait/io/table/%'";

/// Why a server has no wait sums, when it has none: `performance_schema` is off.
pub const SCHEMA_OFF: &str = "performance_schema is off on this server (it is a startup setting: \
     `performance_schema=ON` in the server's configuration)";

/// The wait sums now, or `None` when the server runs without `performance_schema`.
pub async fn sums(conn: &mut MariaDbConnection) -> Result<Option<Sums>> {
    let on: i64 = match conn
        .query("SELECT @@performance_schema", &[])
        .await?
        .first()
    {
        Some(row) => row.get(0)?,
        None => 0,
    };
    if on == 0 {
        return Ok(None);
    }
    let mut out = Sums::new();
    for row in conn.query(WAITS_SQL, &[]).await? {
        let name: String = row.get(0)?;
        out.insert(name, (row.get::<u64>(1)?, row.get::<u64>(2)?));
    }
    Ok(Some(out))
}

/// The waits between `open` and `close`: the events that waited at all in the window, by time
/// waited (then name), each with its share of the window's wait time and the running share.
/// `waiting_tasks` is the number of waits, as SQL Server's `waiting_tasks_count` is.
pub fn table(open: &Sums, close: &Sums) -> Vec<WaitStat> {
    let mut rows: Vec<(&String, u64, u64)> = close
        .iter()
        .map(|(name, (count, ps))| {
            let (c0, p0) = open.get(name).copied().unwrap_or_default();
            (name, count.saturating_sub(c0), ps.saturating_sub(p0))
        })
        .filter(|(_, count, _)| *count > 0)
        .collect();
    rows.sort_by(|a, b| b.2.cmp(&a.2).then(a.0.cmp(b.0)));
    let total: u64 = rows.iter().map(|r| r.2).sum();
    let mut running = 0.0;
    rows.into_iter()
        .map(|(name, count, ps)| {
            let pct = if total == 0 {
                0.0
            } else {
                100.0 * ps as f64 / total as f64
            };
            running += pct;
            WaitStat {
                wait_type: name.clone(),
                wait_time_s: ps as f64 / 1e12,
                waiting_tasks: count,
                pct,
                running_pct: running.min(100.0),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sums(rows: &[(&str, u64, u64)]) -> Sums {
        rows.iter()
            .map(|(n, c, p)| (n.to_string(), (*c, *p)))
            .collect()
    }

    #[test]
    fn the_windows_waits_by_time_with_their_shares() {
        let open = sums(&[
            ("wait/io/file/innodb/innodb_log_file", 10, 5_000_000_000_000),
            ("wait/io/file/innodb/innodb_data_file", 4, 1_000),
            ("wait/io/table/sql/handler", 7, 70),
        ]);
        let close = sums(&[
            // 3 s in 30 waits during the window.
            ("wait/io/file/innodb/innodb_log_file", 40, 8_000_000_000_000),
            // 1 s, new in the window.
            ("wait/lock/table/sql/handler", 2, 1_000_000_000_000),
            ("wait/io/file/innodb/innodb_data_file", 4, 1_000),
            ("wait/io/table/sql/handler", 7, 70),
        ]);
        let table = table(&open, &close);
        let names: Vec<&str> = table.iter().map(|w| w.wait_type.as_str()).collect();
        // Events that did not wait in the window are not listed.
        assert_eq!(
            names,
            [
                "wait/io/file/innodb/innodb_log_file",
                "wait/lock/table/sql/handler"
            ]
        );
        assert!((table[0].wait_time_s - 3.0).abs() < 1e-9);
        assert_eq!(table[0].waiting_tasks, 30);
        assert!((table[0].pct - 75.0).abs() < 1e-9);
        assert!((table[1].running_pct - 100.0).abs() < 1e-9);
        assert_eq!(table[1].waiting_tasks, 2);
    }

    #[test]
    fn a_window_without_waits_has_an_empty_table() {
        let both = sums(&[("wait/io/file/innodb/innodb_log_file", 3, 9)]);
        assert!(table(&both, &both).is_empty());
        assert!(table(&Sums::new(), &Sums::new()).is_empty());
    }
}
