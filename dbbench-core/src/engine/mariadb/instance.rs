//! A managed MariaDB instance: `mariadb-install-db` into a folder of the work dir, `mariadbd`
//! on its own Unix socket with networking off, stopped and removed by dbbench.
//!
//! Private to this user: mariadbd makes its socket mode 0777, so what protects it is its
//! directory, made exclusively with mode 0700 (`util::private_dir`), as every directory the
//! instance owns is; the only accounts are `root` and this OS user's name, both let in only over
//! the socket and only to a process of that OS user (`unix_socket`: no password exists); and
//! `secure_file_priv` confines `LOAD_FILE`, `LOAD DATA` and `SELECT … INTO OUTFILE` to the
//! instance's own temporary directory. The server's environment is only what it needs to run.
//!
//! Both programs get `--no-defaults` first, so no `my.cnf` of the machine changes what is
//! measured, and every setting is on the command line: the pinned ones ([`PINNED`]) and the
//! cell's ([`super::options::Mapping`]). The installer gets the InnoDB settings too, since the
//! system tablespace's files and the redo log's directory are made when it bootstraps. Each
//! directory the instance owns carries a marker with its owner (`util::owner`) and the
//! directories it owns, so the next run's sweep (`stale`) removes what a killed run
//! left. The server is ended with SIGTERM (its normal shutdown) and SIGKILL after
//! [`Deadline::ServerStop`]; its start is waited for under [`Deadline::ServerStart`].

use super::binaries::{is_root, user_name, Binaries};
use super::bootstrap::{self, tail};
use super::owned::{ender, kill_working_in, remove_owned, workers, MARKER};
use crate::model::error::{Error, Result};
use crate::util::deadline::{spoken, Deadline};
use crate::util::private_dir::{self, Reach};
use crate::util::server_process::ServerProcess;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Settings every managed instance runs with, whatever the cell: the evidence needs the
/// performance schema (off by default, and startup-only); the buffer pool is neither dumped
/// nor reloaded, so every instance starts cold alike.
pub const PINNED: &[(&str, &str)] = &[
    ("performance_schema", "ON"),
    ("innodb_buffer_pool_load_at_startup", "OFF"),
    ("innodb_buffer_pool_dump_at_shutdown", "OFF"),
];

/// What an instance is made of: equal specs make interchangeable instances.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InstanceSpec {
    /// The folder instances are made in (`<work dir>/mariadb`).
    pub work_base: PathBuf,
    /// The folder of the redo log's directory, when `log_on` puts it on a volume.
    pub redo_base: Option<PathBuf>,
    /// The cell's server settings, `--name=value` (`--name` when the value is empty).
    pub settings: Vec<(String, String)>,
}

/// A running (or dead) managed instance.
pub struct Instance {
    spec: InstanceSpec,
    /// The programs it was made with, for a restart.
    binaries: Binaries,
    id: String,
    /// The account dbbench connects as: this OS user's name (`unix_socket`).
    user: String,
    /// The directories it owns, its root first.
    owned: Vec<PathBuf>,
    datadir: PathBuf,
    redo_dir: PathBuf,
    socket: PathBuf,
    log_file: PathBuf,
    /// `mariadbd`, how it ended, and its PID for the ender `held` names.
    server: ServerProcess,
    destroyed: Mutex<bool>,
    /// Named (and ended without the server's help) should the interrupt's deadline end the
    /// process while the runner waits on this server.
    held: Option<crate::util::leftover::Held>,
}

impl std::fmt::Debug for Instance {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Instance")
            .field("id", &self.id)
            .field("datadir", &self.datadir)
            .finish()
    }
}

