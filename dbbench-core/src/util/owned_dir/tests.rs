use super::*;
use std::os::unix::fs::PermissionsExt;
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
    // A process of another name there (a user's shell reading the server's files) is no worker.
    let mut bystander = Command::new("tail")
        .args(["-f", "/dev/null"])
        .current_dir(&datadir)
        .spawn()
        .unwrap();
    // A `sleep` a user's shell started there: the server's name and uid, but not its tree.
    let mut shell = Command::new("sh")
        .args(["-c", "sleep 30; exit 0"])
        .current_dir(&datadir)
        .spawn()
        .unwrap();
    let procfs = ProcFs::system();
    let users_sleep = loop {
        if let Some(&pid) = procfs.children(shell.id()).first() {
            break pid;
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    let pid = Arc::new(AtomicU32::new(server.id()));
    let workers = Workers {
        uid: crate::util::private_dir::euid(),
        names: &["sleep"],
    };
    let end = ender(
        pid,
        datadir.clone(),
        vec![root.clone(), volume.clone(), unmarked.clone()],
        MARKER,
        workers,
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
    assert_eq!(
        bystander.try_wait().unwrap(),
        None,
        "not the server's: alive"
    );
    bystander.kill().unwrap();
    bystander.wait().unwrap();
    assert!(
        procfs.stat(users_sleep).is_some_and(|s| s.comm == "sleep"),
        "a user's sleep in the data directory: alive"
    );
    shell.kill().unwrap();
    shell.wait().unwrap();
    // SAFETY: kill has no memory preconditions; the sleep is the test's shell's child.
    unsafe { libc::kill(users_sleep as libc::pid_t, libc::SIGKILL) };
}

#[test]
fn only_the_server_s_processes_of_its_uid_count_as_working_in_its_directory() {
    let dir = tempfile::tempdir().unwrap();
    let mut child = Command::new("sleep")
        .arg("30")
        .current_dir(dir.path())
        .spawn()
        .unwrap();
    let procfs = ProcFs::system();
    let me = crate::util::private_dir::euid();
    let found = |uid, names| {
        server_working_in(
            &procfs,
            dir.path(),
            Workers { uid, names },
            std::process::id(),
        )
    };
    assert_eq!(found(me, &["sleep"]), [child.id()]);
    assert!(found(me, &["mysqld"]).is_empty(), "another name");
    assert!(
        found(me.wrapping_add(1), &["sleep"]).is_empty(),
        "another uid"
    );
    child.kill().unwrap();
    child.wait().unwrap();
}

#[test]
fn a_marker_names_its_server_this_owner_and_only_its_own_directories_are_acted_on() {
    let base = tempfile::tempdir().unwrap();
    let b = base.path();
    let owned = [
        b.join("pg-1"),
        b.join("wal/pg-1-wal"),
        b.join("dbbench-pg-1-0123456789ab"),
    ];
    // Paths another user could have written into a marker: a directory not named after the
    // server, a link named after it, one named after it with another marker, one outside.
    let foreign = b.join("home");
    let link = b.join("wal/pg-1-link");
    let other = b.join("wal/pg-1-other");
    let mut listed = owned.to_vec();
    listed.extend([
        foreign.clone(),
        link.clone(),
        other.clone(),
        b.join("pg-1/../home"),
    ]);
    let text = marker("dbbench managed PostgreSQL cluster pg-1", &listed);
    assert_eq!(
        text.lines().next(),
        Some("dbbench managed PostgreSQL cluster pg-1")
    );
    let owner = Owner::parse(&text).expect("an owner");
    assert_eq!(owner, Owner::this());
    for dir in owned.iter().chain([&foreign]) {
        std::fs::create_dir_all(dir).unwrap();
        std::fs::write(dir.join(MARKER), &text).unwrap();
    }
    std::os::unix::fs::symlink(&foreign, &link).unwrap();
    std::fs::create_dir_all(&other).unwrap();
    std::fs::write(other.join(MARKER), "another text").unwrap();
    let read = Stale {
        dir: owned[0].clone(),
        owner,
        text,
        marker: MARKER.into(),
    };
    assert_eq!(read.listed("owns="), owned);
    assert!(read.still_marks(&owned[1]));
    std::fs::write(owned[1].join(MARKER), "changed since").unwrap();
    assert!(!read.still_marks(&owned[1]));
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
    assert_eq!(found[0].listed("owns="), [base.path().join("gone")]);
    assert!(stale(&base.path().join("missing"), MARKER).is_empty());
}

#[test]
fn a_marker_others_could_write_names_nothing_to_sweep() {
    let base = tempfile::tempdir().unwrap();
    let mut dead = Owner::this();
    dead.start = Some(dead.start.unwrap_or(0) + 1);
    let dir = base.path().join("gone");
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(MARKER);
    std::fs::write(
        &path,
        format!("x\n{}owns={}\n", dead.lines(), dir.display()),
    )
    .unwrap();
    assert_eq!(stale(base.path(), MARKER).len(), 1);
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o666)).unwrap();
    assert!(stale(base.path(), MARKER).is_empty(), "writable by others");
    assert!(matches!(
        remove_owned(&dir, MARKER),
        Err(Error::NotOwned(_))
    ));
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
    if crate::util::private_dir::euid() == 0 {
        std::os::unix::fs::chown(&path, Some(65534), Some(65534)).unwrap();
        assert!(
            stale(base.path(), MARKER).is_empty(),
            "another user's marker"
        );
    }
    // A link to a marked directory is not one.
    let link = base.path().join("link");
    std::os::unix::fs::symlink(&dir, &link).unwrap();
    assert!(matches!(
        remove_owned(&link, MARKER),
        Err(Error::NotOwned(_))
    ));
    assert!(dir.exists());
}

#[test]
fn only_the_server_s_tree_counts_not_what_a_user_s_shell_started_there() {
    let proc_dir = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir().unwrap();
    // dbbench (50) under init; a postmaster its gone run left (10, adopted by init) and its
    // backend (11); a user's shell cd'd into the data directory (20) and a `postgres` it ran (21).
    let fs = crate::util::procfs::fake(
        proc_dir.path(),
        &[
            (1, 0, "init", 0),
            (50, 1, "dbbench", 0),
            (10, 1, "postgres", 0),
            (11, 10, "postgres", 0),
            (20, 1, "bash", 0),
            (21, 20, "postgres", 0),
        ],
    );
    let resolved = std::fs::canonicalize(data.path()).unwrap();
    for pid in [10, 11, 20, 21] {
        std::os::unix::fs::symlink(&resolved, proc_dir.path().join(format!("{pid}/cwd"))).unwrap();
    }
    std::os::unix::fs::symlink("/", proc_dir.path().join("1/cwd")).unwrap();
    let workers = Workers {
        uid: crate::util::private_dir::euid(),
        names: &["postgres"],
    };
    let mut found = server_working_in(&fs, data.path(), workers, 50);
    found.sort_unstable();
    assert_eq!(found, [10, 11]);
    // The postmaster dbbench spawned itself is in the tree through its parent.
    assert_eq!(fs.ancestors(11), [10, 1]);
}
