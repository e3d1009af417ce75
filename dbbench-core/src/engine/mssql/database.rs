//! A database dbbench created on the server: ownership (the `dbbench_owner` marker checked before
//! any drop), connections, the fixture, the measured window and the drop that also undoes the
//! repetition's instance changes.

use super::evidence::{Window, WindowContext};
use super::instance::InstanceChanges;
use super::provision::{self, PlannedFile};
use super::{fixture, hooks, ConnectSettings, MssqlConnection};
use crate::engine::plugin::EngineDatabase;
use crate::engine::profile::Profile;
use crate::model::config::FixtureKind;
use crate::model::error::{Error, Result};
use crate::model::evidence::Evidence;
use crate::model::scale::Scale;
use std::collections::BTreeMap;
use std::sync::Mutex;

/// Makes room for a database named `name`: a leftover of this process, or of a dbbench run whose
/// owner is gone, is dropped; a database of that name whose owner may still run (a process of
/// the same PID on another client host, or a live one here) is refused, and so is any database
/// without dbbench's marker.
pub(super) async fn claim(
    admin: &mut MssqlConnection,
    name: &str,
    product: &super::identity::Product,
) -> Result<()> {
    use crate::util::owner::{Liveness, Owner};
    let rows = admin.query(&provision::exists_sql(name), &[]).await?;
    let exists = rows
        .first()
        .map(|r| r.get::<Option<i64>>(0))
        .transpose()?
        .flatten()
        .is_some();
    if exists {
        // Names carry the PID, so another host's run of the same benchmark under the same PID
        // asks for the same name: its database is in use, not left over.
        let owner = super::marker::read(admin, name)
            .await
            .ok()
            .flatten()
            .and_then(|held| super::marker::owner_of(held.text()));
        if let Some(owner) = owner {
            if owner != Owner::this() && owner.liveness() != Liveness::Gone {
                return Err(Error::msg(format!(
                    "a database named {name} already exists and belongs to {}, which may still \
                     be running; dbbench leaves it alone (drop it once that run has ended)",
                    owner.describe()
                )));
            }
        }
        let how = super::teardown::Dropping::leftover(product);
        super::teardown::drop_owned(admin, name, true, how).await?;
    }
    Ok(())
}

/// A database dbbench created on the server, dropped after the repetition.
pub struct MssqlDatabase {
    pub(super) name: String,
    pub(super) database_id: i64,
    pub(super) settings: ConnectSettings,
    pub(super) files: Vec<PlannedFile>,
    pub(super) volumes: BTreeMap<String, String>,
    pub(super) before_window: Vec<String>,
    pub(super) chain_check: Option<String>,
    pub(super) cold_cache: bool,
    /// `DBBENCH_MSSQL_ALLOW_INSTANCE_CHANGES=1`: a cold cache empties the whole buffer pool.
    pub(super) allow_instance_changes: bool,
    /// Whether the login may `DBCC DROPCLEANBUFFERS` (sysadmin), from the permission table.
    pub(super) may_drop_buffers: Option<bool>,
    pub(super) changes: InstanceChanges,
    /// The cell's `ifi`: an `ifi = true` window is checked for IFI-off flags at its close.
    pub(super) ifi: Option<bool>,
    pub(super) window: Mutex<Option<Window>>,
    /// What others did on the server, read when the window opened.
    pub(super) others: Mutex<Option<super::evidence::others::Reading>>,
    pub(super) counts: BTreeMap<String, i64>,
    pub(super) unavailable: BTreeMap<String, String>,
    pub(super) cancel: std::sync::Arc<crate::util::cancel::Cancel>,
    pub(super) product: super::identity::Product,
    /// The recovery behaviour in effect when the window opened, or why it is unknown.
    pub(super) recovery: Mutex<Option<std::result::Result<String, String>>>,
    /// What the window's load workers reported of their sessions' waits.
    pub(super) load_waits: super::evidence::load_waits::Shared,
}

impl std::fmt::Debug for MssqlDatabase {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MssqlDatabase")
            .field("name", &self.name)
            .field("files", &self.files)
            .field("instance_changes", &self.changes)
            .finish()
    }
}

impl MssqlDatabase {
    /// The database's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The files as created.
    pub fn files(&self) -> &[PlannedFile] {
        &self.files
    }
}

impl EngineDatabase for MssqlDatabase {
    type Connection = MssqlConnection;

