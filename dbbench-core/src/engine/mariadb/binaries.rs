//! The managed instance's programs, `mariadbd` and `mariadb-install-db` of Debian's
//! `mariadb-server`, and whether the tests that need them run, are skipped or fail.

use crate::model::error::{Error, Result};
use std::path::PathBuf;
use std::process::Command;

/// The server programs.
#[derive(Debug, Clone)]
pub struct Binaries {
    /// `mariadbd`.
    pub server: PathBuf,
    /// `mariadb-install-db`.
    pub install: PathBuf,
    /// `mariadbd --version`, e.g. `mariadbd  Ver 10.11.19-MariaDB-0+deb12u1 for debian-linux-gnu`.
    pub version: String,
}

/// Where the programs are looked for after `PATH` (`mariadbd` is in `/usr/sbin`, often not on a
/// user's `PATH`).
const DIRS: &[&str] = &["/usr/sbin", "/usr/bin", "/usr/local/sbin", "/usr/local/bin"];

impl Binaries {
    /// The programs of Debian's `mariadb-server`, on `PATH` or in the usual directories.
    pub fn find() -> Result<Binaries> {
        let server = which("mariadbd");
        let install = which("mariadb-install-db");
        let (Some(server), Some(install)) = (server, install) else {
            return Err(Error::Config(
                "MariaDB's server programs (mariadbd, mariadb-install-db) were not found on PATH \
                 or in /usr/sbin: install them (`apt-get install mariadb-server`)"
                    .into(),
            ));
        };
        let out = Command::new(&server)
            .arg("--version")
            .output()
            .map_err(|e| Error::io("cannot run", &server, e))?;
        let version = String::from_utf8_lossy(&out.stdout).trim().to_string();
        Ok(Binaries {
            server,
            install,
            version,
        })
    }
}

/// `program` on `PATH` or in [`DIRS`].
fn which(program: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .chain(DIRS.iter().map(PathBuf::from))
        .map(|d| d.join(program))
        .find(|p| p.is_file())
}

/// Whether this process runs as root (mariadbd then needs `--user=root`).
pub(super) fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() == 0 }
}

/// This user's name (of the effective uid): the MariaDB account of a managed instance, which the
/// server lets in only over its socket and only to a process of this OS user (`unix_socket`).
pub(super) fn user_name() -> Result<String> {
    // SAFETY: geteuid has no preconditions; getpwuid returns null or a pointer to a static
    // record, read at once on this thread.
    let name = unsafe {
        let entry = libc::getpwuid(libc::geteuid());
        if entry.is_null() || (*entry).pw_name.is_null() {
            None
        } else {
            std::ffi::CStr::from_ptr((*entry).pw_name)
                .to_str()
                .ok()
                .map(str::to_string)
        }
    };
    name.filter(|n| {
        !n.is_empty()
            && n.chars()
                .all(|c| c.is_ascii_alphanumeric() || "._-".contains(c))
    })
    .ok_or_else(|| {
        Error::Config(
            "a managed MariaDB instance lets in only this OS user, by name, and this user \
                 (uid {}) has no plain name in the password database"
                .replace("{}", &crate::util::private_dir::euid().to_string()),
        )
    })
}

/// The variable that makes missing MariaDB programs an error of the tests that need a managed
/// instance instead of a skip.
pub const REQUIRE_ENV: &str = "DBBENCH_REQUIRE_MARIADB";

/// For tests of the managed instance: `true` when MariaDB's programs are found. Without them it
/// prints `skipped: …` (what to install) and returns `false`, or panics when [`REQUIRE_ENV`] is
/// set (`.ci/run` sets it, so CI never passes by skipping them).
pub fn available_for_tests() -> bool {
    match Binaries::find() {
        Ok(_) => true,
        Err(e) if std::env::var_os(REQUIRE_ENV).is_some_and(|v| !v.is_empty()) => {
            panic!("{REQUIRE_ENV} is set but MariaDB's programs are missing: {e}")
        }
        Err(e) => {
            crate::util::console::say(&format!("skipped: {e}"));
            false
        }
    }
}
