//! Other databases' activity on an existing server during a window ([`ServerActivity`]): the
//! differences of `pg_stat_database` over every database but the benchmark's (commits, rows
//! inserted, updated and deleted, blocks read), and the client backends of other databases that
//! worked in the window (`pg_stat_activity`).
//!
//! Everything dbbench does in a window happens in the benchmark's own database (the body's
//! session, the driver's workers, the wait sampler), so "another database" is exactly "not
//! dbbench". The shared-catalog row of `pg_stat_database` (`datid` 0) is left out: every new
//! connection, dbbench's too, reads the shared catalogs. A managed cluster is not read: nothing
//! but dbbench runs there.

use super::connection::PostgresConnection;
use crate::model::interference::ServerActivity;
use std::collections::{BTreeMap, BTreeSet};

/// Where the figures come from, as the results say it.
const SOURCE: &str = "pg_stat_database (other databases), pg_stat_activity (their client backends)";

/// Each other database's cumulative commits, rows written and blocks read, by `datid`.
const DATABASES_SQL: &str = "SELECT datid::int8, xact_commit::int8, \
    (tup_inserted + tup_updated + tup_deleted)::int8, blks_read::int8 FROM pg_stat_database \
    WHERE datid <> 0 AND datname IS DISTINCT FROM current_database()";

/// Other databases' client backends: pid, state (NULL when this role may not see it), and when
/// its state changed and it started, in the server's epoch seconds.
const BACKENDS_SQL: &str = "SELECT pid::int8, state, extract(epoch FROM state_change)::float8, \
    extract(epoch FROM backend_start)::float8 FROM pg_stat_activity \
    WHERE backend_type = 'client backend' AND pid <> pg_backend_pid() \
    AND datname IS DISTINCT FROM current_database()";

type Outcome<T> = std::result::Result<T, String>;

/// One database's counters: commits, rows written, blocks read.
type Counters = [i64; 3];

/// What the window's open read.
pub struct Reading {
    /// The server's clock at the read (epoch seconds).
    at: Outcome<f64>,
    databases: Outcome<BTreeMap<i64, Counters>>,
    /// Other databases' backends working at the open.
    working: Outcome<BTreeSet<i64>>,
}

/// One other backend as `pg_stat_activity` shows it.
struct Backend {
    pid: i64,
    state: Option<String>,
    state_change: Option<f64>,
    started: Option<f64>,
}

impl Reading {
    /// Reads the server's counters at the window's open.
    pub async fn open(conn: &mut PostgresConnection) -> Reading {
        let at = clock(conn).await;
        let databases = databases(conn).await;
        let working = backends(conn).await.map(|all| {
            all.iter()
                .filter(|b| b.state.as_deref().is_some_and(|s| s != "idle"))
                .map(|b| b.pid)
                .collect()
        });
        Reading {
            at,
            databases,
            working,
        }
    }

    /// Reads them again at the close: what other databases did in between.
    pub async fn close(self, conn: &mut PostgresConnection) -> ServerActivity {
        // Another session reports its statistics at most once a second (PostgreSQL 15), so a
        // writer still running is counted up to its last report.
        let mut activity = ServerActivity {
            source: SOURCE.into(),
            ..ServerActivity::default()
        };
        match (self.databases, databases(conn).await) {
            (Ok(before), Ok(after)) => {
                let [commits, rows, blocks] = differences(&before, &after);
                activity.other_transactions = Some(commits);
                activity.other_rows_written = Some(rows);
                activity.other_reads = Some(blocks);
            }
            (Err(e), _) | (_, Err(e)) => {
                activity.unavailable.insert(
                    "other_databases".into(),
                    format!("cannot read pg_stat_database: {e}"),
                );
            }
        }
        match (self.at, self.working, backends(conn).await) {
            (Ok(opened), Ok(working), Ok(now)) => {
                let (seen, hidden) = worked_since(opened, &working, &now);
                activity.other_sessions = Some(seen);
                if hidden > 0 {
                    activity.unavailable.insert(
                        "other_sessions".into(),
                        format!(
                            "{hidden} backends of other databases belong to roles whose \
                             activity this user may not read (pg_read_all_stats): not counted"
                        ),
                    );
                }
            }
            (Err(e), _, _) | (_, Err(e), _) | (_, _, Err(e)) => {
                activity.unavailable.insert(
                    "other_sessions".into(),
                    format!("cannot read pg_stat_activity: {e}"),
                );
            }
        }
        activity
    }
}

