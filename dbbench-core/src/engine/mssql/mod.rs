//! The SQL Server backend: the same benchmarks against a real server over TDS (tiberius on
//! tokio), provisioned exactly as the attribute declares, with the server's own evidence for the
//! measured window.
//!
//! One database per repetition: created from the cell's [`StorageSpec`](crate::StorageSpec)
//! raised to the server's minimum sizes ([`floors`]), marked as dbbench's own and the mark read
//! back from inside it ([`marker`]), its files read back against the plan ([`readback`]),
//! loaded, measured and dropped step by step ([`teardown`]; a snapshot revert would rebuild the
//! log at 0.5 MB and spoil log experiments). Instance-level changes (the IFI trace flag for
//! `ifi = false`, tempdb files) are recorded with their undo and reverted after the repetition,
//! also after an error or a panic; undo that needs a restart is kept as owed ([`owed`]).
//! Databases that killed runs of this host left behind are dropped at the start of a run
//! ([`stale`]). Transaction control always goes as a plain batch ([`routing`]).

pub mod applock;
mod attempt;
mod cancel;
pub mod changes;
mod connect;
mod connection;
mod creation;
mod database;
// The scripted server of tests: not in a user's build (see its module doc).
#[cfg(any(test, feature = "_mssql_scripted"))]
pub mod double;
pub mod errors;
pub mod evidence;
pub mod fixture;
pub mod floors;
mod history;
pub mod hooks;
pub mod identity;
pub mod ifi;
pub mod instance;
pub mod local;
mod login;
pub mod marker;
pub mod owed;
pub mod permissions;
mod plugin;
pub mod preflight;
mod profile;
pub mod provision;
pub mod readback;
pub mod record;
pub mod routing;
pub mod script;
pub mod server;
pub mod settings;
mod settle;
pub mod space;
pub mod stale;
pub mod teardown;
pub mod tsql;
pub mod undo;
pub mod undo_check;
pub mod whose;

#[cfg(test)]
mod suite_specs;

pub use connect::{ConnectSettings, ENV, REQUIRE_ENV};
pub use connection::{MssqlConnection, TdsClient};
pub use database::MssqlDatabase;
pub use hooks::Hooks;
pub use plugin::REGISTRATION;
pub use profile::PROFILE;
pub use server::ServerFacts;
use settle::ledger_dir;
pub use settle::settle_owed;

use super::plugin::EngineBackend;
use super::profile::Profile;
use crate::model::config::StorageSpec;
use crate::model::error::{Error, Result};
use crate::model::evidence::BackendInfo;
use crate::model::plan::DatabasePlan;
use crate::util::owner::Owner;
use crate::util::space::Shortfall;
use creation::{touches_tempdb, volumes_by_file, Build};
use database::claim;
use instance::InstanceChanges;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Mutex;

/// The SQL Server backend: connection settings and what is known about the server.
#[derive(Debug)]
pub struct MssqlBackend {
    settings: ConnectSettings,
    facts: ServerFacts,
    hooks: Hooks,
    allow_instance_changes: bool,
    /// The host dbbench runs on, for the ownership marker.
    host: String,
    /// When this backend started (seconds since the Unix epoch), for the ownership marker's words.
    started: u64,
    /// This process (host, PID, start ticks), for the ownership marker's fields and the sweep.
    owner: Owner,
    /// The sweep's lines already said: a database left alone is reported once per process, not
    /// at every benchmark's start.
    swept: BTreeSet<String>,
    /// Whether undo owed from an earlier run was settled yet (at the first creation).
    owed_settled: bool,
    /// The server's processes, when it runs on this machine ([`local`]).
    server_on_host: Option<crate::model::interference::ServerOnHost>,
    /// The login's permissions, as the preflight reads them: admission refuses what
    /// [`permissions::blockers`] refuses there.
    permissions: preflight::Permissions,
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
        let volumes = crate::model::volume::Volumes::from_env()?;
        let facts = ServerFacts::read(&mut conn, &volumes).await?;
        let server_on_host = local::server_on_host(&mut conn, &settings, &facts.product).await;
        let permissions = match conn.query(preflight::PERMISSIONS_SQL, &[]).await {
            Ok(rows) => preflight::Permissions::from_rows(&rows),
            Err(_) => preflight::Permissions::default(),
        };
        let host = std::fs::read_to_string("/proc/sys/kernel/hostname")
            .ok()
            .or_else(|| std::env::var("COMPUTERNAME").ok())
            .map(|h| h.trim().to_string())
            .filter(|h| !h.is_empty())
            .unwrap_or_else(|| "unknown-host".into());
        Ok(MssqlBackend {
            settings,
            facts,
            hooks,
            allow_instance_changes,
            host,
            started: std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_secs())
                .unwrap_or(0),
            owner: Owner::this(),
            swept: BTreeSet::new(),
            owed_settled: false,
            server_on_host,
            permissions,
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
}

impl EngineBackend for MssqlBackend {
    type Database = MssqlDatabase;

