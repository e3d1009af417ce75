//! The sweep of managed instances that earlier dbbench processes of this host left: an
//! instance whose marker names an owner that is gone ([`crate::util::owner`]) has its server
//! killed and every directory it owns removed; instances of live runs, of other hosts and of
//! other PID namespaces are left alone.

use super::owned::{kill_working_in, workers, MARKER};
use crate::util::owned_dir;
use std::path::Path;

/// Removes the stale instances under `base`; one line per instance removed.
pub fn sweep(base: &Path) -> Vec<String> {
    let mut lines = Vec::new();
    for stale in owned_dir::stale(base, MARKER) {
        // Only what dbbench would have made for this instance, marked alike (`Stale::listed`),
        // checked again just before its removal.
        for datadir in stale.listed("datadir=") {
            kill_working_in(&datadir, workers());
        }
        let problems: Vec<String> = stale
            .listed("owns=")
            .iter()
            .rev()
            .filter_map(|dir| stale.remove(dir).err().map(|e| e.to_string()))
            .collect();
        lines.push(if problems.is_empty() {
            format!(
                "mariadb: removed the instance {} left by {}, which is gone",
                stale.dir.display(),
                stale.owner.describe()
            )
        } else {
            format!(
                "mariadb: could not remove the instance {} left by {}: {}",
                stale.dir.display(),
                stale.owner.describe(),
                problems.join("; ")
            )
        });
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::util::owner::Owner;

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
