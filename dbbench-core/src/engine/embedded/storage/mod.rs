//! The embedded storage layer: SQLite's files laid out, grown and measured the way SQL Server's
//! file manager does it, on the user's real disk. See `docs/embedded-storage.md`.
//!
//! Every embedded database is opened through the `dbbench` VFS ([`vfs`]). SQLite sees one database
//! file and one WAL; on disk the database is `data_files` data files filled extent by extent in
//! proportion to their free space ([`extent_map`]), each grown by `growth` with or without zero
//! initialisation ([`file_growth`]), and the WAL is a pre-sized, zero-initialised log that grows by
//! `log_growth` and counts its segments ([`log_file`]). Every file counts its I/O ([`file_stats`]).
//!
//! A [`Layout`] owns one database's files: [`Layout::create`] makes them, [`Layout::open`] opens
//! connections, [`Layout::open_window`] and [`Layout::close_window`] measure, [`Layout::remove`]
//! deletes exactly the files it made.

pub mod data_files;
pub mod error;
pub mod extent_map;
pub mod file_growth;
pub mod file_stats;
mod io_methods;
pub mod log_file;
pub mod log_pool;
pub mod map_file;
pub mod plan;
mod registry;
pub mod store;
pub mod vfs;

pub use plan::check;

use crate::model::config::StorageSpec;
use crate::model::error::{Error, Result};
use crate::model::evidence::{AutogrowthEvent, Evidence, FileKind, LogStats};
use crate::model::volume::Volumes;
use file_stats::CounterSnapshot;
use log_pool::LogPool;
use plan::{sibling, LayoutPlan};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use store::Store;

/// The files of one embedded database. `Send + Sync`: connections on several threads share it.
#[derive(Debug)]
pub struct Layout {
    store: Arc<Store>,
    key: String,
    window: Mutex<Option<Window>>,
    pool: Option<Arc<LogPool>>,
}

/// The statistics when the measured window opened.
#[derive(Debug, Clone)]
struct Window {
    opened: std::time::Instant,
    data: Vec<(CounterSnapshot, u64)>,
    log: (CounterSnapshot, u64, u64),
}

/// How one data file is used: for tests and reports.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileUsage {
    /// Logical name (`data_1`).
    pub name: String,
    /// Where the file is.
    pub path: PathBuf,
    /// The file's size in bytes, as the layer has grown it.
    pub size_bytes: u64,
    /// Extents placed in it.
    pub extents: u64,
}

/// A handle that turns SQLite errors caused by the storage into errors that name the file.
#[derive(Debug, Clone)]
pub struct StorageErrors {
    store: Arc<Store>,
}

impl StorageErrors {
    /// The dbbench error for `error`: the storage's own error (a full file, a full disk, an I/O
    /// error, each naming its file) when that is why SQLite failed.
    pub fn explain(&self, error: rusqlite::Error) -> Error {
        self.store.errors.explain(error)
    }
}

/// Removes `paths` (missing ones are fine); returns the first failure, after trying them all.
///
/// `paths` are in creation order, the manifest or the anchor first: those two go last, in
/// reverse, so a process killed part-way leaves the manifest that lets the sweep finish the job.
/// The others (data files, the log) are removed by two threads at once: unlinking a file freshly
/// written costs the kernel about 0.2 ms per MiB (its blocks and cached pages), a quarter of a
/// second for a data-files repetition, and two unlinks overlap well enough to save a third of it.
/// Whether `file` is one dbbench would have made for the database named `stem`: a regular file
/// of this user (or nothing, already gone) named `<stem>…`, not a link, no `..` in its path.
fn made_for(file: &Path, stem: &str) -> bool {
    use std::os::unix::fs::MetadataExt;
    let named = !stem.is_empty()
        && file
            .file_name()
            .and_then(|n| n.to_str())
            .is_some_and(|n| n.starts_with(stem))
        && !file
            .components()
            .any(|c| c == std::path::Component::ParentDir);
    named
        && match std::fs::symlink_metadata(file) {
            Ok(meta) => meta.is_file() && meta.uid() == crate::util::private_dir::euid(),
            Err(_) => true,
        }
}

