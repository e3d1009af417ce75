//! What the server did for others during a window ([`ServerActivity`]): other sessions' CPU,
//! reads and writes (`sys.dm_exec_sessions` plus the request each is running now,
//! `sys.dm_exec_requests`, as differences per session), and other databases' I/O on the volumes
//! of the cell's files (`sys.dm_io_virtual_file_stats` with `sys.dm_os_volume_stats`).
//!
//! Everything dbbench does in a window runs in the cell's database (the body's session, the
//! driver's workers), so "another session" is one whose current database is another, and tempdb
//! is left out of the file I/O: the cell's own sorts, spills and row versions are written there.
//! A session's `cpu_time`, `reads` and `writes` grow when its request ends, so the request still
//! running is added to it: a long statement of another application counts as it runs. Both
//! views show other sessions only with VIEW SERVER STATE (a login without it sees its own row
//! alone, which would read as "nobody else"): without it, the figures are unavailable with that
//! reason. A product that does not answer a view (Babelfish) has that figure recorded as
//! unavailable by product, and the cell goes on.

use super::super::identity::Product;
use super::super::MssqlConnection;
use crate::model::interference::ServerActivity;
use crate::model::value::Row;
use std::collections::BTreeMap;

/// Whether this login sees every session.
pub const PERMISSION_SQL: &str =
    "SELECT CAST(HAS_PERMS_BY_NAME(NULL, NULL, 'VIEW SERVER STATE') AS int) AS granted;";

/// Other databases' user sessions: cumulative CPU (ms), reads and writes (pages), the running
/// request's added.
pub const SESSIONS_SQL: &str = "SELECT CAST(s.session_id AS int) AS session_id, \
     CONVERT(nvarchar(30), s.login_time, 126) AS login_time, \
     CAST(s.cpu_time + ISNULL(r.cpu_time, 0) AS bigint) AS cpu_ms, \
     CAST(s.reads + ISNULL(r.reads, 0) AS bigint) AS reads, \
     CAST(s.writes + ISNULL(r.writes, 0) AS bigint) AS writes \
     FROM sys.dm_exec_sessions AS s \
     LEFT JOIN sys.dm_exec_requests AS r ON r.session_id = s.session_id \
     WHERE s.is_user_process = 1 AND s.session_id <> @@SPID AND s.database_id <> DB_ID();";

/// Other databases' (not tempdb's) bytes read and written, per file, on the volumes that hold
/// the cell's files.
pub const VOLUME_IO_SQL: &str = "SELECT CAST(f.database_id AS int) AS database_id, \
     CAST(f.file_id AS int) AS file_id, \
     CAST(f.num_of_bytes_read + f.num_of_bytes_written AS bigint) AS bytes \
     FROM sys.dm_io_virtual_file_stats(NULL, NULL) AS f \
     CROSS APPLY sys.dm_os_volume_stats(f.database_id, f.file_id) AS v \
     WHERE f.database_id NOT IN (DB_ID(), 2) AND v.volume_mount_point IN \
     (SELECT w.volume_mount_point FROM sys.database_files AS d \
     CROSS APPLY sys.dm_os_volume_stats(DB_ID(), d.file_id) AS w);";

const SOURCE: &str = "sys.dm_exec_sessions and sys.dm_exec_requests (other databases' \
     sessions), sys.dm_io_virtual_file_stats (other databases on the cell's volumes)";

type Outcome<T> = std::result::Result<T, String>;

/// A session's cumulative work: CPU ms, reads, writes; by session id and login time (an id is
/// reused by the next login).
type Sessions = BTreeMap<(i64, String), [u64; 3]>;

/// What the window's open read.
pub struct Reading {
    sessions: Outcome<Sessions>,
    io: Outcome<BTreeMap<(i64, i64), u64>>,
}

impl Reading {
    /// Reads the server's counters at the window's open.
    pub async fn open(conn: &mut MssqlConnection, product: &Product) -> Reading {
        if let Some(why) = denied(conn).await {
            return Reading {
                sessions: Err(why.clone()),
                io: Err(why),
            };
        }
        Reading {
            sessions: sessions(conn, product).await,
            io: volume_io(conn, product).await,
        }
    }

