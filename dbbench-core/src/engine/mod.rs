//! Layer 3, **engine**: where a benchmark's database lives. The embedded engine (SQLite with
//! dbbench's storage layer) is the default; SQL Server is chosen with `DBBENCH_BACKEND=mssql`.
//! Each engine is one folder; this file is the one place that matches on the backends (with
//! [`connection`] for the statements of a connection), and [`profile`] gives the layers above
//! everything else they may know about an engine.
//!
//! Engines create, measure and drop databases and return their evidence for a window
//! ([`Evidence`]); they never see results or outputs.
//!
//! Dispatch is by enum rather than trait object: the methods are `async`, and the set of backends
//! is closed.
//!
//! May import: `model`, `util`.

pub mod connection;
pub mod embedded;
pub mod fixture;
pub mod mssql;
pub mod postgres;
pub mod profile;

use crate::engine::connection::Connection;
use crate::model::config::{BackendKind, FixtureKind, StorageSpec};
use crate::model::error::{Error, Result};
use crate::model::evidence::{BackendInfo, Evidence};
pub use crate::model::plan::DatabasePlan;
use crate::model::scale::Scale;
use profile::Profile;

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
        match BackendKind::from_env()? {
            BackendKind::Embedded => Ok(Backend::Embedded(embedded::EmbeddedBackend::new())),
            BackendKind::Mssql => Ok(Backend::Mssql(Box::new(
                mssql::MssqlBackend::from_env().await?,
            ))),
            BackendKind::Postgres => Ok(Backend::Postgres(Box::new(
                postgres::PostgresBackend::from_env().await?,
            ))),
        }
    }

    /// What the layers above may know about this backend.
    pub fn profile(&self) -> &'static Profile {
        profile(self.kind())
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

    /// The server's processes on this machine, when the server runs here and is not dbbench's
    /// own (a SQL Server or Babelfish on this host, an existing PostgreSQL reached through
    /// `DBBENCH_POSTGRES`): the busy-machine guard counts their CPU as the workload's.
    pub fn server_on_host(&self) -> Option<&crate::model::interference::ServerOnHost> {
        match self {
            Backend::Embedded(_) => None,
            Backend::Mssql(b) => b.server_on_host(),
            Backend::Postgres(b) => b.server_on_host(),
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

    /// `storage` with every size raised to this backend's minimum, applied before the cell's
    /// effective sizes are recorded and its databases created (SQL Server's `model` size and
    /// 512 KB log; PostgreSQL's 1 MB WAL segment; the embedded engine
    /// has no minimum).
    pub fn floor_storage(&self, storage: &StorageSpec) -> StorageSpec {
        match self {
            Backend::Embedded(_) => *storage,
            Backend::Mssql(b) => b.floor_storage(storage),
            Backend::Postgres(_) => postgres::options::floor(storage),
        }
    }

    /// The directories on this machine the cells' files go to, `(volume name, directory)`, for
    /// the calibration: the work dir's database directory as `default`, then each of `names`
    /// bound in `volumes` to a directory that exists (a missing one is the cell's error to
    /// report, not the calibration's to create). None for a server elsewhere, whose disks this
    /// machine cannot probe.
    pub fn local_dirs(
        &self,
        work_dir: &std::path::Path,
        volumes: &crate::model::volume::Volumes,
        names: &[&str],
    ) -> Vec<(String, std::path::PathBuf)> {
        let local = match self {
            Backend::Embedded(_) => true,
            Backend::Postgres(b) => b.is_local(),
            Backend::Mssql(_) => false,
        };
        if !local {
            return Vec::new();
        }
        let mut dirs = vec![("default".to_string(), work_dir.join("db"))];
        for name in names {
            if let Ok(dir) = volumes.resolve(name) {
                if dir.is_dir() && !dirs.iter().any(|(n, _)| n == name) {
                    dirs.push((name.to_string(), dir.clone()));
                }
            }
        }
        dirs
    }

    /// Removes what earlier dbbench processes of this host left and whose owner is gone: the
    /// embedded engine's directories under `work_dir`, SQL Server's `dbbench_` databases on the
    /// server; one line per database removed (or, on SQL Server, left), for the console.
    /// (PostgreSQL's managed clusters are swept when the cluster starts.)
    pub async fn sweep_stale(&mut self, work_dir: &std::path::Path) -> Vec<String> {
        match self {
            Backend::Embedded(_) => embedded::stale::sweep(work_dir),
            Backend::Mssql(b) => b.sweep_stale().await,
            Backend::Postgres(_) => Vec::new(),
        }
    }

    /// The volumes on which `plan`'s files (with a fixture of `fixture_rows` rows) would not
    /// fit, checked before anything is created: the embedded engine against this machine's
    /// file systems, SQL Server against the server's view of its volumes
    /// (`sys.dm_os_volume_stats`, where the login may read it), a managed PostgreSQL cluster
    /// against this machine's file systems (an existing PostgreSQL server is not checked).
    pub async fn space_shortfalls(
        &mut self,
        plan: &DatabasePlan,
        fixture_rows: u64,
    ) -> Vec<crate::util::space::Shortfall> {
        match self {
            Backend::Embedded(_) => {
                crate::util::space::shortfalls(&embedded::space::needs(plan, fixture_rows))
            }
            Backend::Mssql(b) => b.space_shortfalls(plan).await,
            Backend::Postgres(b) => {
                crate::util::space::shortfalls(&b.space_needs(plan, fixture_rows))
            }
        }
    }

    /// Releases what the backend kept between one benchmark's repetitions to make the next
    /// one faster (the embedded engine's pre-grown logs); called when a benchmark ends.
    pub fn release_kept(&mut self) -> Result<()> {
        match self {
            Backend::Embedded(b) => b.release_kept(),
            Backend::Mssql(_) | Backend::Postgres(_) => Ok(()),
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

/// The profile of the backend `kind`.
pub fn profile(kind: BackendKind) -> &'static Profile {
    match kind {
        BackendKind::Embedded => &embedded::PROFILE,
        BackendKind::Mssql => &mssql::PROFILE,
        BackendKind::Postgres => &postgres::PROFILE,
    }
}

/// The profile of the backend whose keyword is `keyword` (as results record it), if dbbench knows
/// it.
pub fn profile_named(keyword: &str) -> Option<&'static Profile> {
    BackendKind::from_keyword(keyword).map(profile)
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
    /// What the layers above may know about this database's engine.
    pub fn profile(&self) -> &'static Profile {
        match self {
            Database::Embedded(_) => &embedded::PROFILE,
            Database::Mssql(_) => &mssql::PROFILE,
            Database::Postgres(_) => &postgres::PROFILE,
        }
    }

    /// The switch that stops every statement of this database's connections (the timeout
    /// watchdog and the signal handler fire it).
    pub fn cancel(&self) -> &std::sync::Arc<crate::util::cancel::Cancel> {
        match self {
            Database::Embedded(d) => d.cancel(),
            Database::Mssql(d) => d.cancel(),
            Database::Postgres(d) => d.cancel(),
        }
    }

    /// What the engine reused for this database instead of making it anew, one phrase each
    /// (empty when everything was made for it).
    pub fn reused(&self) -> Vec<String> {
        match self {
            Database::Embedded(d) => d.reused(),
            Database::Mssql(_) | Database::Postgres(_) => Vec::new(),
        }
    }

    /// Opens another connection to this database.
    pub async fn connect(&self) -> Result<Connection> {
        match self {
            Database::Embedded(d) => d.connect().map(Connection::Embedded),
            Database::Mssql(d) => d.connect().await.map(|c| Connection::Mssql(Box::new(c))),
            Database::Postgres(d) => d.connect().await.map(|c| Connection::Postgres(Box::new(c))),
        }
    }

    /// Opens a connection for one of the driver's workers: on PostgreSQL through a socket
    /// directory one that speaks the protocol itself (no COPY); elsewhere as [`Database::connect`].
    pub async fn connect_worker(&self) -> Result<Connection> {
        match self {
            Database::Postgres(d) => d
                .connect_worker()
                .await
                .map(|c| Connection::Postgres(Box::new(c))),
            other => other.connect().await,
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

    /// Opens the measured window: checkpoints what the fixture wrote (the server-side part of a
    /// controlled start; `cache` cold empties a server's own cache too) and snapshots every
    /// statistic the backend keeps.
    pub async fn open_window(
        &self,
        conn: &mut Connection,
        cache: crate::model::start::CacheState,
    ) -> Result<()> {
        match (self, conn) {
            (Database::Embedded(d), Connection::Embedded(c)) => d.open_window(c),
            (Database::Mssql(d), Connection::Mssql(c)) => d.open_window(c, cache).await,
            (Database::Postgres(d), Connection::Postgres(c)) => d.open_window(c).await,
            _ => Err(mismatched()),
        }
    }

    /// Closes the measured window and returns what the engine measured in it.
    pub async fn close_window(&self, conn: &mut Connection) -> Result<Evidence> {
        match (self, conn) {
            (Database::Embedded(d), Connection::Embedded(c)) => d.close_window(c),
            (Database::Mssql(d), Connection::Mssql(c)) => d.close_window(c).await,
            (Database::Postgres(d), Connection::Postgres(c)) => d.close_window(c).await,
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