    fn profile(&self) -> &'static Profile {
        &PROFILE
    }

    /// The server's processes on this machine, if it runs here.
    fn server_on_host(&self) -> Option<&crate::model::interference::ServerOnHost> {
        self.server_on_host.as_ref()
    }

    /// Drops the databases that earlier dbbench processes of this host left on this server and
    /// whose owner is gone ([`stale`]), and undoes the instance changes a dead dbbench process
    /// left owed in `work_dir` ([`owed`]); one line per database removed or (the first time)
    /// left. Nothing here fails the run: a server that cannot be reached says so in a line.
    async fn sweep_stale(&mut self, work_dir: &std::path::Path) -> Vec<String> {
        let mut lines = match self.settings.connect(Some("master")).await {
            Ok(mut conn) => stale::sweep(&mut conn, &self.owner, &self.facts.product).await,
            Err(e) => vec![format!(
                "mssql: could not connect to look for stale databases: {e}"
            )],
        };
        lines.retain(|line| self.swept.insert(line.clone()));
        // Instance changes a dead dbbench process left (its write-ahead ledger), undone now.
        let ledger = owed::home();
        let settled = match ledger_dir(work_dir, &ledger) {
            Ok(()) => settle_owed(self.settings(), &ledger).await,
            Err(e) => Err(e),
        };
        let line = match settled {
            Ok(Some(line)) => Some(line.replace("dbbench › ", "")),
            Ok(None) => None,
            Err(e) => Some(format!(
                "mssql: could not undo the instance changes owed in {}: {e}",
                owed::path(&ledger).display()
            )),
        };
        // Said once per process, like the sweep's lines.
        if let Some(line) = line.filter(|l| self.swept.insert(l.clone())) {
            lines.push(line);
        }
        lines
    }

    /// `storage` raised to this server's minimum file sizes.
    fn floor_storage(&self, storage: &StorageSpec) -> StorageSpec {
        self.facts.floors.apply(storage)
    }

    /// Version, edition and every precondition the results depend on.
    fn info(&self) -> BackendInfo {
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
        put("wait_filter", evidence::waits::LIST_VERSION.into());
        // Finding C5: on a shared server these include everyone else's work.
        put(
            "waits_scope",
            "instance-wide (sys.dm_os_wait_stats): the waits include every other workload on \
             the server, as do the counters Pages Allocated/sec, Checkpoint pages/sec, Lazy \
             writes/sec and Batch Requests/sec; the per-database counters, the file \
             statistics, counts.session_wait_ms.* (the window connection's own waits) and \
             counts.load_session_wait_ms.* (the load workers' sessions' own waits) are this run's"
                .into(),
        );
        if let Some(tag) = self.facts.product.compatible_tag() {
            put(BackendInfo::COMPATIBLE_PRODUCT, tag.into());
        }
        BackendInfo {
            kind: "mssql".into(),
            version: self.facts.version.clone(),
            preconditions,
            ..BackendInfo::default()
        }
    }

    /// Refuses options this server cannot honour before anything is created: those its product
    /// lacks (named by product, one sentence per option), cells that need file directories the
    /// server does not report, tempdb without permission, MAXDOP on SQL Server before 2016.
    fn check(&self, storage: &StorageSpec) -> Result<()> {
        provision::validate(storage)?;
        let product = &self.facts.product;
        let refusals = product.refusals(storage);
        if let Some((option, _)) = refusals.first() {
            return Err(Error::NotOnProduct {
                option,
                product: product.name(),
                reason: format!("{}.", identity::Product::describe_refusals(&refusals)),
            });
        }
        if let Err(why) = &self.facts.dirs {
            let placed = !storage.data_on.is_empty() && storage.log_on.is_some();
            if !placed && !provision::server_places(storage) {
                return Err(Error::Config(why.clone()));
            }
        }
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
        // Finding B3: turning IFI off and emptying the buffer pool change the whole instance
        // too, so they need the same opt-in.
        if storage.ifi == Some(false) && !self.allow_instance_changes {
            return Err(Error::Unsupported {
                option: "ifi",
                backend: "mssql",
                reason: format!(
                    "`ifi = false` turns instant file initialization off for the whole instance \
                     (DBCC TRACEON(1805, 1806, -1)) for each repetition, and logs every zero-fill \
                     of the instance during CREATE DATABASE (3004, 3605); set {}=1 to allow it",
                    instance::ALLOW_ENV
                ),
            });
        }
        if self.hooks.restart.is_some() && !self.allow_instance_changes {
            return Err(Error::Unsupported {
                option: "restart",
                backend: "mssql",
                reason: format!(
                    "{}; set {}=1 to allow it",
                    hooks::RESTART_WARNING,
                    instance::ALLOW_ENV
                ),
            });
        }
        if self.hooks.cold_cache {
            hooks::cold_cache_refusal(
                &format!("{}=1", hooks::COLD_CACHE_ENV),
                self.allow_instance_changes,
                &self.permissions,
            )?;
        }
        // The same permission table as the preflight's.
        let lacking = permissions::blockers(storage, self.hooks.cold_cache, &self.permissions);
        if let Some(first) = lacking.first() {
            return Err(Error::Unsupported {
                option: "permissions",
                backend: "mssql",
                reason: format!("the login lacks a permission the cell needs: {first}"),
            });
        }
        if storage.maxdop.is_some() && self.facts.maxdop_too_old() {
            return Err(Error::NotOnProduct {
                option: "maxdop",
                product: product.name(),
                reason: format!(
                    "MAXDOP per database (ALTER DATABASE SCOPED CONFIGURATION) needs SQL Server \
                     2016 or later; this server is {}",
                    self.facts.product_version
                ),
            });
        }
        Ok(())
    }

