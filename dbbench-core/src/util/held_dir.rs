//! A directory held by its file descriptor, for the removal of a managed server's marked
//! directories: its marker is read and its contents removed through the descriptor opened once,
//! never through its path again.
//!
//! Why descriptors: a check by path and a removal by path are two lookups, and between them
//! another user who can write a directory on the way (a shared volume, a swapped parent) can put
//! a symlink there, so that the removal lands in the directory it points to. std's
//! `remove_dir_all` does not follow the *last* component when it is a link (Rust 1.58.1,
//! CVE-2022-21658) but resolves every parent again, and it cannot be told to remove what was
//! checked. Here the parent and the directory are opened once (`O_NOFOLLOW`, `O_DIRECTORY`), the
//! marker is opened relative to that descriptor, every entry is removed with `unlinkat` relative
//! to the descriptor of its own directory, and the directory's name is unlinked from its
//! parent's descriptor only while that name still leads to the same inode.

use std::ffi::{CStr, CString, OsStr};
use std::io::{self, Read};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::MetadataExt;
use std::path::Path;

/// The most of a file [`HeldDir::read`] reads: a marker is a few lines.
const READ_LIMIT: u64 = 64 * 1024;

/// A directory and its parent, each open by descriptor.
#[derive(Debug)]
pub struct HeldDir {
    parent: OwnedFd,
    name: CString,
    dir: OwnedFd,
}

/// A name for the C calls (a path component holds no NUL on Linux).
fn c_name(name: &OsStr) -> io::Result<CString> {
    CString::new(name.as_bytes()).map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e))
}

/// `openat(dir, name, flags | O_NOFOLLOW | O_CLOEXEC)`.
fn open_at(dir: RawFd, name: &CStr, flags: libc::c_int) -> io::Result<OwnedFd> {
    // SAFETY: `name` is a valid C string; the returned descriptor is owned by the OwnedFd.
    let fd = unsafe {
        libc::openat(
            dir,
            name.as_ptr(),
            flags | libc::O_NOFOLLOW | libc::O_CLOEXEC,
        )
    };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: `fd` is a fresh descriptor nothing else owns.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// `fstatat(dir, name, AT_SYMLINK_NOFOLLOW)`: the entry itself, a link not followed.
fn stat_at(dir: RawFd, name: &CStr) -> io::Result<libc::stat> {
    // SAFETY: an all-zero `stat` is a valid value for fstatat to fill in.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: `name` is a valid C string and `st` a writable stat.
    let rc = unsafe { libc::fstatat(dir, name.as_ptr(), &mut st, libc::AT_SYMLINK_NOFOLLOW) };
    if rc < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(st)
}

/// `unlinkat(dir, name, flags)`.
fn unlink_at(dir: RawFd, name: &CStr, flags: libc::c_int) -> io::Result<()> {
    // SAFETY: `name` is a valid C string.
    if unsafe { libc::unlinkat(dir, name.as_ptr(), flags) } < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// The names in the directory open at `dir` (`.` and `..` left out).
fn names(dir: RawFd) -> io::Result<Vec<CString>> {
    // fdopendir takes the descriptor it is given; a duplicate leaves `dir` open.
    // SAFETY: dup and fdopendir have no memory preconditions; `stream` is closed below.
    let dup = unsafe { libc::dup(dir) };
    if dup < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: `dup` is a descriptor of a directory that this call now owns.
    let stream = unsafe { libc::fdopendir(dup) };
    if stream.is_null() {
        let e = io::Error::last_os_error();
        // SAFETY: fdopendir failed, so `dup` is still ours to close.
        unsafe { libc::close(dup) };
        return Err(e);
    }
    // SAFETY: `stream` is a valid DIR*; the duplicate shares the offset, so start at the top.
    unsafe { libc::rewinddir(stream) };
    let mut found = Vec::new();
    loop {
        // SAFETY: `stream` is valid; the entry is copied out before the next readdir.
        let entry = unsafe { libc::readdir(stream) };
        if entry.is_null() {
            break;
        }
        // SAFETY: d_name is a NUL-terminated string inside the entry readdir returned.
        let name = unsafe { CStr::from_ptr((*entry).d_name.as_ptr()) };
        if name.to_bytes() != b"." && name.to_bytes() != b".." {
            found.push(name.to_owned());
        }
    }
    // SAFETY: `stream` is valid and closed once (which closes `dup`).
    unsafe { libc::closedir(stream) };
    Ok(found)
}

/// Removes everything in the directory open at `dir`, each entry through the descriptor of the
/// directory it is in: a link is unlinked, never followed.
fn empty(dir: RawFd) -> io::Result<()> {
    for name in names(dir)? {
        let st = match stat_at(dir, &name) {
            Ok(st) => st,
            Err(e) if e.kind() == io::ErrorKind::NotFound => continue,
            Err(e) => return Err(e),
        };
        if st.st_mode & libc::S_IFMT == libc::S_IFDIR {
            let sub = open_at(dir, &name, libc::O_RDONLY | libc::O_DIRECTORY)?;
            empty(sub.as_raw_fd())?;
            unlink_at(dir, &name, libc::AT_REMOVEDIR)?;
        } else {
            unlink_at(dir, &name, 0)?;
        }
    }
    Ok(())
}

impl HeldDir {
    /// Opens `path`'s parent and then `path` itself relative to it, refusing a link in its place
    /// (`ELOOP`) or anything that is not a directory (`ENOTDIR`).
    pub fn open(path: &Path) -> io::Result<HeldDir> {
        let name = path
            .file_name()
            .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "no directory name"))?;
        let parent = path
            .parent()
            .filter(|p| !p.as_os_str().is_empty())
            .unwrap_or(Path::new("."));
        let parent = open_at(
            libc::AT_FDCWD,
            &c_name(parent.as_os_str())?,
            libc::O_RDONLY | libc::O_DIRECTORY,
        )?;
        let name = c_name(name)?;
        let dir = open_at(
            parent.as_raw_fd(),
            &name,
            libc::O_RDONLY | libc::O_DIRECTORY,
        )?;
        Ok(HeldDir { parent, name, dir })
    }

    /// The file `name` in the held directory, not followed if a link, with its metadata (for the
    /// caller's checks of owner and mode); at most 64 KiB of it are read.
    pub fn read(&self, name: &str) -> io::Result<(std::fs::Metadata, String)> {
        let fd = open_at(
            self.dir.as_raw_fd(),
            &c_name(OsStr::new(name))?,
            libc::O_RDONLY,
        )?;
        let file = std::fs::File::from(fd);
        let meta = file.metadata()?;
        let mut text = String::new();
        file.take(READ_LIMIT).read_to_string(&mut text)?;
        Ok((meta, text))
    }

    /// Removes the held directory's contents and then the directory, refusing when its name in
    /// the parent no longer leads to it (moved away, a link or another directory put there):
    /// what is at that name then is left alone.
    pub fn remove(self) -> io::Result<()> {
        empty(self.dir.as_raw_fd())?;
        let held = std::fs::File::from(self.dir).metadata()?;
        let named = stat_at(self.parent.as_raw_fd(), &self.name)?;
        if (named.st_dev, named.st_ino) != (held.dev(), held.ino()) {
            return Err(io::Error::other(
                "its name leads elsewhere since it was opened (moved, or a link put there)",
            ));
        }
        unlink_at(self.parent.as_raw_fd(), &self.name, libc::AT_REMOVEDIR)
    }
}

#[cfg(test)]
mod tests;