fn remove_files(paths: &[PathBuf]) -> Result<()> {
    let remove = |path: &PathBuf| match std::fs::remove_file(path) {
        Ok(()) => None,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => Some(Error::io("cannot remove", path, e)),
    };
    let (last, bulk) = paths.split_at(paths.len().min(2));
    let next = std::sync::atomic::AtomicUsize::new(0);
    let work = || {
        let mut first = None;
        loop {
            let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            let Some(path) = bulk.len().checked_sub(i + 1).map(|i| &bulk[i]) else {
                return first;
            };
            if let Some(e) = remove(path) {
                first.get_or_insert(e);
            }
        }
    };
    let mut first = std::thread::scope(|s| {
        let helper = (bulk.len() > 1).then(|| s.spawn(work));
        let mine = work();
        let theirs = helper.and_then(|h| h.join().unwrap_or(None));
        mine.or(theirs)
    });
    for path in last.iter().rev() {
        if let Some(e) = remove(path) {
            first.get_or_insert(e);
        }
    }
    first.map_or(Ok(()), Err)
}

/// Flushes the directories holding `paths`, so new files survive a crash.
fn sync_dirs(paths: &[PathBuf]) -> Result<()> {
    let mut dirs: Vec<&Path> = paths.iter().filter_map(|p| p.parent()).collect();
    dirs.sort();
    dirs.dedup();
    for dir in dirs {
        std::fs::File::open(dir)
            .and_then(|d| d.sync_all())
            .map_err(|e| Error::io("cannot flush directory", dir, e))?;
    }
    Ok(())
}

impl Layout {
    /// Creates the files of the database whose SQLite path is `db_path`, as `storage` says, with
    /// volumes resolved through `volumes`. Existing files are never overwritten; on failure every
    /// file already created is removed again.
    pub fn create(db_path: &Path, storage: &StorageSpec, volumes: &Volumes) -> Result<Layout> {
        Self::create_pooled(db_path, storage, volumes, None)
    }

    /// [`Layout::create`], taking a pre-grown log of the same shape from `pool` when one is
    /// kept there, and keeping this database's log there when it is removed
    /// ([`log_pool`]).
    pub fn create_pooled(
        db_path: &Path,
        storage: &StorageSpec,
        volumes: &Volumes,
        pool: Option<Arc<LogPool>>,
    ) -> Result<Layout> {
        vfs::register()?;
        let plan = LayoutPlan::new(db_path, storage, volumes)?;
        let mut created = Vec::new();
        let built = Self::build(plan, &mut created, pool);
        if built.is_err() {
            let _ = remove_files(&created);
        }
        built
    }

    fn build(
        plan: LayoutPlan,
        created: &mut Vec<PathBuf>,
        pool: Option<Arc<LogPool>>,
    ) -> Result<Layout> {
        plan::create_owned(&plan.anchor, created, "cannot create database file")
            .and_then(|_| plan.write_manifest(created))
            .map_err(|e| e.into_error())?;
        let store = Store::create(plan, created, pool.as_deref()).map_err(|e| e.into_error())?;
        sync_dirs(created)?;
        let mut layout = Self::register(store)?;
        layout.pool = pool;
        Ok(layout)
    }

    /// Reopens the database at `db_path` that a `Layout` created earlier, possibly in a process
    /// that was killed: the manifest says where its files are, the map where its extents are.
    pub fn attach(db_path: &Path) -> Result<Layout> {
        vfs::register()?;
        let plan = LayoutPlan::read_manifest(db_path)?;
        let store = Store::attach(plan).map_err(|e| e.into_error())?;
        Self::register(store)
    }

    fn register(store: Store) -> Result<Layout> {
        let key = vfs::full_pathname(&store.plan.anchor)?;
        let store = Arc::new(store);
        registry::register(&key, store.clone());
        Ok(Layout {
            store,
            key,
            window: Mutex::new(None),
            pool: None,
        })
    }

    /// The path SQLite opens.
    pub fn path(&self) -> &Path {
        &self.store.plan.anchor
    }

