//! The sweep of managed instances that earlier dbbench processes of this host left: an
//! instance whose marker names an owner that is gone ([`crate::util::owner`]) has its server
//! killed and every directory it owns removed; instances of live runs, of other hosts and of
//! other PID namespaces are left alone.

use super::owned::{kill_working_in, remove_owned, MARKER};
use crate::util::owner::{Liveness, Owner};
use std::path::{Path, PathBuf};

/// Removes the stale instances under `base`; one line per instance removed.
pub fn sweep(base: &Path) -> Vec<String> {
    let mut lines = Vec::new();
    for entry in std::fs::read_dir(base).into_iter().flatten().flatten() {
        let Ok(text) = std::fs::read_to_string(entry.path().join(MARKER)) else {
            continue;
        };
        let Some(owner) = Owner::parse(&text) else {
            continue;
        };
        if owner.liveness() != Liveness::Gone {
            continue;
        }
        let field = |key: &str| -> Vec<PathBuf> {
            text.lines()
                .filter_map(|l| l.strip_prefix(key))
                .map(PathBuf::from)
                .collect()
        };
        for datadir in field("datadir=") {
            kill_working_in(&datadir);
        }
        let problems: Vec<String> = field("owns=")
            .iter()
            .rev()
            .filter_map(|dir| remove_owned(dir).err().map(|e| e.to_string()))
            .collect();
        lines.push(if problems.is_empty() {
            format!(
                "mariadb: removed the instance {} left by {}, which is gone",
                entry.path().display(),
                owner.describe()
            )
        } else {
            format!(
                "mariadb: could not remove the instance {} left by {}: {}",
                entry.path().display(),
                owner.describe(),
                problems.join("; ")
            )
        });
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_instance_of_a_gone_owner_is_removed_and_a_live_one_kept() {
        let base = std::env::temp_dir().join(format!("dbbench-mdb-sweep-{}", std::process::id()));
        let gone = base.join("gone");
        let live = base.join("live");
        for dir in [&gone, &live] {
            std::fs::create_dir_all(dir.join("data")).unwrap();
        }
        let mut dead = Owner::this();
        // No process has this start time: the owner is gone.
        dead.start = Some(dead.start.unwrap_or(0) + 1);
        let marker = |owner: &Owner, dir: &Path| {
            format!(
                "x\n{}owns={}\ndatadir={}\n",
                owner.lines(),
                dir.display(),
                dir.join("data").display()
            )
        };
        std::fs::write(gone.join(MARKER), marker(&dead, &gone)).unwrap();
        std::fs::write(live.join(MARKER), marker(&Owner::this(), &live)).unwrap();
        let lines = sweep(&base);
        assert_eq!(lines.len(), 1, "{lines:?}");
        assert!(lines[0].contains("removed the instance"), "{lines:?}");
        assert!(!gone.exists() && live.exists());
        std::fs::remove_dir_all(&base).unwrap();
    }
}
