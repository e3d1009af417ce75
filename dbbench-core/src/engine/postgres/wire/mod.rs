//! A driver worker's connection after startup: dbbench speaks the extended query protocol on the
//! socket itself, one exchange at a time, with the messages of `postgres-protocol` (the crate
//! tokio-postgres is built on). No connection task, no channels, no waker hand-over: a statement
//! is one write and the reads up to `ReadyForQuery`, in the caller's own future, as libpq does.
//!
//! Why: through tokio-postgres a worker's transaction (`BEGIN`, one `INSERT`, `COMMIT`) cost
//! 32,000 instructions on the client (callgrind, `examples/pg_driver_vs_pgbench.rs` at one
//! connection) against 11,800 for pgbench's, most of it tokio-postgres's design: per statement a
//! request channel to its connection future, a response channel back, and the polls of both.
//! That was the driver's whole remaining gap to pgbench.
//!
//! What stays with tokio-postgres: the startup and authentication (every method it supports, on
//! a stream lent to it and taken back once the server is ready), the cancel token, and every
//! connection that is not a worker's (the session's, COPY, evidence).

mod reply;
mod stream;

use super::errors;
use super::types::{encode_param, param_format};
use crate::model::error::{Error, Result};
use crate::model::value::{Row, Value};
use crate::util::cancel::headline;
use bytes::BytesMut;
use fallible_iterator::FallibleIterator;
use postgres_protocol::message::backend::{DataRowBody, Message, RowDescriptionBody};
use postgres_protocol::message::frontend;
use reply::{closed, columns_of, decode, encoding, lost, protocol, server_error};
use std::collections::HashMap;
use std::io;
use std::sync::{Arc, Mutex};
use stream::Lent;
pub(crate) use stream::Stream;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio_postgres::types::Type;
use tokio_postgres::{CancelToken, NoTls};

/// Prepared statements kept before the cache is closed and starts over.
const STATEMENT_CACHE: usize = 256;

/// SQLSTATE `feature_not_supported`: a cached plan no longer fits its table.
const STALE_PLAN: &str = "0A000";

/// A statement prepared on this connection.
#[derive(Debug, Clone)]
pub(super) struct Prepared {
    name: Arc<str>,
    /// Parameters the server inferred (`$1`…).
    params: usize,
    columns: Arc<[String]>,
    /// Each column's type, `None` for one dbbench cannot read (reported when a row comes).
    types: Arc<[Option<Type>]>,
}

/// What one exchange brought back.
#[derive(Default)]
struct Outcome {
    /// Rows the last command reported (`INSERT 0 1` → 1).
    affected: u64,
    rows: Vec<DataRowBody>,
    description: Option<RowDescriptionBody>,
    params: usize,
}

/// One connection speaking the protocol itself.
pub(crate) struct Wire {
    stream: Stream,
    input: BytesMut,
    output: BytesMut,
    statements: HashMap<String, Prepared>,
    named: u64,
    /// Why the connection can no longer be used (the server closed it, or sent FATAL).
    lost: Option<String>,
    /// Exchanges sent whose `ReadyForQuery` has not been read yet (more than one only after a
    /// statement's future was dropped while it waited).
    owed: usize,
    /// A write was under way: set until the whole exchange is in the socket.
    writing: bool,
    /// Whether the exchange being read is an extended-protocol one.
    extended: bool,
}

impl std::fmt::Debug for Wire {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Wire")
            .field("statements", &self.statements.len())
            .field("lost", &self.lost)
            .finish()
    }
}

impl Wire {
    /// Runs the startup and authentication through tokio-postgres on `stream`, then takes the
    /// stream back. The server sends nothing after `ReadyForQuery` until it is asked, so nothing
    /// is left in tokio-postgres's buffers.
    pub(crate) async fn start(
        config: &tokio_postgres::Config,
        stream: Stream,
    ) -> std::result::Result<(Wire, CancelToken), tokio_postgres::Error> {
        let shared = Arc::new(Mutex::new(stream));
        let (client, connection) = config.connect_raw(Lent(shared.clone()), NoTls).await?;
        let token = client.cancel_token();
        // Dropped unpolled: tokio-postgres sends nothing (Terminate goes only from a polled
        // connection future), it only lets go of its share of the stream.
        drop(client);
        drop(connection);
        let stream = Arc::try_unwrap(shared)
            .unwrap_or_else(|_| unreachable!("tokio-postgres's halves were dropped"))
            .into_inner()
            .unwrap_or_else(|p| p.into_inner());
        let wire = Wire {
            stream,
            input: BytesMut::with_capacity(8192),
            output: BytesMut::with_capacity(1024),
            statements: HashMap::new(),
            named: 0,
            lost: None,
            owed: 0,
            writing: false,
            extended: false,
        };
        Ok((wire, token))
    }