    /// The plan the files follow (sizes, growth rules, volumes).
    pub fn plan(&self) -> &plan::LayoutPlan {
        &self.store.plan
    }

    /// Opens a connection to the database through the `dbbench` VFS.
    pub fn open(&self) -> Result<rusqlite::Connection> {
        use rusqlite::OpenFlags;
        let flags = OpenFlags::SQLITE_OPEN_READ_WRITE
            | OpenFlags::SQLITE_OPEN_CREATE
            | OpenFlags::SQLITE_OPEN_URI
            | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        let vfs = vfs::VFS_NAME.to_str().expect("ASCII name");
        rusqlite::Connection::open_with_flags_and_vfs(self.path(), flags, vfs)
            .map_err(|e| self.explain(e))
    }

    /// The dbbench error for a SQLite error on this database (see [`StorageErrors::explain`]).
    pub fn explain(&self, error: rusqlite::Error) -> Error {
        self.store.errors.explain(error)
    }

    /// A handle for connections to explain their errors.
    pub fn errors(&self) -> StorageErrors {
        StorageErrors {
            store: self.store.clone(),
        }
    }

    /// Each data file's path, size and extents.
    pub fn data_usage(&self) -> Vec<FileUsage> {
        self.store
            .data
            .usage()
            .into_iter()
            .zip(self.store.data.files())
            .map(|((size_bytes, extents), f)| FileUsage {
                name: f.placed.name.clone(),
                path: f.placed.path.clone(),
                size_bytes,
                extents,
            })
            .collect()
    }

    /// The log's path, size in bytes and segments.
    pub fn log_usage(&self) -> (PathBuf, u64, u64) {
        let log = &self.store.log;
        (log.placed.path.clone(), log.size(), log.segments())
    }

    /// Snapshots every file's counters and size: the measured window starts.
    pub fn open_window(&self) {
        let data = self.store.data.files();
        let usage = self.store.data.usage();
        for f in data {
            f.counters.reset_window_max();
        }
        let log = &self.store.log;
        log.counters.reset_window_max();
        let window = Window {
            opened: std::time::Instant::now(),
            data: data
                .iter()
                .zip(&usage)
                .map(|(f, (size, _))| (f.counters.snapshot(), *size))
                .collect(),
            log: (log.counters.snapshot(), log.size(), log.segments()),
        };
        *self.window.lock().unwrap_or_else(|p| p.into_inner()) = Some(window);
    }

    /// The window's per-file statistics, log statistics, every autogrowth, extents per
    /// data file (`data_N_extents`) and flush times (`data_N_flush_ms`, `log_flush_ms`).
    pub fn close_window(&self) -> Evidence {
        let mut evidence = Evidence::default();
        let start = self.window.lock().unwrap_or_else(|p| p.into_inner()).take();
        let usage = self.store.data.usage();
        let zero = (CounterSnapshot::default(), 0);
        for (i, (file, (size, extents))) in self.store.data.files().iter().zip(&usage).enumerate() {
            let (before, size_before) = start.as_ref().map_or(zero, |w| w.data[i]);
            let delta = file.counters.snapshot().since(&before);
            let name = &file.placed.name;
            evidence.files.push(delta.file_stats(
                name,
                FileKind::Data,
                file.placed.volume.clone(),
                size_before,
                *size,
            ));
            evidence
                .counts
                .insert(format!("{name}_extents"), *extents as i64);
            evidence
                .values
                .insert(format!("{name}_flush_ms"), delta.flush_ns as f64 / 1e6);
        }
        let log = &self.store.log;
        let (before, size_before, segments_before) = start
            .as_ref()
            .map_or((CounterSnapshot::default(), 0, 0), |w| w.log);
        let delta = log.counters.snapshot().since(&before);
        let size_after = log.size();
        evidence.files.push(delta.file_stats(
            &log.placed.name,
            FileKind::Log,
            log.placed.volume.clone(),
            size_before,
            size_after,
        ));
        evidence
            .values
            .insert("log_flush_ms".into(), delta.flush_ns as f64 / 1e6);
        if let Some(opened) = start.as_ref().map(|w| w.opened) {
            evidence.autogrowths = self.autogrowths(opened);
        }
        evidence.log = Some(LogStats {
            growths: delta.growth_events,
            segments_before,
            segments_after: log.segments(),
            size_before_bytes: size_before,
            size_after_bytes: size_after,
        });
        evidence
    }

