//! What a managed instance owns on disk and how it is ended without its help, bound to the
//! instance's marker file: the removal of a directory only when it carries that marker, and the
//! ender that SIGKILLs the server and whatever still works in its data directory. The logic is
//! every managed server's (`util::owned_dir`); this names MariaDB's marker.

use crate::model::error::Result;
use crate::util::leftover::Ender;
use crate::util::owned_dir;
pub(super) use crate::util::owned_dir::kill_working_in;
use crate::util::owned_dir::Workers;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicU32;
use std::sync::Arc;

/// The marker file in every directory an instance owns.
pub const MARKER: &str = "dbbench-mariadb-instance";

/// What ends an instance from the signal thread, without the server's help and without the
/// `Instance` (which the runner's thread holds): SIGKILL to the server and to whatever works in
/// its data directory, then its directories removed. (Nothing else of mariadbd's outlives it.)
pub(super) fn ender(pid: Arc<AtomicU32>, datadir: PathBuf, owned: Vec<PathBuf>) -> Ender {
    owned_dir::ender(pid, datadir, owned, MARKER, workers(), |_| {})
}

/// An instance's one process: `mariadbd`, run as this user (`--user=root` when that is root).
pub(super) fn workers() -> Workers {
    Workers {
        uid: crate::util::private_dir::euid(),
        names: &["mariadbd"],
    }
}

/// Removes `dir` if it carries the instance marker; refuses otherwise.
pub(super) fn remove_owned(dir: &Path) -> Result<()> {
    owned_dir::remove_owned(dir, MARKER)
}