impl Instance {
    /// Makes the directories, bootstraps the data directory and starts the server; on failure
    /// whatever was made is removed again. Blocks for a few seconds.
    pub fn start(binaries: &Binaries, spec: InstanceSpec, id: String) -> Result<Instance> {
        let root = spec.work_base.join(&id);
        let redo_root = spec
            .redo_base
            .as_ref()
            .map(|b| b.join(format!("{id}-redo")));
        let mut owned = vec![root.clone()];
        owned.extend(redo_root.iter().cloned());
        let short = root.join("sock");
        // A socket path longer than sun_path (108 bytes with its NUL) cannot be bound.
        let socket = if short.as_os_str().len() > 100 {
            // A name nobody can guess, made exclusively (`make_dirs`).
            let dir = private_dir::unique_name(&std::env::temp_dir(), &format!("dbbench-{id}-"));
            owned.push(dir.clone());
            dir.join("sock")
        } else {
            short
        };
        let datadir = root.join("data");
        let redo_dir = redo_root
            .as_ref()
            .map_or(datadir.clone(), |r| r.join("redo"));
        let server = ServerProcess::new("mariadbd");
        let held = crate::util::leftover::hold(
            format!("the managed MariaDB instance {}", root.display()),
            "the next run's sweep removes it",
            Some(ender(server.shared_pid(), datadir.clone(), owned.clone())),
        );
        let instance = Instance {
            user: user_name()?,
            binaries: binaries.clone(),
            held: Some(held),
            server,
            log_file: root.join("mariadbd.log"),
            spec,
            id,
            owned,
            datadir,
            redo_dir,
            socket,
            destroyed: Mutex::new(false),
        };
        // From here on, dropping `instance` removes what was made.
        instance.make_dirs()?;
        instance.install(binaries)?;
        instance.spawn(binaries)?;
        instance.wait_ready()?;
        Ok(instance)
    }

    /// Makes every directory the instance owns exclusively, mode 0700 (one found at its path is
    /// never taken: another user could have made it to reach the socket or the files), with its
    /// marker as a new file; then the temporary and redo directories inside them.
    fn make_dirs(&self) -> Result<()> {
        let marker = self.marker_text();
        for dir in &self.owned {
            if let Some(parent) = dir.parent() {
                std::fs::create_dir_all(parent)
                    .map_err(|e| Error::io("cannot create the instance directory", parent, e))?;
            }
            private_dir::make_new(dir, Reach::Owner)?;
            private_dir::write_new_file(&dir.join(MARKER), &marker)?;
        }
        for dir in [&self.tmpdir(), &self.redo_dir] {
            std::fs::create_dir_all(dir)
                .map_err(|e| Error::io("cannot create the instance directory", dir, e))?;
        }
        Ok(())
    }

    fn marker_text(&self) -> String {
        let mut text = crate::util::owned_dir::marker(
            &format!("dbbench managed MariaDB instance {}", self.id),
            &self.owned,
        );
        // The sweep of a gone owner's instance kills what still works there (`stale`).
        text.push_str(&format!("datadir={}\n", self.datadir.display()));
        text
    }

    /// Its own temporary directory: parallel bootstraps collide in a shared `/tmp`.
    fn tmpdir(&self) -> PathBuf {
        self.owned[0].join("tmp")
    }

    /// The options both programs get after `--no-defaults`: where everything is, and the
    /// InnoDB settings that decide the files the bootstrap makes.
    fn common_args(&self) -> Vec<String> {
        let mut args = vec![
            format!("--datadir={}", self.datadir.display()),
            format!("--tmpdir={}", self.tmpdir().display()),
            format!("--innodb-log-group-home-dir={}", self.redo_dir.display()),
        ];
        if is_root() {
            args.push("--user=root".into());
        }
        for (name, value) in PINNED.iter().map(|(n, v)| (*n, *v)).chain(
            self.spec
                .settings
                .iter()
                .map(|(n, v)| (n.as_str(), v.as_str())),
        ) {
            args.push(if value.is_empty() {
                format!("--{name}")
            } else {
                format!("--{name}={value}")
            });
        }
        args
    }

    fn command(&self, program: &Path) -> Command {
        let mut command = Command::new(program);
        command
            .arg("--no-defaults")
            .current_dir(&self.owned[0])
            .stdin(Stdio::null());
        // No connection string or password of dbbench's in the server's environment, and no
        // `MYSQL_HOME` or `MYSQL_PWD` of the user's.
        crate::util::server_process::clean_env(&mut command);
        command.env("LC_ALL", "C");
        command
    }

    /// The account dbbench connects as.
    pub fn user(&self) -> &str {
        &self.user
    }

    /// `mariadb-install-db`: the system tables, with `root` and this OS user's name as the only
    /// accounts, each let in only over the socket by a process of that OS user (`unix_socket`,
    /// no password: a process of another user is refused even if it reached the socket).
    fn install(&self, binaries: &Binaries) -> Result<()> {
        let log = self.owned[0].join("install.log");
        let out = std::fs::File::create(&log)
            .map_err(|e| Error::io("cannot create the install log", &log, e))?;
        let err = out
            .try_clone()
            .map_err(|e| Error::io("cannot open the install log", &log, e))?;
        let mut command = self.command(&binaries.install);
        command
            .args(self.common_args())
            .arg(format!("--auth-root-socket-user={}", self.user))
            .args([
                "--auth-root-authentication-method=socket",
                "--skip-test-db",
                "--skip-name-resolve",
            ])
            .stdout(out)
            .stderr(err);
        bootstrap::run(command, &binaries.install)
            .map_err(|e| Error::msg(format!("{e}: {}", tail(&log))))
    }

