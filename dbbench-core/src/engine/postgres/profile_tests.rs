use super::*;

#[test]
fn serialization_failures_and_deadlocks_are_retried() {
    let pg = |code: &str| errors::raised(code, "m".into());
    let kind = PROFILE.classify;
    assert_eq!(kind(&pg("40001")), ErrorKind::Busy);
    assert_eq!(kind(&pg("40P01")), ErrorKind::Deadlock);
    assert_eq!(kind(&pg("55P03")), ErrorKind::Timeout);
    assert_eq!(kind(&pg("23505")), ErrorKind::Other);
    assert!(kind(&pg("40001")).retryable() && kind(&pg("40P01")).retryable());
    let wait = std::time::Duration::from_millis(250);
    assert_eq!((PROFILE.lock_timeout)(wait), "SET lock_timeout = 250");
}
