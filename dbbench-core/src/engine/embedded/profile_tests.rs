use super::*;

fn sqlite(code: i32) -> Error {
    Error::from(rusqlite::Error::SqliteFailure(
        rusqlite::ffi::Error::new(code),
        None,
    ))
}

#[test]
fn busy_and_locked_are_retried_full_is_not() {
    let kind = PROFILE.classify;
    assert_eq!(kind(&sqlite(rusqlite::ffi::SQLITE_BUSY)), ErrorKind::Busy);
    assert_eq!(kind(&sqlite(rusqlite::ffi::SQLITE_LOCKED)), ErrorKind::Busy);
    // SQLITE_BUSY_SNAPSHOT is an extended busy code.
    assert_eq!(kind(&sqlite(517)), ErrorKind::Busy);
    assert_eq!(kind(&sqlite(rusqlite::ffi::SQLITE_FULL)), ErrorKind::Other);
    let timeout = Error::Cancelled {
        statement: "SELECT 1".into(),
    };
    assert_eq!(kind(&timeout), ErrorKind::Timeout);
    assert_eq!(kind(&Error::msg("x")), ErrorKind::Other);
}

#[test]
fn driver_statements() {
    assert_eq!(
        (PROFILE.driver_sql.begin, PROFILE.driver_sql.commit),
        ("BEGIN", "COMMIT")
    );
    let wait = std::time::Duration::from_millis(250);
    assert_eq!((PROFILE.lock_timeout)(wait), "PRAGMA busy_timeout = 250");
}
