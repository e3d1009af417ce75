//! A throwaway PostgreSQL cluster that dbbench creates, starts, stops and removes itself, so that
//! cluster-level options (WAL directory, WAL segment size, `wal_level`, `wal_init_zero`, WAL
//! sizing) are real and tests need no installed server running.
//!
//! Layout: `<work>/postgres/<id>/` holds the marker file, the server log, the socket directory and
//! (unless `data_on` names a volume) the data directory; a data or WAL volume gets a directory
//! `<volume>/<id>-data` or `<volume>/<id>-wal` with a marker of its own. Nothing is removed
//! without its marker. The server listens on a private Unix socket only, with trust
//! authentication for the superuser `dbbench`: no TCP port is opened.
//!
//! `initdb` and `postgres` refuse to run as root, so when dbbench runs as root they run as the
//! `postgres` user, which must be able to reach every directory (`place` moves the directories
//! dbbench chooses to the temp dir when it cannot). dbbench spawns `postgres`
//! itself (no `pg_ctl`), so it knows at once when the postmaster died and reaps it.
//!
//! Its start and stop are bounded by `util::deadline` (`DBBENCH_DEADLINE_SERVER_START`,
//! `DBBENCH_DEADLINE_SERVER_STOP`). Teardown (also from `Drop`, so after an error or a panic):
//! fast shutdown, then SIGKILL if the postmaster does not stop within its deadline (a stopped
//! server, SIGSTOP, gets the SIGKILL too), then every process still working in the data directory (backends
//! orphaned by a killed postmaster), then the System V segment a killed postmaster leaves, then the
//! directories.

use super::settings::PgSettings;
use crate::model::error::{Error, Result};
use crate::util::deadline::Deadline;
use crate::util::owned_dir::kill_working_in;
use crate::util::server_process::ServerProcess;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{Duration, Instant};

mod binaries;
mod setup;
mod teardown;
mod user;

pub use binaries::Binaries;
use teardown::{ender, remove_leftover_segment, remove_owned};
pub use teardown::{sweep_stale, workers};
pub use user::{reachable, run_as, RunAs};

/// The name of the marker file in every directory a managed cluster owns.
pub const MARKER: &str = "DBBENCH_CLUSTER";
/// The superuser of a managed cluster.
pub const SUPERUSER: &str = "dbbench";
/// The variable that names the directory of `initdb` and `postgres`.
pub const BINDIR_ENV: &str = "DBBENCH_PG_BINDIR";

/// What makes two clusters differ: a cell whose spec equals the running cluster's reuses it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClusterSpec {
    /// Where the cluster's own directory (marker, log, socket, default data) goes.
    pub work_base: PathBuf,
    /// The data volume's directory, when `data_on` names one.
    pub data_base: Option<PathBuf>,
    /// The WAL volume's directory, when `log_on` names one (`initdb --waldir`).
    pub wal_base: Option<PathBuf>,
    /// `initdb --wal-segsize`, in MB.
    pub wal_segsize_mb: Option<u32>,
    /// Lines for `postgresql.conf`: `(name, value as written in the file)`.
    pub settings: Vec<(String, String)>,
}

/// A running (or dead) managed cluster.
pub struct Cluster {
    spec: ClusterSpec,
    id: String,
    owned: Vec<PathBuf>,
    pgdata: PathBuf,
    wal_dir: PathBuf,
    socket_dir: PathBuf,
    log_file: PathBuf,
    port: u16,
    run_as: Option<RunAs>,
    /// The postmaster, how it ended, and its PID for the ender `held` names.
    postmaster: ServerProcess,
    destroyed: Mutex<bool>,
    /// Named (and ended without the server's help) should the interrupt's deadline end the
    /// process while the runner waits on this server (`util::leftover`).
    held: Option<crate::util::leftover::Held>,
}

impl std::fmt::Debug for Cluster {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Cluster")
            .field("id", &self.id)
            .field("pgdata", &self.pgdata)
            .field("port", &self.port)
            .finish()
    }
}

