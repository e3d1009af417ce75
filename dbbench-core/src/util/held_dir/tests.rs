use super::*;
use std::os::unix::fs::symlink;

/// A directory with a file in it, the victim a swapped link would point to.
fn victim(base: &Path) -> std::path::PathBuf {
    let dir = base.join("victim/x");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("precious"), "keep").unwrap();
    dir
}

/// `<base>/vol/x` with a file, a nested directory, and a link inside it to `target`.
fn owned(base: &Path, target: &Path) -> std::path::PathBuf {
    let dir = base.join("vol/x");
    std::fs::create_dir_all(dir.join("sub/deeper")).unwrap();
    std::fs::write(dir.join("marker"), "mine").unwrap();
    std::fs::write(dir.join("sub/deeper/f"), "data").unwrap();
    symlink(target, dir.join("sub/link")).unwrap();
    dir
}

#[test]
fn a_tree_is_removed_and_a_link_inside_it_is_not_followed() {
    let base = tempfile::tempdir().unwrap();
    let target = victim(base.path());
    let dir = owned(base.path(), &target);
    let held = HeldDir::open(&dir).unwrap();
    let (meta, text) = held.read("marker").unwrap();
    assert!(meta.is_file());
    assert_eq!(text, "mine");
    held.remove().unwrap();
    assert!(!dir.exists());
    assert_eq!(
        std::fs::read_to_string(target.join("precious")).unwrap(),
        "keep"
    );
}

#[test]
fn a_link_in_the_directory_s_place_or_as_its_marker_is_refused() {
    let base = tempfile::tempdir().unwrap();
    let target = victim(base.path());
    let link = base.path().join("link");
    symlink(&target, &link).unwrap();
    assert!(HeldDir::open(&link).is_err());
    let dir = owned(base.path(), &target);
    symlink(target.join("precious"), dir.join("linked-marker")).unwrap();
    let held = HeldDir::open(&dir).unwrap();
    assert!(held.read("linked-marker").is_err());
}

#[test]
fn a_parent_swapped_for_a_link_after_the_check_leads_the_removal_nowhere_else() {
    let base = tempfile::tempdir().unwrap();
    let b = base.path();
    let target = victim(b);
    let dir = owned(b, &target);
    let held = HeldDir::open(&dir).unwrap();
    // Between the check and the removal, another user swaps the volume for a link to a place
    // where a directory of the same name holds what is not dbbench's.
    std::fs::rename(b.join("vol"), b.join("vol.moved")).unwrap();
    symlink(b.join("victim"), b.join("vol")).unwrap();
    held.remove().unwrap();
    assert_eq!(
        std::fs::read_to_string(target.join("precious")).unwrap(),
        "keep"
    );
    assert!(
        !b.join("vol.moved/x").exists(),
        "what was checked is what went"
    );
}

#[test]
fn the_directory_swapped_for_a_link_after_the_check_is_emptied_but_the_link_s_target_kept() {
    let base = tempfile::tempdir().unwrap();
    let b = base.path();
    let target = victim(b);
    let dir = owned(b, &target);
    let held = HeldDir::open(&dir).unwrap();
    std::fs::rename(&dir, b.join("vol/x.moved")).unwrap();
    symlink(&target, &dir).unwrap();
    let e = held.remove().unwrap_err();
    assert!(e.to_string().contains("leads elsewhere"), "{e}");
    assert_eq!(
        std::fs::read_to_string(target.join("precious")).unwrap(),
        "keep"
    );
    assert!(
        std::fs::symlink_metadata(&dir).unwrap().is_symlink(),
        "the link left alone"
    );
    assert_eq!(std::fs::read_dir(b.join("vol/x.moved")).unwrap().count(), 0);
}
