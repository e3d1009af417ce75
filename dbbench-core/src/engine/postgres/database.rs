//! A database dbbench created for one repetition: connections, the fixture, the measured window
//! and the drop that checks the ownership markers first. On a managed cluster it also notices a
//! server that died under it, says so, and removes what the dead cluster left.

use super::cluster::Cluster;
use super::connection::PostgresConnection;
use super::evidence::{Window, WindowContext};
use super::settings::{LibpqTarget, PgSettings};
use super::{fixture, marker};
use crate::engine::plugin::EngineDatabase;
use crate::engine::profile::Profile;
use crate::model::config::FixtureKind;
use crate::model::error::{Error, Result};
use crate::model::evidence::Evidence;
use crate::model::scale::Scale;
use crate::model::start::CacheState;
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

/// A database dbbench created on a PostgreSQL server, dropped after the repetition.
pub struct PostgresDatabase {
    pub(super) name: String,
    pub(super) settings: PgSettings,
    pub(super) admin_db: String,
    pub(super) cluster: Option<Arc<Cluster>>,
    pub(super) version_num: i64,
    pub(super) window: Mutex<Option<Window>>,
    pub(super) counts: BTreeMap<String, i64>,
    /// The server settings the cell's declared options set ([`super::options::Mapping`]).
    pub(super) declared: BTreeMap<String, String>,
    /// Whether segments made ahead are removed before each window ([`super::ahead`]): on a
    /// managed cluster, for a cell that does not make them on purpose (`log_pregrow`).
    pub(super) reset_ahead: bool,
    pub(super) cancel: Arc<crate::util::cancel::Cancel>,
}

impl std::fmt::Debug for PostgresDatabase {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PostgresDatabase")
            .field("name", &self.name)
            .field("server", &self.settings)
            .field("cluster", &self.cluster)
            .finish()
    }
}

impl PostgresDatabase {
    /// The database's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Where libpq clients (pgbench, psql) find it.
    pub fn libpq_target(&self) -> LibpqTarget {
        self.settings.target(&self.name)
    }

    /// How the managed server ended, if it did.
    fn server_gone(&self) -> Option<String> {
        self.cluster.as_ref().and_then(|c| c.exited())
    }

    /// `e`, with the managed server's death when that is the reason.
    fn explain(&self, e: Error) -> Error {
        match self.server_gone() {
            Some(why) => Error::msg(format!("{e}; the managed PostgreSQL server is gone: {why}")),
            None => e,
        }
    }

    fn context(&self) -> WindowContext<'_> {
        WindowContext {
            db: &self.name,
            settings: &self.settings,
            wal_dir: self.cluster.as_ref().map(|c| c.wal_dir()),
            version_num: self.version_num,
            declared: &self.declared,
        }
    }
}

impl EngineDatabase for PostgresDatabase {
    type Connection = PostgresConnection;

