//! A connection of the embedded engine: a `rusqlite` connection with a prepared-statement cache.

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
        }
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
        self.conn.execute_batch(sql).map_err(|e| self.explain(e))
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

#[cfg(test)]
mod tests {
    use super::*;

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
