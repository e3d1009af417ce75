//! What an engine is asked to create, and the name every database dbbench owns starts with:
//! shared by every backend and the dispatcher above them, so it lives below both.

use crate::model::config::StorageSpec;
use crate::model::scale::Scale;
use crate::model::volume::Volumes;
use std::path::PathBuf;

/// What to create: one database for one repetition of one cell.
#[derive(Debug, Clone)]
pub struct DatabasePlan {
    /// The database's name: always starts with `OWNED_PREFIX`.
    pub name: String,
    /// The storage configuration with sizes already scaled.
    pub storage: StorageSpec,
    /// Where named volumes are.
    pub volumes: Volumes,
    /// dbbench's working directory (`target/dbbench`).
    pub work_dir: PathBuf,
    /// The data scale.
    pub scale: Scale,
}

/// Every database dbbench creates has a name that starts with this.
pub const OWNED_PREFIX: &str = "dbbench_";
