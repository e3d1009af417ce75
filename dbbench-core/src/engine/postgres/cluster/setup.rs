//! Making a new cluster before its server starts: its directories (each owned one marked, handed
//! to the user the server runs as), `initdb`, and the configuration written into the data
//! directory. Apart from the cluster's lifecycle because it runs once, before there is a server.

use super::{reachable, Binaries, Cluster, MARKER, SUPERUSER};
use crate::model::error::{Error, Result};
use crate::util::owned_dir;
use crate::util::private_dir::{self, Reach};
use std::io::Write;
use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

impl Cluster {
    /// Makes each directory the cluster owns, and its socket directory, exclusively with mode
    /// 0700 (`util::private_dir`): a directory found at one of these paths is never taken, as
    /// another user could have made it to hold the server's files or socket. Each owned one gets
    /// its marker (a new file, never through a link), and each is handed to the server's user.
    pub(super) fn make_dirs(&self) -> Result<()> {
        let marker = self.marker_text();
        for dir in self.owned.iter().chain([&self.socket_dir]) {
            if dir == &self.socket_dir && self.owned.contains(dir) && dir.exists() {
                // The socket directory in the temporary directory is also owned: made above.
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
            if let Some(parent) = dir.parent() {
                std::fs::create_dir_all(parent)
                    .map_err(|e| Error::io("cannot create cluster directory", parent, e))?;
            }
            private_dir::make_new(dir, Reach::Owner)?;
            if self.owned.contains(dir) {
                private_dir::write_new_file(&dir.join(MARKER), &marker)?;
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
        command.current_dir(&self.owned[0]).stdin(Stdio::null());
        // Nothing of this process's environment but what a server needs to run: no connection
        // string or password of dbbench's reaches the server's `/proc/<pid>/environ`, and no
        // `PGDATA` or `PG…` setting changes what it does.
        crate::util::server_process::clean_env(&mut command);
        command.env("LC_ALL", "C");
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
             unix_socket_directories = {}\nunix_socket_permissions = 0700\n\
             track_io_timing = on\ntrack_wal_io_timing = on\n",
            self.id,
            self.port,
            conf_string(&self.socket_dir)?
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

/// `path` as a quoted string of `postgresql.conf`: `'` and `\` escaped, so a work dir holding
/// them stays one value; a line break cannot be written there and is refused.
pub(super) fn conf_string(path: &Path) -> Result<String> {
    let text = path.to_str().ok_or_else(|| {
        Error::Config(format!(
            "the managed PostgreSQL cluster's socket directory `{}` is not UTF-8",
            path.display()
        ))
    })?;
    if text.contains(['\n', '\r']) {
        return Err(Error::Config(format!(
            "the managed PostgreSQL cluster's socket directory {text:?} holds a line break, \
             which postgresql.conf cannot hold; use a work dir without one"
        )));
    }
    Ok(format!(
        "'{}'",
        text.replace('\\', "\\\\").replace('\'', "''")
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_path_with_quotes_stays_one_value_of_postgresql_conf() {
        assert_eq!(
            conf_string(Path::new("/w/it's\\x")).unwrap(),
            "'/w/it''s\\\\x'"
        );
        assert!(conf_string(Path::new("/w/a'\narchive_command = 'x")).is_err());
    }
}
