//! A connection to the benchmark's database, whatever the backend: a backend's
//! [`EngineConnection`] with what every backend shares around each statement (the stop switch is
//! asked before it, and explains its error after).

use crate::engine::plugin::EngineConnection;
use crate::model::dialect::Dialect;
use crate::model::error::{Error, Result};
use crate::model::value::{FromValue, Row, Value};
use crate::util::cancel::Cancel;
use std::sync::Arc;

/// One connection to the database under test.
///
/// Methods are `async` so that one body runs unchanged on every backend; on the embedded engine
/// they complete without yielding.
pub struct Connection {
    engine: Box<dyn EngineConnection>,
    /// The statement this connection last started and whether it is still waiting for it: when
    /// a server stops answering and the body is abandoned, the error names it. The buffer is
    /// reused, so a statement costs a copy of its text and no allocation.
    in_flight: String,
    waiting: bool,
}

impl std::fmt::Debug for Connection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Connection({:?})", self.dialect())
    }
}

impl Connection {
    /// `conn` as a connection a body or the driver uses.
    pub fn new(conn: impl EngineConnection + 'static) -> Connection {
        Connection::from_boxed(Box::new(conn))
    }

    pub(crate) fn from_boxed(conn: Box<dyn EngineConnection>) -> Connection {
        Connection {
            engine: conn,
            in_flight: String::new(),
            waiting: false,
        }
    }

    /// The first line of the statement this connection was waiting for when its caller stopped
    /// waiting (the body was abandoned), if it was waiting for one.
    pub(crate) fn in_flight(&self) -> Option<String> {
        self.waiting
            .then(|| crate::util::cancel::headline(&self.in_flight))
    }

    /// The backend's connection, for its database's methods.
    pub(crate) fn engine(&mut self) -> &mut dyn EngineConnection {
        self.engine.as_mut()
    }

    /// The backend's own connection type `C`, when this is one (tests and tools that reach
    /// a backend's own methods, e.g. PostgreSQL's `with_client`).
    pub fn downcast_mut<C: EngineConnection>(&mut self) -> Option<&mut C> {
        let engine: &mut dyn std::any::Any = self.engine.as_mut();
        engine.downcast_mut::<C>()
    }

    /// The dialect this connection speaks.
    pub fn dialect(&self) -> Dialect {
        self.engine.dialect()
    }

    /// Runs one statement and returns the number of rows it changed.
    pub async fn execute(&mut self, sql: &str) -> Result<u64> {
        self.execute_with(sql, &[]).await
    }

    /// The stop switch of the database this connection belongs to (connections a body opened
    /// through its database; administrative connections have none). Borrowed, not cloned: the
    /// switch is shared by every connection of the database, and a count changed by each
    /// statement of every worker would move its cache line between cores.
    fn cancel(&self) -> Option<&Arc<Cancel>> {
        self.engine.cancel()
    }

    /// Refuses a statement once the database's run was cancelled (timeout or signal).
    fn admit(&mut self, sql: &str) -> Result<()> {
        self.in_flight.clear();
        self.in_flight.push_str(sql);
        self.waiting = true;
        match self.cancel() {
            Some(c) => c.check(sql),
            None => Ok(()),
        }
    }

    /// A statement's result, its error replaced by `Cancelled` when the switch fired meanwhile.
    fn explain<T>(&mut self, result: Result<T>, sql: &str) -> Result<T> {
        self.waiting = false;
        match self.cancel() {
            Some(c) => c.explain(result, sql),
            None => result,
        }
    }

    /// Runs one statement with parameters and returns the number of rows it changed.
    pub async fn execute_with(&mut self, sql: &str, params: &[Value]) -> Result<u64> {
        self.admit(sql)?;
        let result = self.engine.execute(sql, params).outcome().await;
        self.explain(result, sql)
    }

    /// Runs several statements separated by `;` (no parameters, no results).
    pub async fn batch(&mut self, sql: &str) -> Result<()> {
        self.admit(sql)?;
        let result = self.engine.batch(sql).outcome().await;
        self.explain(result, sql)
    }

    /// Runs a query and returns every row.
    pub async fn query(&mut self, sql: &str) -> Result<Vec<Row>> {
        self.query_with(sql, &[]).await
    }

    /// Runs a query with parameters and returns every row.
    pub async fn query_with(&mut self, sql: &str, params: &[Value]) -> Result<Vec<Row>> {
        self.admit(sql)?;
        let result = self.engine.query(sql, params).outcome().await;
        self.explain(result, sql)
    }

    /// Runs a query that returns one value and converts it.
    pub async fn query_scalar<T: FromValue>(&mut self, sql: &str) -> Result<T> {
        let rows = self.query(sql).await?;
        let row = rows
            .first()
            .ok_or_else(|| Error::msg(format!("query returned no row: {sql}")))?;
        row.get(0)
    }
}
