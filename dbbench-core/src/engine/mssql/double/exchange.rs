//! What passes between a connection and the double: the tiberius API a statement took, the call
//! recorded, and the reply a rule gives (result sets, an affected-row count, a server error, a
//! command timeout). Apart from the server because tests build replies and read calls with no
//! server in hand.

use crate::model::value::{Row, Value};
use std::sync::Arc;

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
    /// The database of the connection that sent it.
    pub database: String,
}

/// Whose behaviour the catalog answers with, where products differ. Babelfish for PostgreSQL
/// 4.2.0 (PostgreSQL 16.3, built from `shared/babelfish/`) was recorded from a real server; no
/// SQL Server was available, so SQL Server's answers are modelled from Microsoft's documentation
/// (each rule names its document) and were never recorded.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Recorded {
    /// Microsoft SQL Server 2022, modelled from its documentation (not recorded).
    #[default]
    SqlServer2022,
    /// Babelfish for PostgreSQL 4.2.0: `EXEC [db].sys.sp_addextendedproperty` from master puts
    /// the property on master; a missing table is error 33557097 `relation "<db>_dbo.<table>"
    /// does not exist`; `ALTER DATABASE … SET SINGLE_USER` is "not currently supported".
    Babelfish42,
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
    /// No answer within the command timeout. tiberius 0.13 then marks the connection out of
    /// sync and refuses every later statement on it without sending it (`RoundTripTimeout` and
    /// `Connection::ensure_not_poisoned` in tiberius' `src/tds/stream/token.rs` and
    /// `src/client/connection.rs`); it sends no Attention, so SQL Server goes on running the
    /// statement: the catalog applies it, as the server does when the statement finishes later.
    Timeout,
    /// No answer ever: a server that stops answering without closing the connection (a hung
    /// disk, a network partition, a frozen VM). The statement's future never completes; only
    /// dbbench's own deadlines (`util::deadline`) end the wait.
    Silent,
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
