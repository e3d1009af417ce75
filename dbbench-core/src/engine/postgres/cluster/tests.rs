use super::*;

#[test]
fn refuses_to_remove_a_directory_without_the_marker() {
    let dir = std::env::temp_dir().join(format!("dbbench-unmarked-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("precious"), "keep").unwrap();
    assert!(matches!(remove_owned(&dir), Err(Error::NotOwned(_))));
    assert!(dir.join("precious").exists());
    std::fs::write(dir.join(MARKER), "x").unwrap();
    remove_owned(&dir).unwrap();
    assert!(!dir.exists());
}

#[test]
fn exits_are_described() {
    use std::os::unix::process::ExitStatusExt;
    let killed = std::process::ExitStatus::from_raw(9);
    assert_eq!(describe_exit(killed), "was killed by signal 9 (SIGKILL)");
    let failed = std::process::ExitStatus::from_raw(1 << 8);
    assert_eq!(describe_exit(failed), "exited with status 1");
}
