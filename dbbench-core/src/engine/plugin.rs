//! What a backend is to the rest of dbbench: three traits each engine implements — the backend
//! chosen for the process ([`EngineBackend`]), a database it created ([`EngineDatabase`]) and a
//! connection to one ([`EngineConnection`]) — and its [`Registration`], the one value the
//! registry ([`super::registry`]) lists. The dispatcher (`Backend`, `Database`, `Connection`)
//! holds these as trait objects; the backends import this module, never the dispatcher.
//!
//! Why `async_trait(?Send)`: the methods are `async` and the dispatcher needs trait objects, which
//! `async fn` in traits does not give yet; the futures need not be `Send` (bodies run on one
//! thread, `BodyFuture` is not `Send` either). A connection's statements are the exception: they
//! return [`Pending`], so the embedded engine's statements, which complete at once, cost no
//! allocation per statement.

use crate::model::config::{FixtureKind, StorageSpec};
use crate::model::dialect::Dialect;
use crate::model::error::{Error, Result};
use crate::model::evidence::{BackendInfo, Evidence};
use crate::model::interference::ServerOnHost;
use crate::model::plan::DatabasePlan;
use crate::model::scale::Scale;
use crate::model::start::CacheState;
use crate::model::value::{Row, Value};
use crate::util::cancel::Cancel;
use crate::util::space::Shortfall;
use std::any::Any;
use std::future::Future;
use std::path::Path;
use std::pin::Pin;
use std::sync::Arc;

use super::profile::Profile;

/// A future a backend returns through a trait object.
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + 'a>>;

/// The outcome of one statement: already there (the embedded engine runs it in the call) or
/// still to come (a server's reply).
pub enum Pending<'a, T> {
    /// Done in the call.
    Ready(Result<T>),
    /// To be awaited.
    Later(BoxFuture<'a, Result<T>>),
}

impl<T> Pending<'_, T> {
    /// The statement's result.
    pub async fn outcome(self) -> Result<T> {
        match self {
            Pending::Ready(result) => result,
            Pending::Later(future) => future.await,
        }
    }
}

/// A backend chosen for this process: creates databases and answers what the run asks of the
/// engine before and between them.
#[async_trait::async_trait(?Send)]
pub trait EngineBackend {
    /// What the layers above may know about this backend.
    fn profile(&self) -> &'static Profile;

    /// Engine version and preconditions.
    fn info(&self) -> BackendInfo;

    /// The server's processes on this machine, when the server runs here and is not dbbench's
    /// own; the busy-machine guard counts their CPU as the workload's.
    fn server_on_host(&self) -> Option<&ServerOnHost> {
        None
    }

    /// Fails with [`Error::Unsupported`] for a value this backend cannot honour of an option
    /// its profile lists; the options it does not list the dispatcher refused already
    /// ([`Profile::refuse_unlisted`]).
    fn check(&self, storage: &StorageSpec) -> Result<()>;

    /// `storage` with every size raised to this backend's minimum.
    fn floor_storage(&self, storage: &StorageSpec) -> StorageSpec {
        *storage
    }

    /// Whether the databases' files are on this machine's disks (the calibration probes them).
    fn files_are_local(&self) -> bool;

    /// Removes what earlier dbbench processes of this host left and whose owner is gone; one
    /// line per database removed (or left), for the console.
    async fn sweep_stale(&mut self, _work_dir: &Path) -> Vec<String> {
        Vec::new()
    }

    /// The volumes on which `plan`'s files (with a fixture of `fixture_rows` rows) would not
    /// fit, checked before anything is created.
    async fn space_shortfalls(&mut self, plan: &DatabasePlan, fixture_rows: u64) -> Vec<Shortfall>;

    /// Releases what the backend kept between one benchmark's repetitions; called when a
    /// benchmark ends.
    fn release_kept(&mut self) -> Result<()> {
        Ok(())
    }

    /// Starts a fork (`run::schedule`): drops whatever later repetitions would otherwise share
    /// with earlier ones, so the fork's databases are made on a fresh work area (the embedded
    /// engine's kept logs and fixture copies; a managed PostgreSQL cluster). By default what
    /// [`EngineBackend::release_kept`] releases.
    fn new_fork(&mut self) -> Result<()> {
        self.release_kept()
    }

    /// Creates the database in the configuration of `plan`; the fixture is not loaded yet.
    async fn create(&mut self, plan: &DatabasePlan) -> Result<Box<dyn EngineDatabase>>;
}

