//! One connection to PostgreSQL (no TLS: managed clusters listen on a private Unix socket only),
//! with a per-connection cache of prepared statements: through tokio-postgres's client, or, for a
//! driver worker, speaking the protocol itself after tokio-postgres's startup (`Wire`).
//!
//! Why prepared statements: tokio-postgres would otherwise prepare every statement before running
//! it, two round trips per statement. With the cache the driver's hot statement costs one round
//! trip, as pgbench's does. `batch` uses the simple query protocol (several statements, no
//! parameters).
//!
//! Why the connection is driven inline: tokio-postgres splits a connection into a client and a
//! future that does the socket I/O, usually spawned on the runtime. Spawned, every statement
//! costs two cross-thread wake-ups (the driver's workers run on one thread, the I/O task on
//! another), which measured about 40% of pgbench's throughput at one connection. So each call
//! polls the I/O future itself while it waits, on the caller's thread, as libpq does
//! (`Inline`, which also keeps the two from waking the task for each other); when the
//! connection is dropped, the I/O future is handed to the runtime to send Terminate.
//!
//! Why a socket directory gets a stream of our own (`socket::ReadInterestStream`): tokio's Unix stream
//! also listens for write space, which the kernel signals each time the server reads a request,
//! waking the waiting client for nothing (see the `socket` module).

use super::endpoint::{connect_error, connect_socket, connect_tcp, socket_file, tcp_server};
use super::errors;
use super::inline::{Inline, Io};
use super::target::LibpqTarget;
use super::types::{Cell, Param};
use super::wire::{Stream, Wire};
use crate::model::error::{Error, Result};
use crate::model::value::{Row, Value};
use crate::util::cancel::headline;
use std::collections::HashMap;
use std::future::Future;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use tokio_postgres::{CancelToken, Client, NoTls, Statement};

/// Prepared statements kept per connection before the cache starts over.
const STATEMENT_CACHE: usize = 256;

/// How a connection talks to the server.
enum Link {
    /// Through tokio-postgres's client; its I/O half (over tokio's socket or a
    /// [`ReadInterestStream`](super::socket::ReadInterestStream)) is polled by each call.
    Client {
        client: Client,
        io: Inline,
        statements: HashMap<String, Statement>,
    },
    /// The protocol spoken directly ([`Wire`]): a driver worker's connection through a socket
    /// directory.
    Wire(Wire),
}

/// One connection to a PostgreSQL database.
pub struct PostgresConnection {
    link: Link,
    /// For cancel requests.
    token: CancelToken,
    target: LibpqTarget,
    shown: String,
    /// Why the connection ended, as the connection task saw it (the server's FATAL message).
    ended: Arc<Mutex<Option<String>>>,
    /// The socket file, when connected through a [`ReadInterestStream`](super::socket::ReadInterestStream): cancel requests go
    /// there (tokio-postgres only knows the addresses it connected to itself).
    socket_file: Option<PathBuf>,
    /// The TCP server of a worker's connection that speaks the protocol itself: cancel
    /// requests go there (its cancel token knows no address).
    tcp: Option<(String, u16)>,
    /// The database's stop switch, for connections a body uses.
    pub(crate) cancel: Option<Arc<crate::util::cancel::Cancel>>,
}

impl std::fmt::Debug for PostgresConnection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "PostgresConnection({}, {})",
            self.shown, self.target.dbname
        )
    }
}

impl PostgresConnection {
    /// Connects with `config`; the connection's I/O is driven inline by each call.
    pub(crate) async fn open(
        config: tokio_postgres::Config,
        target: LibpqTarget,
        shown: &str,
    ) -> Result<PostgresConnection> {
        let doing = format!("connecting to {shown}, database {}", target.dbname);
        let socket_file = socket_file(&config);
        let (client, io): (Client, Io) = match &socket_file {
            Some(path) => {
                let stream = connect_socket(path, config.get_connect_timeout())
                    .await
                    .map_err(|e| {
                        Error::msg(format!(
                            "PostgreSQL client error while {doing}: error connecting to server \
                             at {}: {e}",
                            path.display()
                        ))
                    })?;
                let (client, connection) = config
                    .connect_raw(stream, NoTls)
                    .await
                    .map_err(|e| map_error(e, &doing, None))?;
                (client, Box::pin(connection))
            }
            None => {
                let (client, connection) = config
                    .connect(NoTls)
                    .await
                    .map_err(|e| map_error(e, &doing, None))?;
                (client, Box::pin(connection))
            }
        };
        Ok(PostgresConnection {
            token: client.cancel_token(),
            link: Link::Client {
                client,
                io: Inline::new(io),
                statements: HashMap::new(),
            },
            target,
            shown: shown.to_string(),
            ended: Arc::new(Mutex::new(None)),
            socket_file,
            tcp: None,
            cancel: None,
        })
    }

