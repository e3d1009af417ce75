//! A connection of the embedded engine: a `rusqlite` connection with a prepared-statement cache.

use super::writer_queue::{GaveUp, WriterQueue};
use crate::model::error::Result;
use crate::model::value::{Row, Value};
use rusqlite::types::{ToSqlOutput, ValueRef};
use std::sync::Arc;

/// One SQLite connection to an embedded benchmark database.
pub struct EmbeddedConnection {
    pub(crate) conn: rusqlite::Connection,
    storage: Option<crate::engine::embedded::storage::StorageErrors>,
    /// The database's stop switch, for connections a body uses.
    pub(crate) cancel: Option<Arc<crate::util::cancel::Cancel>>,
    /// The database's queue of writers, and whether this connection holds its turn.
    writers: Option<Arc<WriterQueue>>,
    holds_turn: bool,
    /// The lock wait the body or the load set (`PRAGMA busy_timeout = N`): a queued writer waits
    /// no longer for its turn than SQLite would for its lock, so `lock_timeout = "0s"` still
    /// makes every collision a `SQLITE_BUSY`.
    lock_wait: Option<std::time::Duration>,
}

struct Param<'a>(&'a Value);

impl rusqlite::ToSql for Param<'_> {
    fn to_sql(&self) -> rusqlite::Result<ToSqlOutput<'_>> {
        Ok(match self.0 {
            Value::Null => ToSqlOutput::Borrowed(ValueRef::Null),
            Value::Int(v) => ToSqlOutput::Borrowed(ValueRef::Integer(*v)),
            Value::Float(v) => ToSqlOutput::Borrowed(ValueRef::Real(*v)),
            Value::Text(v) => ToSqlOutput::Borrowed(ValueRef::Text(v.as_bytes())),
            Value::Blob(v) => ToSqlOutput::Borrowed(ValueRef::Blob(v)),
        })
    }
}

/// Virtual-machine steps between two reads of the cancel switch (see `with_cancel`).
const PROGRESS_OPS: std::os::raw::c_int = 1000;

impl EmbeddedConnection {
    /// Wraps an open rusqlite connection.
    pub(crate) fn new(conn: rusqlite::Connection) -> Self {
        conn.set_prepared_statement_cache_capacity(64);
        EmbeddedConnection {
            conn,
            storage: None,
            cancel: None,
            writers: None,
            holds_turn: false,
            lock_wait: None,
        }
    }

    /// Queues this connection's writes behind the database's other writers (`writer_queue`).
    pub(crate) fn with_writer_queue(mut self, writers: Arc<WriterQueue>) -> Self {
        self.writers = Some(writers);
        self
    }

    /// Lets the connection explain storage failures (a full file, a full disk) by the file.
    pub(crate) fn with_storage(
        mut self,
        storage: crate::engine::embedded::storage::StorageErrors,
    ) -> Self {
        self.storage = Some(storage);
        self
    }

    /// Registers the connection with `cancel`: firing it interrupts the statement in flight.
    ///
    /// Why a progress handler as well as the interrupt: `sqlite3_interrupt` is a no-op when no
    /// statement is running, so a switch fired between [`Cancel::check`] and the statement's
    /// first step (a Ctrl-C in that gap) was lost and a statement that never ends ran on. The
    /// handler reads the switch every [`PROGRESS_OPS`] virtual-machine steps, whenever it was
    /// fired, at the cost of one atomic load per thousand steps.
    ///
    /// [`Cancel::check`]: crate::util::cancel::Cancel::check
    pub(crate) fn with_cancel(mut self, cancel: Arc<crate::util::cancel::Cancel>) -> Self {
        let handle = self.conn.get_interrupt_handle();
        cancel.register(move || handle.interrupt());
        let polled = Arc::clone(&cancel);
        self.conn
            .progress_handler(PROGRESS_OPS, Some(move || polled.is_fired()));
        self.cancel = Some(cancel);
        self
    }

    /// The dbbench error for a SQLite error on this connection, naming the file when the
    /// storage layer caused it.
    pub(crate) fn explain(&self, error: rusqlite::Error) -> crate::model::error::Error {
        match &self.storage {
            Some(storage) => storage.explain(error),
            None => crate::model::error::Error::from(error),
        }
    }

    /// The underlying rusqlite connection, for code that needs SQLite directly.
    pub fn raw(&mut self) -> &mut rusqlite::Connection {
        &mut self.conn
    }

    pub(crate) fn execute(&mut self, sql: &str, params: &[Value]) -> Result<u64> {
        // A `PRAGMA busy_timeout` is read-only to SQLite, so it never queues.
        self.note_lock_wait(sql);
        let result = self.execute_queued(sql, params);
        self.end_turn_after_transaction();
        result
    }

