//! What a backend is to the rest of dbbench: three traits each engine implements on its own
//! types — the backend chosen for the process ([`EngineBackend`]), a database it created
//! ([`EngineDatabase`], its [`EngineBackend::Database`]) and a connection to one
//! ([`EngineConnection`], its [`EngineDatabase::Connection`]) — and its [`Registration`], the one
//! value the registry ([`super::registry`]) lists. The types link the three as sqlx links a
//! database and its connection, so a database's methods take its own connection type and a
//! connection of another backend does not compile. The dispatcher (`Backend`, `Database`,
//! `Connection`) holds them as trait objects through one generic erasure beside it (`erased`);
//! the backends import this module, never the dispatcher.
//!
//! Why `async fn` in the traits without `Send` bounds on their futures: bodies run on one thread
//! (`BodyFuture` is not `Send` either), and the erasure boxes each future once, where the
//! dispatcher needs a trait object. A connection's statements are the exception: they return
//! [`Pending`], so the embedded engine's statements, which complete at once, cost no allocation
//! per statement.

use crate::model::config::{FixtureKind, StorageSpec};
use crate::model::dialect::Dialect;
use crate::model::error::Result;
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

use super::erased::ErasedBackend;
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
/// engine before and between them. Its databases are of one type, [`Self::Database`].
#[allow(async_fn_in_trait)] // on purpose: the futures need not be `Send` (see the module doc)
pub trait EngineBackend: 'static {
    /// The databases this backend creates.
    type Database: EngineDatabase;

    /// What the layers above may know about this backend.
    fn profile(&self) -> &'static Profile;

    /// Engine version and preconditions.
    fn info(&self) -> BackendInfo;

    /// The server's processes on this machine, when the server runs here and is not dbbench's
    /// own; the busy-machine guard counts their CPU as the workload's.
    fn server_on_host(&self) -> Option<&ServerOnHost> {
        None
    }

    /// Fails with [`Error::Unsupported`](crate::model::error::Error::Unsupported) for a value
    /// this backend cannot honour of an option its profile lists; the options it does not list
    /// the dispatcher refused already (the profile's `refuse_unlisted`).
    fn check(&self, storage: &StorageSpec) -> Result<()>;

    /// Fails with [`Error::Unsupported`](crate::model::error::Error::Unsupported) when the
    /// benchmark's `cache` cannot be given on this server as things stand (SQL Server's cold
    /// cache empties the whole instance's buffer pool): before anything is created, as
    /// [`check`](Self::check). Most backends refuse nothing here.
    fn check_cache(&self, _cache: crate::model::start::CacheState) -> Result<()> {
        Ok(())
    }

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
    async fn create(&mut self, plan: &DatabasePlan) -> Result<Self::Database>;
}

/// A database that a backend created and will drop. Shared by the driver's worker threads, so
/// `Send + Sync`. Its connections are of one type, [`Self::Connection`]: the methods that work
/// through a connection take that type, so handing one a connection of another backend does not
/// compile.
#[allow(async_fn_in_trait)] // on purpose: the futures need not be `Send` (see the module doc)
pub trait EngineDatabase: Send + Sync + 'static {
    /// The connections this database opens.
    type Connection: EngineConnection;

    /// What the layers above may know about this database's engine.
    fn profile(&self) -> &'static Profile;

    /// The switch that stops every statement of this database's connections.
    fn cancel(&self) -> &Arc<Cancel>;

    /// What the engine reused for this database instead of making it anew, one phrase each.
    fn reused(&self) -> Vec<String> {
        Vec::new()
    }

    /// Opens another connection to this database.
    async fn connect(&self) -> Result<Self::Connection>;

    /// Opens a connection for one of the driver's workers (by default as [`Self::connect`]).
    async fn connect_worker(&self) -> Result<Self::Connection> {
        self.connect().await
    }

    /// Loads the fixture through `conn`; returns the number of rows loaded.
    async fn load_fixture(
        &self,
        conn: &mut Self::Connection,
        fixture: FixtureKind,
        scale: &Scale,
    ) -> Result<u64>;

    /// Opens the measured window: checkpoints what the fixture wrote (`cache` cold empties a
    /// server's own cache too) and snapshots every statistic the backend keeps.
    async fn open_window(&self, conn: &mut Self::Connection, cache: CacheState) -> Result<()>;

    /// Closes the measured window and returns what the engine measured in it.
    async fn close_window(&self, conn: &mut Self::Connection) -> Result<Evidence>;

    /// Drops the database and removes every file it made.
    async fn drop_database(self) -> Result<()>;
}

/// One connection to a database under test. The dispatcher's `Connection` adds what every
/// backend shares (the stop switch's check before and after each statement). `Any`, so that the
/// erasure beside the dispatcher can give a database back its own connection type, and a tool a
/// backend's own methods.
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

    /// A driver worker is done with this connection and is about to close it: what the backend
    /// reads from the session before it ends (SQL Server: the session's own waits, which end
    /// with it). Nothing by default.
    fn finish(&mut self) -> Pending<'_, ()> {
        Pending::Ready(Ok(()))
    }
}

/// The backend `start` makes, as the registry hands it to the dispatcher: what
/// [`Registration::from_env`] returns.
pub fn started<B: EngineBackend>(
    start: impl Future<Output = Result<B>> + 'static,
) -> BoxFuture<'static, Result<Box<dyn ErasedBackend>>> {
    Box::pin(async move { start.await.map(|b| Box::new(b) as Box<dyn ErasedBackend>) })
}

/// How the registry knows a backend: its profile (with its kind), how it starts from the
/// environment (`DBBENCH_BACKEND` chose it) and, when it has one, its preflight.
pub struct Registration {
    /// The backend's profile; its `kind` is what `DBBENCH_BACKEND` names.
    pub profile: &'static Profile,
    /// Starts the backend from the environment (connection strings, hooks), erased by
    /// [`started`].
    pub from_env: fn() -> BoxFuture<'static, Result<Box<dyn ErasedBackend>>>,
    /// The backend's `preflight` command, when it has one: reads what the server in the
    /// environment and its login allow, creating nothing, and renders what it found and which of
    /// `cells` can run there.
    pub preflight: Option<PreflightFn>,
}

/// A cell as a preflight sees it: its benchmark's test path, its name, its storage at the scale
/// asked for, and its benchmark's `cache`.
pub type PreflightCell<'a> = (
    &'a str,
    &'a str,
    StorageSpec,
    crate::model::start::CacheState,
);

/// A backend's preflight ([`Registration::preflight`]): its report, rendered.
pub type PreflightFn = for<'a> fn(&'a [PreflightCell<'a>]) -> BoxFuture<'a, Result<String>>;
