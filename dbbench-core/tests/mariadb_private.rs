//! A managed MariaDB instance is this user's alone, tried as another local user would: from a
//! work dir every user can traverse (mode 755), `nobody` cannot connect to its socket as MariaDB
//! `root`, while this user can; the instance's directories are mode 0700, and the server reads
//! and writes files for a session only in its own temporary directory (`secure_file_priv`).
//! Needs root (to act as `nobody`); says `skipped: …` otherwise, or without `mariadbd`.

use dbbench_core::__internals::mariadb::{self, binaries::Binaries, instance};
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::Command;

/// `mariadb -S <socket> -uroot -e <sql>`, as `as_user` when given (through `runuser`).
fn client(socket: &Path, as_user: Option<&str>, sql: &str) -> std::process::Output {
    let mut args: Vec<String> = Vec::new();
    if let Some(user) = as_user {
        args.extend(["-u".into(), user.into(), "--".into()]);
    }
    args.extend(
        ["mariadb", "--no-defaults", "-N", "-uroot", "-S"]
            .map(String::from)
            .into_iter()
            .chain([socket.display().to_string(), "-e".into(), sql.into()]),
    );
    let (program, args) = match as_user {
        Some(_) => ("runuser", &args[..]),
        None => ("mariadb", &args[1..]),
    };
    Command::new(program).args(args).output().unwrap()
}

#[test]
fn another_local_user_cannot_reach_a_managed_instance() {
    if !mariadb::available_for_tests() {
        return;
    }
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        println!("skipped: only root can try the instance as another user (nobody)");
        return;
    }
    let open = tempfile::tempdir().unwrap();
    std::fs::set_permissions(open.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let spec = instance::InstanceSpec {
        work_base: open.path().join("checkout/mariadb"),
        redo_base: None,
        settings: Vec::new(),
    };
    for dir in [open.path().join("checkout"), spec.work_base.clone()] {
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    let binaries = Binaries::find().unwrap();
    let id = format!("mdb-private-{}", std::process::id());
    let server = instance::Instance::start(&binaries, spec, id).unwrap();
    let socket = server.socket().to_path_buf();

    let mine = client(&socket, None, "SELECT @@secure_file_priv");
    assert!(mine.status.success(), "{mine:?}");
    let confined = String::from_utf8_lossy(&mine.stdout).trim().to_string();
    assert!(
        confined.starts_with(&server.owned()[0].display().to_string()),
        "file access is confined to the instance: {confined:?}"
    );
    let theirs = client(&socket, Some("nobody"), "SELECT LOAD_FILE('/etc/shadow')");
    assert!(
        !theirs.status.success(),
        "nobody got in: {}",
        String::from_utf8_lossy(&theirs.stdout)
    );
    for dir in server.owned() {
        let mode = std::fs::metadata(dir).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o700, "{}", dir.display());
    }
    server.destroy().unwrap();
}
