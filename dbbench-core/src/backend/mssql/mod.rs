//! The SQL Server backend: the same benchmarks against a real server over TDS (tiberius on
//! tokio), provisioned exactly as the attribute declares, with the server's own evidence for the
//! measured window.
//!
//! One database per repetition: created from the cell's [`StorageSpec`](crate::StorageSpec),
//! marked as dbbench's own with an extended property, loaded, measured and dropped (a snapshot
//! revert would rebuild the log at 0.5 MB and spoil log experiments). Instance-level changes
//! (trace flag 1806 for `ifi = false`, tempdb files) are recorded with their undo and reverted
//! after the repetition, also after an error or a panic.

mod connect;
mod connection;
pub mod errors;
pub mod evidence;
pub mod fixture;
pub mod hooks;
pub mod ifi;
pub mod instance;
pub mod provision;
pub mod script;
pub mod server;
pub mod tsql;

pub use connect::{redact_connection_string, ConnectSettings, ENV};
pub use connection::{MssqlConnection, TdsClient};
pub use hooks::Hooks;
pub use server::ServerFacts;

use super::DatabasePlan;
use crate::config::{FixtureKind, StorageSpec};
use crate::error::{Error, Result};
use crate::results::{BackendInfo, RunResult};
use crate::scale::Scale;
use evidence::{Window, WindowContext};
use ifi::IfiAction;
use instance::InstanceChanges;
use provision::{PlannedFile, Provision};
use script::Step;
use std::collections::BTreeMap;
use std::sync::Mutex;

/// The SQL Server backend: connection settings and what is known about the server.
#[derive(Debug)]
pub struct MssqlBackend {
    settings: ConnectSettings,
    facts: ServerFacts,
    hooks: Hooks,
    allow_instance_changes: bool,
}

impl MssqlBackend {
    /// The backend for the server in `DBBENCH_MSSQL`, with hooks and permissions from the
    /// environment.
    pub async fn from_env() -> Result<MssqlBackend> {
        let settings = ConnectSettings::from_env()?;
        MssqlBackend::connect(settings, Hooks::from_env()?, instance::allowed_by_env()).await
    }

    /// Connects to master and reads the server's facts.
    pub async fn connect(
        settings: ConnectSettings,
        hooks: Hooks,
        allow_instance_changes: bool,
    ) -> Result<MssqlBackend> {
        let mut conn = settings.connect(Some("master")).await?;
        let facts = ServerFacts::read(&mut conn).await?;
        Ok(MssqlBackend {
            settings,
            facts,
            hooks,
            allow_instance_changes,
        })
    }

    /// What dbbench learned about the server.
    pub fn facts(&self) -> &ServerFacts {
        &self.facts
    }

    /// The connection settings (their `Debug` hides the password).
    pub fn settings(&self) -> &ConnectSettings {
        &self.settings
    }

    /// Version, edition and every precondition the results depend on.
    pub fn info(&self) -> BackendInfo {
        let mut preconditions = self.facts.preconditions.clone();
        let mut put = |k: &str, v: String| {
            preconditions.insert(k.to_string(), v);
        };
        put("server", self.settings.server().to_string());
        put(
            "connect_timeout_s",
            self.settings.connect_timeout().as_secs().to_string(),
        );
        put(
            "command_timeout_s",
            self.settings
                .command_timeout()
                .map_or("none".to_string(), |t| t.as_secs().to_string()),
        );
        put("cold_cache", on_off(self.hooks.cold_cache));
        put(
            "restart_hook",
            if self.hooks.restart.is_some() {
                "set"
            } else {
                "not set"
            }
            .into(),
        );
        put(
            "instance_changes_allowed",
            on_off(self.allow_instance_changes),
        );
        put(
            "wait_filter",
            "Paul Randal's benign waits, PREEMPTIVE_OS_FILEOPS/WRITEFILE kept".into(),
        );
        BackendInfo {
            kind: "mssql".into(),
            version: self.facts.version.clone(),
            preconditions,
        }
    }