/// What other databases did between two readings; a database created in between counts whole,
/// one dropped in between not at all.
fn differences(before: &BTreeMap<i64, Counters>, after: &BTreeMap<i64, Counters>) -> [u64; 3] {
    let mut total = [0u64; 3];
    for (datid, now) in after {
        let then = before.get(datid).copied().unwrap_or_default();
        for (sum, (n, t)) in total.iter_mut().zip(now.iter().zip(then)) {
            // A reset of the statistics (pg_stat_reset) makes a counter fall: counted from zero.
            *sum += if *n >= t { (n - t) as u64 } else { *n as u64 };
        }
    }
    total
}

/// The other backends that worked in the window: working at the open, working at the close, or
/// changed state or started after the open; and how many this role may not see.
fn worked_since(opened: f64, working: &BTreeSet<i64>, now: &[Backend]) -> (u64, u64) {
    let mut seen = working.clone();
    let mut hidden = 0;
    for backend in now {
        match backend.state.as_deref() {
            None => hidden += 1,
            Some(state) => {
                let since = |at: Option<f64>| at.is_some_and(|at| at >= opened);
                if state != "idle" || since(backend.state_change) || since(backend.started) {
                    seen.insert(backend.pid);
                }
            }
        }
    }
    (seen.len() as u64, hidden)
}

async fn clock(conn: &mut PostgresConnection) -> Outcome<f64> {
    let rows = conn
        .query("SELECT extract(epoch FROM clock_timestamp())::float8", &[])
        .await
        .map_err(|e| e.to_string())?;
    rows.first()
        .ok_or("no clock")?
        .get(0)
        .map_err(|e| e.to_string())
}

async fn databases(conn: &mut PostgresConnection) -> Outcome<BTreeMap<i64, Counters>> {
    let rows = conn
        .query(DATABASES_SQL, &[])
        .await
        .map_err(|e| e.to_string())?;
    rows.iter()
        .map(|r| {
            let get = |i| r.get::<Option<i64>>(i).map(|v| v.unwrap_or(0));
            Ok((r.get::<i64>(0)?, [get(1)?, get(2)?, get(3)?]))
        })
        .collect::<crate::model::error::Result<_>>()
        .map_err(|e| e.to_string())
}

async fn backends(conn: &mut PostgresConnection) -> Outcome<Vec<Backend>> {
    let rows = conn
        .query(BACKENDS_SQL, &[])
        .await
        .map_err(|e| e.to_string())?;
    rows.iter()
        .map(|r| {
            Ok(Backend {
                pid: r.get(0)?,
                state: r.get(1)?,
                state_change: r.get(2)?,
                started: r.get(3)?,
            })
        })
        .collect::<crate::model::error::Result<_>>()
        .map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn backend(pid: i64, state: Option<&str>, changed: f64, started: f64) -> Backend {
        Backend {
            pid,
            state: state.map(str::to_string),
            state_change: Some(changed),
            started: Some(started),
        }
    }

    #[test]
    fn other_databases_differences_count_new_ones_whole_and_resets_from_zero() {
        let before = BTreeMap::from([(1, [100, 50, 7]), (2, [10, 0, 0])]);
        let after = BTreeMap::from([(1, [160, 110, 9]), (2, [4, 0, 0]), (3, [5, 5, 1])]);
        assert_eq!(differences(&before, &after), [60 + 4 + 5, 60 + 5, 2 + 1]);
    }

    #[test]
    fn a_backend_counts_when_it_worked_in_the_window() {
        let opened = 1000.0;
        let working_at_open = BTreeSet::from([7]);
        let now = [
            // Idle since before the window: not counted.
            backend(1, Some("idle"), 990.0, 900.0),
            // Went idle during the window, or connected during it: counted.
            backend(2, Some("idle"), 1003.0, 900.0),
            backend(3, Some("idle"), 1001.0, 1001.0),
            // Working now.
            backend(4, Some("active"), 995.0, 900.0),
            backend(5, Some("idle in transaction"), 980.0, 900.0),
            // Another role's, not readable.
            backend(6, None, 0.0, 0.0),
        ];
        // 7 worked at the open and has gone since.
        assert_eq!(worked_since(opened, &working_at_open, &now), (5, 1));
    }
}
