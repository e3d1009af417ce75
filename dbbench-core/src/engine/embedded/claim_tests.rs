//! A database directory is taken over only from an owner that is gone.

use super::{claim_directory, OWNER_MARKER};
use crate::util::owner::Owner;

#[test]
fn a_live_owners_directory_is_refused_a_gone_ones_is_taken() {
    let base = tempfile::tempdir().unwrap();
    let dir = base.path().join("db");
    std::fs::create_dir(&dir).unwrap();
    // PID 1 runs on this host: the directory of another run, perhaps of another container
    // whose process had this number.
    let live = Owner {
        pid: 1,
        start: None,
        ..Owner::this()
    };
    std::fs::write(
        dir.join(OWNER_MARKER),
        format!("created by dbbench\n{}", live.lines()),
    )
    .unwrap();
    std::fs::write(dir.join("data"), "theirs").unwrap();
    let refused = claim_directory(&dir).unwrap_err().to_string();
    assert!(refused.contains("may still be running"), "{refused}");
    assert_eq!(std::fs::read_to_string(dir.join("data")).unwrap(), "theirs");
    let gone = Owner {
        pid: u32::MAX - 1,
        ..live
    };
    std::fs::write(
        dir.join(OWNER_MARKER),
        format!("created by dbbench\n{}", gone.lines()),
    )
    .unwrap();
    claim_directory(&dir).unwrap();
    assert!(!dir.join("data").exists());
    let mine = Owner::parse(&std::fs::read_to_string(dir.join(OWNER_MARKER)).unwrap()).unwrap();
    assert!(mine.is_this_process());
    // Unmarked: never ours.
    let other = base.path().join("other");
    std::fs::create_dir(&other).unwrap();
    assert!(claim_directory(&other).is_err());
}