    fn execute_queued(&mut self, sql: &str, params: &[Value]) -> Result<u64> {
        if self.writers.is_some() && !self.holds_turn {
            let writes = match Turn::of_control(sql) {
                Some(turn) => turn == Turn::Take,
                None => {
                    let stmt = self.conn.prepare_cached(sql).map_err(|e| self.explain(e))?;
                    !stmt.readonly()
                }
            };
            if writes {
                self.take_turn()?;
            }
        }
        let run = || -> rusqlite::Result<u64> {
            let mut stmt = self.conn.prepare_cached(sql)?;
            let params: Vec<Param<'_>> = params.iter().map(Param).collect();
            let params = rusqlite::params_from_iter(params.iter());
            if stmt.column_count() > 0 {
                // A statement that returns rows (`SELECT 1`, a PRAGMA, `… RETURNING`): run it and
                // discard them, as the other backends' execute does, instead of failing with
                // SQLite's "Execute returned results".
                let readonly = stmt.readonly();
                let mut rows = stmt.query(params)?;
                while rows.next()?.is_some() {}
                return Ok(if readonly { 0 } else { self.conn.changes() });
            }
            Ok(stmt.execute(params)? as u64)
        };
        run().map_err(|e| self.explain(e))
    }

    pub(crate) fn batch(&mut self, sql: &str) -> Result<()> {
        if self.note_lock_wait(sql) {
            // Setting the lock wait writes nothing.
            return self.conn.execute_batch(sql).map_err(|e| self.explain(e));
        }
        // A batch is not prepared as a whole, so only a transaction's own control statements
        // are told apart: anything else may write and queues (a batch is setup, not a load's
        // hot path).
        if self.writers.is_some()
            && !self.holds_turn
            && Turn::of_control(sql).unwrap_or(Turn::Take) == Turn::Take
        {
            self.take_turn()?;
        }
        let result = self.conn.execute_batch(sql).map_err(|e| self.explain(e));
        self.end_turn_after_transaction();
        result
    }

    /// Keeps the lock wait a `PRAGMA busy_timeout = N` sets, for the queue's wait.
    /// Whether `sql` was that statement.
    fn note_lock_wait(&mut self, sql: &str) -> bool {
        let ms = busy_timeout_ms(sql);
        if let Some(ms) = ms {
            self.lock_wait = Some(std::time::Duration::from_millis(ms));
        }
        ms.is_some()
    }

    /// Waits for this connection's turn to write, as long as SQLite's busy handler would.
    fn take_turn(&mut self) -> Result<()> {
        let Some(writers) = &self.writers else {
            return Ok(());
        };
        let cancel = self.cancel.clone();
        let stopped = move || cancel.as_ref().is_some_and(|c| c.is_fired());
        match writers.acquire(self.lock_wait.unwrap_or(super::BUSY_LIMIT), &stopped) {
            Ok(()) => {
                self.holds_turn = true;
                Ok(())
            }
            // The codes SQLite itself would give, so the driver retries a busy transaction and
            // a stop reads as an interrupted statement, as they did before the queue.
            Err(why) => {
                let (code, message) = match why {
                    GaveUp::Timeout => (
                        rusqlite::ffi::SQLITE_BUSY,
                        "database is locked: the writer before this one kept its turn past this connection's lock wait",
                    ),
                    GaveUp::Stopped => (rusqlite::ffi::SQLITE_INTERRUPT, "interrupted"),
                };
                Err(self.explain(rusqlite::Error::SqliteFailure(
                    rusqlite::ffi::Error::new(code),
                    Some(message.to_string()),
                )))
            }
        }
    }

    /// Hands the turn on once no transaction is open (after a commit, a rollback, a statement
    /// in autocommit, or a failure that ended the transaction).
    fn end_turn_after_transaction(&mut self) {
        if self.holds_turn && self.conn.is_autocommit() {
            self.holds_turn = false;
            if let Some(writers) = &self.writers {
                writers.release();
            }
        }
    }

    pub(crate) fn query(&mut self, sql: &str, params: &[Value]) -> Result<Vec<Row>> {
        self.query_rows(sql, params).map_err(|e| self.explain(e))
    }

