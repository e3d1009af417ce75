//! Backends: where a benchmark's database lives. The embedded engine (SQLite with dbbench's
//! storage layer) is the default; SQL Server is chosen with `DBBENCH_BACKEND=mssql`, PostgreSQL
//! with `DBBENCH_BACKEND=postgres`.
//!
//! Dispatch is by enum rather than trait object: there are few backends and their methods are
//! `async`.

pub mod embedded;
pub mod mssql;
pub mod postgres;

use crate::config::{BackendKind, FixtureKind, StorageSpec};
use crate::connection::Connection;
use crate::error::{Error, Result};
use crate::results::{BackendInfo, RunResult};
use crate::scale::Scale;
use crate::volume::Volumes;
use std::path::PathBuf;

/// What to create: one database for one repetition of one cell.
#[derive(Debug, Clone)]
pub struct DatabasePlan {
    /// The database's name: always starts with [`OWNED_PREFIX`].
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

/// A backend chosen for this process.
pub enum Backend {
    /// SQLite in-process.
    Embedded(embedded::EmbeddedBackend),
    /// Microsoft SQL Server over TDS.
    Mssql(Box<mssql::MssqlBackend>),
    /// PostgreSQL over its wire protocol.
    Postgres(Box<postgres::PostgresBackend>),
}

impl Backend {
    /// The backend named by `DBBENCH_BACKEND` (default: `embedded`).
    pub async fn from_env() -> Result<Backend> {
        let name = std::env::var("DBBENCH_BACKEND").unwrap_or_default();
        match name.trim() {
            "" | "embedded" => Ok(Backend::Embedded(embedded::EmbeddedBackend::new())),
            "mssql" => Ok(Backend::Mssql(Box::new(
                mssql::MssqlBackend::from_env().await?,
            ))),
            "postgres" => Ok(Backend::Postgres(Box::new(
                postgres::PostgresBackend::from_env().await?,
            ))),
            other => Err(Error::Config(format!(
                "DBBENCH_BACKEND must be `embedded`, `mssql` or `postgres`; found `{other}`"
            ))),
        }
    }

    /// Which backend this is.
    pub fn kind(&self) -> BackendKind {
        match self {
            Backend::Embedded(_) => BackendKind::Embedded,
            Backend::Mssql(_) => BackendKind::Mssql,
            Backend::Postgres(_) => BackendKind::Postgres,
        }
    }

    /// Engine version and preconditions.
    pub async fn info(&mut self) -> Result<BackendInfo> {
        match self {
            Backend::Embedded(b) => Ok(b.info()),
            Backend::Mssql(b) => Ok(b.info()),
            Backend::Postgres(b) => Ok(b.info()),
        }
    }

    /// Fails with [`Error::Unsupported`] for an option this backend cannot honour.
    pub fn check(&self, storage: &StorageSpec) -> Result<()> {
        match self {
            Backend::Embedded(b) => b.check(storage),
            Backend::Mssql(b) => b.check(storage),
            Backend::Postgres(b) => b.check(storage),
        }
    }

    /// Creates the database in the configuration of `plan`; the fixture is not loaded yet.
    pub async fn create(&mut self, plan: &DatabasePlan) -> Result<Database> {
        match self {
            Backend::Embedded(b) => b.create(plan).map(|d| Database::Embedded(Box::new(d))),
            Backend::Mssql(b) => b.create(plan).await.map(|d| Database::Mssql(Box::new(d))),
            Backend::Postgres(b) => b
                .create(plan)
                .await
                .map(|d| Database::Postgres(Box::new(d))),
        }
    }
}

/// A database that dbbench created and will drop.
pub enum Database {
    /// An embedded database.
    Embedded(Box<embedded::EmbeddedDatabase>),
    /// A SQL Server database.
    Mssql(Box<mssql::MssqlDatabase>),
    /// A PostgreSQL database.
    Postgres(Box<postgres::PostgresDatabase>),
}

impl Database {
    /// Opens another connection to this database.
    pub async fn connect(&self) -> Result<Connection> {
        match self {
            Database::Embedded(d) => d.connect().map(Connection::Embedded),
            Database::Mssql(d) => d.connect().await.map(|c| Connection::Mssql(Box::new(c))),
            Database::Postgres(d) => d.connect().await.map(|c| Connection::Postgres(Box::new(c))),
        }
    }

    /// Loads the fixture through `conn`; returns the number of rows loaded.
    pub async fn load_fixture(
        &self,
        conn: &mut Connection,
        fixture: FixtureKind,
        scale: &Scale,
    ) -> Result<u64> {
        match (self, conn) {
            (Database::Embedded(d), Connection::Embedded(c)) => d.load_fixture(c, fixture, scale),
            (Database::Mssql(d), Connection::Mssql(c)) => d.load_fixture(c, fixture, scale).await,
            (Database::Postgres(d), Connection::Postgres(c)) => {
                d.load_fixture(c, fixture, scale).await
            }
            _ => Err(mismatched()),
        }
    }

    /// Opens the measured window: snapshots every statistic the backend keeps.
    pub async fn open_window(&self, conn: &mut Connection) -> Result<()> {
        match (self, conn) {
            (Database::Embedded(d), Connection::Embedded(c)) => d.open_window(c),
            (Database::Mssql(d), Connection::Mssql(c)) => d.open_window(c).await,
            (Database::Postgres(d), Connection::Postgres(c)) => d.open_window(c).await,
            _ => Err(mismatched()),
        }
    }

    /// Closes the measured window and writes what happened in it into `run`.
    pub async fn close_window(&self, conn: &mut Connection, run: &mut RunResult) -> Result<()> {
        match (self, conn) {
            (Database::Embedded(d), Connection::Embedded(c)) => d.close_window(c, run),
            (Database::Mssql(d), Connection::Mssql(c)) => d.close_window(c, run).await,
            (Database::Postgres(d), Connection::Postgres(c)) => d.close_window(c, run).await,
            _ => Err(mismatched()),
        }
    }

    /// Drops the database and removes every file it made.
    pub async fn drop_database(self) -> Result<()> {
        match self {
            Database::Embedded(d) => (*d).drop_database(),
            Database::Mssql(d) => (*d).drop_database().await,
            Database::Postgres(d) => (*d).drop_database().await,
        }
    }
}

/// The error for a connection of one backend handed to a database of another.
fn mismatched() -> Error {
    Error::msg("a connection of one backend was used with a database of another")
}