    /// Refuses options this server cannot honour before anything is created.
    pub fn check(&self, storage: &StorageSpec) -> Result<()> {
        provision::validate(storage)?;
        if touches_tempdb(storage) && !self.allow_instance_changes {
            return Err(Error::Unsupported {
                option: "tempdb_files",
                backend: "mssql",
                reason: format!(
                    "tempdb belongs to the whole instance; set {}=1 to let dbbench add tempdb \
                     files for each repetition and remove them afterwards",
                    instance::ALLOW_ENV
                ),
            });
        }
        if storage.maxdop.is_some() && self.facts.major != 0 && self.facts.major < 13 {
            return Err(Error::Unsupported {
                option: "maxdop",
                backend: "mssql",
                reason: format!(
                    "MAXDOP per database (ALTER DATABASE SCOPED CONFIGURATION) needs SQL Server \
                     2016 or later; this server is {}",
                    self.facts.product_version
                ),
            });
        }
        Ok(())
    }

    /// Creates the database of `plan`: restart hook, ownership claim, instance changes,
    /// `CREATE DATABASE` and its configuration. On failure everything done so far is undone.
    pub async fn create(&mut self, plan: &DatabasePlan) -> Result<MssqlDatabase> {
        self.hooks.restart(&self.settings).await?;
        let mut admin = self.settings.connect(Some("master")).await?;
        claim(&mut admin, &plan.name).await?;
        let mut build = Build {
            changes: InstanceChanges::new(self.settings.clone()),
            created: false,
            counts: BTreeMap::new(),
            unavailable: BTreeMap::new(),
        };
        match self.build(&mut admin, plan, &mut build).await {
            Ok((provision, database_id)) => Ok(MssqlDatabase {
                name: plan.name.clone(),
                database_id,
                settings: self.settings.clone(),
                volumes: volumes_by_file(&provision.files),
                files: provision.files,
                before_window: provision.before_window,
                cold_cache: self.hooks.cold_cache,
                changes: build.changes,
                window: Mutex::new(None),
                counts: build.counts,
                unavailable: build.unavailable,
            }),
            Err(e) => {
                let mut problems = Vec::new();
                if build.created {
                    if let Err(d) = drop_owned(&mut admin, &plan.name, false).await {
                        problems.push(format!("dropping the half-made database: {d}"));
                    }
                }
                if let Err(r) = build.changes.restore(&mut admin).await {
                    problems.push(r.to_string());
                }
                if problems.is_empty() {
                    Err(e)
                } else {
                    Err(Error::msg(format!(
                        "{e}\n(cleanup: {})",
                        problems.join("; ")
                    )))
                }
            }
        }
    }

    async fn build(
        &self,
        admin: &mut MssqlConnection,
        plan: &DatabasePlan,
        build: &mut Build,
    ) -> Result<(Provision, i64)> {
        let storage = &plan.storage;
        let disable_ifi = self.ifi_action(admin, storage).await? == IfiAction::DisableWithTraceFlag;
        let mut inputs = script::Inputs {
            disable_ifi,
            ..script::Inputs::default()
        };
        if touches_tempdb(storage) {
            let rows = admin.query(instance::TEMPDB_FILES_SQL, &[]).await?;
            inputs.tempdb =
                instance::tempdb_plan(storage, &tempdb_files(&rows)?, self.facts.platform)?;
        }
        if disable_ifi {
            for flag in ifi::TF_LOG_ZEROING {
                let rows = admin.query(&ifi::trace_status_sql(flag), &[]).await?;
                if !ifi::is_on_globally(&rows)? {
                    inputs.probe_flags.push(flag);
                }
            }
        }
        let marker = format!(
            "created by dbbench {} (pid {})",
            env!("CARGO_PKG_VERSION"),
            std::process::id()
        );
        let provision = provision::plan(
            storage,
            &provision::Target {
                name: &plan.name,
                volumes: &plan.volumes,
                defaults: &self.facts.dirs,
                platform: self.facts.platform,
                marker: &marker,
            },
        )?;
        let mut probe = InstanceChanges::new(self.settings.clone());
        let mut outcome = Ok(());
        for step in script::steps(&plan.name, &provision, &inputs) {
            outcome = run_step(admin, &step, &provision, build, &mut probe).await;
            if outcome.is_err() {
                break;
            }
        }
        // The zero-fill logging flags never outlive CREATE DATABASE, even after a failure.
        let ended = probe.restore(admin).await;
        outcome?;
        ended?;
        let rows = admin.query(&provision::exists_sql(&plan.name), &[]).await?;
        let database_id: i64 = rows
            .first()
            .ok_or_else(|| Error::msg("DB_ID returned no row"))?
            .get(0)?;
        Ok((provision, database_id))
    }

