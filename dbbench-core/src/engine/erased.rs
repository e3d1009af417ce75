//! The one generic erasure of the backends' typed traits ([`super::plugin`]): object-safe twins
//! of [`EngineBackend`] and [`EngineDatabase`], each implemented once for every backend by a
//! blanket impl, so the dispatcher holds trait objects and no backend writes a forwarding layer.
//! (A connection needs no twin: [`EngineConnection`] is object-safe as it is.)
//!
//! Here, and only here, a dispatcher's connection is given back to its database as the
//! database's own connection type ([`EngineDatabase::Connection`]); a connection of another
//! backend is an error.

use super::plugin::{BoxFuture, EngineBackend, EngineConnection, EngineDatabase};
use super::profile::Profile;
use crate::model::config::{FixtureKind, StorageSpec};
use crate::model::error::{Error, Result};
use crate::model::evidence::{BackendInfo, Evidence};
use crate::model::interference::ServerOnHost;
use crate::model::plan::DatabasePlan;
use crate::model::scale::Scale;
use crate::model::start::CacheState;
use crate::util::cancel::Cancel;
use crate::util::space::Shortfall;
use std::any::Any;
use std::path::Path;
use std::sync::Arc;

/// [`EngineBackend`] as a trait object: its futures boxed, its database erased.
pub trait ErasedBackend {
    fn profile(&self) -> &'static Profile;
    fn info(&self) -> BackendInfo;
    fn server_on_host(&self) -> Option<&ServerOnHost>;
    fn check(&self, storage: &StorageSpec) -> Result<()>;
    fn check_cache(&self, cache: crate::model::start::CacheState) -> Result<()>;
    fn floor_storage(&self, storage: &StorageSpec) -> StorageSpec;
    fn files_are_local(&self) -> bool;
    fn sweep_stale<'a>(&'a mut self, work_dir: &'a Path) -> BoxFuture<'a, Vec<String>>;
    fn space_shortfalls<'a>(
        &'a mut self,
        plan: &'a DatabasePlan,
        fixture_rows: u64,
    ) -> BoxFuture<'a, Vec<Shortfall>>;
    fn release_kept(&mut self) -> Result<()>;
    fn new_fork(&mut self) -> Result<()>;
    fn create<'a>(
        &'a mut self,
        plan: &'a DatabasePlan,
    ) -> BoxFuture<'a, Result<Box<dyn ErasedDatabase>>>;
}

impl<B: EngineBackend> ErasedBackend for B {
    fn profile(&self) -> &'static Profile {
        EngineBackend::profile(self)
    }
    fn info(&self) -> BackendInfo {
        EngineBackend::info(self)
    }
    fn server_on_host(&self) -> Option<&ServerOnHost> {
        EngineBackend::server_on_host(self)
    }
    fn check(&self, storage: &StorageSpec) -> Result<()> {
        EngineBackend::check(self, storage)
    }
    fn check_cache(&self, cache: crate::model::start::CacheState) -> Result<()> {
        EngineBackend::check_cache(self, cache)
    }
    fn floor_storage(&self, storage: &StorageSpec) -> StorageSpec {
        EngineBackend::floor_storage(self, storage)
    }
    fn files_are_local(&self) -> bool {
        EngineBackend::files_are_local(self)
    }
    fn sweep_stale<'a>(&'a mut self, work_dir: &'a Path) -> BoxFuture<'a, Vec<String>> {
        Box::pin(EngineBackend::sweep_stale(self, work_dir))
    }
    fn space_shortfalls<'a>(
        &'a mut self,
        plan: &'a DatabasePlan,
        fixture_rows: u64,
    ) -> BoxFuture<'a, Vec<Shortfall>> {
        Box::pin(EngineBackend::space_shortfalls(self, plan, fixture_rows))
    }
    fn release_kept(&mut self) -> Result<()> {
        EngineBackend::release_kept(self)
    }
    fn new_fork(&mut self) -> Result<()> {
        EngineBackend::new_fork(self)
    }
    fn create<'a>(
        &'a mut self,
        plan: &'a DatabasePlan,
    ) -> BoxFuture<'a, Result<Box<dyn ErasedDatabase>>> {
        Box::pin(async move {
            let database = EngineBackend::create(self, plan).await?;
            Ok(Box::new(database) as Box<dyn ErasedDatabase>)
        })
    }
}

