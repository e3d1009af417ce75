use super::*;
use std::os::unix::process::ExitStatusExt;
use std::process::{Child, Command};

const MARKER: &str = "dbbench-test-marker";

/// Whether the ender ran its engine's own step.
static THEN_RAN: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// How `child` ended, waiting up to two seconds for it.
fn ended(child: &mut Child) -> Option<std::process::ExitStatus> {
    let started = Instant::now();
    while started.elapsed() < Duration::from_secs(2) {
        if let Some(status) = child.try_wait().unwrap() {
            return Some(status);
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let _ = child.kill();
    let _ = child.wait();
    None
}

#[test]
fn a_directory_is_removed_only_with_the_marker() {
    let base = tempfile::tempdir().unwrap();
    let dir = base.path().join("server");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("precious"), "keep").unwrap();
    assert!(matches!(
        remove_owned(&dir, MARKER),
        Err(Error::NotOwned(_))
    ));
    assert!(dir.join("precious").exists());
    std::fs::write(dir.join(MARKER), "x").unwrap();
    remove_owned(&dir, MARKER).unwrap();
    assert!(!dir.exists());
    // Gone already: nothing to do.
    remove_owned(&dir, MARKER).unwrap();
}

#[test]
fn the_ender_kills_the_server_and_what_works_in_its_data_and_removes_only_marked_dirs() {
    let base = tempfile::tempdir().unwrap();
    let root = base.path().join("root");
    let volume = base.path().join("volume");
    let unmarked = base.path().join("unmarked");
    let datadir = root.join("data");
    std::fs::create_dir_all(&datadir).unwrap();
    std::fs::create_dir_all(&volume).unwrap();
    std::fs::create_dir_all(&unmarked).unwrap();
    std::fs::write(root.join(MARKER), "x").unwrap();
    std::fs::write(volume.join(MARKER), "x").unwrap();
    let sleep = || {
        Command::new("sleep")
            .arg("30")
            .current_dir(&datadir)
            .spawn()
            .unwrap()
    };
    // The server, and a worker of it that only its working directory tells.
    let (mut server, mut worker) = (sleep(), sleep());
    let pid = Arc::new(AtomicU32::new(server.id()));
    let end = ender(
        pid,
        datadir.clone(),
        vec![root.clone(), volume.clone(), unmarked.clone()],
        MARKER,
        |_| THEN_RAN.store(true, Ordering::SeqCst),
    );
    let problems = end().unwrap_err();
    assert!(problems.contains("unmarked"), "{problems}");
    assert!(!root.exists() && !volume.exists() && unmarked.exists());
    assert!(THEN_RAN.load(Ordering::SeqCst));
    for child in [&mut server, &mut worker] {
        let status = ended(child).expect("killed");
        assert_eq!(status.signal(), Some(libc::SIGKILL));
    }
}

#[test]
fn a_marker_names_its_server_this_owner_and_the_owned_directories_in_order() {
    let owned = [PathBuf::from("/work/pg-1"), PathBuf::from("/wal/pg-1-wal")];
    let text = marker("dbbench managed PostgreSQL cluster pg-1", &owned);
    assert_eq!(
        text.lines().next(),
        Some("dbbench managed PostgreSQL cluster pg-1")
    );
    let owner = Owner::parse(&text).expect("an owner");
    assert_eq!(owner, Owner::this());
    let read = Stale {
        dir: owned[0].clone(),
        owner,
        text,
    };
    assert_eq!(read.listed("owns="), owned);
}

#[test]
fn the_directories_of_a_gone_owner_are_stale_and_a_live_ones_not() {
    let base = tempfile::tempdir().unwrap();
    let mut dead = Owner::this();
    // No process has this start time: the owner is gone.
    dead.start = Some(dead.start.unwrap_or(0) + 1);
    for (name, owner) in [
        ("gone", Some(&dead)),
        ("live", Some(&Owner::this())),
        ("bare", None),
    ] {
        let dir = base.path().join(name);
        std::fs::create_dir_all(&dir).unwrap();
        if let Some(owner) = owner {
            let text = format!(
                "x\n{}owns={}\nowns=/elsewhere\n",
                owner.lines(),
                dir.display()
            );
            std::fs::write(dir.join(MARKER), text).unwrap();
        }
    }
    let found = stale(base.path(), MARKER);
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(found[0].dir, base.path().join("gone"));
    assert_eq!(found[0].owner, dead);
    assert_eq!(
        found[0].listed("owns="),
        [base.path().join("gone"), PathBuf::from("/elsewhere")]
    );
    assert!(stale(&base.path().join("missing"), MARKER).is_empty());
}
