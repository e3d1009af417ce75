//! A database dbbench created for one repetition, on a managed instance or an existing server:
//! connections (each registered with the stop switch, `super::cancel`), the fixture, the
//! measured window (settled first: purge done, dirty pages flushed) and the drop. It implements
//! [`EngineDatabase`] here, where it is defined.

use super::cancel::OpenIds;
use super::connection::MariaDbConnection;
use super::evidence::{self, Files, Opening};
use super::instance::Instance;
use super::{fixture, owner, settings};
use crate::engine::plugin::EngineDatabase;
use crate::engine::profile::Profile;
use crate::model::config::FixtureKind;
use crate::model::error::{Error, Result};
use crate::model::evidence::Evidence;
use crate::model::scale::Scale;
use crate::model::setting::Settings;
use crate::model::start::CacheState;
use crate::util::cancel::Cancel;
use mysql_async::Opts;
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// MariaDB's longest database name.
const MAX_IDENTIFIER: usize = 64;

/// `name` if it fits in a database name; otherwise shortened to fit, distinct and with its
/// tail (`util::short_name`).
pub fn database_name(name: &str) -> String {
    crate::util::short_name::fit(name, MAX_IDENTIFIER)
}

/// What the window's opening read, kept for its close.
struct Window {
    files: Files,
    opening: Opening,
    settings: Result<Settings, String>,
    increment: Option<u64>,
    /// Other schemas' activity at the open (an existing server).
    others: Option<super::others::Reading>,
}

/// How long a lost connection waits for its managed server to end, to say why it was lost.
const SERVER_END_WAIT: Duration = Duration::from_secs(3);

/// A database dbbench created, dropped after the repetition.
pub struct MariaDbDatabase {
    pub(super) name: String,
    /// How its server is reached (without a database).
    pub(super) server: Opts,
    /// The managed instance it lives on; `None` on an existing server.
    pub(super) instance: Option<Arc<Instance>>,
    /// The server settings the cell's declared options set.
    pub(super) declared: BTreeMap<String, String>,
    /// Whether the tables live in the system tablespace (its extensions are counted).
    pub(super) system_tablespace: bool,
    pub(super) cancel: Arc<Cancel>,
    /// The ids of its connections that are open: the only ones the stop switch kills.
    ids: Arc<OpenIds>,
    window: Mutex<Option<Window>>,
}

impl std::fmt::Debug for MariaDbDatabase {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MariaDbDatabase")
            .field("name", &self.name)
            .field("instance", &self.instance)
            .finish()
    }
}

impl MariaDbDatabase {
    /// Creates database `name` on the server `server` reaches (the managed `instance`, if any),
    /// marked with its owner (`super::owner`), so a sweep of an existing server judges it.
    pub(super) async fn create(
        server: Opts,
        instance: Option<Arc<Instance>>,
        name: String,
        declared: BTreeMap<String, String>,
        system_tablespace: bool,
    ) -> Result<MariaDbDatabase> {
        let mut admin = MariaDbConnection::connect(&server, None).await?;
        owner::claim(&mut admin, &name).await?;
        admin
            .batch(&format!(
                "CREATE DATABASE {} CHARACTER SET utf8mb4 COLLATE utf8mb4_bin COMMENT '{}'",
                owner::quote_ident(&name),
                owner::comment()
            ))
            .await?;
        let _ = admin.close().await;
        Ok(MariaDbDatabase {
            name,
            server,
            instance,
            declared,
            system_tablespace,
            cancel: Cancel::new(),
            ids: Arc::new(OpenIds::default()),
            window: Mutex::new(None),
        })
    }

    /// The database's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The managed instance it lives on, if it does.
    pub fn instance(&self) -> Option<&Arc<Instance>> {
        self.instance.as_ref()
    }

    /// `e`, with the server's death when that is the reason. A lost connection waits a moment
    /// for the server's end: an aborting server closes its connections before it ends, and the
    /// reason would otherwise be missed.
    fn explained(&self, e: Error) -> Error {
        let lost = matches!(e, Error::Database { .. }) && super::errors::code(&e).is_none();
        let wait = if lost {
            SERVER_END_WAIT
        } else {
            Duration::ZERO
        };
        match self
            .instance
            .as_ref()
            .and_then(|i| Some((i.exited_within(wait)?, i)))
        {
            Some((why, instance)) => Error::msg(format!(
                "{e}; the managed MariaDB server is gone: {why}; its log says: {}",
                instance.log_tail()
            )),
            None => e,
        }
    }

