//! Turning tiberius errors into errors a user can act on: the server's number and message, what
//! dbbench was doing, and one sentence on what to do about it (the permission to grant, the
//! feature this server lacks, the disk that is full). The password never appears.

use super::connect::ConnectSettings;
use crate::model::error::Error;

/// What kind of problem a server error number stands for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Category {
    /// The login was refused.
    Login,
    /// A permission is missing.
    Permission,
    /// This version, edition or SQL-Server-compatible server lacks the feature.
    Unsupported,
    /// A disk, filegroup or the log is full.
    DiskFull,
    /// A file could not be created where dbbench asked.
    FilePlacement,
    /// A lock could not be taken within `SET LOCK_TIMEOUT` (1222).
    LockTimeout,
    /// Azure SQL throttled the request or the database is briefly unavailable (40501, 40613):
    /// retry after a pause.
    Transient,
    /// An Extended Events name (session, event, target) is invalid or missing (25623).
    InvalidName,
    /// The Extended Events session is already stopped (25704): nothing to stop.
    AlreadyStopped,
    /// Anything else.
    Other,
}

/// `SET LOCK_TIMEOUT` expired (error 1222).
pub const LOCK_TIMEOUT: u32 = 1222;

/// "The server principal … is not able to access the database … under the current security
/// context" (error 916): the login has no user in that database.
pub const NO_ACCESS: u32 = 916;

/// "Cannot open database … requested by the login" (error 4060): the login has no user in
/// that database, or the database is not online.
pub const CANNOT_OPEN: u32 = 4060;

/// "Invalid object name …" (error 208).
pub const INVALID_OBJECT: u32 = 208;

/// The product as SQL Server's errors name it: "SQL Server error 1105: …".
pub const SQL_SERVER: &str = "SQL Server";

/// The product as Babelfish's errors name it: "Babelfish error 33557097: …".
pub const BABELFISH: &str = "Babelfish";

/// Babelfish for PostgreSQL's one error number: every error it raises while running T-SQL reaches
/// the client as 33557097 (recorded from Babelfish 4.2), so only its message says what it means.
pub const BABELFISH_ERROR: u32 = 33_557_097;

/// What dropping a database takes, for errors 3701 and 5011 (DROP DATABASE docs).
const DROP_NEEDS: &str = "dropping a database needs CONTROL on it, ALTER ANY DATABASE, or \
     membership in its db_owner role (its owner, the login that created it, has them): drop it \
     as that login or as a sysadmin";

/// Whether server error `code` goes away by retrying the same work after a pause: Azure SQL's
/// throttling (40501, "the service is currently busy") and a database that is briefly
/// unavailable (40613, during a failover or reconfiguration).
pub fn is_transient(code: u32) -> bool {
    category(code, "") == Category::Transient
}

/// The category of server error `code`, using `message` where one number covers several causes.
pub fn category(code: u32, message: &str) -> Category {
    match code {
        18452 | 18456 | 18470 | 18486 | 18487 | 18488 => Category::Login,
        229 | 230 | 262 | 297 | 300 | 916 | CANNOT_OPEN | 2571 | 8189 | 15247 | 15151 | 1088
        | 3110 => Category::Permission,
        40508 | 40510 | 40511 | 40512 | 40514 | 40517 | 40527 | 40529 | 1844 | 195 | 2526 | 534
        | 5058 | 15009 | 25706 => Category::Unsupported,
        // Babelfish: "'DROP EVENT SESSION' is not currently supported in Babelfish", "'XML VALUE'
        // is not currently supported…", "permission denied for schema …" (PostgreSQL's words).
        BABELFISH_ERROR if message.contains("not currently supported") => Category::Unsupported,
        BABELFISH_ERROR if message.contains("permission denied") => Category::Permission,
        BABELFISH_ERROR
            if message.contains("could not extend file") || message.contains("No space left") =>
        {
            Category::DiskFull
        }
        LOCK_TIMEOUT => Category::LockTimeout,
        40501 | 40613 => Category::Transient,
        25623 => Category::InvalidName,
        25704 => Category::AlreadyStopped,
        // "Invalid object name": on a system view it means this server does not have it.
        208 if message.contains("sys.") => Category::Unsupported,
        // "Incorrect syntax" near a newer keyword: the statement predates this server.
        102 | 156 if message.contains("SCOPED") || message.contains("MAXDOP") => {
            Category::Unsupported
        }
        1101 | 1105 | 9002 | 1133 => Category::DiskFull,
        5149 | 3202 if message.contains("112") || message.contains("space") => Category::DiskFull,
        5123 | 5133 | 5170 | 5105 | 5110 => Category::FilePlacement,
        _ => Category::Other,
    }
}