    fn profile(&self) -> &'static Profile {
        &super::PROFILE
    }

    /// The switch that stops every connection of this database.
    fn cancel(&self) -> &Arc<crate::util::cancel::Cancel> {
        &self.cancel
    }

    /// Opens another connection to this database, registered with its stop switch.
    async fn connect(&self) -> Result<PostgresConnection> {
        self.settings
            .connect(&self.name)
            .await
            .map(|c| c.with_cancel(self.cancel.clone()))
            .map_err(|e| self.explain(e))
    }

    /// A connection for one of the driver's workers: the lean link where it can be had (see
    /// [`PostgresConnection::open_wire`]), registered with the stop switch.
    async fn connect_worker(&self) -> Result<PostgresConnection> {
        self.settings
            .connect_worker(&self.name)
            .await
            .map(|c| c.with_cancel(self.cancel.clone()))
            .map_err(|e| self.explain(e))
    }

    /// Loads `fixture` through `conn`; returns the rows loaded.
    async fn load_fixture(
        &self,
        conn: &mut PostgresConnection,
        fixture: FixtureKind,
        scale: &Scale,
    ) -> Result<u64> {
        match fixture {
            FixtureKind::None => Ok(0),
            FixtureKind::Credit => fixture::load_credit(conn, scale.credit_rows())
                .await
                .map_err(|e| self.explain(e)),
        }
    }

    /// Checkpoints (so the window starts with no dirty pages from the fixture), removes the WAL
    /// segments that checkpoint left ahead where the cell does not declare them ([`super::ahead`]),
    /// turns autovacuum off on the fixture's tables on an existing server ([`super::pinned`]),
    /// and snapshots the server's statistics and settings.
    async fn open_window(&self, conn: &mut PostgresConnection, _: CacheState) -> Result<()> {
        let mut removed_ahead = None;
        let mut autovacuum_tables = None;
        match &self.cluster {
            Some(cluster) => {
                conn.batch("CHECKPOINT")
                    .await
                    .map_err(|e| self.explain(e))?;
                if self.reset_ahead {
                    let removed = super::ahead::reset(conn, cluster.wal_dir())
                        .await
                        .map_err(|e| self.explain(e))?;
                    removed_ahead = Some(removed);
                }
            }
            None => autovacuum_tables = Some(super::pinned::autovacuum_off_per_table(conn).await),
        }
        let mut window = Window::open(conn, &self.context()).await;
        window.removed_ahead = removed_ahead;
        window.autovacuum_tables = autovacuum_tables;
        // Other databases' activity is read on an existing server only, last before the body.
        if self.cluster.is_none() {
            window.others = Some(super::others::Reading::open(conn).await);
        }
        *self.window.lock().unwrap_or_else(|p| p.into_inner()) = Some(window);
        Ok(())
    }

    /// The window's evidence.
    async fn close_window(&self, conn: &mut PostgresConnection) -> Result<Evidence> {
        let mut window = self
            .window
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .take()
            .ok_or_else(|| Error::msg("close_window without open_window"))?;
        let others = window.others.take();
        let mut evidence = Evidence::default();
        window.close(conn, &self.context(), &mut evidence).await;
        if let Some(others) = others {
            evidence.server = Some(others.close(conn).await);
        }
        if let Some(why) = self.server_gone() {
            return Err(Error::msg(format!(
                "the managed PostgreSQL server stopped before the window closed: {why}"
            )));
        }
        evidence
            .counts
            .extend(self.counts.iter().map(|(k, v)| (k.clone(), *v)));
        Ok(evidence)
    }

    /// Drops the database after checking its markers. When the managed server died, the
    /// database went with it: the cluster's leftovers are removed and the death is reported.
    async fn drop_database(self) -> Result<()> {
        // A window the body never closed still samples: stop it before the drop.
        drop(self.window.lock().unwrap_or_else(|p| p.into_inner()).take());
        let dead = match self.server_gone() {
            Some(why) => Some(why),
            None => match self.settings.connect(&self.admin_db).await {
                Ok(mut admin) => {
                    return marker::drop_owned(&self.settings, &mut admin, &self.name).await
                }
                // A backend can report its postmaster's death a moment before the kernel makes
                // the postmaster waitable: give it two seconds before calling it a refusal.
                Err(e) => match self.dead_within(std::time::Duration::from_secs(2)).await {
                    Some(why) => Some(why),
                    None => return Err(e),
                },
            },
        };
        let (Some(cluster), Some(why)) = (&self.cluster, dead) else {
            return Err(Error::msg("the database could not be dropped"));
        };
        let cluster = cluster.clone();
        let removed = tokio::task::spawn_blocking(move || cluster.destroy())
            .await
            .map_err(|e| Error::msg(format!("removing the dead cluster: {e}")))?;
        let removed = match removed {
            Ok(()) => "dbbench removed its remaining processes, shared memory and directories, \
                       and the database with them"
                .to_string(),
            Err(e) => format!("removing what it left failed: {e}"),
        };
        Err(Error::msg(format!(
            "the managed PostgreSQL server stopped during the repetition ({why}); {removed}"
        )))
    }
}

impl PostgresDatabase {
    /// How the managed server ended, waiting up to `limit` for its death to become visible.
    async fn dead_within(&self, limit: std::time::Duration) -> Option<String> {
        self.cluster.as_ref()?;
        let started = std::time::Instant::now();
        loop {
            if let Some(why) = self.server_gone() {
                return Some(why);
            }
            if started.elapsed() >= limit {
                return None;
            }
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        }
    }
}
