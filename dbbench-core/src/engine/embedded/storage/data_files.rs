//! The data files of one database: SQLite's database file spread over `data_files` physical files
//! in 64 KiB extents, placed by proportional fill and grown by `growth`.
//!
//! Reads and writes of placed extents go straight to `pread`/`pwrite` on the physical file, with
//! one atomic lookup and no lock or allocation. The first write to an extent (or, earlier, the WAL
//! frame that first logs one of its pages: see [`DataFiles::reserve_page`]) places it, which takes
//! the allocator's mutex and, when every file is full, grows one.

use super::error::StorageError;
use super::extent_map::{Allocator, ExtentMap, Location};
use super::file_growth::{grow, Init};
use super::file_stats::FileCounters;
use super::map_file::{MapContents, MapFile};
use super::plan::{create_owned, LayoutPlan, PlacedFile};
use crate::model::units::EXTENT;
use dbbench_options::size::Growth;
use std::fs::File;
use std::os::unix::fs::FileExt;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard};
use std::time::Instant;

/// One physical data file.
#[derive(Debug)]
pub struct DataFile {
    file: File,
    /// Where it is.
    pub placed: PlacedFile,
    dirty: AtomicBool,
    /// I/O and growth counters.
    pub counters: FileCounters,
}

/// The data files, their extent map and their allocator.
#[derive(Debug)]
pub struct DataFiles {
    files: Vec<DataFile>,
    map: ExtentMap,
    allocator: Mutex<Allocator>,
    map_file: Mutex<MapFile>,
    logical_size: AtomicU64,
    persisted_size: AtomicU64,
    map_unflushed: AtomicBool,
    growth: Growth,
    init: Init,
}

fn beyond_capacity(path: &std::path::Path) -> StorageError {
    StorageError::io(
        "cannot place an extent of",
        path,
        std::io::Error::other(format!(
            "the database exceeds the layer's limit of {} extents",
            ExtentMap::CAPACITY
        )),
    )
}

impl DataFiles {
    /// Creates the data files and an empty map as `plan` says; every created path is pushed to
    /// `created` at once, so a failure part-way leaves a complete list to remove.
    pub fn create(
        plan: &LayoutPlan,
        created: &mut Vec<std::path::PathBuf>,
    ) -> Result<DataFiles, StorageError> {
        let map_file = MapFile::create(&plan.map, plan.data.len() as u32, created)?;
        let init = Init::for_ifi(plan.ifi);
        let mut files = Vec::with_capacity(plan.data.len());
        for placed in &plan.data {
            let file = create_owned(&placed.path, created, "cannot create data file")?;
            grow(&file, &placed.path, 0, plan.data_file_bytes, init)?;
            files.push(DataFile::new(file, placed.clone()));
        }
        let extents = plan.data_file_bytes / EXTENT;
        let allocator = Allocator::new(vec![extents; files.len()], vec![0; files.len()]);
        Ok(DataFiles::new(
            files,
            map_file,
            allocator,
            plan,
            MapContents::default(),
        ))
    }

    /// Opens the data files and the map of an existing database.
    pub fn attach(plan: &LayoutPlan) -> Result<DataFiles, StorageError> {
        let (map_file, contents) = MapFile::open(&plan.map, plan.data.len() as u32)?;
        let mut files = Vec::with_capacity(plan.data.len());
        let mut capacity = Vec::with_capacity(plan.data.len());
        for placed in &plan.data {
            let file = std::fs::OpenOptions::new()
                .read(true)
                .write(true)
                .open(&placed.path)
                .map_err(|e| StorageError::io("cannot open data file", &placed.path, e))?;
            let len = file
                .metadata()
                .map_err(|e| StorageError::io("cannot read the size of", &placed.path, e))?
                .len();
            capacity.push(len / EXTENT);
            files.push(DataFile::new(file, placed.clone()));
        }
        let mut used = vec![0; files.len()];
        for (_, at) in &contents.entries {
            used[at.file] = used[at.file].max(at.extent + 1);
        }
        let allocator = Allocator::new(capacity, used);
        Ok(DataFiles::new(files, map_file, allocator, plan, contents))
    }

