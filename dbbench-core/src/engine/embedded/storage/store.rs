//! The live storage of one database: its data files, log and last error, shared by every
//! connection (and thread) that has the database open, and found by the VFS through the registry.

use super::data_files::DataFiles;
use super::error::{ErrorSlot, StorageError};
use super::log_file::LogFile;
use super::log_pool::LogPool;
use super::plan::LayoutPlan;
use std::path::PathBuf;

/// Everything the VFS needs to serve one database.
#[derive(Debug)]
pub struct Store {
    /// The plan the files follow.
    pub plan: LayoutPlan,
    /// The data files and extent map.
    pub data: DataFiles,
    /// The log.
    pub log: LogFile,
    /// The last storage error, for the backend's messages.
    pub errors: ErrorSlot,
}

impl Store {
    /// Creates the data files, the map and the log of `plan`, pushing each path to `created` as
    /// soon as the file exists; the log is taken from `pool` when a kept one fits.
    pub fn create(
        plan: LayoutPlan,
        created: &mut Vec<PathBuf>,
        pool: Option<&LogPool>,
    ) -> Result<Store, StorageError> {
        let data = DataFiles::create(&plan, created)?;
        let log = LogFile::create(
            plan.log.clone(),
            plan.log_initial_bytes,
            plan.log_target_bytes,
            plan.log_growth,
            created,
            pool,
        )?;
        Ok(Store {
            plan,
            data,
            log,
            errors: ErrorSlot::default(),
        })
    }

    /// Opens the files of an existing database.
    pub fn attach(plan: LayoutPlan) -> Result<Store, StorageError> {
        let data = DataFiles::attach(&plan)?;
        let log = LogFile::attach(
            plan.log.clone(),
            plan.log_initial_bytes,
            plan.log_target_bytes,
            plan.log_growth,
        )?;
        Ok(Store {
            plan,
            data,
            log,
            errors: ErrorSlot::default(),
        })
    }

    /// Writes to the log. A frame that logs a page whose extent has no place yet places it first,
    /// so a full data file fails the statement that needs the space.
    #[inline]
    pub fn log_write(&self, buf: &[u8], offset: u64) -> Result<(), StorageError> {
        if let Some(page) = self.log.frame_page(buf, offset) {
            self.data.reserve_page(page, self.log.page_size())?;
        }
        self.log.write(buf, offset)
    }
}