    /// How to reach the cell's IFI state, read fresh (a restart hook may have changed it).
    async fn ifi_action(
        &self,
        admin: &mut MssqlConnection,
        storage: &StorageSpec,
    ) -> Result<IfiAction> {
        if storage.ifi.is_none() {
            return Ok(IfiAction::Nothing);
        }
        let state = match admin.query(ifi::STATE_SQL, &[]).await {
            Ok(rows) => ifi::IfiState::from_rows(&rows),
            Err(e) => ifi::IfiState::Unknown(e.to_string()),
        };
        let tf1806 = match admin
            .query(&ifi::trace_status_sql(ifi::TF_NO_IFI), &[])
            .await
        {
            Ok(rows) => ifi::is_on_globally(&rows)?,
            Err(_) => false,
        };
        ifi::decide(storage.ifi, &state, tf1806)
    }
}

/// Executes one step of the creation script.
async fn run_step(
    admin: &mut MssqlConnection,
    step: &Step,
    provision: &Provision,
    build: &mut Build,
    probe: &mut InstanceChanges,
) -> Result<()> {
    let ifi_error = |reason: String| Error::Unsupported {
        option: "ifi",
        backend: "mssql",
        reason,
    };
    match step {
        Step::Instance(change) => build.changes.apply(admin, change).await,
        Step::Probe(change) => probe.apply(admin, change).await,
        Step::EndProbe => probe.restore(admin).await,
        Step::Run(sql) => admin.batch(sql).await,
        Step::Create(sql) => {
            admin.batch(sql).await?;
            build.created = true;
            Ok(())
        }
        Step::ConfirmTraceFlag(flag) => {
            let rows = admin.query(&ifi::trace_status_sql(*flag), &[]).await?;
            if !ifi::is_on_globally(&rows)? {
                return Err(ifi_error(format!(
                    "DBCC TRACEON({flag}, -1) was accepted, but DBCC TRACESTATUS does not show \
                     the flag on globally"
                )));
            }
            build.counts.insert(format!("trace_flag_{flag}_applied"), 1);
            Ok(())
        }
        Step::VerifyZeroing(sql) => {
            let checked = match admin.query(sql, &[]).await {
                Ok(rows) => ifi::unzeroed_files(&rows, &data_paths(&provision.files)),
                Err(e) => Err(e),
            };
            match checked {
                Ok(unzeroed) if unzeroed.is_empty() => {
                    build.counts.insert("ifi_zeroing_verified".into(), 1);
                    Ok(())
                }
                Ok(unzeroed) => Err(ifi_error(format!(
                    "trace flag 1806 is on, yet SQL Server did not zero-fill {}: IFI cannot be \
                     turned off at runtime on this build; remove the service account's \
                     \"Perform volume maintenance tasks\" right and restart the service",
                    unzeroed.join(", ")
                ))),
                // Reading the error log needs securityadmin; the run goes on, marked unverified.
                Err(e) => {
                    build
                        .unavailable
                        .insert("ifi_verification".into(), e.to_string());
                    Ok(())
                }
            }
        }
    }
}

fn touches_tempdb(storage: &StorageSpec) -> bool {
    storage.tempdb_files.is_some()
        || storage.tempdb_size.is_some()
        || storage.tempdb_growth.is_some()
}

fn on_off(on: bool) -> String {
    if on { "on" } else { "off" }.to_string()
}

/// State collected while a database is built, kept for cleanup on failure.
struct Build {
    changes: InstanceChanges,
    created: bool,
    counts: BTreeMap<String, i64>,
    unavailable: BTreeMap<String, String>,
}

fn data_paths(files: &[PlannedFile]) -> Vec<String> {
    files
        .iter()
        .filter(|f| f.kind == crate::results::FileKind::Data)
        .map(|f| f.physical.clone())
        .collect()
}

fn volumes_by_file(files: &[PlannedFile]) -> BTreeMap<String, String> {
    files
        .iter()
        .filter_map(|f| f.volume.clone().map(|v| (f.logical.clone(), v)))
        .collect()
}

