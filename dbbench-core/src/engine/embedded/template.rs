//! Fixtures loaded once and copied into each repetition's database, page for page.
//!
//! A repetition used to load its fixture row by row (100,000 credit rows at the default scale:
//! 0.07 s of generating and inserting, 3.5 s of the VLF suite's time outside its windows). Now the
//! backend loads each fixture (kind and row count) once, into an in-memory SQLite database with
//! the same page size and the same statements, and copies it into every new database with
//! SQLite's backup API. The copy goes through the new database's own connection, so it lands as
//! any write does: as frames in its WAL (the log file), moved into the data files by the
//! checkpoint that opens the window, in page order, which is where a load's pages went too. The
//! pages are the ones a load writes: the B-tree a sequence of inserts builds depends on the
//! statements and the page size, not on where the file is; a test compares both ways, page for
//! page and extent for extent.

use crate::model::config::FixtureKind;
use std::collections::HashMap;
use std::sync::Mutex;

/// The fixtures loaded so far, by kind and row count, each an in-memory database.
#[derive(Default)]
pub struct Templates {
    loaded: Mutex<HashMap<(FixtureKind, u64), rusqlite::Connection>>,
}

impl std::fmt::Debug for Templates {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let loaded = self.loaded.lock().map(|l| l.len()).unwrap_or(0);
        f.debug_struct("Templates")
            .field("loaded", &loaded)
            .finish()
    }
}

impl Templates {
    /// Copies the fixture `kind` of `rows` rows into the database of `dest`, loading it first
    /// with `load` when this is its first use; `true` when it was loaded before (a copy only).
    /// `dest` must be an empty database with the template's page size (8 KiB).
    pub fn copy_into(
        &self,
        kind: FixtureKind,
        rows: u64,
        dest: &mut rusqlite::Connection,
        load: impl FnOnce(&mut rusqlite::Connection) -> rusqlite::Result<()>,
    ) -> rusqlite::Result<bool> {
        // A poisoned lock only means another thread panicked while copying: the map holds
        // complete templates or none.
        let mut loaded = self.loaded.lock().unwrap_or_else(|p| p.into_inner());
        let reused = loaded.contains_key(&(kind, rows));
        if !reused {
            let mut template = rusqlite::Connection::open_in_memory()?;
            template.execute_batch("PRAGMA page_size = 8192;")?;
            load(&mut template)?;
            loaded.insert((kind, rows), template);
        }
        let template = &loaded[&(kind, rows)];
        let backup = rusqlite::backup::Backup::new(template, dest)?;
        // Every page in one step: nothing else uses either database meanwhile.
        match backup.step(-1)? {
            rusqlite::backup::StepResult::Done => Ok(reused),
            other => Err(rusqlite::Error::SqliteFailure(
                rusqlite::ffi::Error::new(rusqlite::ffi::SQLITE_BUSY),
                Some(format!("copying the fixture stopped early: {other:?}")),
            )),
        }
    }
}
