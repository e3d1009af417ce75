//! The unprivileged user a managed cluster runs as when dbbench runs as root (`initdb` and
//! `postgres` refuse root), and whether that user can reach a directory: apart from the cluster
//! because placing the directories (`place`) asks the same question before any cluster exists.

use crate::model::error::{Error, Result};
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};

/// The unprivileged user the server runs as when dbbench runs as root.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RunAs {
    /// Its uid.
    pub uid: u32,
    /// Its primary gid.
    pub gid: u32,
}

/// `Some(postgres user)` when running as root, `None` (the current user) otherwise.
pub fn run_as() -> Result<Option<RunAs>> {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        return Ok(None);
    }
    let name = std::ffi::CString::new("postgres").expect("no NUL");
    // SAFETY: getpwnam returns null or a pointer to a static record, read at once.
    let entry = unsafe { libc::getpwnam(name.as_ptr()) };
    if entry.is_null() {
        return Err(Error::Config(
            "dbbench runs as root, and initdb/postgres refuse to: the managed cluster runs as the \
             `postgres` user, which does not exist here (apt-get install postgresql creates it)"
                .into(),
        ));
    }
    // SAFETY: checked non-null above.
    let (uid, gid) = unsafe { ((*entry).pw_uid, (*entry).pw_gid) };
    Ok(Some(RunAs { uid, gid }))
}

/// Whether user `who` can reach `dir`: every ancestor searchable by it.
pub fn reachable(dir: &Path, who: Option<RunAs>) -> std::result::Result<(), PathBuf> {
    let Some(who) = who else { return Ok(()) };
    for ancestor in dir.ancestors().skip(1) {
        let Ok(meta) = std::fs::metadata(ancestor) else {
            continue;
        };
        let mode = meta.permissions().mode();
        let ok = mode & 0o001 != 0
            || (meta.uid() == who.uid && mode & 0o100 != 0)
            || (meta.gid() == who.gid && mode & 0o010 != 0);
        if !ok {
            return Err(ancestor.to_path_buf());
        }
    }
    Ok(())
}