impl Cluster {
    /// Creates the directories, runs `initdb`, writes the settings and starts the server; on
    /// failure whatever was made is removed again. Blocks for a few seconds.
    pub fn start(binaries: &Binaries, spec: ClusterSpec, id: String) -> Result<Cluster> {
        let run_as = run_as()?;
        let root = spec.work_base.join(&id);
        let short_socket = root.join("sock");
        // A socket path longer than sun_path (108 bytes with its NUL) cannot be bound.
        // The one in the temporary directory gets a name nobody can guess, made exclusively
        // (`make_dirs`): another user cannot make it first and swap the socket.
        let socket_dir = if short_socket.as_os_str().len() + ".s.PGSQL.65535".len() + 2 > 107 {
            crate::util::private_dir::unique_name(&std::env::temp_dir(), &format!("dbbench-{id}-"))
        } else {
            short_socket
        };
        let data_root = spec
            .data_base
            .as_ref()
            .map(|b| b.join(format!("{id}-data")));
        let wal_root = spec.wal_base.as_ref().map(|b| b.join(format!("{id}-wal")));
        let pgdata = data_root.as_ref().unwrap_or(&root).join("data");
        let wal_dir = match &wal_root {
            Some(w) => w.join("wal"),
            None => pgdata.join("pg_wal"),
        };
        let mut owned = vec![root.clone()];
        if !socket_dir.starts_with(&root) {
            owned.push(socket_dir.clone());
        }
        owned.extend(data_root.iter().cloned());
        owned.extend(wal_root.iter().cloned());
        // PostgreSQL's messages have always named a SIGKILL: tests and users read them so.
        let postmaster = ServerProcess::new("postmaster").naming_sigkill();
        let held = crate::util::leftover::hold(
            format!("the managed PostgreSQL cluster {}", root.display()),
            "the next run's sweep removes it",
            Some(ender(
                postmaster.shared_pid(),
                pgdata.clone(),
                owned.clone(),
                workers(run_as),
            )),
        );
        let cluster = Cluster {
            held: Some(held),
            postmaster,
            log_file: root.join("postgres.log"),
            port: free_port()?,
            spec,
            id,
            owned,
            pgdata,
            wal_dir,
            socket_dir,
            run_as,
            destroyed: Mutex::new(false),
        };
        // From here on, dropping `cluster` removes what was made.
        cluster.make_dirs()?;
        cluster.initdb(binaries)?;
        cluster.configure()?;
        cluster.spawn(binaries)?;
        cluster.wait_ready()?;
        Ok(cluster)
    }

    fn spawn(&self, binaries: &Binaries) -> Result<()> {
        let log = std::fs::File::create(&self.log_file)
            .map_err(|e| Error::io("cannot create the server log", &self.log_file, e))?;
        let log2 = log
            .try_clone()
            .map_err(|e| Error::io("cannot open the server log", &self.log_file, e))?;
        let child = self
            .command(binaries.dir.join("postgres"))
            .arg("-D")
            .arg(&self.pgdata)
            .stdout(log)
            .stderr(log2)
            .spawn()
            .map_err(|e| Error::io("cannot start postgres", binaries.dir.join("postgres"), e))?;
        self.postmaster.set(child);
        Ok(())
    }

