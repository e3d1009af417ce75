//! The log: SQLite's write-ahead log stored in a pre-sized, zero-initialised file that grows by
//! `log_growth`, as a SQL Server transaction log does.
//!
//! The file is created at `log_size` (or grown to it in `log_pregrow` steps) and is always
//! zero-initialised, growth included: instant file initialization concerns data files only, as in
//! SQL Server before 2022. It never shrinks: SQLite's requests to truncate the WAL are ignored, and
//! its space is reused when SQLite restarts the WAL from the beginning after a checkpoint
//! (`recovery = simple`). When no checkpoint runs (`recovery = full`), SQLite keeps appending and
//! the log grows as a FULL-recovery log without log backups does.
//!
//! Segments are the embedded counterpart of VLFs: the allocation units the log's growths made,
//! counted with SQL Server 2014+'s rule ([`segments_for`]). They are accounting units only: the WAL
//! is written sequentially and restarted as a whole, nothing is reused segment by segment.

use super::error::StorageError;
use super::file_growth::{grow, Init};
use super::file_stats::FileCounters;
use super::log_pool::LogPool;
use super::plan::{create_owned, PlacedFile};
use crate::model::units::MIB;
use dbbench_options::size::Growth;
use std::fs::File;
use std::os::unix::fs::FileExt;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::Instant;

/// Size of SQLite's WAL header.
const WAL_HEADER: u64 = 32;
/// Size of the header of each WAL frame.
const FRAME_HEADER: u64 = 24;

/// VLFs SQL Server 2014+ creates when a log of `current` bytes grows by `growth` bytes: one if the
/// growth is less than 1/8 of the current size, otherwise 4 up to 64 MB, 8 up to 1 GB, 16 above.
/// Creating the log (from 0) and pre-grow steps follow the same rule.
pub fn segments_for(current: u64, growth: u64) -> u64 {
    if growth < current / 8 {
        1
    } else if growth <= 64 * MIB {
        4
    } else if growth <= 1024 * MIB {
        8
    } else {
        16
    }
}

/// The live log of one database.
#[derive(Debug)]
pub struct LogFile {
    file: File,
    /// Where the log is.
    pub placed: PlacedFile,
    size: AtomicU64,
    segments: AtomicU64,
    growth: Growth,
    growth_lock: Mutex<()>,
    page_size: AtomicU32,
    /// The end of the furthest write since the log was created or taken: what must be zeroed
    /// again to keep it. `None` for a log attached from disk, whose writes are unknown.
    written_end: Option<AtomicU64>,
    /// The size it was created at and pre-grown to: its shape in the pool.
    shape: (u64, u64),
    /// Whether it was taken from the pool rather than zero-filled for this database.
    taken: bool,
    /// I/O and growth counters.
    pub counters: FileCounters,
}

/// The sizes a log passes through from creation: the creation step, the pre-grow steps up to
/// `target`, then autogrowths, each with the segments it makes. Stops at `limit` bytes.
fn history(initial: u64, target: u64, growth: Growth, limit: u64) -> Vec<(u64, u64)> {
    let mut steps = vec![(initial, segments_for(0, initial))];
    let mut size = initial;
    while size < target {
        let step = initial.min(target - size);
        steps.push((step, segments_for(size, step)));
        size += step;
    }
    while size < limit {
        let Some(step) = growth.increment(size) else {
            break;
        };
        steps.push((step, segments_for(size, step)));
        size += step;
    }
    steps
}

impl LogFile {
    /// Creates the log at `placed`: `initial` bytes, then pre-grown in steps of `initial` to
    /// `target`, every byte zero-initialised and flushed. A log of the same shape kept in `pool`
    /// (re-zeroed and flushed, so in the same state) is taken instead of writing the zeros again.
    pub fn create(
        placed: PlacedFile,
        initial: u64,
        target: u64,
        growth: Growth,
        created: &mut Vec<std::path::PathBuf>,
        pool: Option<&LogPool>,
    ) -> Result<LogFile, StorageError> {
        let steps = history(initial, target, growth, 0);
        let segments = steps.iter().map(|(_, made)| made).sum();
        if let Some(log) = pool
            .and_then(|pool| Self::take(pool, &placed, initial, target, growth, segments, created))
        {
            return Ok(log);
        }
        let file = create_owned(&placed.path, created, "cannot create log file")?;
        let mut size = 0;
        for (step, _) in steps {
            grow(&file, &placed.path, size, step, Init::ZeroFill)?;
            size += step;
        }
        let mut log = LogFile::new(file, placed, size, segments, growth, 0);
        log.written_end = Some(AtomicU64::new(0));
        log.shape = (initial, target);
        Ok(log)
    }

