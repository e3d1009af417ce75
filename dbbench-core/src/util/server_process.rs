//! The server process of a server dbbench manages itself (a PostgreSQL cluster's postmaster, a
//! MariaDB instance's `mariadbd`): the spawned `Child`, how it ended once it has, and its PID
//! shared with the signal thread's ender (`util::owned_dir::ender`), which must kill the server
//! without the value that owns it.
//!
//! Why one place: every managed server is watched the same way (a `try_wait` that reaps it, its
//! end said once in the same words, a wait for it to end, the stop of `util::shutdown`); only the
//! program's name, its stop signal and one wording differ, and those each engine passes in. Why
//! the end is kept once seen: every later question (the runner asks again after a failed
//! statement) reads the same words without touching the process; a restart forgets it, as the
//! stopped process's end is not the new one's.

use crate::model::error::Result;
use crate::util::shutdown;
use std::os::unix::process::ExitStatusExt;
use std::process::{Child, ExitStatus};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// How often [`ServerProcess::exited_within`] looks again.
const POLL: Duration = Duration::from_millis(20);

/// A managed server's process: none until [`ServerProcess::set`], then the latest one spawned.
#[derive(Debug)]
pub(crate) struct ServerProcess {
    /// The program's name in what is said of it (`postmaster pid 42 exited with status 1`).
    program: &'static str,
    /// Whether a SIGKILL is named after its number (`signal 9 (SIGKILL)`), as PostgreSQL's
    /// messages have always said it.
    names_sigkill: bool,
    child: Mutex<Option<Child>>,
    /// How the process ended, once `exited` saw it; cleared by `set`.
    exit: Mutex<Option<String>>,
    /// The process's PID once spawned (0 before), for the signal thread's ender.
    pid: Arc<AtomicU32>,
}

/// A lock whose holder panicked still guards a usable value: the process and its end.
fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|p| p.into_inner())
}

impl ServerProcess {
    /// No process yet; `program` names it in every message.
    pub(crate) fn new(program: &'static str) -> ServerProcess {
        ServerProcess {
            program,
            names_sigkill: false,
            child: Mutex::new(None),
            exit: Mutex::new(None),
            pid: Arc::new(AtomicU32::new(0)),
        }
    }

    /// The same, saying `was killed by signal 9 (SIGKILL)` for a SIGKILL.
    pub(crate) fn naming_sigkill(mut self) -> ServerProcess {
        self.names_sigkill = true;
        self
    }

    /// The PID the signal thread's ender kills: 0 until a process is set, then the latest one's
    /// until it is reaped, and 0 again once it is (the kernel may give that PID to any process).
    pub(crate) fn shared_pid(&self) -> Arc<AtomicU32> {
        self.pid.clone()
    }

    /// Keeps `child`, newly spawned, as the server's process, and forgets how an earlier one
    /// ended: after a restart, that end is not the new process's.
    pub(crate) fn set(&self, child: Child) {
        // The order `exited` takes them in: the end, then the process.
        let mut exit = lock(&self.exit);
        let mut process = lock(&self.child);
        self.pid.store(child.id(), Ordering::SeqCst);
        *process = Some(child);
        *exit = None;
    }

    /// The process's id since it was spawned.
    pub(crate) fn pid(&self) -> Option<u32> {
        lock(&self.child).as_ref().map(Child::id)
    }

    /// `None` while the process runs; how it ended once it has (and it is reaped), the same
    /// every time after.
    pub(crate) fn exited(&self) -> Option<String> {
        let mut exit = lock(&self.exit);
        if exit.is_some() {
            return exit.clone();
        }
        let mut child = lock(&self.child);
        let Some(process) = child.as_mut() else {
            return Some("it was never started".into());
        };
        let (program, pid) = (self.program, process.id());
        match process.try_wait() {
            Ok(Some(status)) => {
                // Reaped: its PID is free for any new process, which the ender must not kill.
                self.pid.store(0, Ordering::SeqCst);
                let how = describe_exit(status, self.names_sigkill);
                *exit = Some(format!("{program} pid {pid} {how}"));
                exit.clone()
            }
            Ok(None) => None,
            Err(e) => Some(format!("{program} pid {pid} cannot be waited for: {e}")),
        }
    }

    /// [`ServerProcess::exited`], waiting up to `wait` for the process to end: a server that
    /// aborts (InnoDB on a full disk) closes its connections first and ends only later.
    pub(crate) fn exited_within(&self, wait: Duration) -> Option<String> {
        let asked = Instant::now();
        loop {
            let exit = self.exited();
            if exit.is_some() || asked.elapsed() >= wait {
                return exit;
            }
            std::thread::sleep(POLL);
        }
    }

    /// Stops the process with `signal`, SIGKILL after `Deadline::ServerStop`, and reaps it
    /// ([`shutdown::stop`]); nothing when there is none or it has ended.
    pub(crate) fn stop(&self, signal: libc::c_int) -> Result<()> {
        let mut child = lock(&self.child);
        let stopped = shutdown::stop(child.as_mut(), signal, self.program);
        // Reaped (std keeps the status it reaped): its PID is free for any new process.
        if child
            .as_mut()
            .is_some_and(|c| matches!(c.try_wait(), Ok(Some(_))))
        {
            self.pid.store(0, Ordering::SeqCst);
        }
        stopped
    }
}

/// What of this process's environment a managed server gets: what finds its programs and
/// libraries, its home, time zone and temporary directory. Everything else (dbbench's
/// connection strings, `DBBENCH_MSSQL`, `PGPASSWORD`, a CI job's tokens) stays here: a server
/// that runs as another user (`postgres`) exposes its environment to every process of that
/// user in `/proc/<pid>/environ`.
const SERVER_ENV: [&str; 5] = ["PATH", "HOME", "TZ", "TMPDIR", "LD_LIBRARY_PATH"];

/// Gives `command` only [`SERVER_ENV`] of this process's environment.
pub(crate) fn clean_env(command: &mut std::process::Command) {
    command.env_clear();
    for name in SERVER_ENV {
        if let Some(value) = std::env::var_os(name) {
            command.env(name, value);
        }
    }
}

/// `was killed by signal 9` (with ` (SIGKILL)` when `names_sigkill`) or `exited with status 1`.
fn describe_exit(status: ExitStatus, names_sigkill: bool) -> String {
    match (status.code(), status.signal()) {
        (_, Some(9)) if names_sigkill => "was killed by signal 9 (SIGKILL)".into(),
        (_, Some(sig)) => format!("was killed by signal {sig}"),
        (Some(code), _) => format!("exited with status {code}"),
        _ => "ended".into(),
    }
}

#[cfg(test)]
mod tests;
