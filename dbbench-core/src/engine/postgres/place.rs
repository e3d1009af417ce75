//! Where a managed cluster's directories go. When dbbench runs as root the server runs as the
//! `postgres` user, which must search every directory above the cluster's; a checkout under a
//! mode-700 home (`/root/project`) denies it. The directories dbbench chooses itself, the cluster's
//! base under the work dir and the directories of volumes that `DBBENCH_VOLUMES` does not bind,
//! then move to a dbbench-owned directory under the temporary directory, which it can reach; this
//! is said once per process. A volume the user bound to an unreachable directory stays refused
//! with the reason: that directory is the user's to change, and dbbench never changes the
//! permissions of the user's directories.

use super::cluster::{reachable, RunAs};
use super::options::Mapping;
use crate::model::error::{Error, Result};
use crate::model::volume::Volumes;
use crate::util::private_dir::{self, Reach};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// The directories a managed cluster goes into, before any is created.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Placement {
    /// The cluster's own directory's parent (marker, log, socket, default data).
    pub work_base: PathBuf,
    /// The data volume's directory, when `data_on` names one.
    pub data_base: Option<PathBuf>,
    /// The WAL volume's directory, when `log_on` names one.
    pub wal_base: Option<PathBuf>,
    /// What moved to the temporary directory: `(chosen, used instead, the ancestor in the way)`.
    pub moved: Vec<(PathBuf, PathBuf, PathBuf)>,
}

/// The dbbench-owned directory under the temporary directory for clusters whose work dir the
/// server's user cannot reach: one per user (`dbbench-postgres-<uid>`), so that the next run's
/// sweep finds what a killed run left there. It is taken only as a private place of this user
/// (`util::private_dir`, mode 0711: the server's user passes through to its own directories,
/// nobody else lists or changes it); one that another user made first is refused.
pub fn private_base() -> PathBuf {
    std::env::temp_dir().join(format!("dbbench-postgres-{}", private_dir::euid()))
}

/// The ancestor of `dir` (or `dir` itself) that `who` cannot search, if any.
fn blocked(dir: &Path, who: Option<RunAs>) -> Option<PathBuf> {
    reachable(&dir.join("cluster"), who).err()
}

/// The base of the clusters of `work_dir`: `<work_dir>/postgres`, or [`private_base`] when the
/// server's user cannot reach it; with the ancestor in the way.
pub fn work_base(work_dir: &Path, who: Option<RunAs>) -> (PathBuf, Option<PathBuf>) {
    let own = work_dir.join("postgres");
    match blocked(&own, who) {
        None => (own, None),
        Some(ancestor) => (private_base(), Some(ancestor)),
    }
}

/// Where the cluster of a cell mapped to `mapping` goes; an unbound volume is an error (the
/// runner binds every volume a cell names, so only a direct caller meets it).
pub fn place(
    work_dir: &Path,
    volumes: &Volumes,
    mapping: &Mapping,
    who: Option<RunAs>,
) -> Result<Placement> {
    let mut moved = Vec::new();
    let (work, in_the_way) = work_base(work_dir, who);
    if let Some(ancestor) = in_the_way {
        moved.push((work_dir.join("postgres"), work.clone(), ancestor));
    }
    let mut volume = |name: Option<&str>| -> Result<Option<PathBuf>> {
        let Some(name) = name else { return Ok(None) };
        let bound = volumes.resolve(name)?.clone();
        // Only dbbench's own default for an unbound name moves; a user's binding stays, and
        // the cluster's start refuses it with the directory in the way.
        if bound != crate::util::paths::default_volume_dir(work_dir, name) {
            return Ok(Some(bound));
        }
        match blocked(&bound, who) {
            None => Ok(Some(bound)),
            Some(ancestor) => {
                let instead = private_base().join("volumes").join(name);
                moved.push((bound, instead.clone(), ancestor));
                Ok(Some(instead))
            }
        }
    };
    let data_base = volume(mapping.data_volume)?;
    let wal_base = volume(mapping.wal_volume)?;
    Ok(Placement {
        work_base: work,
        data_base,
        wal_base,
        moved,
    })
}

