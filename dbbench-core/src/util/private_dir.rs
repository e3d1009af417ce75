//! The one way dbbench makes a place of its own outside the user's work dir (the machine lock's
//! directory, a managed server's base and socket directories under the temporary directory) and
//! the files in it: a directory is created exclusively with mode 0700 (0711 where a server that
//! runs as another user must pass through it), under a random name where no later run needs to
//! find it; one with a fixed name that a later run reuses is taken only when `lstat` shows a real
//! directory owned by this user (the effective uid) that no other user can write to (nor read,
//! for 0700). Files are opened without following a link (`O_NOFOLLOW`), new ones exclusively
//! (`O_EXCL`) with mode 0600.
//!
//! Why: `/tmp` is shared by every local user, and a name dbbench can predict, another user can
//! make first, as a directory of theirs or a link. A place that is refused says so in one
//! sentence naming the path and why; nothing it points to is opened, written or removed.

use crate::model::error::{Error, Result};
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

/// Who else reaches a private directory.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reach {
    /// This user only: mode 0700.
    Owner,
    // Only one server backend's managed servers need it: unused in a build without it.
    #[allow(dead_code)]
    /// Others may pass through to a directory inside whose name they know, but not list or
    /// change it: mode 0711, for a server that runs as another user (PostgreSQL's `postgres`
    /// when dbbench runs as root) and must reach its own directories below.
    Traverse,
}

impl Reach {
    fn mode(self) -> u32 {
        match self {
            Reach::Owner => 0o700,
            Reach::Traverse => 0o711,
        }
    }

    /// The bits other users must not have.
    fn forbidden(self) -> u32 {
        match self {
            Reach::Owner => 0o077,
            Reach::Traverse => 0o066,
        }
    }
}

/// This process's effective uid: whose places these are.
pub fn euid() -> u32 {
    // SAFETY: geteuid has no preconditions and cannot fail.
    unsafe { libc::geteuid() }
}

/// `<parent>/<prefix><12 random hex digits>`, a name nobody can guess, for a directory that
/// [`make_new`] makes later (it refuses the name should it exist by then).
pub fn unique_name(parent: &Path, prefix: &str) -> PathBuf {
    parent.join(format!("{prefix}{:012x}", random() & 0xffff_ffff_ffff))
}

/// Makes a new directory [`unique_name`] with `reach`'s mode; `parent` must exist. A name that
/// exists is never taken: another is drawn.
pub fn make_unique(parent: &Path, prefix: &str, reach: Reach) -> Result<PathBuf> {
    for _ in 0..16 {
        let dir = unique_name(parent, prefix);
        match make_new(&dir, reach) {
            Err(Error::Io { source, .. }) if source.kind() == std::io::ErrorKind::AlreadyExists => {
            }
            made => return made.map(|()| dir),
        }
    }
    Err(Error::msg(format!(
        "cannot make a private directory in `{}`: every random name tried exists",
        parent.display()
    )))
}

/// Makes the directory `dir` with `reach`'s mode, failing (with the OS's `AlreadyExists`) when
/// anything is at that path already: a name dbbench chose is never taken as found.
pub fn make_new(dir: &Path, reach: Reach) -> Result<()> {
    std::fs::DirBuilder::new()
        .mode(reach.mode())
        .create(dir)
        .map_err(|e| Error::io("cannot create the private directory", dir, e))?;
    // The umask may have taken bits the mode asked for (0711's), never added any.
    std::fs::set_permissions(dir, std::fs::Permissions::from_mode(reach.mode()))
        .map_err(|e| Error::io("cannot set permissions of", dir, e))?;
    verify(dir, reach)
}

/// The directory `dir` with a fixed name that later runs reuse: made as [`make_new`] makes it
/// when it is not there (its parent too, when that is missing), else taken only when
/// [`verify`] accepts it (after [`tighten`]).
pub fn ensure(dir: &Path, reach: Reach) -> Result<()> {
    if let Some(parent) = dir.parent().filter(|p| !p.as_os_str().is_empty()) {
        if !parent.exists() {
            std::fs::create_dir_all(parent)
                .map_err(|e| Error::io("cannot create directory", parent, e))?;
        }
    }
    match make_new(dir, reach) {
        Err(Error::Io { source, .. }) if source.kind() == std::io::ErrorKind::AlreadyExists => {
            tighten(dir, reach);
            verify(dir, reach)
        }
        other => other,
    }
}