    fn profile(&self) -> &'static Profile {
        &super::PROFILE
    }

    /// The switch that stops every connection of this database.
    fn cancel(&self) -> &std::sync::Arc<crate::util::cancel::Cancel> {
        &self.cancel
    }

    /// Opens another connection to this database, registered with its stop switch (see
    /// [`super::cancel`]).
    async fn connect(&self) -> Result<MssqlConnection> {
        let conn = self.settings.connect(Some(&self.name)).await?;
        super::cancel::register(conn, &self.settings, &self.cancel).await
    }

    /// Opens a connection for a driver worker: as [`Self::connect`], and it reports its
    /// session's waits to this database before it closes ([`super::evidence::load_waits`]).
    async fn connect_worker(&self) -> Result<MssqlConnection> {
        let mut conn = self.connect().await?;
        super::evidence::load_waits::opened(&self.load_waits);
        conn.load_waits = Some(self.load_waits.clone());
        Ok(conn)
    }

    /// Loads `fixture` through `conn`; returns the rows loaded.
    async fn load_fixture(
        &self,
        conn: &mut MssqlConnection,
        fixture: FixtureKind,
        scale: &Scale,
    ) -> Result<u64> {
        match fixture {
            FixtureKind::None => Ok(0),
            FixtureKind::Credit => fixture::load_credit(conn, scale.credit_rows()).await,
        }
    }

    /// Makes FULL recovery real (full backup), checkpoints what the fixture wrote (so the window
    /// does not write it back), empties the buffer pool when asked (`cache = "cold"` or
    /// `DBBENCH_MSSQL_COLD_CACHE=1`), and snapshots the server's statistics.
    async fn open_window(
        &self,
        conn: &mut MssqlConnection,
        cache: crate::model::start::CacheState,
    ) -> Result<()> {
        // Workers connect inside the window: what earlier windows' workers reported is not this
        // window's.
        super::evidence::load_waits::reset(&self.load_waits);
        for statement in &self.before_window {
            conn.batch(statement).await?;
        }
        if let Some(check) = &self.chain_check {
            let rows = conn.query(check, &[]).await?;
            let lsn = rows
                .first()
                .map(|r| r.get::<Option<String>>(0))
                .transpose()?
                .flatten();
            if lsn.is_none() {
                return Err(Error::Unsupported {
                    option: "recovery",
                    backend: "mssql",
                    reason: format!(
                        "after the full backup to NUL, sys.database_recovery_status still shows no \
                         last_log_backup_lsn for {}: the log chain did not start, so the log would \
                         truncate as in SIMPLE recovery and the cell would not measure FULL or \
                         BULK_LOGGED",
                        self.name
                    ),
                });
            }
        }
        let recovery = self.recovery_in_effect(conn).await;
        *self.recovery.lock().unwrap_or_else(|p| p.into_inner()) = Some(recovery);
        if self.cold_cache || cache == crate::model::start::CacheState::Cold {
            // Finding B3 and A3: the buffer pool is the whole instance's, and emptying it needs
            // sysadmin; refused before anything is sent.
            if !self.allow_instance_changes || self.may_drop_buffers == Some(false) {
                return Err(Error::Unsupported {
                    option: "cache",
                    backend: "mssql",
                    reason: format!(
                        "`cache = \"cold\"` empties the whole instance's buffer pool (DBCC \
                         DROPCLEANBUFFERS), which needs {}",
                        if self.allow_instance_changes {
                            "sysadmin (DBCC DROPCLEANBUFFERS docs), which this login lacks"
                                .to_string()
                        } else {
                            format!(
                                "{}=1: other sessions on the server lose their cache too",
                                super::instance::ALLOW_ENV
                            )
                        }
                    ),
                });
            }
            conn.batch(hooks::COLD_CACHE_SQL).await?;
        } else {
            // As Microsoft's guidance for repeatable runs does: start with no dirty pages.
            conn.batch("CHECKPOINT;").await?;
        }
        let window = Window::open(conn, &self.context()).await;
        *self.window.lock().unwrap_or_else(|p| p.into_inner()) = Some(window);
        // Read last, closest to the body: what other sessions and databases have done so far.
        let others = super::evidence::others::Reading::open(conn, &self.product).await;
        *self.others.lock().unwrap_or_else(|p| p.into_inner()) = Some(others);
        Ok(())
    }

    /// The window's evidence.
    async fn close_window(&self, conn: &mut MssqlConnection) -> Result<Evidence> {
        let window = self
            .window
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .take()
            .ok_or_else(|| Error::msg("close_window without open_window"))?;
        let others = self.others.lock().unwrap_or_else(|p| p.into_inner()).take();
        let mut evidence = Evidence::default();
        if let Some(others) = others {
            // Read first, closest to the body's end.
            evidence.server = Some(others.close(conn, &self.product).await);
        }
        window.close(conn, &self.context(), &mut evidence).await;
        let (load, missing) = super::evidence::load_waits::take(&self.load_waits);
        evidence.counts.extend(load);
        if let Some(why) = missing {
            evidence
                .unavailable
                .insert("load_session_waits".into(), why);
        }
        let (settings, unavailable) = super::settings::read(conn, &self.name, &self.product).await;
        evidence.settings = settings;
        evidence.unavailable.extend(unavailable);
        // The lock this repetition has held since before it read instance state (finding N9),
        // and, for `ifi = true`, no IFI-off flag on at the end (finding N3).
        if let Err(why) = self.changes.lock_held().await {
            crate::util::console::say(&format!("dbbench › mssql: {}: {why}", self.name));
            evidence
                .unavailable
                .insert("instance_lock_held".into(), why);
        }
        if let Some(why) = ifi_off_flag_on(self.ifi, &evidence) {
            crate::util::console::say(&format!("dbbench › mssql: {}: {why}", self.name));
            evidence.unavailable.insert("ifi_on_held".into(), why);
        }
        if let Some(why) = flags_lost(self.ifi, &self.counts, &evidence) {
            crate::util::console::say(&format!("dbbench › mssql: {}: {why}", self.name));
            evidence.unavailable.insert("ifi_off_held".into(), why);
        }
        evidence
            .counts
            .extend(self.counts.iter().map(|(k, v)| (k.clone(), *v)));
        let changes = self.changes.applied().len();
        if changes > 0 {
            // Trace flags and tempdb files held during this run, all undone at the drop.
            evidence
                .counts
                .insert("instance_changes_applied".into(), changes as i64);
        }
        evidence
            .unavailable
            .extend(self.unavailable.iter().map(|(k, v)| (k.clone(), v.clone())));
        match self
            .recovery
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .take()
        {
            Some(Ok(recovery)) => {
                evidence.facts.insert("recovery".into(), recovery);
            }
            Some(Err(why)) => {
                evidence.unavailable.insert("recovery".into(), why);
            }
            None => {}
        }
        Ok(evidence)
    }

    /// Drops the database (after checking its marker) and undoes the instance changes; both are
    /// attempted whatever the other's outcome.
    async fn drop_database(mut self) -> Result<()> {
        // A window the body never closed still samples counters: stop it before the drop. Its
        // growth session, if it started one, is the drop's to remove.
        let open = self.window.lock().unwrap_or_else(|p| p.into_inner()).take();
        let session = open.as_ref().is_some_and(Window::has_growth_session);
        drop(open);
        let mut admin = self.settings.connect(Some("master")).await?;
        let how = super::teardown::Dropping::own(&self.product, session);
        let dropped = super::teardown::drop_owned(&mut admin, &self.name, true, how).await;
        let restored = self.changes.restore(&mut admin).await;
        // Held to the last verified undo, and not a moment longer.
        self.changes.release();
        // The backup that started a FULL or BULK_LOGGED log chain left history in msdb: deleted
        // once the drop is verified, last on this connection (finding N13).
        let backed_up = self
            .before_window
            .iter()
            .any(|s| s.starts_with("BACKUP DATABASE "));
        if backed_up && dropped.is_ok() {
            if let Err(why) = super::history::delete(&mut admin, &self.name).await {
                crate::util::console::say(&format!("dbbench › mssql: {why}"));
            }
        }
        match (dropped, restored) {
            (Ok(()), Ok(())) => Ok(()),
            (Err(e), Ok(())) | (Ok(()), Err(e)) => Err(e),
            (Err(d), Err(r)) => Err(Error::msg(format!("{d}; {r}"))),
        }
    }
}