/// [`EngineDatabase`] as a trait object: its futures boxed, its connections erased to
/// `dyn EngineConnection` and given back to it as its own type.
pub trait ErasedDatabase: Send + Sync {
    fn profile(&self) -> &'static Profile;
    fn cancel(&self) -> &Arc<Cancel>;
    fn reused(&self) -> Vec<String>;
    fn connect(&self) -> BoxFuture<'_, Result<Box<dyn EngineConnection>>>;
    fn connect_worker(&self) -> BoxFuture<'_, Result<Box<dyn EngineConnection>>>;
    fn load_fixture<'a>(
        &'a self,
        conn: &'a mut dyn EngineConnection,
        fixture: FixtureKind,
        scale: &'a Scale,
    ) -> BoxFuture<'a, Result<u64>>;
    fn open_window<'a>(
        &'a self,
        conn: &'a mut dyn EngineConnection,
        cache: CacheState,
    ) -> BoxFuture<'a, Result<()>>;
    fn close_window<'a>(
        &'a self,
        conn: &'a mut dyn EngineConnection,
    ) -> BoxFuture<'a, Result<Evidence>>;
    fn drop_database(self: Box<Self>) -> BoxFuture<'static, Result<()>>;
}

impl<D: EngineDatabase> ErasedDatabase for D {
    fn profile(&self) -> &'static Profile {
        EngineDatabase::profile(self)
    }
    fn cancel(&self) -> &Arc<Cancel> {
        EngineDatabase::cancel(self)
    }
    fn reused(&self) -> Vec<String> {
        EngineDatabase::reused(self)
    }
    fn connect(&self) -> BoxFuture<'_, Result<Box<dyn EngineConnection>>> {
        Box::pin(async move {
            let conn = EngineDatabase::connect(self).await?;
            Ok(Box::new(conn) as Box<dyn EngineConnection>)
        })
    }
    fn connect_worker(&self) -> BoxFuture<'_, Result<Box<dyn EngineConnection>>> {
        Box::pin(async move {
            let conn = EngineDatabase::connect_worker(self).await?;
            Ok(Box::new(conn) as Box<dyn EngineConnection>)
        })
    }
    fn load_fixture<'a>(
        &'a self,
        conn: &'a mut dyn EngineConnection,
        fixture: FixtureKind,
        scale: &'a Scale,
    ) -> BoxFuture<'a, Result<u64>> {
        Box::pin(async move {
            EngineDatabase::load_fixture(self, own::<D>(conn)?, fixture, scale).await
        })
    }
    fn open_window<'a>(
        &'a self,
        conn: &'a mut dyn EngineConnection,
        cache: CacheState,
    ) -> BoxFuture<'a, Result<()>> {
        Box::pin(async move { EngineDatabase::open_window(self, own::<D>(conn)?, cache).await })
    }
    fn close_window<'a>(
        &'a self,
        conn: &'a mut dyn EngineConnection,
    ) -> BoxFuture<'a, Result<Evidence>> {
        Box::pin(async move { EngineDatabase::close_window(self, own::<D>(conn)?).await })
    }
    fn drop_database(self: Box<Self>) -> BoxFuture<'static, Result<()>> {
        Box::pin(EngineDatabase::drop_database(*self))
    }
}

