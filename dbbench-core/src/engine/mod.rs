//! Layer 3, **engine**: where a benchmark's database lives. The embedded engine (SQLite with
//! dbbench's storage layer) is the default; SQL Server is chosen with `DBBENCH_BACKEND=mssql`,
//! PostgreSQL with `DBBENCH_BACKEND=postgres`, each when its Cargo feature is on.
//!
//! Each engine is one folder implementing the typed traits of [`plugin`] on its own types (what
//! every backend shares, with [`profile`] and [`fixture`]); [`registry`] lists the backends this
//! build has. This file is the dispatcher: [`Backend`] and [`Database`] hold a backend's trait
//! objects (erased once for every backend, in `erased`) and add what is the same for every
//! backend, and [`connection`] does so for a connection. Nothing here names a backend, and no
//! backend imports this file.
//!
//! Engines create, measure and drop databases and return their evidence for a window
//! ([`Evidence`]); they never see results or outputs.
//!
//! Every wait on a database here runs under its deadline (`util::deadline`: connect, setup,
//! window, teardown), enforced on this side, so a server that stops answering ends the wait
//! with an error instead of holding the run. (The embedded engine's calls block their thread
//! and are in-process: no silent server there, and its waits end when its statements do.)
//!
//! May import: `model`, `util`.

pub mod connection;
mod erased;
pub mod fixture;
pub mod plugin;
pub mod profile;
pub mod registry;

/// Declares the backends, one line each (`name = "feature",`): each one's module behind its
/// Cargo feature, the list the registry reads ([`registry::REGISTERED`]), and [`backends`], the
/// modules re-exported for dbbench's own integration tests. A backend's line is the only place
/// outside its folder that names it (`tests/backend_footprint.rs` checks).
macro_rules! backends {
    ($($name:ident = $feature:literal,)*) => {
        $(
            #[cfg(feature = $feature)]
            pub mod $name;
        )*

        /// Every backend compiled in, each behind its feature.
        const REGISTERED: &[&plugin::Registration] = &[
            $(
                #[cfg(feature = $feature)]
                &$name::REGISTRATION,
            )*
        ];

        /// The backends' modules this build has, for `__internals` (dbbench's own tests).
        pub mod backends {
            $(
                #[cfg(feature = $feature)]
                pub use super::$name;
            )*
        }
    };
}

backends! {
    embedded = "embedded",
    mssql = "mssql",
    postgres = "postgres",
    mariadb = "mariadb",
}

#[cfg(test)]
mod tests;

use crate::engine::connection::Connection;
use crate::model::config::{BackendKind, FixtureKind, StorageSpec};
use crate::model::error::Result;
use crate::model::evidence::{BackendInfo, Evidence};
use crate::model::plan::DatabasePlan;
use crate::model::presentation::Presentation;
use crate::model::scale::Scale;
use crate::util::deadline::{bounded, Deadline};
use erased::{ErasedBackend, ErasedDatabase};
use plugin::{EngineBackend, EngineDatabase};
use profile::Profile;

/// A backend chosen for this process.
pub struct Backend(Box<dyn ErasedBackend>);

impl Backend {
    /// `backend` as the process's backend.
    pub fn new(backend: impl EngineBackend + 'static) -> Backend {
        Backend(Box::new(backend))
    }

    /// The backend named by `DBBENCH_BACKEND` (default: `embedded`); a backend this build does
    /// not have is an error that names its feature.
    pub async fn from_env() -> Result<Backend> {
        registry::open(BackendKind::from_env()?).await.map(Backend)
    }

