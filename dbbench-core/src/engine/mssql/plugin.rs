//! SQL Server as a backend of the registry: its [`Registration`] (the server in `DBBENCH_MSSQL`)
//! and the traits of [`crate::engine::plugin`] over [`MssqlBackend`], [`MssqlDatabase`] and
//! [`MssqlConnection`].

use super::{MssqlBackend, MssqlConnection, MssqlDatabase, PROFILE};
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
use std::path::Path;
use std::sync::Arc;

/// SQL Server in the registry: connects to the server in `DBBENCH_MSSQL` and reads its facts.
pub static REGISTRATION: Registration = Registration {
    profile: &PROFILE,
    from_env: || {
        Box::pin(async {
            MssqlBackend::from_env()
                .await
                .map(|b| Box::new(b) as Box<dyn EngineBackend>)
        })
    },
    preflight: Some(|cells| {
        Box::pin(async move {
            let settings = super::ConnectSettings::from_env()?;
            let allowed = super::instance::allowed_by_env();
            let report = super::preflight::run(&settings, cells, allowed).await?;
            Ok(report.render())
        })
    }),
};

#[async_trait::async_trait(?Send)]
impl EngineBackend for MssqlBackend {
    fn profile(&self) -> &'static Profile {
        &PROFILE
    }

    fn info(&self) -> BackendInfo {
        MssqlBackend::info(self)
    }

    fn server_on_host(&self) -> Option<&ServerOnHost> {
        MssqlBackend::server_on_host(self)
    }

    fn check(&self, storage: &StorageSpec) -> Result<()> {
        MssqlBackend::check(self, storage)
    }

    fn floor_storage(&self, storage: &StorageSpec) -> StorageSpec {
        MssqlBackend::floor_storage(self, storage)
    }

    /// The server's disks are not this machine's to probe, even when it runs here.
    fn files_are_local(&self) -> bool {
        false
    }

    async fn sweep_stale(&mut self, work_dir: &Path) -> Vec<String> {
        let mut lines = MssqlBackend::sweep_stale(self).await;
        // Instance changes a dead dbbench process left (its write-ahead ledger), undone now.
        let line = match super::settle_owed(self.settings(), work_dir).await {
            Ok(Some(line)) => Some(line.replace("dbbench › ", "")),
            Ok(None) => None,
            Err(e) => Some(format!(
                "mssql: could not undo the instance changes owed in {}: {e}",
                super::owed::path(work_dir).display()
            )),
        };
        // Said once per process, like the sweep's lines.
        if let Some(line) = line.filter(|l| self.swept.insert(l.clone())) {
            lines.push(line);
        }
        lines
    }

    async fn space_shortfalls(&mut self, plan: &DatabasePlan, _: u64) -> Vec<Shortfall> {
        MssqlBackend::space_shortfalls(self, plan).await
    }

    async fn create(&mut self, plan: &DatabasePlan) -> Result<Box<dyn EngineDatabase>> {
        MssqlBackend::create(self, plan)
            .await
            .map(|d| Box::new(d) as Box<dyn EngineDatabase>)
    }
}

#[async_trait::async_trait(?Send)]
impl EngineDatabase for MssqlDatabase {
    fn profile(&self) -> &'static Profile {
        &PROFILE
    }

    fn cancel(&self) -> &Arc<Cancel> {
        MssqlDatabase::cancel(self)
    }

    async fn connect(&self) -> Result<Box<dyn EngineConnection>> {
        MssqlDatabase::connect(self)
            .await
            .map(|c| Box::new(c) as Box<dyn EngineConnection>)
    }

    async fn connect_worker(&self) -> Result<Box<dyn EngineConnection>> {
        MssqlDatabase::connect_worker(self)
            .await
            .map(|c| Box::new(c) as Box<dyn EngineConnection>)
    }

    async fn load_fixture(
        &self,
        conn: &mut dyn EngineConnection,
        fixture: FixtureKind,
        scale: &Scale,
    ) -> Result<u64> {
        MssqlDatabase::load_fixture(self, own(conn)?, fixture, scale).await
    }

    async fn open_window(&self, conn: &mut dyn EngineConnection, cache: CacheState) -> Result<()> {
        MssqlDatabase::open_window(self, own(conn)?, cache).await
    }

    async fn close_window(&self, conn: &mut dyn EngineConnection) -> Result<Evidence> {
        MssqlDatabase::close_window(self, own(conn)?).await
    }

    async fn drop_database(self: Box<Self>) -> Result<()> {
        MssqlDatabase::drop_database(*self).await
    }
}

impl EngineConnection for MssqlConnection {
    fn dialect(&self) -> Dialect {
        Dialect::TSql
    }

    fn cancel(&self) -> Option<&Arc<Cancel>> {
        self.cancel.as_ref()
    }

    fn execute<'a>(&'a mut self, sql: &'a str, params: &'a [Value]) -> Pending<'a, u64> {
        Pending::Later(Box::pin(MssqlConnection::execute(self, sql, params)))
    }

    fn batch<'a>(&'a mut self, sql: &'a str) -> Pending<'a, ()> {
        Pending::Later(Box::pin(MssqlConnection::batch(self, sql)))
    }

    fn query<'a>(&'a mut self, sql: &'a str, params: &'a [Value]) -> Pending<'a, Vec<Row>> {
        Pending::Later(Box::pin(MssqlConnection::query(self, sql, params)))
    }

    fn as_any_mut(&mut self) -> &mut dyn Any {
        self
    }

    fn finish(&mut self) -> Pending<'_, ()> {
        Pending::Later(Box::pin(MssqlConnection::finish(self)))
    }
}
