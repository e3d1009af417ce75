//! The error type of dbbench. Every I/O error carries the path it concerns.

use std::path::PathBuf;

/// The result type of benchmark bodies and of the runtime.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Everything that can go wrong while running a benchmark.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A file-system operation failed.
    #[error("{action} `{}`: {source}", path.display())]
    Io {
        /// What dbbench was doing ("cannot create directory").
        action: &'static str,
        /// The file or directory concerned.
        path: PathBuf,
        /// The operating system's error.
        source: std::io::Error,
    },
    /// The embedded engine (SQLite) reported an error.
    #[error("SQLite error: {0}")]
    Sqlite(#[from] rusqlite::Error),
    /// SQL Server (or a server that speaks its protocol) reported an error.
    #[error("{} error {code}: {message}", server_word(.code))]
    Server {
        /// The server's error number.
        code: u32,
        /// The server's message.
        message: String,
    },
    /// PostgreSQL reported an error; `code` is its SQLSTATE (`40001`, `40P01`, `42P01`).
    #[error("PostgreSQL error {code}: {message}")]
    Postgres {
        /// The five-character SQLSTATE.
        code: String,
        /// The server's message, with its detail and hint when it gave them.
        message: String,
    },
    /// The chosen backend cannot honour an option of the benchmark.
    #[error("option `{option}` is not supported by the {backend} backend: {reason}")]
    Unsupported {
        /// The option's name as written in `#[db_bench]`.
        option: &'static str,
        /// The backend's keyword.
        backend: &'static str,
        /// Why, and what to do instead.
        reason: String,
    },
    /// The server product a backend reached cannot honour an option of the benchmark: the
    /// SQL Server backend talking to Babelfish for PostgreSQL or Azure SQL Database. The product
    /// is named, not the backend, because SQL Server itself could.
    #[error("cannot run on {product}: {reason}")]
    NotOnProduct {
        /// The option's name as written in `#[db_bench]`.
        option: &'static str,
        /// The product's name (`Babelfish for PostgreSQL`).
        product: &'static str,
        /// Why, and what to do instead.
        reason: String,
    },
    /// The environment (variables, volumes, connection string) is not usable.
    #[error("configuration error: {0}")]
    Config(String),
    /// A data file or the log is full and may not grow (SQL Server's error 1105).
    #[error("could not allocate space: file `{}` is full and its growth is {growth}", path.display())]
    FileFull {
        /// The file that is full.
        path: PathBuf,
        /// Its growth setting.
        growth: String,
    },
    /// The benchmark body exceeded its `timeout` and was stopped.
    #[error("timed out after {} in repetition {repetition}{}", show_duration(*limit), in_flight(statement))]
    Timeout {
        /// The cell's limit.
        limit: std::time::Duration,
        /// Which repetition (from 1, warm-ups included).
        repetition: u32,
        /// The statement that was running when the limit passed, if one was.
        statement: Option<String>,
    },
    /// A signal (Ctrl-C, SIGTERM) stopped the run; `detail` says what was kept.
    #[error("interrupted by {signal}: {detail}")]
    Interrupted {
        /// The signal's name (`SIGINT`).
        signal: &'static str,
        /// What the run kept and how to continue it.
        detail: String,
    },
    /// A statement was refused or stopped because its database's run was cancelled (a timeout
    /// or a signal); the repetition turns it into [`Error::Timeout`] or [`Error::Interrupted`].
    #[error("cancelled (statement: {statement})")]
    Cancelled {
        /// The statement, shortened to its first line.
        statement: String,
    },
    /// The benchmark body panicked.
    #[error("the benchmark body panicked: {0}")]
    Panic(String),
    /// The server did not answer the cancel after the body's timeout, and the body was abandoned
    /// with its connections (the message says the grace, the timeout and the statement). Kept
    /// apart from [`Error::Timeout`], which a cancel that was answered gives.
    #[error("{0}")]
    Unanswered(String),
    /// Refused to touch a database that dbbench did not create.
    #[error(
        "refusing to touch `{0}`: it exists but was not created by dbbench (no ownership marker)"
    )]
    NotOwned(String),
    /// Any other failure, described in words.
    #[error("{0}")]
    Other(String),
}

impl Error {
    /// An I/O error about `path`.
    pub fn io(action: &'static str, path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        Error::Io {
            action,
            path: path.into(),
            source,
        }
    }

    /// An error described in words.
    pub fn msg(message: impl Into<String>) -> Self {
        Error::Other(message.into())
    }
}

/// `500ms`, `2s`, `1.5s`: how a duration is written in `#[db_bench(timeout = …)]`.
pub fn show_duration(d: std::time::Duration) -> String {
    let ms = d.as_millis();
    if ms < 1000 || !ms.is_multiple_of(100) {
        format!("{ms}ms")
    } else if ms.is_multiple_of(1000) {
        format!("{}s", ms / 1000)
    } else {
        format!("{}s", ms as f64 / 1000.0)
    }
}

/// Babelfish for PostgreSQL's one error number: every error it raises while running T-SQL reaches
/// the client as 33557097 (recorded from Babelfish 4.2), so only its message says what it means.
pub const BABELFISH_ERROR: u32 = 33_557_097;

/// Whose error a server error is. Babelfish raises every error under its one number, which is no
/// SQL Server error number: "SQL Server error 33557097" would send a reader to SQL Server's list.
fn server_word(code: &u32) -> &'static str {
    if *code == BABELFISH_ERROR {
        "Babelfish"
    } else {
        "SQL Server"
    }
}

fn in_flight(statement: &Option<String>) -> String {
    match statement {
        Some(s) => format!(" (statement: {s})"),
        None => String::new(),
    }
}

impl From<serde_json::Error> for Error {
    fn from(e: serde_json::Error) -> Self {
        Error::Other(format!("JSON error: {e}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_server_error_names_the_server_that_raised_it() {
        let error = |code| Error::Server {
            code,
            message: "creating the database: …".into(),
        };
        assert_eq!(
            error(1105).to_string(),
            "SQL Server error 1105: creating the database: …"
        );
        assert_eq!(
            error(BABELFISH_ERROR).to_string(),
            "Babelfish error 33557097: creating the database: …"
        );
    }
}
