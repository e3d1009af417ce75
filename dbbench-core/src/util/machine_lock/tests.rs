use super::*;
use std::os::unix::fs::PermissionsExt;

#[test]
fn a_second_lock_waits_for_the_first() {
    let dir = tempfile::tempdir().unwrap();
    // Two handles of one file lock each other like two processes do (flock is per handle).
    let path = dir.path().join("l");
    let a = File::create(&path).unwrap();
    a.lock().unwrap();
    let b = File::open(&path).unwrap();
    assert!(matches!(
        b.try_lock(),
        Err(std::fs::TryLockError::WouldBlock)
    ));
    a.unlock().unwrap();
    b.try_lock().unwrap();
}

/// A lock directory another user made first (mode 777, the lock file a link to a file of the
/// victim's) is refused in one sentence, and the file the link names is unchanged.
#[test]
fn a_planted_lock_directory_is_refused_and_nothing_it_points_to_changes() {
    let tmp = tempfile::tempdir().unwrap();
    let victim = tmp.path().join("bashrc");
    std::fs::write(&victim, "precious").unwrap();
    let planted = tmp.path().join("dbbench-0");
    std::fs::create_dir(&planted).unwrap();
    std::fs::set_permissions(&planted, std::fs::Permissions::from_mode(0o777)).unwrap();
    std::os::unix::fs::symlink(&victim, planted.join("measure.lock")).unwrap();
    std::os::unix::fs::symlink(&victim, planted.join("measure.holder")).unwrap();
    let err = acquire_in(&planted, true, "t::c", Duration::from_secs(1)).unwrap_err();
    assert!(matches!(err, Error::Config(_)), "{err}");
    assert!(err.to_string().contains("refuses to use"), "{err}");
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious");
}

/// In a directory of its own, a lock file that is a link is not followed either.
#[test]
fn a_link_in_place_of_the_lock_file_is_not_followed() {
    let tmp = tempfile::tempdir().unwrap();
    let victim = tmp.path().join("shadow");
    std::fs::write(&victim, "precious").unwrap();
    let dir = tmp.path().join("locks");
    std::os::unix::fs::symlink(&victim, {
        std::fs::create_dir(&dir).unwrap();
        dir.join("measure.lock")
    })
    .unwrap();
    assert!(acquire_in(&dir, true, "t::c", Duration::from_secs(1)).is_err());
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious");
}

#[test]
fn the_holder_is_written_into_the_lock_file_and_the_wait_is_bounded() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("dbbench-test");
    let held = acquire_in(&dir, true, "first::cell", Duration::from_secs(1)).unwrap();
    let mode = std::fs::metadata(&dir).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o700);
    let text = std::fs::read_to_string(dir.join("measure.lock")).unwrap();
    assert!(text.contains("first::cell"), "{text:?}");
    let started = Instant::now();
    let err = acquire_in(&dir, true, "second::cell", Duration::from_millis(300)).unwrap_err();
    assert!(started.elapsed() < Duration::from_secs(5));
    let said = err.to_string();
    assert!(said.contains("DBBENCH_DEADLINE_MACHINE_LOCK"), "{said}");
    assert!(said.contains("first::cell"), "the holder is named: {said}");
    drop(held);
    let again = acquire_in(&dir, true, "third::cell", Duration::from_millis(300)).unwrap();
    let text = std::fs::read_to_string(dir.join("measure.lock")).unwrap();
    assert_eq!(
        text.trim(),
        format!("pid {}: third::cell", std::process::id())
    );
    drop(again);
}

#[test]
fn the_holder_s_words_are_shown_without_control_characters() {
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("l");
    std::fs::write(&path, "pid 1: \u{1b}]0;owned\u{7}x\n").unwrap();
    let file = File::open(&path).unwrap();
    assert_eq!(holder(&file), "pid 1: ]0;ownedx");
}