    /// The kept log of this shape moved to `placed`, if the pool has one of exactly `target`
    /// bytes.
    fn take(
        pool: &LogPool,
        placed: &PlacedFile,
        initial: u64,
        target: u64,
        growth: Growth,
        segments: u64,
        created: &mut Vec<std::path::PathBuf>,
    ) -> Option<LogFile> {
        if !pool.take(initial, target, &placed.path) {
            return None;
        }
        created.push(placed.path.clone());
        let file = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open(&placed.path)
            .ok()
            .filter(|f| f.metadata().is_ok_and(|m| m.len() == target));
        let Some(file) = file else {
            // Not what was kept: made anew below, under the same name.
            let _ = std::fs::remove_file(&placed.path);
            created.pop();
            return None;
        };
        let mut log = LogFile::new(file, placed.clone(), target, segments, growth, 0);
        log.written_end = Some(AtomicU64::new(0));
        log.shape = (initial, target);
        log.taken = true;
        Some(log)
    }

    /// Brings a log that did not grow back to the state [`LogFile::create`] leaves, zeroing and
    /// flushing exactly the range written since, and keeps it in `pool`; `false` when it is not
    /// kept (it grew, its writes are unknown, or the pool cannot take it). The caller removes
    /// the log's path as usual either way.
    pub fn keep_in(&self, pool: &LogPool) -> bool {
        let Some(written) = self.written_end.as_ref().map(|w| w.load(Ordering::Acquire)) else {
            return false;
        };
        let (_, target) = self.shape;
        if self.size() != target {
            return false;
        }
        if written > 0 && grow(&self.file, &self.placed.path, 0, written, Init::ZeroFill).is_err() {
            return false;
        }
        pool.keep(&self.placed.path, self.shape.0, target)
    }

    /// Whether this log was taken from the pool rather than zero-filled for its database.
    pub fn taken(&self) -> bool {
        self.taken
    }

    /// Opens the existing log of a database created with `initial`, `target` and `growth`.
    pub fn attach(
        placed: PlacedFile,
        initial: u64,
        target: u64,
        growth: Growth,
    ) -> Result<LogFile, StorageError> {
        let file = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open(&placed.path)
            .map_err(|e| StorageError::io("cannot open log file", &placed.path, e))?;
        let size = file
            .metadata()
            .map_err(|e| StorageError::io("cannot read the size of", &placed.path, e))?
            .len();
        let segments = history(initial, target, growth, size)
            .iter()
            .map(|(_, made)| made)
            .sum();
        let mut header = [0u8; 16];
        let page_size = match file.read_exact_at(&mut header, 0) {
            Ok(()) if is_wal_magic(&header) => {
                u32::from_be_bytes(header[8..12].try_into().expect("4"))
            }
            _ => 0,
        };
        Ok(LogFile::new(
            file, placed, size, segments, growth, page_size,
        ))
    }

    fn new(
        file: File,
        placed: PlacedFile,
        size: u64,
        segments: u64,
        growth: Growth,
        page_size: u32,
    ) -> LogFile {
        LogFile {
            file,
            placed,
            size: AtomicU64::new(size),
            segments: AtomicU64::new(segments),
            growth,
            growth_lock: Mutex::new(()),
            page_size: AtomicU32::new(page_size),
            written_end: None,
            shape: (0, 0),
            taken: false,
            counters: FileCounters::default(),
        }
    }

    /// The log's size in bytes.
    pub fn size(&self) -> u64 {
        self.size.load(Ordering::Acquire)
    }

    /// Segments (the counterpart of VLFs) the log has.
    pub fn segments(&self) -> u64 {
        self.segments.load(Ordering::Acquire)
    }

