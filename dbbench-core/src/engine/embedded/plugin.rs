//! The embedded engine as a backend of the registry: its [`Registration`] and the traits of
//! [`crate::engine::plugin`] over [`EmbeddedBackend`], [`EmbeddedDatabase`] and
//! [`EmbeddedConnection`]. Each method runs in the call: the futures complete without yielding.

use super::{EmbeddedBackend, EmbeddedConnection, EmbeddedDatabase, PROFILE};
use crate::engine::plugin::{
    own, EngineBackend, EngineConnection, EngineDatabase, Pending, Registration,
};
use crate::engine::profile::Profile;
use crate::model::config::{FixtureKind, StorageSpec};
use crate::model::dialect::Dialect;
use crate::model::error::Result;
use crate::model::evidence::{BackendInfo, Evidence};
use crate::model::plan::DatabasePlan;
use crate::model::scale::Scale;
use crate::model::start::CacheState;
use crate::model::value::{Row, Value};
use crate::util::cancel::Cancel;
use crate::util::space::Shortfall;
use std::any::Any;
use std::path::Path;
use std::sync::Arc;

/// The embedded engine in the registry: needs nothing from the environment.
pub static REGISTRATION: Registration = Registration {
    profile: &PROFILE,
    from_env: || Box::pin(async { Ok(Box::new(EmbeddedBackend::new()) as Box<dyn EngineBackend>) }),
    preflight: None,
};

#[async_trait::async_trait(?Send)]
impl EngineBackend for EmbeddedBackend {
    fn profile(&self) -> &'static Profile {
        &PROFILE
    }

    fn info(&self) -> BackendInfo {
        EmbeddedBackend::info(self)
    }

    fn check(&self, storage: &StorageSpec) -> Result<()> {
        EmbeddedBackend::check(self, storage)
    }

    fn files_are_local(&self) -> bool {
        true
    }

    async fn sweep_stale(&mut self, work_dir: &Path) -> Vec<String> {
        super::stale::sweep(work_dir)
    }

    async fn space_shortfalls(&mut self, plan: &DatabasePlan, fixture_rows: u64) -> Vec<Shortfall> {
        crate::util::space::shortfalls(&super::space::needs(plan, fixture_rows))
    }

    fn release_kept(&mut self) -> Result<()> {
        EmbeddedBackend::release_kept(self)
    }

    async fn create(&mut self, plan: &DatabasePlan) -> Result<Box<dyn EngineDatabase>> {
        EmbeddedBackend::create(self, plan).map(|d| Box::new(d) as Box<dyn EngineDatabase>)
    }
}

#[async_trait::async_trait(?Send)]
impl EngineDatabase for EmbeddedDatabase {
    fn profile(&self) -> &'static Profile {
        &PROFILE
    }

    fn cancel(&self) -> &Arc<Cancel> {
        EmbeddedDatabase::cancel(self)
    }

    fn reused(&self) -> Vec<String> {
        EmbeddedDatabase::reused(self)
    }

    async fn connect(&self) -> Result<Box<dyn EngineConnection>> {
        EmbeddedDatabase::connect(self).map(|c| Box::new(c) as Box<dyn EngineConnection>)
    }

    async fn load_fixture(
        &self,
        conn: &mut dyn EngineConnection,
        fixture: FixtureKind,
        scale: &Scale,
    ) -> Result<u64> {
        EmbeddedDatabase::load_fixture(self, own(conn)?, fixture, scale)
    }

    async fn open_window(&self, conn: &mut dyn EngineConnection, _: CacheState) -> Result<()> {
        EmbeddedDatabase::open_window(self, own(conn)?)
    }

    async fn close_window(&self, conn: &mut dyn EngineConnection) -> Result<Evidence> {
        EmbeddedDatabase::close_window(self, own(conn)?)
    }

    async fn drop_database(self: Box<Self>) -> Result<()> {
        EmbeddedDatabase::drop_database(*self)
    }
}

impl EngineConnection for EmbeddedConnection {
    fn dialect(&self) -> Dialect {
        Dialect::Sqlite
    }

    fn cancel(&self) -> Option<&Arc<Cancel>> {
        self.cancel.as_ref()
    }

    fn execute<'a>(&'a mut self, sql: &'a str, params: &'a [Value]) -> Pending<'a, u64> {
        Pending::Ready(EmbeddedConnection::execute(self, sql, params))
    }

    fn batch<'a>(&'a mut self, sql: &'a str) -> Pending<'a, ()> {
        Pending::Ready(EmbeddedConnection::batch(self, sql))
    }

    fn query<'a>(&'a mut self, sql: &'a str, params: &'a [Value]) -> Pending<'a, Vec<Row>> {
        Pending::Ready(EmbeddedConnection::query(self, sql, params))
    }

    fn as_any_mut(&mut self) -> &mut dyn Any {
        self
    }
}