    /// Waits until `postmaster.pid` says `ready`, as `pg_ctl -w` does.
    fn wait_ready(&self) -> Result<()> {
        let started = Instant::now();
        let limit = Deadline::ServerStart.limit()?;
        let pid_file = self.pgdata.join("postmaster.pid");
        loop {
            if let Some(why) = self.exited() {
                return Err(Error::msg(format!(
                    "the PostgreSQL server did not start ({why}); its log says: {}",
                    self.log_tail()
                )));
            }
            let text = std::fs::read_to_string(&pid_file).unwrap_or_default();
            if text.lines().nth(7).is_some_and(|s| s.trim() == "ready") {
                return Ok(());
            }
            if started.elapsed() > limit {
                return Err(Error::msg(format!(
                    "the PostgreSQL server was not ready within {} ({} sets this limit); its \
                     log says: {}",
                    crate::util::deadline::spoken(limit),
                    Deadline::ServerStart.env(),
                    self.log_tail()
                )));
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// The last lines of the server log.
    pub fn log_tail(&self) -> String {
        let text = std::fs::read_to_string(&self.log_file).unwrap_or_default();
        let lines: Vec<&str> = text.lines().collect();
        lines[lines.len().saturating_sub(8)..].join(" | ")
    }

    /// How to connect as the superuser.
    pub fn settings(&self) -> PgSettings {
        PgSettings::socket(&self.socket_dir, self.port, SUPERUSER)
    }

    /// What this cluster was made for.
    pub fn spec(&self) -> &ClusterSpec {
        &self.spec
    }

    /// The cluster's name (`pg-<pid>-<n>`).
    pub fn id(&self) -> &str {
        &self.id
    }

    /// The WAL directory, for counting segment files.
    pub fn wal_dir(&self) -> &Path {
        &self.wal_dir
    }

    /// The data directory.
    pub fn pgdata(&self) -> &Path {
        &self.pgdata
    }

    /// Every directory the cluster owns (each with a marker).
    pub fn owned(&self) -> &[PathBuf] {
        &self.owned
    }

    /// The postmaster's process id while it runs.
    pub fn postmaster_pid(&self) -> Option<u32> {
        self.postmaster.pid()
    }

    /// `None` while the postmaster runs; how it ended once it has (and it is reaped).
    pub fn exited(&self) -> Option<String> {
        self.postmaster.exited()
    }

    /// Stops the server and removes every directory it owns; does nothing the second time.
    pub fn destroy(&self) -> Result<()> {
        let mut destroyed = self.destroyed.lock().unwrap_or_else(|p| p.into_inner());
        if *destroyed {
            return Ok(());
        }
        *destroyed = true;
        let mut problems = Vec::new();
        if let Err(e) = self.stop() {
            problems.push(e.to_string());
        }
        kill_working_in(&self.pgdata, workers(self.run_as));
        remove_leftover_segment(&self.pgdata);
        // The socket directory in the temporary directory is one of them, with its marker.
        for dir in &self.owned {
            if let Err(e) = remove_owned(dir) {
                problems.push(e.to_string());
            }
        }
        if problems.is_empty() {
            Ok(())
        } else {
            Err(Error::msg(format!(
                "removing the managed PostgreSQL cluster {}: {}",
                self.id,
                problems.join("; ")
            )))
        }
    }

    /// Fast shutdown (SIGINT), and SIGKILL when it takes longer than [`Deadline::ServerStop`]
    /// (SIGKILL also ends a stopped process, which a pending SIGINT never reaches).
    fn stop(&self) -> Result<()> {
        self.postmaster.stop(libc::SIGINT)
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        if let Err(e) = self.destroy() {
            eprintln!("dbbench › {e}");
        }
        drop(self.held.take());
    }
}

/// A loopback TCP port nobody uses now; the server only names its socket after it.
fn free_port() -> Result<u16> {
    let listener = std::net::TcpListener::bind(("127.0.0.1", 0))
        .map_err(|e| Error::msg(format!("cannot find a free port: {e}")))?;
    listener
        .local_addr()
        .map(|a| a.port())
        .map_err(|e| Error::msg(format!("cannot find a free port: {e}")))
}

/// The variable that makes missing PostgreSQL binaries an error of the tests that need a managed
/// cluster instead of a skip (`.ci/run` sets it, so CI never passes by skipping them).
pub const REQUIRE_ENV: &str = "DBBENCH_REQUIRE_POSTGRES";

/// For tests of the managed cluster: `true` when PostgreSQL's server binaries are found. Without
/// them it prints `skipped: …` (what to install) and returns `false`, or panics when
/// [`REQUIRE_ENV`] is set.
pub fn available_for_tests() -> bool {
    match Binaries::find() {
        Ok(_) => true,
        Err(e) if std::env::var_os(REQUIRE_ENV).is_some_and(|v| !v.is_empty()) => {
            panic!("{REQUIRE_ENV} is set but the PostgreSQL binaries are missing: {e}")
        }
        Err(e) => {
            crate::util::console::say(&format!("skipped: {e}"));
            false
        }
    }
}
