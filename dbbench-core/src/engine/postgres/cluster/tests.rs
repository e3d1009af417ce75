use super::*;

#[test]
fn exits_are_described() {
    use std::os::unix::process::ExitStatusExt;
    let killed = std::process::ExitStatus::from_raw(9);
    assert_eq!(describe_exit(killed), "was killed by signal 9 (SIGKILL)");
    let failed = std::process::ExitStatus::from_raw(1 << 8);
    assert_eq!(describe_exit(failed), "exited with status 1");
}