    /// Connects for a driver worker: to a single server (a socket directory, or one TCP host
    /// and port) the connection then speaks the protocol itself ([`Wire`]: execute, query and
    /// batch; no COPY); otherwise (several hosts, `hostaddr`, `target_session_attrs`) as
    /// [`open`].
    ///
    /// [`open`]: PostgresConnection::open
    pub(crate) async fn open_wire(
        config: tokio_postgres::Config,
        target: LibpqTarget,
        shown: &str,
    ) -> Result<PostgresConnection> {
        let doing = format!("connecting to {shown}, database {}", target.dbname);
        let timeout = config.get_connect_timeout().copied();
        let (stream, socket_file, tcp) = match (socket_file(&config), tcp_server(&config)) {
            (Some(path), _) => {
                let stream = connect_socket(&path, timeout.as_ref())
                    .await
                    .map_err(|e| connect_error(&doing, &path.display().to_string(), &e))?;
                (Stream::Unix(stream), Some(path), None)
            }
            (None, Some((host, port))) => {
                let stream = connect_tcp(&host, port, timeout)
                    .await
                    .map_err(|e| connect_error(&doing, &format!("{host}:{port}"), &e))?;
                (Stream::Tcp(stream), None, Some((host, port)))
            }
            (None, None) => return Self::open(config, target, shown).await,
        };
        let (wire, token) = Wire::start(&config, stream)
            .await
            .map_err(|e| map_error(e, &doing, None))?;
        Ok(PostgresConnection {
            link: Link::Wire(wire),
            token,
            target,
            shown: shown.to_string(),
            ended: Arc::new(Mutex::new(None)),
            socket_file,
            tcp,
            cancel: None,
        })
    }

    /// Registers the connection with `cancel`: firing it sends PostgreSQL a cancel request for
    /// the statement in flight. The request goes from a thread of its own with a small runtime,
    /// because the fire may come from the watchdog or signal thread, outside any runtime.
    pub(crate) fn with_cancel(mut self, cancel: Arc<crate::util::cancel::Cancel>) -> Self {
        let token = self.token.clone();
        let socket_file = self.socket_file.clone();
        let tcp = self.tcp.clone();
        cancel.register(move || {
            let token = token.clone();
            let socket_file = socket_file.clone();
            let tcp = tcp.clone();
            let _ = std::thread::Builder::new()
                .name("dbbench-pg-cancel".into())
                .spawn(move || {
                    if let Ok(rt) = tokio::runtime::Builder::new_current_thread()
                        .enable_all()
                        .build()
                    {
                        // A failed request leaves the statement running; the body's later
                        // statements are still refused, and teardown ends the session.
                        // Bounded: a server that does not answer keeps the request waiting;
                        // the repetition abandons the body after the same grace.
                        let grace = crate::util::deadline::Deadline::Cancel
                            .limit()
                            .unwrap_or(crate::util::deadline::Deadline::Cancel.default_limit());
                        // The timer is made inside the runtime (it needs its clock).
                        let _ = rt.block_on(async {
                            tokio::time::timeout(grace, async {
                                match (socket_file, tcp) {
                                    (Some(path), _) => {
                                        match tokio::net::UnixStream::connect(path).await {
                                            Ok(stream) => {
                                                token.cancel_query_raw(stream, NoTls).await
                                            }
                                            Err(_) => Ok(()),
                                        }
                                    }
                                    (None, Some((host, port))) => {
                                        match tokio::net::TcpStream::connect((host.as_str(), port))
                                            .await
                                        {
                                            Ok(stream) => {
                                                token.cancel_query_raw(stream, NoTls).await
                                            }
                                            Err(_) => Ok(()),
                                        }
                                    }
                                    (None, None) => token.cancel_query(NoTls).await,
                                }
                            })
                            .await
                        });
                    }
                });
        });
        self.cancel = Some(cancel);
        self
    }