/// The moves already said, so each is said once per process.
static SAID: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

impl Placement {
    /// Creates the directories dbbench moved (private places of this user that the server's
    /// user may pass through, mode 0711, or refused as found when another user made them; they
    /// hold only the cluster's own directories, which are the server user's and mode 700) and
    /// says, once per process, what moved where and why.
    pub fn prepare(&self) -> Result<()> {
        for (_, instead, _) in &self.moved {
            for dir in [
                private_base(),
                private_base().join("volumes"),
                instead.clone(),
            ] {
                private_dir::ensure(&dir, Reach::Traverse)?;
            }
        }
        std::fs::create_dir_all(&self.work_base)
            .map_err(|e| Error::io("cannot create directory", &self.work_base, e))?;
        let mut said = SAID.lock().unwrap_or_else(|p| p.into_inner());
        for (chosen, instead, ancestor) in &self.moved {
            if said.contains(chosen) {
                continue;
            }
            said.push(chosen.clone());
            crate::util::console::say(&format!(
                "dbbench › postgres: the server runs as user `postgres`, which cannot reach {} \
                 ({} is not searchable by it); managed clusters use {} instead",
                chosen.display(),
                ancestor.display(),
                instead.display()
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::config::StorageSpec;
    use std::os::unix::fs::PermissionsExt;

    /// A user other than root who is neither owner nor group of anything made here.
    const STRANGER: Option<RunAs> = Some(RunAs {
        uid: 4_000_000,
        gid: 4_000_000,
    });

    fn private_checkout() -> (tempfile::TempDir, PathBuf) {
        let home = tempfile::tempdir().unwrap();
        std::fs::set_permissions(home.path(), std::fs::Permissions::from_mode(0o700)).unwrap();
        let work = home.path().join("checkout/target/dbbench");
        (home, work)
    }

    fn mapping(data_on: &'static [&'static str], log_on: Option<&'static str>) -> Mapping {
        let storage = StorageSpec {
            data_on,
            log_on,
            ..StorageSpec::DEFAULT
        };
        super::super::options::map(&storage, super::super::options::Mode::Managed).unwrap()
    }

    #[test]
    fn a_reachable_work_dir_keeps_its_clusters() {
        let (_home, work) = private_checkout();
        let placed = place(&work, &Volumes::default(), &mapping(&[], None), None).unwrap();
        assert_eq!(placed.work_base, work.join("postgres"));
        assert!(
            placed.moved.is_empty(),
            "the current user reaches its own directories"
        );
    }

    #[test]
    fn an_unreachable_work_dir_and_its_default_volumes_move_to_the_temp_dir() {
        let (home, work) = private_checkout();
        let mut volumes = Volumes::default();
        volumes.bind("log", crate::util::paths::default_volume_dir(&work, "log"));
        let placed = place(&work, &volumes, &mapping(&[], Some("log")), STRANGER).unwrap();
        assert_eq!(placed.work_base, private_base());
        assert_eq!(
            placed.wal_base,
            Some(private_base().join("volumes").join("log"))
        );
        assert_eq!(placed.moved.len(), 2);
        assert!(placed.moved.iter().all(|(_, _, a)| a == home.path()));
    }

    #[test]
    fn a_volume_the_user_bound_stays_where_it_is() {
        let (home, work) = private_checkout();
        let mut volumes = Volumes::default();
        volumes.bind("log", home.path().join("wal"));
        let placed = place(&work, &volumes, &mapping(&[], Some("log")), STRANGER).unwrap();
        assert_eq!(placed.wal_base, Some(home.path().join("wal")));
        assert_eq!(placed.moved.len(), 1, "only the work dir's base moved");
    }
}
