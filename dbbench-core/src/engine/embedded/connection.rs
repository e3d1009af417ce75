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
    pub(crate) fn with_cancel(mut self, cancel: Arc<crate::util::cancel::Cancel>) -> Self {
        let handle = self.conn.get_interrupt_handle();
        cancel.register(move || handle.interrupt());
        self.cancel = Some(cancel);
        self
    }

    /// The dbbench error for a SQLite error on this connection, naming the file when the
    /// storage layer caused it.
    pub(crate) fn explain(&self, error: rusqlite::Error) -> crate::model::error::Error {
        match &self.storage {
            Some(storage) => storage.explain(error),
            None => crate::model::error::Error::Sqlite(error),
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
}
