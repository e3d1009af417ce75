//! The end of a server process dbbench spawned itself (a managed PostgreSQL cluster's
//! postmaster, a managed MariaDB instance's `mariadbd`): the server's own shutdown signal, then
//! SIGKILL once [`Deadline::ServerStop`] has passed, then the reap.
//!
//! Why one place: every managed server ends the same way and only the signal differs (SIGINT is
//! PostgreSQL's fast shutdown, SIGTERM mariadbd's normal one), with the name its messages give the
//! process. Why SIGKILL after a deadline: a server that hangs (a full disk, a stopped process,
//! which a pending polite signal never reaches) must not hold the run; SIGKILL ends even a
//! stopped process. Why the reap: an unreaped child stays a zombie, and its PID stays taken.

use crate::model::error::{Error, Result};
use crate::util::deadline::Deadline;
use std::process::Child;
use std::time::{Duration, Instant};

/// Stops `process` (nothing when there is none, or it has ended): `signal`, then SIGKILL when it
/// has not ended within [`Deadline::ServerStop`], then reaped. `name` names the process in the
/// error of a failed reap (`cannot reap mariadbd 4242: …`).
pub fn stop(process: Option<&mut Child>, signal: libc::c_int, name: &str) -> Result<()> {
    let limit = Deadline::ServerStop
        .limit()
        .unwrap_or(Deadline::ServerStop.default_limit());
    stop_within(process, signal, limit, name)
}

/// [`stop`] with the time the server is given after `signal`.
fn stop_within(
    process: Option<&mut Child>,
    signal: libc::c_int,
    limit: Duration,
    name: &str,
) -> Result<()> {
    let Some(process) = process else {
        return Ok(());
    };
    if matches!(process.try_wait(), Ok(Some(_))) {
        return Ok(());
    }
    let pid = process.id() as libc::pid_t;
    // SAFETY: signalling our own child, which has not been reaped (try_wait said so).
    unsafe { libc::kill(pid, signal) };
    let asked = Instant::now();
    while asked.elapsed() < limit {
        if matches!(process.try_wait(), Ok(Some(_))) {
            return Ok(());
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let _ = process.kill();
    process
        .wait()
        .map(|_| ())
        .map_err(|e| Error::msg(format!("cannot reap {name} {pid}: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::process::ExitStatusExt;
    use std::process::Command;

    fn sleeper() -> Child {
        Command::new("sleep").arg("30").spawn().unwrap()
    }

    #[test]
    fn a_server_that_heeds_its_signal_ends_by_it() {
        let mut child = sleeper();
        let started = Instant::now();
        stop_within(
            Some(&mut child),
            libc::SIGTERM,
            Duration::from_secs(10),
            "sleep",
        )
        .unwrap();
        assert!(started.elapsed() < Duration::from_secs(5));
        let status = child.try_wait().unwrap().expect("reaped");
        assert_eq!(status.signal(), Some(libc::SIGTERM));
    }

    #[test]
    fn a_server_deaf_to_its_signal_is_killed_after_the_deadline_and_reaped() {
        // Ignores SIGTERM (as a hung or stopped server does not act on it) and would end by
        // itself after 3 s: only the SIGKILL ends it by signal 9, and before that.
        let mut child = Command::new("sh")
            .args(["-c", "trap '' TERM; exec sleep 3"])
            .spawn()
            .unwrap();
        // Let the shell set its trap before the signal comes.
        std::thread::sleep(Duration::from_millis(200));
        let limit = Duration::from_millis(300);
        let started = Instant::now();
        stop_within(Some(&mut child), libc::SIGTERM, limit, "sleep").unwrap();
        let took = started.elapsed();
        assert!(took >= limit && took < Duration::from_secs(2), "{took:?}");
        let status = child.try_wait().unwrap().expect("reaped");
        assert_eq!(status.signal(), Some(libc::SIGKILL));
    }

    #[test]
    fn no_process_or_an_ended_one_is_left_as_it_is() {
        stop_within(None, libc::SIGTERM, Duration::ZERO, "none").unwrap();
        let mut child = Command::new("true").spawn().unwrap();
        child.wait().unwrap();
        stop_within(Some(&mut child), libc::SIGTERM, Duration::ZERO, "true").unwrap();
        assert_eq!(child.try_wait().unwrap().unwrap().code(), Some(0));
    }
}
