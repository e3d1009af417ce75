//! MariaDB's errors as dbbench's database error: "MariaDB error 1213: Deadlock found …", with the
//! server's error number as the code (its SQLSTATE kept in the message), by which the profile's
//! `classify` knows a deadlock from a lock wait timeout. The driver's errors that are not the
//! server's (a broken socket) are database errors without a code.

use crate::model::error::Error;

/// The product as its errors name it.
pub const SYSTEM: &str = "MariaDB";

/// `ER_LOCK_DEADLOCK`: the transaction was chosen as a deadlock victim and rolled back.
pub const DEADLOCK: u16 = 1213;
/// `ER_LOCK_WAIT_TIMEOUT`: `innodb_lock_wait_timeout` ran out.
pub const LOCK_WAIT_TIMEOUT: u16 = 1205;
/// `ER_QUERY_INTERRUPTED`: the statement was stopped by `KILL QUERY`.
pub const QUERY_INTERRUPTED: u16 = 1317;

/// A driver error as dbbench's.
pub fn from_driver(e: mysql_async::Error) -> Error {
    match e {
        mysql_async::Error::Server(s) => server(s.code, &s.state, &s.message),
        other => Error::Database {
            system: SYSTEM,
            code: None,
            message: format!("connection: {other}"),
            source: Some(Box::new(other)),
        },
    }
}

/// A server error with its number, SQLSTATE and message.
pub fn server(code: u16, state: &str, message: &str) -> Error {
    Error::Database {
        system: SYSTEM,
        code: Some(code.to_string()),
        message: format!("({state}) {message}"),
        source: None,
    }
}

/// The server's error number of `e`, when MariaDB raised it.
pub fn code(e: &Error) -> Option<u16> {
    match e {
        Error::Database {
            system: SYSTEM,
            code: Some(code),
            ..
        } => code.parse().ok(),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_server_error_reads_with_its_number_and_is_read_back() {
        let e = server(DEADLOCK, "40001", "Deadlock found when trying to get lock");
        assert_eq!(
            e.to_string(),
            "MariaDB error 1213: (40001) Deadlock found when trying to get lock"
        );
        assert_eq!(code(&e), Some(DEADLOCK));
    }

    #[test]
    fn another_systems_error_has_no_number() {
        let other = Error::Database {
            system: "Other",
            code: Some("1213".into()),
            message: "m".into(),
            source: None,
        };
        assert_eq!(code(&other), None);
        assert_eq!(code(&Error::msg("MariaDB error 1213")), None);
    }
}
