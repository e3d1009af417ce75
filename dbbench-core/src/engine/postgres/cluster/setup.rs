//! Making a new cluster before its server starts: its directories (each owned one marked, handed
//! to the user the server runs as), `initdb`, and the configuration written into the data
//! directory. Apart from the cluster's lifecycle because it runs once, before there is a server.

use super::{reachable, Binaries, Cluster, MARKER, SUPERUSER};
use crate::model::error::{Error, Result};
use crate::util::owned_dir;
use std::io::Write;
use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

impl Cluster {
    pub(super) fn make_dirs(&self) -> Result<()> {
        let marker = self.marker_text();
        for dir in self.owned.iter().chain([&self.socket_dir]) {
            if dir.exists() {
                continue;
            }
            // Checked before anything is made: a refused volume gets no directory of ours.
            if let Err(ancestor) = reachable(dir, self.run_as) {
                return Err(Error::Config(format!(
                    "the managed PostgreSQL cluster runs as user `postgres`, which cannot reach \
                     `{}`: `{}` is not searchable by it (chmod o+x it, or bind the volume to \
                     another directory with DBBENCH_VOLUMES)",
                    dir.display(),
                    ancestor.display()
                )));
            }
            std::fs::create_dir_all(dir)
                .map_err(|e| Error::io("cannot create cluster directory", dir, e))?;
            if self.owned.contains(dir) {
                let path = dir.join(MARKER);
                std::fs::write(&path, &marker)
                    .map_err(|e| Error::io("cannot write the cluster marker", &path, e))?;
            }
            self.give(dir, 0o700)?;
        }
        Ok(())
    }

    /// Hands `path` to the server's user with `mode`.
    fn give(&self, path: &Path, mode: u32) -> Result<()> {
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode))
            .map_err(|e| Error::io("cannot set permissions of", path, e))?;
        if let Some(who) = self.run_as {
            std::os::unix::fs::chown(path, Some(who.uid), Some(who.gid))
                .map_err(|e| Error::io("cannot hand to user postgres", path, e))?;
        }
        Ok(())
    }

    fn marker_text(&self) -> String {
        owned_dir::marker(
            &format!("dbbench managed PostgreSQL cluster {}", self.id),
            &self.owned,
        )
    }

    /// A command that runs as the server's user in the cluster's directory.
    pub(super) fn command(&self, program: PathBuf) -> Command {
        let mut command = Command::new(program);
        command
            .current_dir(&self.owned[0])
            .env("LC_ALL", "C")
            .env_remove("PGDATA")
            .stdin(Stdio::null());
        if let Some(who) = self.run_as {
            command.uid(who.uid).gid(who.gid);
        }
        command
    }

    pub(super) fn initdb(&self, binaries: &Binaries) -> Result<()> {
        let mut command = self.command(binaries.dir.join("initdb"));
        command
            .arg("-D")
            .arg(&self.pgdata)
            .args(["-U", SUPERUSER, "--auth=trust", "-E", "UTF8", "--locale=C"])
            // A throwaway cluster: nothing to gain from fsyncing the template files.
            .arg("--no-sync");
        if self.spec.wal_base.is_some() {
            command.arg(format!("--waldir={}", self.wal_dir.display()));
        }
        if let Some(mb) = self.spec.wal_segsize_mb {
            command.arg(format!("--wal-segsize={mb}"));
        }
        let out = command
            .output()
            .map_err(|e| Error::io("cannot run initdb", binaries.dir.join("initdb"), e))?;
        if !out.status.success() {
            return Err(Error::msg(format!(
                "initdb failed ({}): {}",
                out.status,
                String::from_utf8_lossy(&out.stderr).trim()
            )));
        }
        Ok(())
    }

    pub(super) fn configure(&self) -> Result<()> {
        let path = self.pgdata.join("postgresql.conf");
        let mut lines = format!(
            "\n# dbbench managed cluster {}\nlisten_addresses = ''\nport = {}\n\
             unix_socket_directories = '{}'\nunix_socket_permissions = 0700\n\
             track_io_timing = on\ntrack_wal_io_timing = on\n",
            self.id,
            self.port,
            self.socket_dir.display()
        );
        for (name, value) in &self.spec.settings {
            lines.push_str(&format!("{name} = {value}\n"));
        }
        let mut file = std::fs::OpenOptions::new()
            .append(true)
            .open(&path)
            .map_err(|e| Error::io("cannot open", &path, e))?;
        file.write_all(lines.as_bytes())
            .map_err(|e| Error::io("cannot write", &path, e))
    }
}