    /// Where libpq clients (pgbench, psql) find this database.
    pub fn libpq_target(&self) -> &LibpqTarget {
        &self.target
    }

    /// Awaits `request` (a call on the client) while polling the connection's I/O on this thread.
    ///
    /// Not an `async fn`, so the request's state is not copied into one more future (see
    /// [`Inline::drive`]).
    fn drive<'a, T>(
        io: &'a mut Inline,
        ended: &'a Mutex<Option<String>>,
        request: impl Future<Output = std::result::Result<T, tokio_postgres::Error>> + 'a,
    ) -> impl Future<Output = std::result::Result<T, tokio_postgres::Error>> + 'a {
        io.drive(request, move |finished| {
            // The server closed the connection: keep why; the request then sees it.
            if let Err(e) = finished {
                *ended.lock().unwrap_or_else(|p| p.into_inner()) = Some(describe(&e));
            }
        })
    }

    /// Runs `work` on the client while the connection's I/O is driven (COPY and other direct
    /// uses of the client). Not on a driver worker's connection.
    pub async fn with_client<'a, T, F>(
        &'a mut self,
        work: impl FnOnce(&'a Client) -> F,
    ) -> Result<T>
    where
        F: Future<Output = std::result::Result<T, tokio_postgres::Error>> + 'a,
    {
        let Link::Client { client, io, .. } = &mut self.link else {
            return Err(Error::msg(
                "a driver worker's connection speaks the protocol itself and has no \
                 tokio-postgres client (COPY and other direct uses need the session's connection, \
                 `db`)",
            ));
        };
        let request = work(client);
        Self::drive(io, &self.ended, request).await.map_err(|e| {
            let ended = self.ended.lock().unwrap_or_else(|p| p.into_inner()).clone();
            map_error(e, "using the connection directly", ended)
        })
    }

    /// The cached prepared statement of `sql`, prepared on first use (tokio-postgres link).
    async fn prepared(
        client: &Client,
        io: &mut Inline,
        statements: &mut HashMap<String, Statement>,
        ended: &Mutex<Option<String>>,
        sql: &str,
    ) -> Result<Statement> {
        if let Some(statement) = statements.get(sql) {
            return Ok(statement.clone());
        }
        let prepared = Self::drive(io, ended, client.prepare(sql)).await;
        let statement = prepared.map_err(|e| fail(ended, e, sql))?;
        if statements.len() >= STATEMENT_CACHE {
            statements.clear();
        }
        statements.insert(sql.to_string(), statement.clone());
        Ok(statement)
    }

    /// Runs one statement with `$1`… parameters; returns the rows it changed.
    pub(crate) async fn execute(&mut self, sql: &str, params: &[Value]) -> Result<u64> {
        let (client, io, statements) = match &mut self.link {
            Link::Wire(wire) => return wire.execute(sql, params).await,
            Link::Client {
                client,
                io,
                statements,
            } => (client, io, statements),
        };
        let statement = Self::prepared(client, io, statements, &self.ended, sql).await?;
        // `execute_raw` takes the parameters as they come: no vectors per statement.
        let request = client.execute_raw(&statement, params.iter().map(Param));
        let done = Self::drive(io, &self.ended, request).await;
        done.map_err(|e| forget_on_stale(statements, &self.ended, e, sql))
    }

    /// Runs statements separated by `;` with the simple query protocol.
    pub(crate) async fn batch(&mut self, sql: &str) -> Result<()> {
        match &mut self.link {
            Link::Wire(wire) => wire.batch(sql).await,
            Link::Client { client, io, .. } => {
                let done = Self::drive(io, &self.ended, client.batch_execute(sql)).await;
                done.map_err(|e| fail(&self.ended, e, sql))
            }
        }
    }

    /// Runs a query with `$1`… parameters and returns its rows.
    pub(crate) async fn query(&mut self, sql: &str, params: &[Value]) -> Result<Vec<Row>> {
        let (client, io, statements) = match &mut self.link {
            Link::Wire(wire) => return wire.query(sql, params).await,
            Link::Client {
                client,
                io,
                statements,
            } => (client, io, statements),
        };
        let statement = Self::prepared(client, io, statements, &self.ended, sql).await?;
        let params: Vec<Param<'_>> = params.iter().map(Param).collect();
        let refs: Vec<&(dyn tokio_postgres::types::ToSql + Sync)> = params
            .iter()
            .map(|p| p as &(dyn tokio_postgres::types::ToSql + Sync))
            .collect();
        let done = Self::drive(io, &self.ended, client.query(&statement, &refs)).await;
        let rows = match done {
            Ok(rows) => rows,
            Err(e) => return Err(forget_on_stale(statements, &self.ended, e, sql)),
        };
        let columns: Arc<[String]> = statement
            .columns()
            .iter()
            .map(|c| c.name().to_string())
            .collect();
        rows.iter()
            .map(|row| {
                let values = (0..row.len())
                    .map(|i| {
                        row.try_get::<_, Cell>(i).map(|c| c.0).map_err(|e| {
                            Error::msg(format!("reading column {i} of `{}`: {e}", headline(sql)))
                        })
                    })
                    .collect::<Result<Vec<Value>>>()?;
                Ok(Row::new(columns.clone(), values))
            })
            .collect()
    }
}