    fn spawn(&self, binaries: &Binaries) -> Result<()> {
        let child = self
            .command(&binaries.server)
            .args(self.common_args())
            .arg(format!("--socket={}", self.socket.display()))
            .arg("--skip-networking")
            // The server reads and writes files for a session only in its own directory.
            .arg(format!("--secure-file-priv={}", self.tmpdir().display()))
            .arg(format!(
                "--pid-file={}",
                self.owned[0].join("mariadbd.pid").display()
            ))
            .arg(format!("--log-error={}", self.log_file.display()))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|e| Error::io("cannot start", &binaries.server, e))?;
        // Also forgets the end of the process a restart stopped: it is not the new one's.
        self.server.set(child);
        Ok(())
    }

    /// Waits until the socket accepts a connection (the server listens once it is ready).
    fn wait_ready(&self) -> Result<()> {
        let started = Instant::now();
        let limit = Deadline::ServerStart.limit()?;
        loop {
            if let Some(why) = self.exited() {
                return Err(Error::msg(format!(
                    "the MariaDB server did not start ({why}); its log says: {}",
                    self.log_tail()
                )));
            }
            // A connect that never blocks: a full listen backlog must not hold the wait past its
            // deadline.
            if crate::util::local_server::connect_now(&self.socket).is_ok() {
                return Ok(());
            }
            if started.elapsed() > limit {
                return Err(Error::msg(format!(
                    "the MariaDB server was not ready within {} ({} sets this limit); its log \
                     says: {}",
                    spoken(limit),
                    Deadline::ServerStart.env(),
                    self.log_tail()
                )));
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Stops the server and starts it again on the same files, for a window that starts cold:
    /// its buffer pool comes back empty (it is neither dumped nor reloaded, [`PINNED`]). A
    /// server that died is not started again: its death is the error. Blocks for a few seconds.
    pub fn restart(&self) -> Result<()> {
        if let Some(why) = self.exited() {
            return Err(Error::msg(format!(
                "the managed MariaDB server is gone: {why}; its log says: {}",
                self.log_tail()
            )));
        }
        self.stop()?;
        self.spawn(&self.binaries)?;
        self.wait_ready()
    }

    /// The last lines of the server's error log.
    pub fn log_tail(&self) -> String {
        tail(&self.log_file)
    }

    /// What it was made of.
    pub fn spec(&self) -> &InstanceSpec {
        &self.spec
    }

    /// Its Unix socket.
    pub fn socket(&self) -> &Path {
        &self.socket
    }

    /// Its data directory (the system tablespace's files, unless placed elsewhere).
    pub fn datadir(&self) -> &Path {
        &self.datadir
    }

    /// The redo log's directory.
    pub fn redo_dir(&self) -> &Path {
        &self.redo_dir
    }

    /// The directories it owns (its root first).
    pub fn owned(&self) -> &[PathBuf] {
        &self.owned
    }

    /// The server's process id while it runs.
    pub fn pid(&self) -> Option<u32> {
        self.server.pid()
    }

    /// `None` while the server runs; how it ended once it has (and it is reaped).
    pub fn exited(&self) -> Option<String> {
        self.server.exited()
    }

    /// [`Instance::exited`], waiting up to `wait` for the server to end: a server that aborts
    /// (InnoDB on a full disk) closes its connections, then writes its log, and only then ends.
    pub fn exited_within(&self, wait: Duration) -> Option<String> {
        self.server.exited_within(wait)
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
        kill_working_in(&self.datadir, workers());
        for dir in &self.owned {
            if let Err(e) = remove_owned(dir) {
                problems.push(e.to_string());
            }
        }
        if problems.is_empty() {
            Ok(())
        } else {
            Err(Error::msg(format!(
                "removing the managed MariaDB instance {}: {}",
                self.id,
                problems.join("; ")
            )))
        }
    }

    /// SIGTERM (mariadbd's normal shutdown: InnoDB flushes and closes its files), and SIGKILL
    /// when it takes longer than [`Deadline::ServerStop`].
    fn stop(&self) -> Result<()> {
        self.server.stop(libc::SIGTERM)
    }
}

impl Drop for Instance {
    fn drop(&mut self) {
        if let Err(e) = self.destroy() {
            eprintln!("dbbench › {e}");
        }
        drop(self.held.take());
    }
}
