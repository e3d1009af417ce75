//! Leftovers of earlier embedded runs: database directories under `<work_dir>/db/` whose
//! ownership marker names a process that is gone (killed, crashed, or stopped by a second
//! Ctrl-C). They are removed at the start of a run, with every file their storage manifest placed
//! on other volumes, and each removal is reported. A directory without the marker, or whose owner
//! still runs (another `cargo test` on the same work dir) or ran on another host, is never touched.

use super::OWNER_MARKER;
use crate::util::owner::{Liveness, Owner};
use std::path::Path;

/// Removes the leftovers under `work_dir` and returns one line per removal.
pub fn sweep(work_dir: &Path) -> Vec<String> {
    let base = work_dir.join("db");
    let mut removed = Vec::new();
    for entry in std::fs::read_dir(&base).into_iter().flatten().flatten() {
        let dir = entry.path();
        let Ok(text) = std::fs::read_to_string(dir.join(OWNER_MARKER)) else {
            continue;
        };
        let Some(owner) = Owner::parse(&text) else {
            continue;
        };
        if owner.liveness() != Liveness::Gone {
            continue;
        }
        // The storage manifest knows the files on other volumes; without one (killed before
        // it was written) only the directory is there to remove.
        let name = entry.file_name().to_string_lossy().into_owned();
        let db = dir.join(format!("{name}.db"));
        // A pool of kept logs has no manifest: everything it holds is inside it.
        let pool = name.starts_with(crate::engine::embedded::storage::log_pool::POOL_PREFIX);
        let elsewhere = (!pool)
            .then(|| crate::engine::embedded::storage::Layout::remove_leftover(&db).err())
            .flatten();
        match std::fs::remove_dir_all(&dir) {
            Ok(()) => removed.push(format!(
                "removed {} left by {}, which is gone{}",
                dir.display(),
                owner.describe(),
                elsewhere
                    .map(|e| format!(" (its files on other volumes may remain: {e})"))
                    .unwrap_or_default()
            )),
            Err(e) => removed.push(format!(
                "could not remove {} left by {}: {e}",
                dir.display(),
                owner.describe()
            )),
        }
    }
    removed
}