    /// `cache = "cold"`: InnoDB has no statement that empties its buffer pool, so the managed
    /// instance is restarted (after the settle, nothing is left to flush) and `conn`, which the
    /// restart ended, is replaced by a new connection; the runner then drops the OS page cache.
    /// Refused on an existing server, whose restart is not dbbench's to make.
    async fn empty_buffer_pool(&self, conn: &mut MariaDbConnection) -> Result<()> {
        let Some(instance) = self.instance.clone() else {
            return Err(Error::Unsupported {
                option: "cache",
                backend: dbbench_options::keyword::MARIADB,
                reason: "`cache = \"cold\"` empties InnoDB's buffer pool, which only a restart \
                         of the server does, and dbbench does not restart a server it did not \
                         start (DBBENCH_MARIADB): run the benchmark on a managed instance (unset \
                         DBBENCH_MARIADB) or with `cache = \"warm\"`"
                    .into(),
            });
        };
        tokio::task::spawn_blocking(move || instance.restart())
            .await
            .map_err(|e| Error::msg(format!("restarting the instance: {e}")))??;
        let fresh = self.connect().await.map_err(|e| self.explained(e))?;
        let ended = std::mem::replace(conn, fresh);
        // Its server is gone: the close fails, and says nothing worth keeping.
        let _ = ended.close().await;
        Ok(())
    }

    async fn read(&self, conn: &mut MariaDbConnection, files: &Files) -> Result<Opening> {
        let status = evidence::status(conn)
            .await
            .map_err(|e| self.explained(e))?;
        let io = evidence::file_io(conn)
            .await
            .map_err(|e| self.explained(e))?;
        let waits = super::waits::sums(conn)
            .await
            .map_err(|e| self.explained(e))?;
        Ok(Opening {
            status,
            io,
            sizes: files.sizes(),
            waits,
        })
    }
}

impl EngineDatabase for MariaDbDatabase {
    type Connection = MariaDbConnection;

    fn profile(&self) -> &'static Profile {
        &super::PROFILE
    }

    /// The switch that stops every connection of this database.
    fn cancel(&self) -> &Arc<Cancel> {
        &self.cancel
    }

    /// Opens another connection to the database, registered with its stop switch.
    async fn connect(&self) -> Result<MariaDbConnection> {
        MariaDbConnection::connect(&self.server, Some(&self.name))
            .await
            .map(|c| c.with_cancel(self.cancel.clone(), &self.ids, &self.server))
            .map_err(|e| self.explained(e))
    }

    /// Loads the fixture through `conn`; the rows loaded.
    async fn load_fixture(
        &self,
        conn: &mut MariaDbConnection,
        fixture: FixtureKind,
        scale: &Scale,
    ) -> Result<u64> {
        match fixture {
            FixtureKind::None => Ok(0),
            FixtureKind::Credit => fixture::load_credit(conn, scale.credit_rows())
                .await
                .map_err(|e| self.explained(e)),
        }
    }

    /// Settles the server (purge finished, dirty pages flushed, so the fixture's writes are not
    /// the window's) and reads every counter, file size and setting.
    async fn open_window(&self, conn: &mut MariaDbConnection, cache: CacheState) -> Result<()> {
        settle(conn, self.instance.is_some())
            .await
            .map_err(|e| self.explained(e))?;
        if cache == CacheState::Cold {
            self.empty_buffer_pool(conn).await?;
        }
        let settings = settings::read(conn, &self.declared).await;
        let increment = if self.system_tablespace {
            settings
                .as_ref()
                .ok()
                .and_then(|s| s.get("mdb.innodb_autoextend_increment"))
                .and_then(|s| s.value.parse::<u64>().ok())
                .map(|mib| mib << 20)
        } else {
            None
        };
        // An existing server's files are not dbbench's to read (nor, often, on this machine).
        let files = match &self.instance {
            Some(instance) => Files::of(instance.datadir(), instance.redo_dir()),
            None => Files::none(),
        };
        let opening = self.read(conn, &files).await?;
        // Other schemas' activity is read on an existing server only, last before the body.
        let others = match &self.instance {
            Some(_) => None,
            None => Some(super::others::Reading::open(conn, &self.name).await),
        };
        *self.window.lock().unwrap_or_else(|p| p.into_inner()) = Some(Window {
            files,
            opening,
            settings,
            increment,
            others,
        });
        Ok(())
    }

    /// Reads the counters again and returns the window's evidence.
    async fn close_window(&self, conn: &mut MariaDbConnection) -> Result<Evidence> {
        let window = self
            .window
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .take()
            .ok_or_else(|| Error::msg("close_window without open_window"))?;
        let closing = self.read(conn, &window.files).await?;
        let mut ev = evidence::evidence(&window.files, &window.opening, &closing, window.increment);
        if let Some(others) = window.others {
            ev.server = Some(others.close(conn, &self.name).await);
        }
        if self.instance.is_none() {
            ev.unavailable.insert(
                "file sizes".into(),
                "an existing server's files are not read by dbbench".into(),
            );
            ev.unavailable
                .insert("flushed start".into(), NOT_FLUSHED.into());
        }
        match window.settings {
            Ok(settings) => ev.settings = settings,
            Err(why) => {
                ev.unavailable.insert("settings".into(), why);
            }
        }
        Ok(ev)
    }

    /// Drops the database (a managed instance stays, for the next repetition, or goes with the
    /// backend); only a database that carries dbbench's mark.
    async fn drop_database(self) -> Result<()> {
        let mut admin = MariaDbConnection::connect(&self.server, None)
            .await
            .map_err(|e| self.explained(e))?;
        owner::drop_owned(&mut admin, &self.name)
            .await
            .map_err(|e| self.explained(e))?;
        let _ = admin.close().await;
        Ok(())
    }
}