    fn new(
        files: Vec<DataFile>,
        map_file: MapFile,
        allocator: Allocator,
        plan: &LayoutPlan,
        contents: MapContents,
    ) -> DataFiles {
        let map = ExtentMap::default();
        for (extent, at) in &contents.entries {
            map.set(*extent, *at);
        }
        DataFiles {
            files,
            map,
            allocator: Mutex::new(allocator),
            map_file: Mutex::new(map_file),
            logical_size: AtomicU64::new(contents.logical_size),
            persisted_size: AtomicU64::new(contents.logical_size),
            map_unflushed: AtomicBool::new(false),
            growth: plan.growth,
            init: Init::for_ifi(plan.ifi),
        }
    }

    /// The physical files, in file order.
    pub fn files(&self) -> &[DataFile] {
        &self.files
    }

    /// The database's size as SQLite sees it.
    #[inline]
    pub fn logical_size(&self) -> u64 {
        self.logical_size.load(Ordering::Acquire)
    }

    /// Reads into `buf` from logical `offset`. Returns false for a short read (past the end of
    /// the database), in which case the rest of `buf` is zeros, as SQLite requires.
    pub fn read(&self, buf: &mut [u8], offset: u64) -> Result<bool, StorageError> {
        let size = self.logical_size();
        let valid = size.saturating_sub(offset).min(buf.len() as u64) as usize;
        let mut pos = 0;
        while pos < valid {
            let at = offset + pos as u64;
            let n = (valid - pos).min((EXTENT - at % EXTENT) as usize);
            let part = &mut buf[pos..pos + n];
            match self.map.get(at / EXTENT) {
                None => part.fill(0),
                Some(loc) => {
                    let file = &self.files[loc.file];
                    let started = Instant::now();
                    read_fully(&file.file, part, loc.extent * EXTENT + at % EXTENT).map_err(
                        |e| StorageError::io("cannot read data file", &file.placed.path, e),
                    )?;
                    file.counters.read(n as u64, started.elapsed());
                }
            }
            pos += n;
        }
        buf[valid..].fill(0);
        Ok(valid == buf.len())
    }

    /// Writes `buf` at logical `offset`, placing extents that are new.
    pub fn write(&self, buf: &[u8], offset: u64) -> Result<(), StorageError> {
        let mut pos = 0;
        while pos < buf.len() {
            let at = offset + pos as u64;
            let n = (buf.len() - pos).min((EXTENT - at % EXTENT) as usize);
            let loc = match self.map.get(at / EXTENT) {
                Some(loc) => loc,
                None => self.place(at / EXTENT)?,
            };
            let file = &self.files[loc.file];
            let started = Instant::now();
            file.file
                .write_all_at(&buf[pos..pos + n], loc.extent * EXTENT + at % EXTENT)
                .map_err(|e| StorageError::io("cannot write data file", &file.placed.path, e))?;
            file.counters.write(n as u64, started.elapsed());
            if !file.dirty.load(Ordering::Relaxed) {
                file.dirty.store(true, Ordering::Release);
            }
            pos += n;
        }
        self.logical_size
            .fetch_max(offset + buf.len() as u64, Ordering::AcqRel);
        Ok(())
    }

    /// Places the extent of database page `page` (1-based, `page_size` bytes) if it has no place
    /// yet. The layer calls it when the page's first WAL frame is written, so that data files
    /// grow while the statement runs, as SQL Server's do, and a full file fails the statement.
    #[inline]
    pub fn reserve_page(&self, page: u32, page_size: u32) -> Result<(), StorageError> {
        let extent = (u64::from(page) - 1) * u64::from(page_size) / EXTENT;
        if self.map.get(extent).is_none() {
            self.place(extent)?;
        }
        Ok(())
    }

    /// Sets the database's logical size (SQLite's truncate). Files never shrink; extents past
    /// the new end keep their place and are reused if the database grows again.
    pub fn truncate(&self, size: u64) {
        self.logical_size.store(size, Ordering::Release);
    }

