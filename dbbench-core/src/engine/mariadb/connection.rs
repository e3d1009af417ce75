//! A connection to a MariaDB database over `mysql_async` (a Unix socket, or the address of an
//! existing server).
//!
//! A statement without parameters goes as text (`COM_QUERY`), so a batch of several statements
//! and any `SHOW` run as written; one with parameters is prepared once and kept in the driver's
//! statement cache, then executed in binary, as the bodies' statements repeat.

use super::cancel::{OpenIds, Registered};
use super::errors::from_driver;
use super::types;
use crate::model::error::{Error, Result};
use crate::model::value::{Row, Value};
use crate::util::cancel::Cancel;
use mysql_async::prelude::Queryable;
use mysql_async::{Conn, Opts, OptsBuilder};
use std::sync::Arc;

/// Prepared statements kept per connection: the driver's default (32) would evict a body's
/// statements in a workload of many.
const STATEMENT_CACHE: usize = 256;

/// One connection to a database.
pub struct MariaDbConnection {
    conn: Conn,
    /// The server's id of this connection, `CONNECTION_ID()` read when it opened.
    id: u32,
    /// Its id among its database's open ones, for the guarded kill; `None` for an admin
    /// connection no stop switch reaches.
    registered: Option<Registered>,
    pub(super) cancel: Option<Arc<Cancel>>,
}

impl std::fmt::Debug for MariaDbConnection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "MariaDbConnection(id {})", self.id)
    }
}

impl MariaDbConnection {
    /// Connects with `server`'s options, to `database` when given.
    pub async fn connect(server: &Opts, database: Option<&str>) -> Result<MariaDbConnection> {
        let opts = OptsBuilder::from_opts(server.clone())
            .db_name(database)
            .stmt_cache_size(STATEMENT_CACHE);
        let mut conn = Conn::new(opts).await.map_err(|e| {
            Error::msg(format!(
                "cannot connect to MariaDB at {}: {}",
                where_(server),
                from_driver(e)
            ))
        })?;
        let id: Option<u32> = conn
            .query_first("SELECT CONNECTION_ID()")
            .await
            .map_err(from_driver)?;
        let id = id.ok_or_else(|| Error::msg("SELECT CONNECTION_ID() returned no row"))?;
        Ok(MariaDbConnection {
            conn,
            id,
            registered: None,
            cancel: None,
        })
    }

    /// Registers the connection with its database's stop switch: firing it sends `KILL QUERY`
    /// for this connection's id from a connection made with `server`'s options, while this
    /// connection is still open (`super::cancel`).
    pub(super) fn with_cancel(
        mut self,
        cancel: Arc<Cancel>,
        ids: &Arc<OpenIds>,
        server: &Opts,
    ) -> Self {
        self.registered = Some(ids.opened(self.id));
        super::cancel::register(&cancel, ids, self.id, server.clone());
        self.cancel = Some(cancel);
        self
    }

    /// The server's id of this connection (`KILL QUERY <id>`).
    pub fn id(&self) -> u32 {
        self.id
    }

    /// Runs one statement; the rows it changed.
    pub async fn execute(&mut self, sql: &str, params: &[Value]) -> Result<u64> {
        if params.is_empty() {
            self.conn.query_drop(sql).await.map_err(from_driver)?;
        } else {
            self.conn
                .exec_drop(sql, types::params(params))
                .await
                .map_err(from_driver)?;
        }
        Ok(self.conn.affected_rows())
    }

    /// Runs several statements separated by `;` (the driver always allows several).
    pub async fn batch(&mut self, sql: &str) -> Result<()> {
        self.conn.query_drop(sql).await.map_err(from_driver)
    }

    /// Runs a query and returns every row of its (first) result.
    pub async fn query(&mut self, sql: &str, params: &[Value]) -> Result<Vec<Row>> {
        if params.is_empty() {
            let result = self.conn.query_iter(sql).await.map_err(from_driver)?;
            rows(result).await
        } else {
            let result = self
                .conn
                .exec_iter(sql, types::params(params))
                .await
                .map_err(from_driver)?;
            rows(result).await
        }
    }

    /// Closes the connection politely (`COM_QUIT`).
    pub async fn close(self) -> Result<()> {
        drop(self.registered);
        self.conn.disconnect().await.map_err(from_driver)
    }
}

/// Where `opts` reach the server, for messages.
pub(super) fn where_(opts: &Opts) -> String {
    match opts.socket() {
        Some(socket) => socket.to_string(),
        None => format!("{}:{}", opts.ip_or_hostname(), opts.tcp_port()),
    }
}

/// Every row of a result's first set, the rest of the result read and dropped.
async fn rows<P: mysql_async::prelude::Protocol>(
    mut result: mysql_async::QueryResult<'_, 'static, P>,
) -> Result<Vec<Row>> {
    let names = types::names(result.columns_ref());
    let raw: Vec<mysql_async::Row> = result.collect().await.map_err(from_driver)?;
    result.drop_result().await.map_err(from_driver)?;
    raw.into_iter().map(|r| types::row(&names, r)).collect()
}