/// How long the flush of dirty pages before a window is waited for at most (the window's
/// deadline bounds it too).
const SETTLE_LIMIT: Duration = Duration::from_secs(60);

/// Why an existing server's window starts unflushed, in its results.
const NOT_FLUSHED: &str = "the window's start was not flushed: on an existing server dbbench \
                           changes no global setting (innodb_max_dirty_pages_pct), so the \
                           fixture's dirty pages may be written inside the window";

/// Waits for purge to finish and, on a `managed` instance, for every dirty page to be written,
/// then restores the instance's flushing threshold. An existing server's threshold is left
/// alone: it is shared by every database on it, and a restore that a failed query, the
/// window's deadline, a kill or a concurrent run skipped would leave it changed.
async fn settle(conn: &mut MariaDbConnection, managed: bool) -> Result<()> {
    // Blocks until the purge of the fixture's undo log is done (MariaDB 10.6+); a wait, not a
    // setting: the variable keeps no value.
    conn.batch("SET GLOBAL innodb_max_purge_lag_wait = 0")
        .await?;
    if !managed {
        return Ok(());
    }
    let pct: String = conn
        .query("SELECT @@innodb_max_dirty_pages_pct", &[])
        .await?
        .first()
        .ok_or_else(|| Error::msg("no @@innodb_max_dirty_pages_pct"))?
        .get(0)?;
    conn.batch("SET GLOBAL innodb_max_dirty_pages_pct = 0")
        .await?;
    let started = std::time::Instant::now();
    let flushed = loop {
        let rows = conn
            .query(
                "SHOW GLOBAL STATUS LIKE 'Innodb_buffer_pool_pages_dirty'",
                &[],
            )
            .await?;
        let dirty: i64 = rows.first().map_or(Ok(0), |r| r.get(1))?;
        if dirty == 0 {
            break Ok(());
        }
        if started.elapsed() > SETTLE_LIMIT {
            break Err(Error::msg(format!(
                "{dirty} dirty pages were still not flushed after {} s",
                SETTLE_LIMIT.as_secs()
            )));
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    conn.batch(&format!("SET GLOBAL innodb_max_dirty_pages_pct = {pct}"))
        .await?;
    flushed
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_long_name_is_cut_to_the_servers_limit() {
        let long = format!("dbbench_{}_cell_a_r0_123", "m".repeat(80));
        assert_eq!(database_name(&long).len(), 64);
    }
}