    /// Reads into `buf` from `offset`; returns the bytes read (fewer at the end of the file).
    pub fn read(&self, buf: &mut [u8], offset: u64) -> Result<usize, StorageError> {
        let started = Instant::now();
        let mut done = 0;
        while done < buf.len() {
            match self.file.read_at(&mut buf[done..], offset + done as u64) {
                Ok(0) => break,
                Ok(n) => done += n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => {
                    return Err(StorageError::io(
                        "cannot read log file",
                        &self.placed.path,
                        e,
                    ))
                }
            }
        }
        self.counters.read(done as u64, started.elapsed());
        Ok(done)
    }

    /// Writes `buf` at `offset`, growing the log first if it is too small.
    pub fn write(&self, buf: &[u8], offset: u64) -> Result<(), StorageError> {
        let end = offset + buf.len() as u64;
        if end > self.size() {
            self.grow_to(end)?;
        }
        if offset == 0 && buf.len() as u64 >= WAL_HEADER && is_wal_magic(buf) {
            let page_size = u32::from_be_bytes(buf[8..12].try_into().expect("4 bytes"));
            self.page_size.store(page_size, Ordering::Relaxed);
        }
        let started = Instant::now();
        self.file
            .write_all_at(buf, offset)
            .map_err(|e| StorageError::io("cannot write log file", &self.placed.path, e))?;
        self.counters.write(buf.len() as u64, started.elapsed());
        self.wrote(end);
        Ok(())
    }

    fn grow_to(&self, end: u64) -> Result<(), StorageError> {
        let _guard = self.growth_lock.lock().unwrap_or_else(|p| p.into_inner());
        loop {
            let size = self.size();
            if size >= end {
                return Ok(());
            }
            let step = self
                .growth
                .increment(size)
                .ok_or_else(|| StorageError::Full {
                    path: self.placed.path.clone(),
                    growth: self.growth.describe(),
                })?;
            let event = grow(&self.file, &self.placed.path, size, step, Init::ZeroFill)?;
            self.counters.growth(&event, size + step);
            self.segments
                .fetch_add(segments_for(size, step), Ordering::AcqRel);
            self.size.store(size + step, Ordering::Release);
        }
    }

    /// Flushes the log.
    pub fn sync(&self) -> Result<(), StorageError> {
        let started = Instant::now();
        self.file
            .sync_data()
            .map_err(|e| StorageError::io("cannot flush log file", &self.placed.path, e))?;
        self.counters.flush(started.elapsed());
        Ok(())
    }

    /// Whether the log holds a WAL (SQLite's "does the -wal file exist").
    pub fn holds_wal(&self) -> Result<bool, StorageError> {
        let mut magic = [0u8; 4];
        match self.file.read_exact_at(&mut magic, 0) {
            Ok(()) => Ok(is_wal_magic(&magic)),
            Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => Ok(false),
            Err(e) => Err(StorageError::io(
                "cannot read log file",
                &self.placed.path,
                e,
            )),
        }
    }

    /// Empties the log (SQLite's "delete the -wal file"): the header is cleared, the space kept.
    pub fn clear(&self) -> Result<(), StorageError> {
        self.file
            .write_all_at(&[0u8; WAL_HEADER as usize], 0)
            .map_err(|e| StorageError::io("cannot clear log file", &self.placed.path, e))?;
        self.wrote(WAL_HEADER);
        Ok(())
    }

    fn wrote(&self, end: u64) {
        if let Some(written) = &self.written_end {
            written.fetch_max(end, Ordering::AcqRel);
        }
    }

    /// The database page a write of `buf` at `offset` logs, when it is a WAL frame header.
    #[inline]
    pub fn frame_page(&self, buf: &[u8], offset: u64) -> Option<u32> {
        let page_size = u64::from(self.page_size.load(Ordering::Relaxed));
        if page_size == 0
            || offset < WAL_HEADER
            || buf.len() < FRAME_HEADER as usize
            || !(offset - WAL_HEADER).is_multiple_of(FRAME_HEADER + page_size)
        {
            return None;
        }
        Some(u32::from_be_bytes(buf[..4].try_into().ok()?)).filter(|p| *p != 0)
    }

    /// The page size of the WAL, 0 before SQLite wrote its header.
    pub fn page_size(&self) -> u32 {
        self.page_size.load(Ordering::Relaxed)
    }
}

fn is_wal_magic(bytes: &[u8]) -> bool {
    matches!(bytes.get(..4), Some([0x37, 0x7f, 0x06, 0x82 | 0x83]))
}

#[cfg(test)]
mod tests;