    /// What the layers above may know about this backend.
    pub fn profile(&self) -> &'static Profile {
        self.0.profile()
    }

    /// Which backend this is.
    pub fn kind(&self) -> BackendKind {
        self.0.profile().kind
    }

    /// Engine version and preconditions.
    pub async fn info(&mut self) -> Result<BackendInfo> {
        Ok(self.0.info())
    }

    /// The server's processes on this machine, when the server runs here and is not dbbench's
    /// own (a SQL Server or Babelfish on this host, an existing PostgreSQL reached through
    /// `DBBENCH_POSTGRES`): the busy-machine guard counts their CPU as the workload's.
    pub fn server_on_host(&self) -> Option<&crate::model::interference::ServerOnHost> {
        self.0.server_on_host()
    }

    /// Fails with [`Error::Unsupported`](crate::model::error::Error::Unsupported) for an option
    /// this backend cannot honour: first for every option set that its profile does not list
    /// ([`Profile::refuse_unlisted`]), the same for every backend, then for the values of listed
    /// options that the backend's own check refuses.
    pub fn check(&self, storage: &StorageSpec) -> Result<()> {
        self.0.profile().refuse_unlisted(storage)?;
        self.0.check(storage)
    }

    /// Fails with [`Error::Unsupported`](crate::model::error::Error::Unsupported) when the
    /// benchmark's `cache` cannot be given on this server as things stand, before anything is
    /// created (SQL Server's cold cache without the opt-in or sysadmin).
    pub fn check_cache(&self, cache: crate::model::start::CacheState) -> Result<()> {
        self.0.check_cache(cache)
    }

    /// `storage` with every size raised to this backend's minimum, applied before the cell's
    /// effective sizes are recorded and its databases created (SQL Server's `model` size and
    /// 512 KB log; PostgreSQL's 1 MB WAL segment; the embedded engine
    /// has no minimum).
    pub fn floor_storage(&self, storage: &StorageSpec) -> StorageSpec {
        self.0.floor_storage(storage)
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
        if !self.0.files_are_local() {
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
        self.0.sweep_stale(work_dir).await
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
        self.0.space_shortfalls(plan, fixture_rows).await
    }

    /// Releases what the backend kept between one benchmark's repetitions to make the next
    /// one faster (the embedded engine's pre-grown logs); called when a benchmark ends.
    pub fn release_kept(&mut self) -> Result<()> {
        self.0.release_kept()
    }

    /// Starts fork `fork` of a benchmark on a fresh work area: the backend drops what earlier
    /// repetitions would share with this fork's (see `EngineBackend::new_fork`). Fork 0 starts
    /// on what the benchmark began with, so nothing is dropped for it.
    pub fn new_fork(&mut self, fork: u32) -> Result<()> {
        if fork == 0 {
            return Ok(());
        }
        self.0.new_fork()
    }

    /// Creates the database in the configuration of `plan`; the fixture is not loaded yet.
    pub async fn create(&mut self, plan: &DatabasePlan) -> Result<Database> {
        let doing = format!("creating the database {}", plan.name);
        bounded(Deadline::Setup, &doing, self.0.create(plan))
            .await
            .map(Database)
    }
}

/// How a stored result of `backend` is shown: as the result recorded it, so that every build
/// renders it alike. A result written before results recorded it gets its backend's profile in
/// this build, or [`Presentation::PLAIN`] when this build lacks the backend.
pub fn presentation(backend: &BackendInfo) -> Presentation {
    backend.presentation.clone().unwrap_or_else(|| {
        BackendKind::from_keyword(&backend.kind)
            .and_then(registry::profile)
            .map_or(Presentation::PLAIN, |p| p.presentation.clone())
    })
}

/// A database that dbbench created and will drop.
pub struct Database(Box<dyn ErasedDatabase>);

impl Database {
    /// `database` as a database the run holds.
    pub fn new(database: impl EngineDatabase + 'static) -> Database {
        Database(Box::new(database))
    }

    /// What the layers above may know about this database's engine.
    pub fn profile(&self) -> &'static Profile {
        self.0.profile()
    }

    /// The switch that stops every statement of this database's connections (the timeout
    /// watchdog and the signal handler fire it).
    pub fn cancel(&self) -> &std::sync::Arc<crate::util::cancel::Cancel> {
        self.0.cancel()
    }

    /// What the engine reused for this database instead of making it anew, one phrase each
    /// (empty when everything was made for it).
    pub fn reused(&self) -> Vec<String> {
        self.0.reused()
    }

    /// Opens another connection to this database.
    pub async fn connect(&self) -> Result<Connection> {
        bounded(Deadline::Connect, "opening a connection", self.0.connect())
            .await
            .map(Connection::from_boxed)
    }

    /// Opens a connection for one of the driver's workers: on PostgreSQL through a socket
    /// directory one that speaks the protocol itself (no COPY); elsewhere as [`Database::connect`].
    pub async fn connect_worker(&self) -> Result<Connection> {
        let doing = "opening a driver worker's connection";
        bounded(Deadline::Connect, doing, self.0.connect_worker())
            .await
            .map(Connection::from_boxed)
    }

    /// Loads the fixture through `conn`; returns the number of rows loaded.
    pub async fn load_fixture(
        &self,
        conn: &mut Connection,
        fixture: FixtureKind,
        scale: &Scale,
    ) -> Result<u64> {
        let doing = "loading the fixture";
        bounded(
            Deadline::Setup,
            doing,
            self.0.load_fixture(conn.engine(), fixture, scale),
        )
        .await
    }

    /// Opens the measured window: checkpoints what the fixture wrote (the server-side part of a
    /// controlled start; `cache` cold empties a server's own cache too) and snapshots every
    /// statistic the backend keeps.
    pub async fn open_window(
        &self,
        conn: &mut Connection,
        cache: crate::model::start::CacheState,
    ) -> Result<()> {
        let doing = "opening the measured window";
        bounded(
            Deadline::Window,
            doing,
            self.0.open_window(conn.engine(), cache),
        )
        .await
    }

    /// Closes the measured window and returns what the engine measured in it.
    pub async fn close_window(&self, conn: &mut Connection) -> Result<Evidence> {
        let doing = "closing the measured window";
        bounded(Deadline::Window, doing, self.0.close_window(conn.engine())).await
    }

    /// Drops the database and removes every file it made.
    pub async fn drop_database(self) -> Result<()> {
        let doing = "dropping the database (teardown)";
        bounded(Deadline::Teardown, doing, self.0.drop_database()).await
    }
}