/// The permission a denial message names: `CREATE DATABASE` from "CREATE DATABASE permission
/// denied…", `VIEW SERVER STATE` from "VIEW SERVER STATE permission was denied…", `sysadmin` for
/// DBCC commands.
pub fn permission_named(message: &str) -> Option<String> {
    if let Some(pos) = message.find("to run DBCC ") {
        let command: String = message[pos + "to run ".len()..]
            .chars()
            .take_while(|c| *c != '.' && *c != '\'')
            .collect();
        return Some(format!(
            "membership in sysadmin (to run {})",
            command.trim()
        ));
    }
    let pos = message.find(" permission")?;
    let before = message[..pos].trim_start_matches("The ").trim();
    // Denials start with the permission; keep the trailing upper-case words only.
    let words: Vec<&str> = before
        .split_whitespace()
        .rev()
        .take_while(|w| w.chars().all(|c| c.is_ascii_uppercase() || c == '_'))
        .collect();
    (!words.is_empty()).then(|| words.into_iter().rev().collect::<Vec<_>>().join(" "))
}

/// One sentence on what to do about server error `code`.
pub fn advice(code: u32, message: &str) -> String {
    match category(code, message) {
        Category::Login => {
            "the login was refused: check the user id and password in DBBENCH_MSSQL \
             (the password is not shown here), that SQL Server authentication is enabled, and that \
             the login may connect to the database named in the connection string"
                .to_string()
        }
        Category::Permission if code == NO_ACCESS || code == CANNOT_OPEN => {
            "the login has no user in that database \
             (another login created it, or its guest user is disabled): read it as its owner or \
             as a sysadmin"
                .to_string()
        }
        Category::Permission => format!(
            "the login lacks {}: grant it, or run dbbench with a login in the sysadmin role \
             (docs/sql-server.md lists what each option needs)",
            permission_named(message)
                .map(|p| format!("the {p} permission"))
                .unwrap_or_else(|| "the permission named above".to_string())
        ),
        Category::Unsupported => "this server's version or edition does not support the \
             statement; options that need it cannot run here, and metrics that need it are \
             recorded as unavailable"
            .to_string(),
        Category::DiskFull => "the disk, filegroup or log on the server is full: free space on \
             the server's volume, choose smaller sizes, or allow growth"
            .to_string(),
        Category::FilePlacement => "SQL Server could not create a file at that path: \
             DBBENCH_VOLUMES must name directories on the SERVER that exist and that the SQL \
             Server service account may write, and no file of an earlier run may remain there"
            .to_string(),
        Category::LockTimeout => "a lock was not granted within SET LOCK_TIMEOUT; another \
             session holds it (the driver counts this as a timeout)"
            .to_string(),
        Category::Transient => "Azure SQL is throttling requests or the database is briefly \
             unavailable (failover, reconfiguration); retry after a pause"
            .to_string(),
        Category::InvalidName => "an Extended Events name (session, event or target) is invalid \
             or missing on this server"
            .to_string(),
        Category::AlreadyStopped => "the Extended Events session was already stopped".to_string(),
        Category::Other => match code {
            1803 => "the primary data file must be at least as large as the model database's; \
                 raise data_size (per file)"
                .to_string(),
            1801 => "a database of that name already exists".to_string(),
            // "Cannot drop the database …, because it does not exist or you do not have
            // permission" / "User does not have permission to alter database …": dbbench only
            // reports these for a database that still exists.
            3701 | 5011 => {
                format!("the database exists, so the login may not change it; {DROP_NEEDS}")
            }
            1205 => "the statement was chosen as a deadlock victim".to_string(),
            _ => String::new(),
        },
    }
}