    /// A benchmark's `cache = "cold"` is refused here, before anything is created, as the
    /// environment's cold cache is in [`check`](Self::check) (finding N8 of the fourth review).
    fn check_cache(&self, cache: crate::model::start::CacheState) -> Result<()> {
        if cache != crate::model::start::CacheState::Cold {
            return Ok(());
        }
        hooks::cold_cache_refusal(
            "`cache = \"cold\"`",
            self.allow_instance_changes,
            &self.permissions,
        )
    }

    /// The server's disks are not this machine's to probe, even when it runs here.
    fn files_are_local(&self) -> bool {
        false
    }

    async fn space_shortfalls(&mut self, plan: &DatabasePlan, _: u64) -> Vec<Shortfall> {
        self.shortfalls_on_server(plan).await
    }

    /// Creates the database of `plan`: restart hook, ownership claim, instance changes,
    /// `CREATE DATABASE` and its configuration. On failure everything done so far is undone.
    async fn create(&mut self, plan: &DatabasePlan) -> Result<MssqlDatabase> {
        self.facts.product.check_database_name(&plan.name)?;
        self.hooks.restart(&self.settings).await?;
        let mut admin = self.settings.connect(Some("master")).await?;
        // Only a bounded command can time out and leave its statement running: then the
        // session is named, so the cleanup can end that statement ([`cancel::end_statement`]).
        let session = match self.settings.command_timeout() {
            Some(_) => cancel::identify(&mut admin).await,
            None => None,
        };
        let ledger = owed::home();
        if !self.owed_settled {
            self.owed_settled = true;
            ledger_dir(&plan.work_dir, &ledger)?;
            if let Some(line) = settle_owed(&self.settings, &ledger).await? {
                crate::util::console::say(&line);
            }
        }
        claim(&mut admin, &plan.name, &self.facts.product).await?;
        let changes = InstanceChanges::new(self.settings.clone()).owed_in(&ledger);
        let probe = changes.sibling();
        let mut build = Build {
            changes,
            probe,
            create_sent: false,
            created: false,
            counts: BTreeMap::new(),
            unavailable: BTreeMap::new(),
            ifi_flag: None,
        };
        match creation::build(self, &mut admin, plan, &mut build).await {
            Ok((provision, database_id)) => Ok(MssqlDatabase {
                name: plan.name.clone(),
                database_id,
                settings: self.settings.clone(),
                volumes: volumes_by_file(&provision.files),
                files: provision.files,
                before_window: provision.before_window,
                chain_check: provision.chain_check,
                cold_cache: self.hooks.cold_cache,
                allow_instance_changes: self.allow_instance_changes,
                may_drop_buffers: permissions::TABLE
                    .iter()
                    .find(|n| n.statement == "DBCC DROPCLEANBUFFERS")
                    .and_then(|n| (n.held)(&self.permissions)),
                changes: build.changes,
                ifi: plan.storage.ifi,
                window: Mutex::new(None),
                others: Mutex::new(None),
                counts: build.counts,
                unavailable: build.unavailable,
                cancel: crate::util::cancel::Cancel::new(),
                product: self.facts.product.clone(),
                recovery: Mutex::new(None),
                load_waits: Default::default(),
            }),
            Err(e) => {
                let problems = creation::clean_up(
                    &self.settings,
                    &self.facts.product,
                    &plan.name,
                    &mut build,
                    admin,
                    session.as_ref(),
                    &e,
                    cancel::Patience::CREATION,
                )
                .await;
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
}

fn on_off(on: bool) -> String {
    if on { "on" } else { "off" }.to_string()
}
