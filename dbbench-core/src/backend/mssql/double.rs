//! A scripted stand-in for SQL Server, for tests that cannot reach a real one: every statement a
//! connection sends is recorded with the tiberius API it would have taken (a plain batch through
//! `simple_query`, an RPC through `sp_executesql` for `execute`/`query` with parameters, a bulk
//! load), and answered from rules the test sets up (result sets recorded from a real server, an
//! affected-row count, or a server error number and message).
//!
//! [`ConnectSettings::scripted`](super::ConnectSettings::scripted) makes every connection of the
//! backend talk to one `ScriptedServer`, so whole lifecycles (start-up, creation, teardown) run
//! against recorded server behaviour. The routing rule matters on a real server: transaction
//! control sent as an RPC fails with error 266, so tests assert which API each statement took.

use crate::value::{Row, Value};
use std::sync::{Arc, Mutex};

/// The tiberius API a statement went through.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Api {
    /// A login; the recorded text is the database connected to.
    Login,
    /// `Client::simple_query`: a plain SQL batch.
    Batch,
    /// `Client::execute` / `Client::query`: an RPC call of `sp_executesql`.
    Rpc,
    /// `Client::bulk_insert`: TDS `INSERT BULK`; the text names the table and the row count.
    Bulk,
}

/// One recorded statement.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Call {
    /// The API it took.
    pub api: Api,
    /// The statement text.
    pub sql: String,
}

/// How the scripted server answers a statement.
#[derive(Debug, Clone)]
pub enum Reply {
    /// These result sets (a batch may return several).
    Sets(Vec<Vec<Row>>),
    /// No result set; this many rows changed.
    Affected(u64),
    /// A server error with its number and message, as SQL Server sends it.
    Error {
        /// The error number.
        code: u32,
        /// The message.
        message: String,
    },
}

impl Reply {
    /// One result set with `columns` and `values`, e.g. rows recorded from a real server.
    pub fn rows(columns: &[&str], values: Vec<Vec<Value>>) -> Reply {
        Reply::Sets(vec![rows(columns, values)])
    }

    /// A server error.
    pub fn error(code: u32, message: &str) -> Reply {
        Reply::Error {
            code,
            message: message.to_string(),
        }
    }
}

/// Rows with the given column names.
pub fn rows(columns: &[&str], values: Vec<Vec<Value>>) -> Vec<Row> {
    let columns: Arc<[String]> = columns.iter().map(|c| c.to_string()).collect();
    values
        .into_iter()
        .map(|v| Row::new(columns.clone(), v))
        .collect()
}

struct Rule {
    needle: String,
    reply: Reply,
    /// `Some(n)`: answers only n more times.
    remaining: Option<usize>,
}

#[derive(Default)]
struct Inner {
    rules: Vec<Rule>,
    calls: Vec<Call>,
}

/// A scripted server shared by every connection made from its settings.
#[derive(Clone, Default)]
pub struct ScriptedServer {
    inner: Arc<Mutex<Inner>>,
}

impl std::fmt::Debug for ScriptedServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "ScriptedServer({} calls)", self.calls().len())
    }
}

impl ScriptedServer {
    /// A server that answers every statement with an empty result until told otherwise.
    pub fn new() -> ScriptedServer {
        ScriptedServer::default()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Answers every statement containing `needle` with `reply`. Later rules win, so a test can
    /// override a default answer.
    pub fn on(&self, needle: &str, reply: Reply) -> &ScriptedServer {
        self.push(needle, reply, None)
    }

    /// Answers only the next `times` statements containing `needle` with `reply`.
    pub fn times(&self, needle: &str, times: usize, reply: Reply) -> &ScriptedServer {
        self.push(needle, reply, Some(times))
    }

    fn push(&self, needle: &str, reply: Reply, remaining: Option<usize>) -> &ScriptedServer {
        self.lock().rules.push(Rule {
            needle: needle.to_string(),
            reply,
            remaining,
        });
        self
    }

    /// Every statement so far, in order.
    pub fn calls(&self) -> Vec<Call> {
        self.lock().calls.clone()
    }

    /// The statements containing `needle`.
    pub fn calls_with(&self, needle: &str) -> Vec<Call> {
        self.calls()
            .into_iter()
            .filter(|c| c.sql.contains(needle))
            .collect()
    }

    /// Records `sql` as sent through `api` and returns the newest matching rule's reply (an empty
    /// result when none matches).
    pub(crate) fn answer(&self, api: Api, sql: &str) -> Reply {
        let mut inner = self.lock();
        inner.calls.push(Call {
            api,
            sql: sql.to_string(),
        });
        let found = inner
            .rules
            .iter_mut()
            .rev()
            .find(|r| sql.contains(&r.needle) && r.remaining != Some(0));
        match found {
            Some(rule) => {
                if let Some(n) = rule.remaining.as_mut() {
                    *n -= 1;
                }
                rule.reply.clone()
            }
            None => Reply::Sets(Vec::new()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn newest_rule_wins_and_counted_rules_run_out() {
        let server = ScriptedServer::new();
        server.on("SELECT", Reply::Affected(1));
        server.times("SELECT 2", 1, Reply::error(208, "Invalid object name"));
        assert!(matches!(server.answer(Api::Rpc, "SELECT 2"), Reply::Error { code: 208, .. }));
        assert!(matches!(server.answer(Api::Rpc, "SELECT 2"), Reply::Affected(1)));
        assert!(matches!(server.answer(Api::Batch, "DROP x"), Reply::Sets(s) if s.is_empty()));
        assert_eq!(
            server.calls().iter().map(|c| c.api).collect::<Vec<_>>(),
            vec![Api::Rpc, Api::Rpc, Api::Batch]
        );
    }
}