impl MssqlDatabase {
    fn context(&self) -> WindowContext<'_> {
        WindowContext {
            db: &self.name,
            database_id: self.database_id,
            volumes: &self.volumes,
            settings: &self.settings,
            product: &self.product,
        }
    }

    /// The recovery behaviour in effect: the database's recovery model (inherited from `model`
    /// when the cell declares none) and, for FULL or BULK_LOGGED, whether the log chain started;
    /// a FULL database that never had a full backup truncates its log as SIMPLE does.
    async fn recovery_in_effect(
        &self,
        conn: &mut MssqlConnection,
    ) -> std::result::Result<String, String> {
        let rows = conn
            .query(&super::readback::recovery_model_sql(&self.name), &[])
            .await
            .map_err(|e| e.to_string())?;
        let model = rows
            .first()
            .and_then(|r| r.get::<Option<String>>(0).ok().flatten())
            .ok_or("sys.databases gives no recovery model for the database")?;
        if model.trim().eq_ignore_ascii_case("SIMPLE") {
            return Ok(super::readback::describe_recovery(&model, false));
        }
        let rows = conn
            .query(&provision::chain_check_sql(&self.name), &[])
            .await
            .map_err(|e| {
                format!(
                    "{} recovery; whether its log chain started: {e}",
                    model.trim()
                )
            })?;
        let started = rows
            .first()
            .and_then(|r| r.get::<Option<String>>(0).ok().flatten())
            .is_some();
        Ok(super::readback::describe_recovery(&model, started))
    }
}

