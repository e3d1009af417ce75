use super::*;
use std::process::Command;

/// A process that runs until it is stopped (30 s at most).
fn sleeper() -> Child {
    Command::new("sleep").arg("30").spawn().unwrap()
}

/// A process that ends by itself with status 1, after `after` seconds.
fn failing(after: &str) -> Child {
    Command::new("sh")
        .args(["-c", &format!("sleep {after}; exit 1")])
        .spawn()
        .unwrap()
}

#[test]
fn exits_are_described_in_each_engines_words() {
    let killed = ExitStatus::from_raw(9);
    assert_eq!(describe_exit(killed, false), "was killed by signal 9");
    assert_eq!(
        describe_exit(killed, true),
        "was killed by signal 9 (SIGKILL)"
    );
    let terminated = ExitStatus::from_raw(15);
    assert_eq!(describe_exit(terminated, true), "was killed by signal 15");
    let failed = ExitStatus::from_raw(1 << 8);
    assert_eq!(describe_exit(failed, false), "exited with status 1");
}

#[test]
fn a_process_never_set_was_never_started() {
    let server = ServerProcess::new("mariadbd");
    assert_eq!(server.exited().as_deref(), Some("it was never started"));
    assert_eq!(server.pid(), None);
    assert_eq!(server.shared_pid().load(Ordering::SeqCst), 0);
    server.stop(libc::SIGTERM).unwrap();
}

#[test]
fn a_process_that_exits_is_described_once_and_stays_described() {
    let server = ServerProcess::new("mariadbd");
    let child = failing("0");
    let pid = child.id();
    server.set(child);
    let said = format!("mariadbd pid {pid} exited with status 1");
    assert_eq!(
        server.exited_within(Duration::from_secs(5)).as_deref(),
        Some(said.as_str())
    );
    assert_eq!(server.exited().as_deref(), Some(said.as_str()));
    // Stopping an ended process changes nothing of what is said of it.
    server.stop(libc::SIGTERM).unwrap();
    assert_eq!(server.exited().as_deref(), Some(said.as_str()));
    assert_eq!(server.pid(), Some(pid));
}

#[test]
fn a_running_process_has_not_exited_until_stopped() {
    let server = ServerProcess::new("postmaster").naming_sigkill();
    let child = sleeper();
    let pid = child.id();
    server.set(child);
    assert_eq!(server.exited(), None);
    let asked = Instant::now();
    assert_eq!(server.exited_within(Duration::from_millis(200)), None);
    assert!(asked.elapsed() >= Duration::from_millis(200));
    server.stop(libc::SIGTERM).unwrap();
    assert_eq!(
        server.exited(),
        Some(format!("postmaster pid {pid} was killed by signal 15"))
    );
}

#[test]
fn a_sigkill_is_named_only_in_the_engine_that_names_it() {
    for (server, named) in [
        (
            ServerProcess::new("postmaster").naming_sigkill(),
            " (SIGKILL)",
        ),
        (ServerProcess::new("mariadbd"), ""),
    ] {
        let mut child = sleeper();
        let pid = child.id();
        child.kill().unwrap();
        server.set(child);
        assert_eq!(
            server.exited_within(Duration::from_secs(5)),
            Some(format!(
                "{} pid {pid} was killed by signal 9{named}",
                server.program
            ))
        );
    }
}

#[test]
fn set_after_an_exit_forgets_it_and_shares_the_new_pid() {
    let server = ServerProcess::new("mariadbd");
    let shared = server.shared_pid();
    let first = failing("0");
    assert_ne!(shared.load(Ordering::SeqCst), first.id());
    server.set(first);
    assert!(server.exited_within(Duration::from_secs(5)).is_some());
    // A restart: the old process ended (and was asked about), a new one runs.
    let second = sleeper();
    let pid = second.id();
    server.set(second);
    assert_eq!(server.exited(), None);
    assert_eq!(server.pid(), Some(pid));
    assert_eq!(shared.load(Ordering::SeqCst), pid);
    server.stop(libc::SIGKILL).unwrap();
    assert!(server.exited().is_some());
}

#[test]
fn exited_within_returns_when_the_process_ends_before_the_wait_runs_out() {
    let server = ServerProcess::new("mariadbd");
    server.set(failing("0.3"));
    let asked = Instant::now();
    let exit = server.exited_within(Duration::from_secs(20));
    let took = asked.elapsed();
    assert!(exit.is_some_and(|e| e.ends_with("exited with status 1")));
    assert!(took < Duration::from_secs(5), "{took:?}");
}

#[test]
fn a_reaped_process_s_pid_is_no_longer_shared_with_the_ender() {
    let server = ServerProcess::new("postmaster");
    server.set(failing("0"));
    assert!(server.exited_within(Duration::from_secs(5)).is_some());
    assert_eq!(
        server.shared_pid().load(Ordering::SeqCst),
        0,
        "reaped by exited: the ender must not kill whatever has that PID now"
    );
    server.set(sleeper());
    assert_ne!(server.shared_pid().load(Ordering::SeqCst), 0);
    server.stop(libc::SIGTERM).unwrap();
    assert_eq!(
        server.shared_pid().load(Ordering::SeqCst),
        0,
        "reaped by stop"
    );
}

#[test]
fn a_server_gets_no_connection_string_or_password_of_this_process() {
    let mut command = Command::new("env");
    // As an inherited variable would be: env_clear drops those set on the command too.
    command
        .env("DBBENCH_MSSQL", "server=x;password=se/cr?et")
        .env("PGPASSWORD", "se/cr?et")
        .env("DBBENCH_MARIADB", "mysql://u:se/cr?et@h/");
    clean_env(&mut command);
    let out = String::from_utf8(command.output().unwrap().stdout).unwrap();
    assert!(!out.contains("se/cr?et"), "{out}");
    if std::env::var_os("PATH").is_some() {
        assert!(out.lines().any(|l| l.starts_with("PATH=")), "{out}");
    }
}
