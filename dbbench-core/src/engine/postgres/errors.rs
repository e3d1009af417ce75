//! PostgreSQL's errors as dbbench's database error: "PostgreSQL error 40001: …", with the
//! SQLSTATE as the code, by which the profile's `classify` knows a serialization failure from a
//! deadlock. Both drivers make them here: tokio-postgres's connections and the `wire`.

use crate::model::error::Error;

/// The product as its errors name it.
pub const SYSTEM: &str = "PostgreSQL";

/// The server's error `sqlstate` with `message` (its detail and hint appended where it gave them)
/// as a database error.
pub fn raised(sqlstate: impl Into<String>, message: String) -> Error {
    Error::Database {
        system: SYSTEM,
        code: Some(sqlstate.into()),
        message,
        source: None,
    }
}

/// The SQLSTATE of `error`, if PostgreSQL raised it.
pub fn sqlstate(error: &Error) -> Option<&str> {
    match error {
        Error::Database {
            system: SYSTEM,
            code: Some(code),
            ..
        } => Some(code),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_server_error_reads_with_its_sqlstate() {
        let error = raised(
            "40001",
            "could not serialize access (while running `UPDATE`)".into(),
        );
        assert_eq!(
            error.to_string(),
            "PostgreSQL error 40001: could not serialize access (while running `UPDATE`)"
        );
        assert_eq!(sqlstate(&error), Some("40001"));
    }

    #[test]
    fn another_systems_error_has_no_sqlstate() {
        let other = Error::Database {
            system: "Other",
            code: Some("40001".into()),
            message: "m".into(),
            source: None,
        };
        assert_eq!(sqlstate(&other), None);
        assert_eq!(sqlstate(&Error::msg("40001")), None);
    }
}