/// Why an `ifi = true` window may have run with IFI off: trace flag 1805 or 1806 on globally when
/// it closed, as `DBCC TRACESTATUS(-1)` in the settings read-back shows (someone turned IFI off
/// for the instance meanwhile, finding N3). `None` for other cells, when neither flag is on, or
/// when the flags could not be read (that is said already).
fn ifi_off_flag_on(ifi: Option<bool>, evidence: &Evidence) -> Option<String> {
    if ifi != Some(true) || evidence.unavailable.contains_key("settings.traceflags") {
        return None;
    }
    let on: Vec<String> = super::ifi::TF_NO_IFI
        .iter()
        .filter(|flag| evidence.settings.contains_key(&format!("traceflag.{flag}")))
        .map(u32::to_string)
        .collect();
    (!on.is_empty()).then(|| {
        format!(
            "trace flag {} (IFI off for the whole instance) was on globally when this ifi = true \
             window closed: part of the window may have run without instant file initialization",
            on.join(" and ")
        )
    })
}

/// Why the window may not have run with IFI off although the cell asked: an IFI-off trace flag
/// the `ifi = false` window relied on is off when it closes, as `DBCC TRACESTATUS(-1)` in the
/// settings read-back shows. It relied on both flags of [`super::ifi::TF_NO_IFI`]: those it turned
/// on (`counts.trace_flag_<n>_applied`) and those it found on (a DBA's, or another run's that has
/// since undone them, finding N3). Someone turned it off, or the service restarted: verification
/// happened only at `CREATE DATABASE` (finding C3). `None` for other cells, when every such flag
/// is still on, or when the flags could not be read (that is said already).
fn flags_lost(
    ifi: Option<bool>,
    counts: &BTreeMap<String, i64>,
    evidence: &Evidence,
) -> Option<String> {
    if ifi != Some(false) || evidence.unavailable.contains_key("settings.traceflags") {
        return None;
    }
    let off = |set: bool| -> Vec<String> {
        super::ifi::TF_NO_IFI
            .iter()
            .filter(|flag| counts.contains_key(&format!("trace_flag_{flag}_applied")) == set)
            .filter(|flag| !evidence.settings.contains_key(&format!("traceflag.{flag}")))
            .map(u32::to_string)
            .collect()
    };
    let (set, found) = (off(true), off(false));
    let mut parts = Vec::new();
    if !set.is_empty() {
        parts.push(format!(
            "trace flag {} that dbbench turned on for ifi = false",
            set.join(" and ")
        ));
    }
    if !found.is_empty() {
        parts.push(format!(
            "trace flag {} that ifi = false found on (set by the DBA or another run) and relied on",
            found.join(" and ")
        ));
    }
    (!parts.is_empty()).then(|| {
        format!(
            "{} {} off when the window closed (turned off by someone else, or the service \
             restarted): part of the window may have run with IFI on",
            parts.join(", and "),
            if set.len() + found.len() > 1 {
                "were"
            } else {
                "was"
            }
        )
    })
}

#[cfg(test)]
mod tests;