    fn query_rows(&self, sql: &str, params: &[Value]) -> rusqlite::Result<Vec<Row>> {
        let mut stmt = self.conn.prepare_cached(sql)?;
        let columns: Arc<[String]> = stmt.column_names().iter().map(|c| c.to_string()).collect();
        let params: Vec<Param<'_>> = params.iter().map(Param).collect();
        let mut rows = stmt.query(rusqlite::params_from_iter(params.iter()))?;
        let mut out = Vec::new();
        while let Some(row) = rows.next()? {
            let values = (0..columns.len())
                .map(|i| {
                    Ok(match row.get_ref(i)? {
                        ValueRef::Null => Value::Null,
                        ValueRef::Integer(v) => Value::Int(v),
                        ValueRef::Real(v) => Value::Float(v),
                        ValueRef::Text(t) => Value::Text(String::from_utf8_lossy(t).into_owned()),
                        ValueRef::Blob(b) => Value::Blob(b.to_vec()),
                    })
                })
                .collect::<rusqlite::Result<Vec<_>>>()?;
            out.push(Row::new(columns.clone(), values));
        }
        Ok(out)
    }
}

impl Drop for EmbeddedConnection {
    fn drop(&mut self) {
        // Closing rolls back an open transaction: the turn goes with it.
        if self.holds_turn {
            if let Some(writers) = &self.writers {
                writers.release();
            }
        }
    }
}

/// The milliseconds of `PRAGMA busy_timeout = N` (the form the profile's `lock_timeout` writes).
fn busy_timeout_ms(sql: &str) -> Option<u64> {
    let compact: String = sql
        .trim()
        .trim_end_matches(';')
        .chars()
        .filter(|c| !c.is_whitespace())
        .collect::<String>()
        .to_ascii_lowercase();
    compact.strip_prefix("pragmabusy_timeout=")?.parse().ok()
}

/// Whether a transaction-control statement needs the writers' turn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Turn {
    Take,
    Skip,
}