    /// Runs one statement with `$1`… parameters; returns the rows it changed.
    pub(crate) async fn execute(&mut self, sql: &str, params: &[Value]) -> Result<u64> {
        let prepared = self.prepared(sql).await?;
        self.bind(sql, &prepared, params, false)?;
        let outcome = self.exchange(sql, false, true).await;
        self.forget_on_stale(outcome, sql).map(|o| o.affected)
    }

    /// Runs a query with `$1`… parameters and returns its rows.
    pub(crate) async fn query(&mut self, sql: &str, params: &[Value]) -> Result<Vec<Row>> {
        let prepared = self.prepared(sql).await?;
        self.bind(sql, &prepared, params, true)?;
        let outcome = self.exchange(sql, true, true).await;
        let outcome = self.forget_on_stale(outcome, sql)?;
        outcome
            .rows
            .iter()
            .map(|row| decode(row, &prepared, sql))
            .collect()
    }

    /// Runs statements separated by `;` with the simple query protocol.
    pub(crate) async fn batch(&mut self, sql: &str) -> Result<()> {
        self.output.clear();
        frontend::query(sql, &mut self.output).map_err(|e| encoding(e, sql))?;
        self.exchange(sql, false, false).await.map(|_| ())
    }

    /// Tells the server the session ends (best effort, without waiting): the server then logs
    /// no "unexpected EOF" for a dropped worker.
    pub(crate) fn terminate(&mut self) {
        if self.lost.is_none() {
            self.output.clear();
            frontend::terminate(&mut self.output);
            let _ = self.stream.try_send(&self.output);
        }
    }

    /// The statement of `sql`, prepared on first use (Parse, Describe, Sync: one round trip).
    async fn prepared(&mut self, sql: &str) -> Result<Prepared> {
        if let Some(p) = self.statements.get(sql) {
            return Ok(p.clone());
        }
        if self.statements.len() >= STATEMENT_CACHE {
            self.close_all(sql).await?;
        }
        self.named += 1;
        let name: Arc<str> = format!("dbbench_w{}", self.named).into();
        self.output.clear();
        frontend::parse(&name, sql, std::iter::empty(), &mut self.output)
            .map_err(|e| encoding(e, sql))?;
        frontend::describe(b'S', &name, &mut self.output).map_err(|e| encoding(e, sql))?;
        frontend::sync(&mut self.output);
        let outcome = self.exchange(sql, false, true).await?;
        let (columns, types) = match &outcome.description {
            Some(description) => columns_of(description).map_err(|e| protocol(e, sql))?,
            None => (Vec::new(), Vec::new()),
        };
        let prepared = Prepared {
            name,
            params: outcome.params,
            columns: columns.into(),
            types: types.into(),
        };
        self.statements.insert(sql.to_string(), prepared.clone());
        Ok(prepared)
    }

    /// Closes every cached statement on the server and empties the cache.
    async fn close_all(&mut self, sql: &str) -> Result<()> {
        self.output.clear();
        for prepared in self.statements.values() {
            frontend::close(b'S', &prepared.name, &mut self.output)
                .map_err(|e| encoding(e, sql))?;
        }
        frontend::sync(&mut self.output);
        self.statements.clear();
        self.exchange(sql, false, true).await.map(|_| ())
    }

    /// Writes Bind, Execute and Sync for `prepared` with `params` into the output buffer.
    fn bind(&mut self, sql: &str, prepared: &Prepared, params: &[Value], rows: bool) -> Result<()> {
        if params.len() != prepared.params {
            return Err(Error::msg(format!(
                "`{}` takes {} parameter(s) ($1…), but {} were given",
                headline(sql),
                prepared.params,
                params.len()
            )));
        }
        self.output.clear();
        // Rows come in binary, which the session's connection reads too ([`Cell`]).
        let result_formats = if rows { prepared.types.len() } else { 0 };
        frontend::bind(
            "",
            &prepared.name,
            params.iter().map(param_format),
            params,
            |value, buf| Ok(encode_param(value, buf)),
            std::iter::repeat_n(1, result_formats),
            &mut self.output,
        )
        .map_err(|e| match e {
            frontend::BindError::Conversion(e) => Error::msg(format!(
                "a parameter of `{}` cannot be sent: {e}",
                headline(sql)
            )),
            frontend::BindError::Serialization(e) => encoding(e, sql),
        })?;
        frontend::execute("", 0, &mut self.output).map_err(|e| encoding(e, sql))?;
        frontend::sync(&mut self.output);
        Ok(())
    }

