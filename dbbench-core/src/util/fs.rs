//! Writing a file together with its directory, with the path in every error: whole or not at
//! all, and with no secret in it.
//!
//! Why a temporary file and a rename: the harness of each test process publishes the whole
//! benchmark, so two processes may write `<stem>.json` or `index.html` at once, and a full disk
//! in the middle of a write would leave neither the old file nor the new one. The text goes to a
//! new file beside the target (created exclusively, with a random name), is synced, and is then
//! renamed over the target, which readers see either before or after, never torn; the directory
//! is synced so that the rename survives a power cut. Every file passes through the scrubber
//! (`util::secret`) on the way.
//!
//! Also the one way a file dbbench keeps open (a lock, a private place's state) is opened:
//! [`open_unfollowed`], never through a link, so a link planted in its place leads nowhere.

use crate::model::error::{Error, Result};
use std::fs::File;
use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

/// Opens the file `path` for reading and writing, created with mode 0600 when missing and
/// never truncated, without following a link (`O_NOFOLLOW`: a symlink planted in its place,
/// by another user or an earlier run, fails the open instead of leading the write elsewhere)
/// and closed in children (`O_CLOEXEC`: a managed server must not inherit a lock). Callers
/// check further what they need (owner, links) on the descriptor.
pub fn open_unfollowed(path: &Path) -> std::io::Result<File> {
    std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .mode(0o600)
        .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
        .open(path)
}

/// Writes `contents` to `path`, creating its directory first; `what` names the file in errors
/// ("results", "CSV", "report file"). The file is replaced whole (see the module's doc).
pub fn write_file(path: &Path, contents: impl AsRef<[u8]>, what: &'static str) -> Result<()> {
    let dir = path
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir).map_err(|e| Error::io("cannot create directory", dir, e))?;
    let contents = crate::util::secret::scrub_bytes(contents.as_ref());
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let temp = dir.join(format!(
        ".{name}.{}-{:08x}.tmp",
        std::process::id(),
        fastrand::u32(..)
    ));
    let written = (|| {
        let mut file = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&temp)?;
        file.write_all(&contents)?;
        file.sync_all()?;
        std::fs::rename(&temp, path)
    })();
    if let Err(e) = written {
        let _ = std::fs::remove_file(&temp);
        return Err(Error::io(what, path, e));
    }
    // The rename is durable once the directory is synced; a file system that cannot sync a
    // directory (some network ones) still has the file whole.
    if let Ok(d) = std::fs::File::open(dir) {
        let _ = d.sync_all();
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn creates_the_directory_and_names_the_path_on_failure() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("a/b/c.txt");
        write_file(&file, "x", "cannot write test file").unwrap();
        assert_eq!(std::fs::read_to_string(&file).unwrap(), "x");
        // A file where a directory should be: the error names the path.
        let blocked = file.join("d.txt");
        let e = write_file(&blocked, "y", "cannot write test file").unwrap_err();
        assert!(e.to_string().contains("c.txt"), "{e}");
    }

    #[test]
    fn a_failed_write_leaves_the_old_file_whole_and_no_temporary() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("r.json");
        write_file(&file, "old", "cannot write results").unwrap();
        // A hard link to the target sees whether the file was written in place: a rename gives
        // the target a new inode and leaves the link's content alone.
        let link = dir.path().join("link");
        std::fs::hard_link(&file, &link).unwrap();
        write_file(&file, "new", "cannot write results").unwrap();
        assert_eq!(std::fs::read_to_string(&file).unwrap(), "new");
        assert_eq!(std::fs::read_to_string(&link).unwrap(), "old");
        // The target a directory: the rename fails, and the temporary is removed.
        let blocked = dir.path().join("d");
        std::fs::create_dir(&blocked).unwrap();
        std::fs::write(blocked.join("inside"), "").unwrap();
        assert!(write_file(&blocked, "x", "cannot write results").is_err());
        let names: Vec<String> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        assert!(names.iter().all(|n| !n.ends_with(".tmp")), "{names:?}");
    }

    #[test]
    fn a_link_in_the_file_s_place_is_refused_and_its_target_left_alone() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("victim");
        std::fs::write(&target, "theirs").unwrap();
        let link = dir.path().join("lock");
        std::os::unix::fs::symlink(&target, &link).unwrap();
        let err = open_unfollowed(&link).unwrap_err();
        assert_eq!(err.raw_os_error(), Some(libc::ELOOP), "{err}");
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "theirs");
        // A missing file is made this user's only; an existing one is kept as it is.
        let own = dir.path().join("own");
        open_unfollowed(&own).unwrap().write_all(b"kept").unwrap();
        let mode = std::fs::metadata(&own).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
        drop(open_unfollowed(&own).unwrap());
        assert_eq!(std::fs::read_to_string(&own).unwrap(), "kept");
    }

    #[test]
    fn a_kept_secret_never_reaches_the_file() {
        crate::util::secret::keep("zz-fs-secret-9");
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("r.csv");
        write_file(&file, "server pw zz-fs-secret-9 end", "cannot write CSV").unwrap();
        assert_eq!(std::fs::read_to_string(&file).unwrap(), "server pw *** end");
    }
}