/// Maps a tiberius error raised while doing `action` to a dbbench error, scrubbing the password.
pub fn map(settings: &ConnectSettings, error: tiberius::error::Error, action: &str) -> Error {
    use tiberius::error::Error as T;
    match error {
        T::Server(token) => server(
            settings,
            token.code(),
            &format!(
                "{} (severity {}, state {})",
                token.message(),
                token.class(),
                token.state()
            ),
            action,
        ),
        T::Io {
            kind: std::io::ErrorKind::TimedOut,
            message,
        } => command_timeout(settings, action, &message),
        T::Tls(message) => Error::Config(settings.scrub(&format!(
            "{action}: TLS failed: {message}; for a self-signed server certificate add \
             `TrustServerCertificate=true` to DBBENCH_MSSQL, or `encrypt=false` where the server \
             allows it"
        ))),
        other => Error::Other(settings.scrub(&format!("{action}: {other}"))),
    }
}

/// The words every command-timeout error carries, by which [`is_command_timeout`] knows it.
const COMMAND_TIMEOUT: &str = "the server did not answer within the command timeout";

/// A command that got no answer within `Command Timeout`. tiberius 0.13 sends no Attention then
/// and marks the connection out of sync (`RoundTripTimeout` in its `src/tds/stream/token.rs`):
/// SQL Server goes on running the statement, and the connection can send nothing more, not even
/// an Attention (`Client::cancel_query` refuses a desynced connection). The statement must be
/// ended from another connection (`cancel::end_statement`).
pub fn command_timeout(settings: &ConnectSettings, action: &str, message: &str) -> Error {
    Error::Other(settings.scrub(&format!(
        "{action}: {COMMAND_TIMEOUT} (`Command Timeout` in DBBENCH_MSSQL), and SQL Server may \
         still be running it: {message}"
    )))
}

/// Whether `error` is a command timeout: the statement may still run on the server.
pub fn is_command_timeout(error: &Error) -> bool {
    matches!(error, Error::Other(text) if text.contains(COMMAND_TIMEOUT))
}

/// Server error `code` with `message`, the action and the advice, as a database error.
pub fn server(settings: &ConnectSettings, code: u32, message: &str, action: &str) -> Error {
    let advice = advice(code, message);
    let text = if advice.is_empty() {
        format!("{action}: {message}")
    } else {
        format!("{action}: {message} — {advice}")
    };
    raised(code, settings.scrub(&text))
}

/// Whose error a server error is. Babelfish raises every error under its one number, which is no
/// SQL Server error number: "SQL Server error 33557097" would send a reader to SQL Server's list.
fn system_of(code: u32) -> &'static str {
    if code == BABELFISH_ERROR {
        BABELFISH
    } else {
        SQL_SERVER
    }
}

/// Server error `code` with `message` (already scrubbed) as a database error named after the
/// server that raised it: "SQL Server error 1105: …", "Babelfish error 33557097: …".
pub fn raised(code: u32, message: String) -> Error {
    Error::Database {
        system: system_of(code),
        code: Some(code.to_string()),
        message,
        source: None,
    }
}

/// The server error number and message of `error`, if it is a server error of this backend.
pub fn server_error(error: &Error) -> Option<(u32, &str)> {
    match error {
        Error::Database {
            system: SQL_SERVER | BABELFISH,
            code: Some(code),
            message,
            ..
        } => Some((code.parse().ok()?, message)),
        _ => None,
    }
}

/// Whether `error` says an object does not exist: error 208 ("Invalid object name") on SQL
/// Server, PostgreSQL's "relation … does not exist" under Babelfish's one number.
pub fn is_missing_object(error: &Error) -> bool {
    match server_error(error) {
        Some((INVALID_OBJECT, _)) => true,
        Some((BABELFISH_ERROR, message)) => message.contains("does not exist"),
        _ => false,
    }
}

/// The server error number inside `error`, if it is one.
pub fn code_of(error: &Error) -> Option<u32> {
    server_error(error).map(|(code, _)| code)
}

#[cfg(test)]
mod tests;