    /// Sends the output buffer and reads the answers up to `ReadyForQuery`. The first error the
    /// server reported is returned after that, so the connection is ready for the next statement.
    /// `extended`: the buffer is an extended-protocol exchange (ends with Sync), not a simple
    /// query.
    async fn exchange(&mut self, sql: &str, keep_rows: bool, extended: bool) -> Result<Outcome> {
        if let Some(why) = &self.lost {
            return Err(lost(why, sql));
        }
        if self.writing {
            // An earlier statement's future was dropped halfway through its write: the server
            // holds part of a message, and nothing can follow it.
            return Err(self.lose(
                "an earlier statement was abandoned while it was being sent".into(),
                sql,
            ));
        }
        // An earlier statement's future was dropped while it waited (a timeout around it): its
        // answers come first.
        while self.owed > 0 {
            // Their errors are theirs; only a lost connection concerns this statement.
            if let Err(e) = self.read_until_ready(sql, false).await {
                if self.lost.is_some() {
                    return Err(e);
                }
            }
        }
        self.extended = extended;
        self.owed += 1;
        self.writing = true;
        if let Err(e) = self.stream.write_all(&self.output).await {
            return Err(self.lose(closed(&e), sql));
        }
        self.writing = false;
        self.read_until_ready(sql, keep_rows).await
    }

    /// Reads the answers of the oldest exchange still owed, up to its `ReadyForQuery`.
    async fn read_until_ready(&mut self, sql: &str, keep_rows: bool) -> Result<Outcome> {
        let mut outcome = Outcome::default();
        let mut failed = None;
        loop {
            let message = match self.message().await {
                Ok(m) => m,
                Err(e) => return Err(self.lose(closed(&e), sql)),
            };
            match message {
                Message::ReadyForQuery(_) => {
                    self.owed -= 1;
                    break;
                }
                Message::ErrorResponse(body) => {
                    let (error, fatal) = server_error(&body, sql);
                    if let Some(message) = fatal {
                        // The server closes the session after a FATAL error: no ReadyForQuery.
                        self.lost = Some(message);
                        return Err(error);
                    }
                    failed.get_or_insert(error);
                }
                Message::CommandComplete(body) => {
                    let tag = body.tag().map_err(|e| protocol(e, sql))?;
                    outcome.affected = tag
                        .rsplit(' ')
                        .next()
                        .and_then(|n| n.parse().ok())
                        .unwrap_or(0);
                }
                Message::DataRow(body) if keep_rows => outcome.rows.push(body),
                Message::RowDescription(body) => outcome.description = Some(body),
                Message::ParameterDescription(body) => {
                    outcome.params = body.parameters().count().map_err(|e| protocol(e, sql))?;
                }
                Message::CopyInResponse(_) => {
                    // COPY … FROM STDIN needs the session's connection: refuse it. The server
                    // ignores the Sync that came with the statement while it waits for data, so
                    // an extended exchange sends its Sync again after the CopyFail.
                    self.output.clear();
                    frontend::copy_fail(
                        "COPY FROM STDIN is not available on a driver worker's connection; \
                         use the session's connection (`db`)",
                        &mut self.output,
                    )
                    .map_err(|e| encoding(e, sql))?;
                    if self.extended {
                        frontend::sync(&mut self.output);
                    }
                    if let Err(e) = self.stream.write_all(&self.output).await {
                        return Err(self.lose(closed(&e), sql));
                    }
                }
                // Completions, notices, parameter changes, notifications, rows of an
                // `execute`, COPY TO output: nothing to keep.
                _ => {}
            }
        }
        match failed {
            Some(error) => Err(error),
            None => Ok(outcome),
        }
    }

    /// The next message from the server, reading more when the buffer holds no whole one.
    async fn message(&mut self) -> io::Result<Message> {
        loop {
            if let Some(message) = Message::parse(&mut self.input)? {
                return Ok(message);
            }
            if self.input.capacity() - self.input.len() < 4096 {
                self.input.reserve(8192);
            }
            if self.stream.read_buf(&mut self.input).await? == 0 {
                return Err(io::Error::new(
                    io::ErrorKind::UnexpectedEof,
                    "the server closed the connection",
                ));
            }
        }
    }

    /// A lost connection: remembered, so later statements fail at once with the same reason.
    fn lose(&mut self, why: String, sql: &str) -> Error {
        let error = lost(&why, sql);
        self.lost = Some(why);
        error
    }

    /// A statement whose cached plan no longer fits the table (it was dropped and made again
    /// with other columns) leaves the cache, so the next call prepares it again.
    fn forget_on_stale(&mut self, outcome: Result<Outcome>, sql: &str) -> Result<Outcome> {
        if let Err(error) = &outcome {
            if errors::sqlstate(error) == Some(STALE_PLAN) {
                self.statements.remove(sql);
            }
        }
        outcome
    }
}