fn tempdb_files(rows: &[crate::value::Row]) -> Result<Vec<instance::TempdbFile>> {
    rows.iter()
        .map(|r| {
            Ok(instance::TempdbFile {
                name: r.get_named::<String>("name")?.trim().to_string(),
                physical: r.get_named::<String>("physical_name")?.trim().to_string(),
                size_pages: r.get_named("size_pages")?,
                growth: r.get_named("growth")?,
                is_percent: r.get_named::<i64>("is_percent_growth")? == 1,
            })
        })
        .collect()
}

/// Makes room for a database named `name`: a leftover of an earlier dbbench run (marker present)
/// is dropped; any other database of that name is refused.
async fn claim(admin: &mut MssqlConnection, name: &str) -> Result<()> {
    let rows = admin.query(&provision::exists_sql(name), &[]).await?;
    let exists = rows
        .first()
        .map(|r| r.get::<Option<i64>>(0))
        .transpose()?
        .flatten()
        .is_some();
    if exists {
        drop_owned(admin, name, true).await?;
    }
    Ok(())
}

/// Drops database `name`; with `require_marker` only after finding its ownership marker (false
/// only for a database this process has just created and perhaps could not mark).
async fn drop_owned(admin: &mut MssqlConnection, name: &str, require_marker: bool) -> Result<()> {
    if require_marker {
        let marker = admin
            .query(&provision::marker_sql(name), &[])
            .await
            .map_err(|e| Error::msg(format!("{} ({e})", Error::NotOwned(name.to_string()))))?;
        if marker.is_empty() {
            return Err(Error::NotOwned(name.to_string()));
        }
    }
    let session = evidence::growth_events::session_name(name);
    admin
        .batch(&evidence::growth_events::drop_sql(&session))
        .await?;
    for statement in provision::drop_sql(name) {
        admin.batch(&statement).await?;
    }
    Ok(())
}

/// A database dbbench created on the server, dropped after the repetition.
pub struct MssqlDatabase {
    name: String,
    database_id: i64,
    settings: ConnectSettings,
    files: Vec<PlannedFile>,
    volumes: BTreeMap<String, String>,
    before_window: Vec<String>,
    cold_cache: bool,
    changes: InstanceChanges,
    window: Mutex<Option<Window>>,
    counts: BTreeMap<String, i64>,
    unavailable: BTreeMap<String, String>,
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

    /// Opens another connection to this database.
    pub async fn connect(&self) -> Result<MssqlConnection> {
        self.settings.connect(Some(&self.name)).await
    }

    /// Loads `fixture` through `conn`; returns the rows loaded.
    pub async fn load_fixture(
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

    fn context(&self) -> WindowContext<'_> {
        WindowContext {
            db: &self.name,
            database_id: self.database_id,
            volumes: &self.volumes,
            settings: &self.settings,
        }
    }

    /// Makes FULL recovery real (full backup), empties the cache when asked, and snapshots the
    /// server's statistics.
    pub async fn open_window(&self, conn: &mut MssqlConnection) -> Result<()> {
        for statement in &self.before_window {
            conn.batch(statement).await?;
        }
        if self.cold_cache {
            conn.batch(hooks::COLD_CACHE_SQL).await?;
        }
        let window = Window::open(conn, &self.context()).await;
        *self.window.lock().unwrap_or_else(|p| p.into_inner()) = Some(window);
        Ok(())
    }

    /// Writes the window's evidence into `run`.
    pub async fn close_window(
        &self,
        conn: &mut MssqlConnection,
        run: &mut RunResult,
    ) -> Result<()> {
        let window = self
            .window
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .take()
            .ok_or_else(|| Error::msg("close_window without open_window"))?;
        window.close(conn, &self.context(), run).await;
        run.counts
            .extend(self.counts.iter().map(|(k, v)| (k.clone(), *v)));
        run.unavailable
            .extend(self.unavailable.iter().map(|(k, v)| (k.clone(), v.clone())));
        Ok(())
    }

    /// Drops the database (after checking its marker) and undoes the instance changes; both are
    /// attempted whatever the other's outcome.
    pub async fn drop_database(mut self) -> Result<()> {
        let mut admin = self.settings.connect(Some("master")).await?;
        let dropped = drop_owned(&mut admin, &self.name, true).await;
        let restored = self.changes.restore(&mut admin).await;
        match (dropped, restored) {
            (Ok(()), Ok(())) => Ok(()),
            (Err(e), Ok(())) | (Ok(()), Err(e)) => Err(e),
            (Err(d), Err(r)) => Err(Error::msg(format!("{d}; {r}"))),
        }
    }
}