/// `conn` as the connection type of the database `D` it was handed to; a connection of another
/// backend is an error.
fn own<D: EngineDatabase>(conn: &mut dyn EngineConnection) -> Result<&mut D::Connection> {
    let conn: &mut dyn Any = conn;
    conn.downcast_mut::<D::Connection>().ok_or_else(|| {
        Error::msg("a connection of one backend was used with a database of another")
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::connection::Connection;
    use crate::engine::plugin::Pending;
    use crate::engine::Database;
    use crate::model::dialect::Dialect;
    use crate::model::value::{Row, Value};

    /// A connection of the fake database: counts the windows its database closed through it.
    struct Own {
        closed: u32,
    }

    /// A connection of another backend.
    struct Foreign;

    /// A database whose connections are `Own`.
    struct Fake(Arc<Cancel>);

    fn statements<T>() -> Pending<'static, T> {
        Pending::Ready(Err(Error::msg("no statements here")))
    }

    impl EngineConnection for Own {
        fn dialect(&self) -> Dialect {
            Dialect::Sqlite
        }
        fn cancel(&self) -> Option<&Arc<Cancel>> {
            None
        }
        fn execute<'a>(&'a mut self, _: &'a str, _: &'a [Value]) -> Pending<'a, u64> {
            statements()
        }
        fn batch<'a>(&'a mut self, _: &'a str) -> Pending<'a, ()> {
            statements()
        }
        fn query<'a>(&'a mut self, _: &'a str, _: &'a [Value]) -> Pending<'a, Vec<Row>> {
            statements()
        }
    }

    impl EngineConnection for Foreign {
        fn dialect(&self) -> Dialect {
            Dialect::Postgres
        }
        fn cancel(&self) -> Option<&Arc<Cancel>> {
            None
        }
        fn execute<'a>(&'a mut self, _: &'a str, _: &'a [Value]) -> Pending<'a, u64> {
            statements()
        }
        fn batch<'a>(&'a mut self, _: &'a str) -> Pending<'a, ()> {
            statements()
        }
        fn query<'a>(&'a mut self, _: &'a str, _: &'a [Value]) -> Pending<'a, Vec<Row>> {
            statements()
        }
    }

    impl EngineDatabase for Fake {
        type Connection = Own;
        fn profile(&self) -> &'static Profile {
            unreachable!("not asked here")
        }
        fn cancel(&self) -> &Arc<Cancel> {
            &self.0
        }
        async fn connect(&self) -> Result<Own> {
            Ok(Own { closed: 0 })
        }
        async fn load_fixture(&self, _: &mut Own, _: FixtureKind, _: &Scale) -> Result<u64> {
            Ok(0)
        }
        async fn open_window(&self, _: &mut Own, _: CacheState) -> Result<()> {
            Ok(())
        }
        async fn close_window(&self, conn: &mut Own) -> Result<Evidence> {
            conn.closed += 1;
            Ok(Evidence::default())
        }
        async fn drop_database(self) -> Result<()> {
            Ok(())
        }
    }

    const MISMATCH: &str = "a connection of one backend was used with a database of another";

    /// Through the dispatcher, a database gets its own connection back as its own type, and a
    /// connection of another backend is refused, by every method that takes one.
    #[tokio::test]
    async fn a_database_takes_its_own_connection_and_refuses_another_backends() {
        let db = Database::new(Fake(Cancel::new()));
        let mut own = db.connect().await.unwrap();
        db.open_window(&mut own, CacheState::Warm).await.unwrap();
        db.close_window(&mut own).await.unwrap();
        assert_eq!(own.downcast_mut::<Own>().unwrap().closed, 1);

        let mut foreign = Connection::new(Foreign);
        let scale = Scale::smoke();
        let refused = [
            db.load_fixture(&mut foreign, FixtureKind::Credit, &scale)
                .await
                .map(|_| ()),
            db.open_window(&mut foreign, CacheState::Warm).await,
            db.close_window(&mut foreign).await.map(|_| ()),
        ];
        for result in refused {
            assert_eq!(result.unwrap_err().to_string(), MISMATCH);
        }
        db.drop_database().await.unwrap();
    }
}
