//! The extent map on disk, so that a database whose process was killed reopens with every extent
//! where it was.
//!
//! Format: a 4 KiB header (magic, version, data file count, the logical size of the database)
//! followed by one little-endian `u64` entry per logical extent ([`Location::encode`], 0 for an
//! extent never placed). New entries and the size are written when SQLite syncs the database,
//! after the data files were flushed and in the same `xSync`, so everything SQLite was promised is
//! durable before `xSync` returns. Extents placed after the last sync are not in the file; SQLite
//! never relies on them (their pages are still in its write-ahead log), and their physical space
//! is simply placed again after a restart.

use super::error::StorageError;
use super::extent_map::Location;
use std::fs::File;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

const MAGIC: &[u8; 8] = b"DBBXMAP1";
const HEADER: u64 = 4096;

/// What a map file holds.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct MapContents {
    /// Size of the database as SQLite sees it.
    pub logical_size: u64,
    /// `(logical extent, location)` for every placed extent.
    pub entries: Vec<(u64, Location)>,
}

/// The open map file.
#[derive(Debug)]
pub struct MapFile {
    file: File,
    path: PathBuf,
    data_files: u32,
}

impl MapFile {
    /// Creates a new, empty map file for `data_files` data files.
    pub fn create(
        path: &Path,
        data_files: u32,
        created: &mut Vec<PathBuf>,
    ) -> Result<MapFile, StorageError> {
        let file = super::plan::create_owned(path, created, "cannot create extent map")?;
        let map = MapFile {
            file,
            path: path.to_path_buf(),
            data_files,
        };
        map.write_size(0)?;
        map.sync()?;
        Ok(map)
    }

    /// Opens an existing map file and reads it.
    pub fn open(path: &Path, data_files: u32) -> Result<(MapFile, MapContents), StorageError> {
        let file = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open(path)
            .map_err(|e| StorageError::io("cannot open extent map", path, e))?;
        let bad = |what: &str| {
            StorageError::io(
                "invalid extent map",
                path,
                std::io::Error::new(std::io::ErrorKind::InvalidData, what.to_string()),
            )
        };
        let bytes = std::fs::read(path).map_err(|e| StorageError::io("cannot read", path, e))?;
        if bytes.len() < 32 || &bytes[..8] != MAGIC {
            return Err(bad("not a dbbench extent map"));
        }
        let word = |at: usize| u64::from_le_bytes(bytes[at..at + 8].try_into().expect("8 bytes"));
        if word(8) != u64::from(data_files) {
            return Err(bad("it was written for another number of data files"));
        }
        let mut contents = MapContents {
            logical_size: word(16),
            entries: Vec::new(),
        };
        let body = bytes.get(HEADER as usize..).unwrap_or(&[]);
        for (extent, raw) in body.chunks_exact(8).enumerate() {
            let entry = u64::from_le_bytes(raw.try_into().expect("8 bytes"));
            if let Some(at) = Location::decode(entry) {
                if at.file >= data_files as usize {
                    return Err(bad("an entry names a data file that does not exist"));
                }
                contents.entries.push((extent as u64, at));
            }
        }
        let map = MapFile {
            file,
            path: path.to_path_buf(),
            data_files,
        };
        Ok((map, contents))
    }

    /// Writes the header with the database's logical size.
    pub fn write_size(&self, logical_size: u64) -> Result<(), StorageError> {
        let mut header = [0u8; 24];
        header[..8].copy_from_slice(MAGIC);
        header[8..16].copy_from_slice(&u64::from(self.data_files).to_le_bytes());
        header[16..24].copy_from_slice(&logical_size.to_le_bytes());
        self.file
            .write_all_at(&header, 0)
            .map_err(|e| StorageError::io("cannot write extent map", &self.path, e))
    }

    /// Writes the entries of `extents` (sorted, deduplicated by the caller) as found by `lookup`,
    /// one write per run of consecutive extents.
    pub fn write_entries(
        &self,
        extents: &[u64],
        lookup: impl Fn(u64) -> Option<Location>,
    ) -> Result<(), StorageError> {
        let mut run: Vec<u8> = Vec::new();
        let mut i = 0;
        while i < extents.len() {
            let start = extents[i];
            run.clear();
            while i < extents.len() && extents[i] == start + (run.len() / 8) as u64 {
                let entry = lookup(extents[i]).map(Location::encode).unwrap_or(0);
                run.extend_from_slice(&entry.to_le_bytes());
                i += 1;
            }
            self.file
                .write_all_at(&run, HEADER + start * 8)
                .map_err(|e| StorageError::io("cannot write extent map", &self.path, e))?;
        }
        Ok(())
    }

    /// Flushes the map to disk.
    pub fn sync(&self) -> Result<(), StorageError> {
        self.file
            .sync_data()
            .map_err(|e| StorageError::io("cannot flush extent map", &self.path, e))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_and_size_survive_a_reopen() {
        let dir = std::env::temp_dir().join(format!("dbbench-map-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("m");
        let _ = std::fs::remove_file(&path);
        let map = MapFile::create(&path, 2, &mut Vec::new()).unwrap();
        let at = |e: u64| {
            Some(Location {
                file: (e % 2) as usize,
                extent: e / 2,
            })
        };
        map.write_entries(&[0, 1, 2, 7, 8], at).unwrap();
        map.write_size(9 * 65536).unwrap();
        drop(map);
        let (_, contents) = MapFile::open(&path, 2).unwrap();
        assert_eq!(contents.logical_size, 9 * 65536);
        let extents: Vec<u64> = contents.entries.iter().map(|(e, _)| *e).collect();
        assert_eq!(extents, [0, 1, 2, 7, 8]);
        assert_eq!(contents.entries[3].1, at(7).unwrap());
        let err = MapFile::open(&path, 3).unwrap_err().to_string();
        assert!(err.contains("another number of data files"), "{err}");
        std::fs::remove_dir_all(dir).unwrap();
    }
}
