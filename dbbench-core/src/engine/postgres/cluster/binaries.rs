//! Finding the PostgreSQL server binaries (`initdb`, `postgres`) a managed cluster runs: apart
//! from the cluster because the search (a variable, `pg_config`, Debian's layout) is its own
//! concern and the tests' skip check uses it alone.

use super::BINDIR_ENV;
use crate::model::error::{Error, Result};
use std::path::PathBuf;
use std::process::Command;

/// The server binaries.
#[derive(Debug, Clone)]
pub struct Binaries {
    /// The directory of `initdb` and `postgres`.
    pub dir: PathBuf,
    /// `postgres --version`, e.g. `postgres (PostgreSQL) 15.14`.
    pub version: String,
}

impl Binaries {
    /// `DBBENCH_PG_BINDIR`, else `pg_config --bindir`, else the newest `/usr/lib/postgresql/*/bin`
    /// (Debian's layout, where `pg_config` may belong to the client package).
    pub fn find() -> Result<Binaries> {
        let mut tried = Vec::new();
        let mut candidates = Vec::new();
        if let Some(dir) = std::env::var_os(BINDIR_ENV).filter(|d| !d.is_empty()) {
            candidates.push(PathBuf::from(dir));
        } else {
            if let Ok(out) = Command::new("pg_config").arg("--bindir").output() {
                if out.status.success() {
                    let dir = String::from_utf8_lossy(&out.stdout).trim().to_string();
                    candidates.push(PathBuf::from(dir));
                }
            }
            let mut debian: Vec<PathBuf> = std::fs::read_dir("/usr/lib/postgresql")
                .into_iter()
                .flatten()
                .flatten()
                .map(|e| e.path().join("bin"))
                .collect();
            debian.sort_by_key(|p| {
                let version = p.parent().and_then(|v| v.file_name());
                version.and_then(|v| v.to_str()?.parse::<u32>().ok())
            });
            candidates.extend(debian.into_iter().rev());
        }
        for dir in candidates {
            if dir.join("initdb").is_file() && dir.join("postgres").is_file() {
                let out = Command::new(dir.join("postgres")).arg("--version").output();
                let version = match out {
                    Ok(o) if o.status.success() => {
                        String::from_utf8_lossy(&o.stdout).trim().to_string()
                    }
                    _ => continue,
                };
                return Ok(Binaries { dir, version });
            }
            tried.push(dir.display().to_string());
        }
        Err(Error::Config(format!(
            "PostgreSQL server binaries (initdb, postgres) not found{}: install PostgreSQL \
             (`apt-get install postgresql`), set {BINDIR_ENV} to their directory, or set {} to \
             the connection string of an existing server",
            if tried.is_empty() {
                String::new()
            } else {
                format!(" in {}", tried.join(", "))
            },
            crate::engine::postgres::settings::ENV
        )))
    }
}