    fn autogrowths(&self, opened: std::time::Instant) -> Vec<AutogrowthEvent> {
        let data = self
            .store
            .data
            .files()
            .iter()
            .map(|f| (&f.placed, &f.counters));
        let log = std::iter::once((&self.store.log.placed, &self.store.log.counters));
        let mut events: Vec<AutogrowthEvent> = data
            .chain(log)
            .flat_map(|(placed, counters)| {
                counters
                    .growths_since(opened)
                    .into_iter()
                    .map(|(at, event, size_after)| AutogrowthEvent {
                        file: placed.name.clone(),
                        at_s: (at - opened).as_secs_f64(),
                        bytes: event.bytes,
                        size_after_bytes: size_after,
                        zero_filled: event.zero_fill_bytes > 0,
                        duration_ms: event.duration.as_secs_f64() * 1e3,
                    })
            })
            .collect();
        events.sort_by(|a, b| a.at_s.total_cmp(&b.at_s));
        events
    }

    /// Every file this layout owns: its own files and the ones SQLite derives from the anchor.
    pub fn files(&self) -> Vec<PathBuf> {
        let mut files = self.store.plan.owned_files();
        let anchor = &self.store.plan.anchor;
        files.extend(["-shm", "-journal", "-wal"].map(|s| sibling(anchor, s)));
        files
    }

    /// Removes every file that the manifest of the database at `db_path` lists, wherever it is,
    /// without opening the database: for leftovers of a killed process, whose extent map may
    /// never have been written.
    ///
    /// The manifest is a file anyone with access to the work dir could have written, so only
    /// the files this database would have made are removed: named after it (`<stem>…`, as
    /// [`LayoutPlan::new`] names every file), regular files of this user, not links, with no
    /// `..` in their path. Any other path it lists is named in the error and left alone.
    pub fn remove_leftover(db_path: &Path) -> Result<()> {
        let plan = LayoutPlan::read_manifest(db_path)?;
        let mut files = plan.owned_files();
        files.extend(["-shm", "-journal", "-wal"].map(|s| sibling(&plan.anchor, s)));
        let stem = db_path
            .file_stem()
            .and_then(|s| s.to_str())
            .unwrap_or_default()
            .to_string();
        let (ours, foreign): (Vec<PathBuf>, Vec<PathBuf>) =
            files.into_iter().partition(|f| made_for(f, &stem));
        let removed = remove_files(&ours);
        match foreign.first() {
            Some(path) if removed.is_ok() => Err(Error::Config(format!(
                "the storage manifest of `{}` lists `{}`, which is not a file dbbench made for \
                 that database; it was left alone",
                db_path.display(),
                path.display()
            ))),
            _ => removed,
        }
    }

    /// What this database reused instead of making anew, one phrase each.
    pub fn reused(&self) -> Vec<String> {
        let mut reused = Vec::new();
        if self.store.log.taken() {
            reused.push(
                "log file kept from an earlier repetition of the same log shape, re-zeroed and \
                 flushed where it was written"
                    .to_string(),
            );
        }
        reused
    }

    /// Removes every file of the database, wherever it is, and nothing else. Every removal is
    /// tried; the first failure is returned. A log that did not grow is first re-zeroed and
    /// kept in the pool, when there is one, for the next database of its shape.
    pub fn remove(self) -> Result<()> {
        if let Some(pool) = &self.pool {
            self.store.log.keep_in(pool);
        }
        let files = self.files();
        drop(self);
        remove_files(&files)
    }
}

impl Drop for Layout {
    fn drop(&mut self) {
        registry::unregister(&self.key, &self.store);
    }
}

#[cfg(test)]
mod tests;
