//! SQLite's errors as dbbench's database error: "SQLite error: …" with rusqlite's words, and the
//! rusqlite error kept as the source, from which the profile's `classify` reads SQLite's code
//! (its messages show none). The conversion is `From`, so `?` works on rusqlite's results: the
//! engine's own code turns them through `explain` (which names the file the storage layer could
//! not write), and a benchmark body that uses rusqlite itself may use `?`.

use crate::model::error::Error;

/// The product as its errors name it.
pub const SYSTEM: &str = "SQLite";

impl From<rusqlite::Error> for Error {
    fn from(error: rusqlite::Error) -> Self {
        Error::Database {
            system: SYSTEM,
            code: None,
            message: error.to_string(),
            source: Some(Box::new(error)),
        }
    }
}

/// The rusqlite error inside `error`, if SQLite raised it.
pub fn sqlite(error: &Error) -> Option<&rusqlite::Error> {
    match error {
        Error::Database {
            system: SYSTEM,
            source: Some(source),
            ..
        } => source.downcast_ref(),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rusqlite::ffi;

    #[test]
    fn an_error_reads_in_sqlites_words_and_keeps_its_code() {
        let failure = rusqlite::Error::SqliteFailure(
            ffi::Error::new(ffi::SQLITE_ERROR),
            Some("no such table: charge".into()),
        );
        let error = Error::from(failure);
        assert_eq!(error.to_string(), "SQLite error: no such table: charge");
        assert_eq!(
            sqlite(&error).and_then(rusqlite::Error::sqlite_error_code),
            Some(rusqlite::ErrorCode::Unknown)
        );
        let busy = Error::from(rusqlite::Error::SqliteFailure(
            ffi::Error::new(ffi::SQLITE_BUSY),
            None,
        ));
        assert_eq!(
            busy.to_string(),
            "SQLite error: Error code 5: The database file is locked"
        );
    }

    #[test]
    fn another_systems_error_is_no_sqlite_error() {
        let other = Error::Database {
            system: "Other",
            code: None,
            message: "m".into(),
            source: Some(Box::new(rusqlite::Error::QueryReturnedNoRows)),
        };
        assert!(sqlite(&other).is_none());
        assert!(sqlite(&Error::msg("x")).is_none());
    }
}
