//! PostgreSQL as a backend of the registry: its [`Registration`] (a managed cluster, or the
//! server in `DBBENCH_POSTGRES`) and the traits of [`crate::engine::plugin`] over
//! [`PostgresBackend`], [`PostgresDatabase`] and [`PostgresConnection`].

use super::{PostgresBackend, PostgresConnection, PostgresDatabase, PROFILE};
use crate::engine::plugin::{
    own, EngineBackend, EngineConnection, EngineDatabase, Pending, Registration,
};
use crate::engine::profile::Profile;
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
use std::sync::Arc;

/// PostgreSQL in the registry: the server in `DBBENCH_POSTGRES`, else a managed cluster.
pub static REGISTRATION: Registration = Registration {
    profile: &PROFILE,
    from_env: || {
        Box::pin(async {
            PostgresBackend::from_env()
                .await
                .map(|b| Box::new(b) as Box<dyn EngineBackend>)
        })
    },
    preflight: None,
};

#[async_trait::async_trait(?Send)]
impl EngineBackend for PostgresBackend {
    fn profile(&self) -> &'static Profile {
        &PROFILE
    }

    fn info(&self) -> BackendInfo {
        PostgresBackend::info(self)
    }

    fn server_on_host(&self) -> Option<&ServerOnHost> {
        PostgresBackend::server_on_host(self)
    }

    fn check(&self, storage: &StorageSpec) -> Result<()> {
        PostgresBackend::check(self, storage)
    }

    fn floor_storage(&self, storage: &StorageSpec) -> StorageSpec {
        super::options::floor(storage)
    }

    fn files_are_local(&self) -> bool {
        self.is_local()
    }

    // The managed clusters are swept when a cluster starts; an existing server's databases here.
    async fn sweep_stale(&mut self, _work_dir: &std::path::Path) -> Vec<String> {
        PostgresBackend::sweep_stale(self).await
    }

    fn new_fork(&mut self) -> Result<()> {
        PostgresBackend::new_fork(self)
    }

    async fn space_shortfalls(&mut self, plan: &DatabasePlan, fixture_rows: u64) -> Vec<Shortfall> {
        crate::util::space::shortfalls(&self.space_needs(plan, fixture_rows))
    }

    async fn create(&mut self, plan: &DatabasePlan) -> Result<Box<dyn EngineDatabase>> {
        PostgresBackend::create(self, plan)
            .await
            .map(|d| Box::new(d) as Box<dyn EngineDatabase>)
    }
}

#[async_trait::async_trait(?Send)]
impl EngineDatabase for PostgresDatabase {
    fn profile(&self) -> &'static Profile {
        &PROFILE
    }

    fn cancel(&self) -> &Arc<Cancel> {
        PostgresDatabase::cancel(self)
    }

    async fn connect(&self) -> Result<Box<dyn EngineConnection>> {
        PostgresDatabase::connect(self)
            .await
            .map(|c| Box::new(c) as Box<dyn EngineConnection>)
    }

    /// Through a socket directory, a connection that speaks the protocol itself (no COPY).
    async fn connect_worker(&self) -> Result<Box<dyn EngineConnection>> {
        PostgresDatabase::connect_worker(self)
            .await
            .map(|c| Box::new(c) as Box<dyn EngineConnection>)
    }

    async fn load_fixture(
        &self,
        conn: &mut dyn EngineConnection,
        fixture: FixtureKind,
        scale: &Scale,
    ) -> Result<u64> {
        PostgresDatabase::load_fixture(self, own(conn)?, fixture, scale).await
    }

    async fn open_window(&self, conn: &mut dyn EngineConnection, _: CacheState) -> Result<()> {
        PostgresDatabase::open_window(self, own(conn)?).await
    }

    async fn close_window(&self, conn: &mut dyn EngineConnection) -> Result<Evidence> {
        PostgresDatabase::close_window(self, own(conn)?).await
    }

    async fn drop_database(self: Box<Self>) -> Result<()> {
        PostgresDatabase::drop_database(*self).await
    }
}

impl EngineConnection for PostgresConnection {
    fn dialect(&self) -> Dialect {
        Dialect::Postgres
    }

    fn cancel(&self) -> Option<&Arc<Cancel>> {
        self.cancel.as_ref()
    }

    fn execute<'a>(&'a mut self, sql: &'a str, params: &'a [Value]) -> Pending<'a, u64> {
        Pending::Later(Box::pin(PostgresConnection::execute(self, sql, params)))
    }

    fn batch<'a>(&'a mut self, sql: &'a str) -> Pending<'a, ()> {
        Pending::Later(Box::pin(PostgresConnection::batch(self, sql)))
    }

    fn query<'a>(&'a mut self, sql: &'a str, params: &'a [Value]) -> Pending<'a, Vec<Row>> {
        Pending::Later(Box::pin(PostgresConnection::query(self, sql, params)))
    }

    fn as_any_mut(&mut self) -> &mut dyn Any {
        self
    }
}
