//! Growing a file the way SQL Server's file manager does.
//!
//! Without instant file initialization (`ifi = false`) the new region is written with zeros and
//! flushed before it is used, which is what makes small autogrowths expensive. With it (`ifi =
//! true`) the space is only allocated: `fallocate(2)` reserves blocks without writing them, and on
//! a file system without it the file is extended sparsely, which is just as instant.

use super::error::StorageError;
use super::file_stats::GrowthEvent;
use std::fs::File;
use std::os::unix::fs::FileExt;
use std::os::unix::io::AsRawFd;
use std::path::Path;
use std::time::Instant;

/// Size of one zero-fill write: 1 MiB, the block size `dd bs=1M` uses.
pub const ZERO_CHUNK: usize = 1 << 20;

/// A megabyte of zeros in `.bss`: it costs no memory until the kernel reads it, and no allocation.
static ZEROS: [u8; ZERO_CHUNK] = [0; ZERO_CHUNK];

/// How new space is initialised.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Init {
    /// Written with zeros and flushed (no instant file initialization; always for the log).
    ZeroFill,
    /// Allocated without writing (instant file initialization).
    Allocate,
}

impl Init {
    /// `Allocate` when instant file initialization is on.
    pub fn for_ifi(ifi: bool) -> Init {
        if ifi {
            Init::Allocate
        } else {
            Init::ZeroFill
        }
    }
}

/// Extends `file` (at `path`, currently `from` bytes long) by `bytes`, initialised as `init` says.
pub fn grow(
    file: &File,
    path: &Path,
    from: u64,
    bytes: u64,
    init: Init,
) -> Result<GrowthEvent, StorageError> {
    let started = Instant::now();
    let mut writes = 0;
    match init {
        Init::ZeroFill => {
            let end = from + bytes;
            let mut at = from;
            while at < end {
                let n = (end - at).min(ZERO_CHUNK as u64) as usize;
                file.write_all_at(&ZEROS[..n], at).map_err(|e| {
                    StorageError::io("cannot zero-initialise new space in", path, e)
                })?;
                writes += 1;
                at += n as u64;
            }
            file.sync_data()
                .map_err(|e| StorageError::io("cannot flush new space of", path, e))?;
        }
        Init::Allocate => allocate(file, path, from, bytes)?,
    }
    Ok(GrowthEvent {
        bytes,
        zero_fill_bytes: if init == Init::ZeroFill { bytes } else { 0 },
        zero_fill_writes: writes,
        duration: started.elapsed(),
    })
}

/// Reserves `[from, from + bytes)` without writing: `fallocate`, or a sparse extension where the
/// file system cannot allocate (tmpfs before Linux 3.5, some network file systems).
fn allocate(file: &File, path: &Path, from: u64, bytes: u64) -> Result<(), StorageError> {
    let (offset, len) = match (i64::try_from(from), i64::try_from(bytes)) {
        (Ok(o), Ok(l)) => (o, l),
        _ => {
            return Err(StorageError::io(
                "cannot grow",
                path,
                std::io::Error::from_raw_os_error(libc::EFBIG),
            ))
        }
    };
    // SAFETY: plain system call on a file descriptor this `File` owns.
    let rc = unsafe { libc::fallocate(file.as_raw_fd(), 0, offset, len) };
    if rc == 0 {
        return Ok(());
    }
    let error = std::io::Error::last_os_error();
    match error.raw_os_error() {
        Some(libc::EOPNOTSUPP) | Some(libc::ENOSYS) => file
            .set_len(from + bytes)
            .map_err(|e| StorageError::io("cannot extend", path, e)),
        _ => Err(StorageError::io(
            "cannot allocate new space in",
            path,
            error,
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::MetadataExt;

    fn scratch(name: &str) -> (std::path::PathBuf, File) {
        let dir = std::env::temp_dir().join(format!("dbbench-growth-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join(name);
        let _ = std::fs::remove_file(&path);
        let file = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create_new(true)
            .open(&path)
            .unwrap();
        (path, file)
    }

    #[test]
    fn zero_fill_writes_every_block_and_counts_it() {
        let (path, file) = scratch("zero");
        let event = grow(
            &file,
            &path,
            0,
            3 * ZERO_CHUNK as u64 + 4096,
            Init::ZeroFill,
        )
        .unwrap();
        let meta = file.metadata().unwrap();
        assert_eq!(meta.len(), 3 * ZERO_CHUNK as u64 + 4096);
        assert!(
            meta.blocks() * 512 >= meta.len(),
            "every block is allocated"
        );
        assert_eq!(
            (event.zero_fill_bytes, event.zero_fill_writes),
            (meta.len(), 4)
        );
        std::fs::remove_file(path).unwrap();
    }

    #[test]
    fn allocation_writes_nothing() {
        let (path, file) = scratch("alloc");
        let event = grow(&file, &path, 0, 8 << 20, Init::Allocate).unwrap();
        assert_eq!(file.metadata().unwrap().len(), 8 << 20);
        assert_eq!((event.zero_fill_bytes, event.zero_fill_writes), (0, 0));
        let mut buf = [1u8; 4096];
        file.read_exact_at(&mut buf, 5 << 20).unwrap();
        assert!(
            buf.iter().all(|b| *b == 0),
            "allocated space reads as zeros"
        );
        std::fs::remove_file(path).unwrap();
    }
}
