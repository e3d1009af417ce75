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
    /// A database system reported an error. Only the backend that made it knows what it means
    /// (a deadlock to retry, a missing permission): it knows its own by `system` and reads `code`,
    /// or its driver's error in `source`. The model names no product.
    #[error("{system} error{}: {message}", shown_code(code))]
    Database {
        /// The product as the message names it. One backend may name several (a server that
        /// speaks another product's protocol names itself).
        system: &'static str,
        /// The system's own code as its messages write it (an error number, a SQLSTATE); `None`
        /// where they show none, which reads "`<system> error: <message>`".
        code: Option<String>,
        /// The system's message, with what dbbench was doing and the advice the backend has.
        message: String,
        /// The driver's own error, for what the fields do not carry (its extended code).
        source: Option<Box<dyn std::error::Error + Send + Sync>>,
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

/// ` 40001` after the system's name, or nothing where the system shows no code.
fn shown_code(code: &Option<String>) -> String {
    code.as_ref()
        .map_or(String::new(), |code| format!(" {code}"))
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

    fn database(code: Option<&str>) -> Error {
        Error::Database {
            system: "Some DB",
            code: code.map(str::to_string),
            message: "creating the database: …".into(),
            source: None,
        }
    }

    #[test]
    fn a_database_error_names_its_system_and_its_code_where_it_has_one() {
        assert_eq!(
            database(Some("42")).to_string(),
            "Some DB error 42: creating the database: …"
        );
        assert_eq!(
            database(None).to_string(),
            "Some DB error: creating the database: …"
        );
    }
}