    /// Reads them again at the close: what others did in between.
    pub async fn close(self, conn: &mut MssqlConnection, product: &Product) -> ServerActivity {
        let mut activity = ServerActivity {
            source: SOURCE.into(),
            ..ServerActivity::default()
        };
        let after = match &self.sessions {
            Ok(_) => sessions(conn, product).await,
            Err(why) => Err(why.clone()),
        };
        match (self.sessions, after) {
            (Ok(before), Ok(after)) => {
                let (seen, [cpu_ms, reads, writes]) = session_work(&before, &after);
                activity.other_sessions = Some(seen);
                activity.other_cpu_s = Some(cpu_ms as f64 / 1000.0);
                activity.other_reads = Some(reads);
                activity.other_writes = Some(writes);
            }
            (Err(why), _) | (_, Err(why)) => {
                activity.unavailable.insert("other_sessions".into(), why);
            }
        }
        let after = match &self.io {
            Ok(_) => volume_io(conn, product).await,
            Err(why) => Err(why.clone()),
        };
        match (self.io, after) {
            (Ok(before), Ok(after)) => {
                activity.other_io_bytes = Some(
                    after
                        .iter()
                        .map(|(file, now)| now.saturating_sub(*before.get(file).unwrap_or(&0)))
                        .sum(),
                );
            }
            (Err(why), _) | (_, Err(why)) => {
                activity.unavailable.insert("other_io_bytes".into(), why);
            }
        }
        activity
    }
}

/// Why this login cannot see other sessions, if it cannot (a server that does not answer the
/// question is asked the views anyway: their own errors say more).
async fn denied(conn: &mut MssqlConnection) -> Option<String> {
    let rows = conn.query(PERMISSION_SQL, &[]).await.ok()?;
    let granted: Option<i64> = rows.first()?.get_named("granted").ok()?;
    (granted == Some(0)).then(|| {
        "this login lacks VIEW SERVER STATE, without which sys.dm_exec_sessions and \
         sys.dm_io_virtual_file_stats show only its own session and database"
            .to_string()
    })
}

/// The server's error, said as the product's.
fn not_answered(product: &Product, view: &str, error: crate::model::error::Error) -> String {
    format!("{} did not answer {view}: {error}", product.name())
}

async fn sessions(conn: &mut MssqlConnection, product: &Product) -> Outcome<Sessions> {
    let rows = conn
        .query(SESSIONS_SQL, &[])
        .await
        .map_err(|e| not_answered(product, "sys.dm_exec_sessions", e))?;
    rows.iter()
        .map(session_row)
        .collect::<crate::model::error::Result<_>>()
        .map_err(|e| not_answered(product, "sys.dm_exec_sessions", e))
}

fn session_row(row: &Row) -> crate::model::error::Result<((i64, String), [u64; 3])> {
    let count = |name| row.get_named::<i64>(name).map(|v| v.max(0) as u64);
    Ok((
        (row.get_named("session_id")?, row.get_named("login_time")?),
        [count("cpu_ms")?, count("reads")?, count("writes")?],
    ))
}

async fn volume_io(
    conn: &mut MssqlConnection,
    product: &Product,
) -> Outcome<BTreeMap<(i64, i64), u64>> {
    let view = "sys.dm_io_virtual_file_stats with sys.dm_os_volume_stats";
    let rows = conn
        .query(VOLUME_IO_SQL, &[])
        .await
        .map_err(|e| not_answered(product, view, e))?;
    rows.iter()
        .map(|r| {
            Ok((
                (r.get_named("database_id")?, r.get_named("file_id")?),
                r.get_named::<i64>("bytes")?.max(0) as u64,
            ))
        })
        .collect::<crate::model::error::Result<_>>()
        .map_err(|e| not_answered(product, view, e))
}

/// The sessions that worked between two reads and their work: a session that logged in since
/// counts whole, one that ended is not seen (its last request's work is lost with it).
fn session_work(before: &Sessions, after: &Sessions) -> (u64, [u64; 3]) {
    let mut seen = 0;
    let mut total = [0u64; 3];
    for (session, now) in after {
        let then = before.get(session).copied().unwrap_or_default();
        let work: Vec<u64> = now
            .iter()
            .zip(then)
            .map(|(n, t)| n.saturating_sub(t))
            .collect();
        if work.iter().any(|w| *w > 0) {
            seen += 1;
        }
        for (sum, w) in total.iter_mut().zip(work) {
            *sum += w;
        }
    }
    (seen, total)
}

#[cfg(test)]
mod tests;