/// A database that a backend created and will drop. Shared by the driver's worker threads, so
/// `Send + Sync`.
#[async_trait::async_trait(?Send)]
pub trait EngineDatabase: Send + Sync {
    /// What the layers above may know about this database's engine.
    fn profile(&self) -> &'static Profile;

    /// The switch that stops every statement of this database's connections.
    fn cancel(&self) -> &Arc<Cancel>;

    /// What the engine reused for this database instead of making it anew, one phrase each.
    fn reused(&self) -> Vec<String> {
        Vec::new()
    }

    /// Opens another connection to this database.
    async fn connect(&self) -> Result<Box<dyn EngineConnection>>;

    /// Opens a connection for one of the driver's workers (by default as [`Self::connect`]).
    async fn connect_worker(&self) -> Result<Box<dyn EngineConnection>> {
        self.connect().await
    }

    /// Loads the fixture through `conn` (a connection of this backend: `own` gives its type);
    /// returns the number of rows loaded.
    async fn load_fixture(
        &self,
        conn: &mut dyn EngineConnection,
        fixture: FixtureKind,
        scale: &Scale,
    ) -> Result<u64>;

    /// Opens the measured window: checkpoints what the fixture wrote (`cache` cold empties a
    /// server's own cache too) and snapshots every statistic the backend keeps.
    async fn open_window(&self, conn: &mut dyn EngineConnection, cache: CacheState) -> Result<()>;

    /// Closes the measured window and returns what the engine measured in it.
    async fn close_window(&self, conn: &mut dyn EngineConnection) -> Result<Evidence>;

    /// Drops the database and removes every file it made.
    async fn drop_database(self: Box<Self>) -> Result<()>;
}

/// One connection to a database under test. The dispatcher's `Connection` adds what every
/// backend shares (the stop switch's check before and after each statement).
pub trait EngineConnection: Send + Any {
    /// The dialect this connection speaks.
    fn dialect(&self) -> Dialect;

    /// The stop switch of the database this connection belongs to, if any.
    fn cancel(&self) -> Option<&Arc<Cancel>>;

    /// Runs one statement with parameters; the number of rows it changed.
    fn execute<'a>(&'a mut self, sql: &'a str, params: &'a [Value]) -> Pending<'a, u64>;

    /// Runs several statements separated by `;` (no parameters, no results).
    fn batch<'a>(&'a mut self, sql: &'a str) -> Pending<'a, ()>;

    /// Runs a query with parameters and returns every row.
    fn query<'a>(&'a mut self, sql: &'a str, params: &'a [Value]) -> Pending<'a, Vec<Row>>;

    /// This connection as `Any`, for `own`.
    fn as_any_mut(&mut self) -> &mut dyn Any;

    /// A driver worker is done with this connection and is about to close it: what the backend
    /// reads from the session before it ends (SQL Server: the session's own waits, which end
    /// with it). Nothing by default.
    fn finish(&mut self) -> Pending<'_, ()> {
        Pending::Ready(Ok(()))
    }
}

/// `conn` as the connection type `C` of the backend whose database was handed it; a connection
/// of another backend is an error.
pub fn own<C: EngineConnection>(conn: &mut dyn EngineConnection) -> Result<&mut C> {
    conn.as_any_mut().downcast_mut::<C>().ok_or_else(mismatched)
}

/// The error for a connection of one backend handed to a database of another.
pub fn mismatched() -> Error {
    Error::msg("a connection of one backend was used with a database of another")
}

/// How the registry knows a backend: its profile (with its kind), how it starts from the
/// environment (`DBBENCH_BACKEND` chose it) and, when it has one, its preflight.
pub struct Registration {
    /// The backend's profile; its `kind` is what `DBBENCH_BACKEND` names.
    pub profile: &'static Profile,
    /// Starts the backend from the environment (connection strings, hooks).
    pub from_env: fn() -> BoxFuture<'static, Result<Box<dyn EngineBackend>>>,
    /// The backend's `preflight` command, when it has one: reads what the server in the
    /// environment and its login allow, creating nothing, and renders what it found and which of
    /// `cells` can run there.
    pub preflight: Option<PreflightFn>,
}

/// A cell as a preflight sees it: its benchmark's test path, its name, its storage at the scale
/// asked for.
pub type PreflightCell<'a> = (&'a str, &'a str, StorageSpec);

/// A backend's preflight ([`Registration::preflight`]): its report, rendered.
pub type PreflightFn = for<'a> fn(&'a [PreflightCell<'a>]) -> BoxFuture<'a, Result<String>>;
