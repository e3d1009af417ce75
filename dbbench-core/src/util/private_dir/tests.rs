use super::*;

/// The uid of `nobody`, to plant a directory as another user would (only root can chown).
const NOBODY: u32 = 65534;

fn mode(path: &Path) -> u32 {
    std::fs::symlink_metadata(path).unwrap().mode() & 0o7777
}

fn refused(result: Result<()>) -> String {
    match result {
        Err(Error::Config(sentence)) => sentence,
        other => panic!("expected a refusal, got {other:?}"),
    }
}

#[test]
fn a_new_directory_is_made_0700_under_a_random_name() {
    let parent = tempfile::tempdir().unwrap();
    let a = make_unique(parent.path(), "x-", Reach::Owner).unwrap();
    let b = make_unique(parent.path(), "x-", Reach::Owner).unwrap();
    assert_ne!(a, b);
    assert_eq!(mode(&a), 0o700);
    let t = make_unique(parent.path(), "t-", Reach::Traverse).unwrap();
    assert_eq!(mode(&t), 0o711);
    assert!(a.file_name().unwrap().len() > "x-".len() + 8, "{a:?}");
}

#[test]
fn a_name_chosen_for_a_new_directory_is_never_taken_as_found() {
    let parent = tempfile::tempdir().unwrap();
    let dir = parent.path().join("sock");
    std::fs::create_dir(&dir).unwrap();
    assert!(matches!(
        make_new(&dir, Reach::Owner),
        Err(Error::Io { .. })
    ));
}

#[test]
fn a_planted_directory_open_to_others_is_refused_in_one_sentence() {
    let parent = tempfile::tempdir().unwrap();
    let dir = parent.path().join("dbbench-0");
    std::fs::create_dir(&dir).unwrap();
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o777)).unwrap();
    let sentence = refused(ensure(&dir, Reach::Owner));
    assert!(sentence.contains("mode 0777"), "{sentence}");
    assert!(sentence.contains(&dir.display().to_string()), "{sentence}");
    assert_eq!(
        sentence.matches(". ").count(),
        0,
        "one sentence: {sentence}"
    );
    assert_eq!(mode(&dir), 0o777, "a refused directory is left as found");
    refused(ensure(&dir, Reach::Traverse));
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o770)).unwrap();
    refused(ensure(&dir, Reach::Owner));
    // Readable by others is no private place, but refused only by verify: ensure makes a
    // directory of ours that nobody else could write to private again.
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755)).unwrap();
    refused(verify(&dir, Reach::Owner));
    ensure(&dir, Reach::Owner).unwrap();
    assert_eq!(mode(&dir), 0o700);
    ensure(&dir, Reach::Traverse).unwrap();
    assert_eq!(mode(&dir), 0o700, "stricter than asked is kept");
}

#[test]
fn a_link_in_place_of_the_directory_is_refused() {
    let parent = tempfile::tempdir().unwrap();
    let real = parent.path().join("real");
    std::fs::create_dir(&real).unwrap();
    std::fs::set_permissions(&real, std::fs::Permissions::from_mode(0o700)).unwrap();
    let link = parent.path().join("dbbench-0");
    std::os::unix::fs::symlink(&real, &link).unwrap();
    let sentence = refused(ensure(&link, Reach::Owner));
    assert!(sentence.contains("symbolic link"), "{sentence}");
}

#[test]
fn a_directory_of_another_user_is_refused() {
    if euid() != 0 {
        crate::util::console::say("skipped: only root can make a directory of another user");
        return;
    }
    let parent = tempfile::tempdir().unwrap();
    let dir = parent.path().join("dbbench-0");
    std::fs::create_dir(&dir).unwrap();
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o700)).unwrap();
    std::os::unix::fs::chown(&dir, Some(NOBODY), Some(NOBODY)).unwrap();
    let sentence = refused(ensure(&dir, Reach::Owner));
    assert!(sentence.contains(&format!("uid {NOBODY}")), "{sentence}");
}

#[test]
fn a_planted_link_or_second_name_is_never_written_through() {
    let parent = tempfile::tempdir().unwrap();
    let victim = parent.path().join("victim");
    std::fs::write(&victim, "precious").unwrap();
    let link = parent.path().join("measure.lock");
    std::os::unix::fs::symlink(&victim, &link).unwrap();
    assert!(open_own_file(&link).is_err());
    assert!(create_new_file(&link).is_err());
    let hard = parent.path().join("hard.lock");
    std::fs::hard_link(&victim, &hard).unwrap();
    assert!(matches!(open_own_file(&hard), Err(Error::Config(_))));
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious");
    // A file of its own is opened, and made 0600.
    let own = parent.path().join("own.lock");
    open_own_file(&own).unwrap();
    assert_eq!(mode(&own), 0o600);
    write_new_file(&parent.path().join("marker"), "x").unwrap();
    assert_eq!(mode(&parent.path().join("marker")), 0o600);
}