/// A failed execution; a statement whose cached plan no longer fits the table (it was dropped
/// and made again with other columns) leaves the cache so the next call re-prepares.
fn forget_on_stale(
    statements: &mut HashMap<String, Statement>,
    ended: &Mutex<Option<String>>,
    e: tokio_postgres::Error,
    sql: &str,
) -> Error {
    if e.code() == Some(&tokio_postgres::error::SqlState::FEATURE_NOT_SUPPORTED) {
        statements.remove(sql);
    }
    fail(ended, e, sql)
}

fn fail(ended: &Mutex<Option<String>>, e: tokio_postgres::Error, sql: &str) -> Error {
    let ended = ended.lock().unwrap_or_else(|p| p.into_inner()).clone();
    map_error(e, &format!("running `{}`", headline(sql)), ended)
}

impl Drop for PostgresConnection {
    fn drop(&mut self) {
        // The client goes with `self`; the I/O future then sends Terminate and ends. Without a
        // runtime (dropped at shutdown) the socket simply closes.
        match &mut self.link {
            Link::Client { io, .. } => {
                if let (Some(io), Ok(runtime)) = (io.take(), tokio::runtime::Handle::try_current())
                {
                    // Bounded: a server that does not answer would keep the task and its
                    // socket forever; past the deadline both are dropped (the socket closes).
                    let limit = crate::util::deadline::Deadline::Close
                        .limit()
                        .unwrap_or(crate::util::deadline::Deadline::Close.default_limit());
                    runtime.spawn(async move {
                        let _ = tokio::time::timeout(limit, io).await;
                    });
                }
            }
            Link::Wire(wire) => wire.terminate(),
        }
    }
}

/// A tokio-postgres error as a dbbench error: server errors keep their SQLSTATE (which the driver
/// classifies), a lost connection says so plainly with the reason the connection task saw.
pub(crate) fn map_error(e: tokio_postgres::Error, doing: &str, ended: Option<String>) -> Error {
    if let Some(db) = e.as_db_error() {
        let mut message = format!("{} (while {doing})", db.message());
        if let Some(detail) = db.detail() {
            message.push_str(&format!("; detail: {detail}"));
        }
        if let Some(hint) = db.hint() {
            message.push_str(&format!("; hint: {hint}"));
        }
        return errors::raised(db.code().code(), message);
    }
    if e.is_closed() {
        let why = ended.map_or(String::new(), |w| format!(": {w}"));
        return Error::msg(format!(
            "the connection to the PostgreSQL server was lost while {doing}{why}"
        ));
    }
    Error::msg(format!(
        "PostgreSQL client error while {doing}: {}",
        describe(&e)
    ))
}

/// The error with its sources, which tokio-postgres keeps apart (`db error: FATAL: …`).
fn describe(e: &tokio_postgres::Error) -> String {
    let mut text = e.to_string();
    let mut source = std::error::Error::source(e);
    while let Some(s) = source {
        let part = s.to_string();
        if !text.contains(&part) {
            text.push_str(&format!(": {part}"));
        }
        source = s.source();
    }
    text
}