/// Takes away what others may read of `dir` when it is a real directory of this user that no
/// other user could ever write to (an earlier dbbench made it under a umask of 022): nothing in
/// it can be another user's, so it becomes private. Anything else is left for [`verify`] to
/// refuse as found.
fn tighten(dir: &Path, reach: Reach) {
    let Ok(meta) = std::fs::symlink_metadata(dir) else {
        return;
    };
    let mode = meta.mode() & 0o7777;
    if meta.is_dir() && meta.uid() == euid() && mode & 0o022 == 0 && mode & reach.forbidden() != 0 {
        let _ = std::fs::set_permissions(dir, std::fs::Permissions::from_mode(reach.mode()));
    }
}

/// Refuses `dir` unless `lstat` shows a directory (not a link to one) owned by this user that no
/// other user may write to (nor read or search, for [`Reach::Owner`]).
pub fn verify(dir: &Path, reach: Reach) -> Result<()> {
    let meta = std::fs::symlink_metadata(dir)
        .map_err(|e| Error::io("cannot read the private directory", dir, e))?;
    let me = euid();
    let why = if meta.file_type().is_symlink() {
        Some("it is a symbolic link".to_string())
    } else if !meta.is_dir() {
        Some("it is not a directory".to_string())
    } else if meta.uid() != me {
        Some(format!(
            "it belongs to uid {}, not to this user (uid {me})",
            meta.uid()
        ))
    } else if meta.mode() & reach.forbidden() != 0 {
        Some(format!(
            "its mode {:04o} lets other users {}",
            meta.mode() & 0o7777,
            if meta.mode() & 0o022 != 0 {
                "change it"
            } else {
                "read it"
            }
        ))
    } else {
        None
    };
    match why {
        None => Ok(()),
        Some(why) => Err(Error::Config(format!(
            "dbbench refuses to use `{}` because {why}; another user may have made it to \
             redirect what dbbench writes there, so remove it (or see who made it) and run again",
            dir.display()
        ))),
    }
}

/// Creates the file `path` exclusively (`O_EXCL`, never through a link), mode 0600.
// Called by server backends only: a build with none of them leaves it unused.
#[allow(dead_code)]
pub fn create_new_file(path: &Path) -> Result<File> {
    OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
        .open(path)
        .map_err(|e| Error::io("cannot create", path, e))
}

/// Writes `text` to the new file `path` ([`create_new_file`]).
// Called by server backends only: a build with none of them leaves it unused.
#[allow(dead_code)]
pub fn write_new_file(path: &Path, text: &str) -> Result<()> {
    create_new_file(path)?
        .write_all(text.as_bytes())
        .map_err(|e| Error::io("cannot write", path, e))
}

/// Opens the file `path` for reading and writing, created with mode 0600 when missing, never
/// through a link; refused unless it is a regular file of this user with one name (a hard link
/// planted before the directory was ours would name another file).
pub fn open_own_file(path: &Path) -> Result<File> {
    let file =
        crate::util::fs::open_unfollowed(path).map_err(|e| Error::io("cannot open", path, e))?;
    let meta = file
        .metadata()
        .map_err(|e| Error::io("cannot read", path, e))?;
    if !meta.is_file() || meta.uid() != euid() || meta.nlink() != 1 {
        return Err(Error::Config(format!(
            "dbbench refuses to use `{}` because it is not a regular file of this user with one \
             name; remove it and run again",
            path.display()
        )));
    }
    Ok(file)
}

/// 64 random bits from the kernel (`getrandom`), for names nobody can guess.
fn random() -> u64 {
    let mut bytes = [0u8; 8];
    // SAFETY: getrandom writes at most `bytes.len()` bytes into the buffer it is given.
    let n = unsafe { libc::getrandom(bytes.as_mut_ptr().cast(), bytes.len(), 0) };
    if n == bytes.len() as isize {
        return u64::from_ne_bytes(bytes);
    }
    // No getrandom (a very old kernel): the clock and PID still differ per call and process,
    // and make_new's exclusive create keeps a guessed name from being taken anyway.
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64);
    nanos ^ (u64::from(std::process::id()) << 32)
}

#[cfg(test)]
mod tests;