impl Turn {
    /// `Some` for a transaction's control statement: `BEGIN IMMEDIATE` and `BEGIN EXCLUSIVE` take
    /// SQLite's write lock at once and so need the turn; a deferred `BEGIN`, `COMMIT`, `END`,
    /// `ROLLBACK`, `SAVEPOINT` and `RELEASE` do not (a write inside takes it then). `None` for
    /// any other statement.
    fn of_control(sql: &str) -> Option<Turn> {
        let words: Vec<String> = sql
            .trim()
            .trim_end_matches(';')
            .split_whitespace()
            .take(2)
            .map(str::to_ascii_uppercase)
            .collect();
        match words.first().map(String::as_str)? {
            "BEGIN" => Some(match words.get(1).map(String::as_str) {
                Some("IMMEDIATE" | "EXCLUSIVE") => Turn::Take,
                _ => Turn::Skip,
            }),
            "COMMIT" | "END" | "ROLLBACK" | "SAVEPOINT" | "RELEASE" => Some(Turn::Skip),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_lock_wait_set_by_pragma_bounds_the_queue_too() {
        assert_eq!(busy_timeout_ms("PRAGMA busy_timeout = 0"), Some(0));
        assert_eq!(busy_timeout_ms("pragma busy_timeout=2500;"), Some(2500));
        assert_eq!(busy_timeout_ms("PRAGMA busy_timeout"), None);
        let queue = Arc::new(WriterQueue::default());
        queue
            .acquire(std::time::Duration::from_secs(1), &|| false)
            .unwrap();
        let mut c = EmbeddedConnection::new(rusqlite::Connection::open_in_memory().unwrap())
            .with_writer_queue(queue.clone());
        c.batch("PRAGMA busy_timeout = 0").unwrap();
        let started = std::time::Instant::now();
        let busy = c.execute("CREATE TABLE t (x INTEGER)", &[]).unwrap_err();
        assert!(
            started.elapsed() < std::time::Duration::from_secs(1),
            "no wait at all"
        );
        assert!(busy.to_string().contains("locked"), "{busy}");
        assert_eq!(queue.snapshot(), (true, 0), "it left the queue");
    }

    #[test]
    fn only_statements_that_take_the_write_lock_at_once_need_the_turn() {
        assert_eq!(Turn::of_control("BEGIN"), Some(Turn::Skip));
        assert_eq!(Turn::of_control(" begin deferred;"), Some(Turn::Skip));
        assert_eq!(Turn::of_control("BEGIN IMMEDIATE"), Some(Turn::Take));
        assert_eq!(
            Turn::of_control("begin exclusive transaction"),
            Some(Turn::Take)
        );
        assert_eq!(Turn::of_control("COMMIT"), Some(Turn::Skip));
        assert_eq!(Turn::of_control("ROLLBACK"), Some(Turn::Skip));
        assert_eq!(Turn::of_control("INSERT INTO t DEFAULT VALUES"), None);
    }

    /// Two connections of one database in WAL: a reader never queues, a writer waits for the
    /// transaction before it and goes on at its commit, and the turn is free afterwards.
    #[test]
    fn writers_wait_in_turn_and_readers_do_not() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("q.db");
        let queue = Arc::new(WriterQueue::default());
        let open = || {
            let conn = rusqlite::Connection::open(&path).unwrap();
            conn.execute_batch("PRAGMA journal_mode = WAL").unwrap();
            conn.busy_timeout(std::time::Duration::from_secs(30))
                .unwrap();
            EmbeddedConnection::new(conn).with_writer_queue(queue.clone())
        };
        let mut a = open();
        a.batch("CREATE TABLE t (x INTEGER)").unwrap();
        assert_eq!(
            queue.snapshot(),
            (false, 0),
            "a statement in autocommit hands the turn on"
        );
        a.batch("BEGIN").unwrap();
        assert_eq!(
            queue.snapshot(),
            (false, 0),
            "a deferred BEGIN takes no turn"
        );
        a.execute("INSERT INTO t VALUES (1)", &[]).unwrap();
        assert_eq!(
            queue.snapshot(),
            (true, 0),
            "the first write takes the turn"
        );

        let mut b = open();
        assert_eq!(b.execute("SELECT count(*) FROM t", &[]).unwrap(), 0);
        assert_eq!(queue.snapshot(), (true, 0), "a reader does not queue");
        let writer = std::thread::spawn(move || {
            b.execute("INSERT INTO t VALUES (2)", &[]).unwrap();
            b
        });
        let waited = std::time::Instant::now();
        while queue.snapshot() != (true, 1) {
            assert!(
                waited.elapsed() < std::time::Duration::from_secs(10),
                "b never queued"
            );
            std::thread::yield_now();
        }
        a.batch("COMMIT").unwrap();
        let b = writer.join().unwrap();
        assert_eq!(
            queue.snapshot(),
            (false, 0),
            "b's autocommit insert handed the turn back"
        );
        let rows = b.query_rows("SELECT count(*) FROM t", &[]).unwrap();
        assert_eq!(rows[0].get::<i64>(0).unwrap(), 2);
    }

    #[test]
    fn execute_takes_statements_that_return_rows() {
        let mut c = EmbeddedConnection::new(rusqlite::Connection::open_in_memory().unwrap());
        assert_eq!(c.execute("SELECT 1", &[]).unwrap(), 0);
        c.execute("CREATE TABLE t (x INTEGER)", &[]).unwrap();
        assert_eq!(c.execute("INSERT INTO t VALUES (1), (2)", &[]).unwrap(), 2);
        assert_eq!(
            c.execute("INSERT INTO t VALUES (3) RETURNING x", &[])
                .unwrap(),
            1
        );
        assert_eq!(c.execute("SELECT x FROM t", &[]).unwrap(), 0);
        let rows = c.query("SELECT count(*) FROM t", &[]).unwrap();
        assert_eq!(rows[0].get::<i64>(0).unwrap(), 3);
    }

    /// The Ctrl-C race that hung CI: the switch fired while no statement ran (after the check,
    /// before the first step), and then a statement that never ends started. SQLite's
    /// interrupt alone is lost in that gap; the progress handler stops it. A watchdog ends the
    /// statement after 20 s so a regression fails instead of hanging.
    #[test]
    fn a_switch_fired_before_a_statement_starts_still_stops_it() {
        let cancel = crate::util::cancel::Cancel::new();
        let c = EmbeddedConnection::new(rusqlite::Connection::open_in_memory().unwrap())
            .with_cancel(Arc::clone(&cancel));
        cancel.fire(crate::util::cancel::Stop::Signal("SIGINT"));
        let watchdog = c.conn.get_interrupt_handle();
        let (done, waited) = std::sync::mpsc::channel::<()>();
        let guard = std::thread::spawn(move || {
            if waited
                .recv_timeout(std::time::Duration::from_secs(20))
                .is_err()
            {
                watchdog.interrupt();
            }
        });
        let started = std::time::Instant::now();
        // Straight to SQLite, past `Cancel::check`, as a statement already past it would be.
        let never = c.conn.query_row(
            "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r) \
             SELECT count(*) FROM r",
            [],
            |row| row.get::<_, i64>(0),
        );
        let _ = done.send(());
        guard.join().unwrap();
        assert!(never.is_err(), "the statement was stopped");
        assert!(
            started.elapsed() < std::time::Duration::from_secs(10),
            "stopped by the switch, not by the watchdog: {:?}",
            started.elapsed()
        );
    }
}
