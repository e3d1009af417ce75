use super::*;

fn server(code: u32) -> Error {
    errors::raised(code, "m".into())
}

#[test]
fn deadlocks_are_retried_lock_timeouts_counted() {
    let kind = PROFILE.classify;
    assert_eq!(kind(&server(1205)), ErrorKind::Deadlock);
    assert_eq!(kind(&server(1222)), ErrorKind::Timeout);
    assert_eq!(kind(&server(2627)), ErrorKind::Other);
    let timeout = Error::Cancelled {
        statement: "SELECT 1".into(),
    };
    assert_eq!(kind(&timeout), ErrorKind::Timeout);
}

#[test]
fn driver_statements() {
    assert!(PROFILE
        .driver_sql
        .rollback
        .starts_with("IF @@TRANCOUNT > 0"));
    let wait = std::time::Duration::from_millis(250);
    assert_eq!((PROFILE.lock_timeout)(wait), "SET LOCK_TIMEOUT 250");
}