    fn lock_allocator(&self) -> MutexGuard<'_, Allocator> {
        self.allocator.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn place(&self, extent: u64) -> Result<Location, StorageError> {
        let mut alloc = self.lock_allocator();
        if let Some(loc) = self.map.get(extent) {
            return Ok(loc);
        }
        let file = match alloc.pick() {
            Some(file) => file,
            None => {
                self.grow_one(&mut alloc)?;
                alloc
                    .pick()
                    .ok_or_else(|| beyond_capacity(&self.files[0].placed.path))?
            }
        };
        let loc = alloc.take(file);
        if !self.map.set(extent, loc) {
            return Err(beyond_capacity(&self.files[file].placed.path));
        }
        alloc.pending.push(extent);
        Ok(loc)
    }

    fn grow_one(&self, alloc: &mut Allocator) -> Result<(), StorageError> {
        let index = alloc.growth_target();
        let file = &self.files[index];
        let size = alloc.capacity[index] * EXTENT;
        let step = self
            .growth
            .increment(size)
            .ok_or_else(|| StorageError::Full {
                path: file.placed.path.clone(),
                growth: self.growth.describe(),
            })?;
        let event = grow(&file.file, &file.placed.path, size, step, self.init)?;
        file.counters.growth(&event, size + step);
        // An allocation without zero fill is not flushed yet: the next sync makes the new size
        // durable before the map that points into it.
        file.dirty.store(true, Ordering::Release);
        alloc.grew(index, step / EXTENT);
        Ok(())
    }

    /// Flushes every data file written since the last sync, then persists and flushes the map.
    pub fn sync(&self) -> Result<(), StorageError> {
        for file in &self.files {
            if file.dirty.swap(false, Ordering::AcqRel) {
                let started = Instant::now();
                file.file.sync_data().map_err(|e| {
                    file.dirty.store(true, Ordering::Release);
                    StorageError::io("cannot flush data file", &file.placed.path, e)
                })?;
                file.counters.flush(started.elapsed());
            }
        }
        self.persist_map(true)
    }

    /// Writes the extents placed since the last call and the logical size to the map file, and
    /// flushes it when `flush` is set and anything was written.
    pub fn persist_map(&self, flush: bool) -> Result<(), StorageError> {
        let map_file = self.map_file.lock().unwrap_or_else(|p| p.into_inner());
        let mut pending = std::mem::take(&mut self.lock_allocator().pending);
        let size = self.logical_size();
        if pending.is_empty() && size == self.persisted_size.load(Ordering::Acquire) {
            if flush && self.map_unflushed.swap(false, Ordering::AcqRel) {
                return map_file
                    .sync()
                    .inspect_err(|_| self.map_unflushed.store(true, Ordering::Release));
            }
            return Ok(());
        }
        pending.sort_unstable();
        pending.dedup();
        let written = map_file
            .write_entries(&pending, |e| self.map.get(e))
            .and_then(|()| map_file.write_size(size))
            .and_then(|()| if flush { map_file.sync() } else { Ok(()) });
        if let Err(e) = written {
            self.lock_allocator().pending.extend(pending);
            return Err(e);
        }
        self.persisted_size.store(size, Ordering::Release);
        self.map_unflushed.store(!flush, Ordering::Release);
        Ok(())
    }

    /// Each file's size in bytes and extents placed in it.
    pub fn usage(&self) -> Vec<(u64, u64)> {
        let alloc = self.lock_allocator();
        alloc
            .capacity
            .iter()
            .zip(&alloc.used)
            .map(|(cap, used)| (cap * EXTENT, *used))
            .collect()
    }
}

/// Reads `buf` at `offset`; bytes past the end of the file read as zeros, as the allocated but
/// never written space before it does.
fn read_fully(file: &File, buf: &mut [u8], offset: u64) -> std::io::Result<()> {
    let mut done = 0;
    while done < buf.len() {
        match file.read_at(&mut buf[done..], offset + done as u64) {
            Ok(0) => {
                buf[done..].fill(0);
                break;
            }
            Ok(n) => done += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

impl DataFile {
    fn new(file: File, placed: PlacedFile) -> DataFile {
        DataFile {
            file,
            placed,
            dirty: AtomicBool::new(false),
            counters: FileCounters::default(),
        }
    }
}
