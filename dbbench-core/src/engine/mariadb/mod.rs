//! The MariaDB (InnoDB) backend: the same benchmarks on a throwaway instance dbbench makes from
//! the machine's `mariadb-server` ([`instance`]), or on the existing server `DBBENCH_MARIADB`
//! names ([`external`]), over `mysql_async`.
//!
//! Managed: one database per repetition on an instance whose settings are the cell's
//! ([`options`]): a cell whose settings equal the running instance's reuses it, any other gets a
//! new one (the old one is stopped and removed first). A cell whose tables live in the system
//! tablespace (`data_files`, `data_size`, `growth`) gets a new instance for every database,
//! since the tablespace keeps the pages a dropped table freed and the next repetition would not
//! grow it. The instance goes when the backend is dropped, also after an error or a panic.
//!
//! The backend implements [`EngineBackend`] here, its database in `database.rs`, its connection
//! in `plugin.rs`, with the registry's [`REGISTRATION`].

pub mod binaries;
mod bootstrap;
mod cancel;
pub mod connection;
mod database;
pub mod errors;
pub mod evidence;
pub mod external;
pub mod fixture;
pub mod instance;
mod local;
pub mod options;
mod others;
mod owned;
mod owner;
mod plugin;
mod profile;
mod refusals;
pub mod settings;
mod stale;
mod types;
mod waits;

pub use binaries::{available_for_tests, REQUIRE_ENV};
pub use connection::MariaDbConnection;
pub use database::MariaDbDatabase;
pub use plugin::REGISTRATION;
pub use profile::PROFILE;

use crate::engine::plugin::EngineBackend;
use crate::engine::profile::Profile;
use crate::model::config::StorageSpec;
use crate::model::dialect::Dialect;
use crate::model::error::{Error, Result};
use crate::model::evidence::BackendInfo;
use crate::model::plan::DatabasePlan;
use crate::util::space::{Need, Shortfall};
use binaries::Binaries;
use instance::{Instance, InstanceSpec};
use mysql_async::{Opts, OptsBuilder};
use options::Mode;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// The SQL MariaDB speaks (MySQL's; parameters `?`): a dialect of this folder, not of
/// `model/dialect.rs`.
pub const DIALECT: Dialect = Dialect::named("mysql");

/// Where the databases live.
enum Target {
    /// Instances dbbench makes and removes.
    Managed {
        binaries: Binaries,
        instance: Option<Arc<Instance>>,
        started: u32,
    },
    /// The server in `DBBENCH_MARIADB`.
    External {
        server: Opts,
        version: String,
        /// Its process, when it runs on this machine (`local.rs`).
        server_on_host: Option<crate::model::interference::ServerOnHost>,
    },
}

/// The MariaDB backend: managed instances from the machine's programs, or an existing server.
pub struct MariaDbBackend {
    target: Target,
    swept: bool,
}

impl std::fmt::Debug for MariaDbBackend {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.target {
            Target::Managed { instance, .. } => f
                .debug_struct("MariaDbBackend")
                .field("instance", instance)
                .finish(),
            Target::External { server, .. } => f
                .debug_struct("MariaDbBackend")
                .field("server", &connection::where_(server))
                .finish(),
        }
    }
}

/// How a managed instance is reached: its socket, as this OS user's account, which the server
/// lets in by the socket's peer credentials (`unix_socket`): no password exists.
fn managed_opts(socket: &Path, user: &str) -> Opts {
    OptsBuilder::default()
        .socket(Some(socket.display().to_string()))
        .user(Some(user))
        .into()
}

impl MariaDbBackend {
    /// The server in `DBBENCH_MARIADB` when it is set, else a managed backend.
    pub async fn from_env() -> Result<MariaDbBackend> {
        match std::env::var(external::ENV) {
            Ok(spec) if !spec.trim().is_empty() => MariaDbBackend::existing(&spec).await,
            _ => MariaDbBackend::managed(),
        }
    }

    /// A backend that runs its own instances; none is started yet.
    pub fn managed() -> Result<MariaDbBackend> {
        Ok(MariaDbBackend {
            target: Target::Managed {
                binaries: Binaries::find()?,
                instance: None,
                started: 0,
            },
            swept: false,
        })
    }

    /// A backend on the existing server `spec` names (a socket's path or a URL); connects once
    /// to read its version.
    /// Bounded as every wait on a server is (`docs/deadlines.md`): the driver has no connect
    /// timeout of its own.
    pub async fn existing(spec: &str) -> Result<MariaDbBackend> {
        use crate::util::deadline::{bounded, Deadline};
        let server = external::opts(spec)?;
        let doing = format!(
            "connecting to the MariaDB server at {}",
            connection::where_(&server)
        );
        let (version, server_on_host) = bounded(Deadline::Connect, &doing, async {
            let mut conn = MariaDbConnection::connect(&server, None).await?;
            let version: String = conn
                .query("SELECT VERSION()", &[])
                .await?
                .first()
                .ok_or_else(|| Error::msg("SELECT VERSION() returned no row"))?
                .get(0)?;
            let server_on_host = local::server_on_host(&server, &mut conn).await;
            let _ = conn.close().await;
            Ok((version, server_on_host))
        })
        .await?;
        Ok(MariaDbBackend {
            target: Target::External {
                server,
                version,
                server_on_host,
            },
            swept: false,
        })
    }

    /// The managed instance that runs now, if any.
    pub fn instance(&self) -> Option<&Arc<Instance>> {
        match &self.target {
            Target::Managed { instance, .. } => instance.as_ref(),
            Target::External { .. } => None,
        }
    }

    fn mode(&self) -> Mode {
        match self.target {
            Target::Managed { .. } => Mode::Managed,
            Target::External { .. } => Mode::External,
        }
    }

    /// The folder managed instances are made in.
    pub fn work_base(work_dir: &Path) -> PathBuf {
        work_dir.join("mariadb")
    }

    /// What a cell puts on each file system of this machine before its body runs: the
    /// bootstrap's files (about 30 MB), the system tablespace's files, the redo log, and the
    /// fixture. Nothing on an existing server's.
    fn space_needs(&self, plan: &DatabasePlan, fixture_rows: u64) -> Vec<Need> {
        let (Mode::Managed, Ok(mapping)) = (self.mode(), options::map(&plan.storage)) else {
            return Vec::new();
        };
        let base = Self::work_base(&plan.work_dir);
        let data = plan.storage.data_size.map_or(12 << 20, |s| s.bytes);
        // About 100 bytes a row in InnoDB's clustered index, with its page fill.
        let fixture = fixture_rows * 100;
        let redo = plan.storage.log_size.map_or(96 << 20, |s| s.bytes);
        let redo_dir = match mapping.log_volume {
            Some(v) => plan.volumes.resolve(v).cloned().unwrap_or(base.clone()),
            None => base.clone(),
        };
        vec![
            Need {
                dir: base,
                bytes: (30 << 20) + data + fixture,
                what: "data files and fixture, estimated".into(),
            },
            Need {
                dir: redo_dir,
                bytes: redo,
                what: "redo log".into(),
            },
        ]
    }

    /// The managed instance for `plan`: the running one when its settings are the cell's (and
    /// its tables are not in the system tablespace), else a new one.
    async fn instance_for(
        &mut self,
        plan: &DatabasePlan,
        mapping: &options::Mapping,
    ) -> Result<Arc<Instance>> {
        let Target::Managed {
            binaries,
            instance,
            started,
        } = &mut self.target
        else {
            return Err(Error::msg("a managed instance asked of an existing server"));
        };
        let redo_base = match mapping.log_volume {
            Some(v) => Some(plan.volumes.resolve(v)?.clone()),
            None => None,
        };
        let spec = InstanceSpec {
            work_base: Self::work_base(&plan.work_dir),
            redo_base,
            settings: mapping.server.clone(),
        };
        let reusable = !mapping.system_tablespace
            && instance
                .as_ref()
                .is_some_and(|i| i.spec() == &spec && i.exited().is_none());
        if !reusable {
            if let Some(old) = instance.take() {
                tokio::task::spawn_blocking(move || old.destroy())
                    .await
                    .map_err(|e| Error::msg(format!("stopping the previous instance: {e}")))??;
            }
            *started += 1;
            let id = format!("mdb-{}-{}", std::process::id(), started);
            let binaries = binaries.clone();
            let made = tokio::task::spawn_blocking(move || Instance::start(&binaries, spec, id))
                .await
                .map_err(|e| Error::msg(format!("starting the instance: {e}")))??;
            *instance = Some(Arc::new(made));
        }
        Ok(instance.clone().expect("an instance was just made"))
    }
}

impl EngineBackend for MariaDbBackend {
    type Database = MariaDbDatabase;

    fn profile(&self) -> &'static Profile {
        &PROFILE
    }

    /// An existing server's process on this machine, if it runs here (a managed instance's is
    /// dbbench's own).
    fn server_on_host(&self) -> Option<&crate::model::interference::ServerOnHost> {
        match &self.target {
            Target::External { server_on_host, .. } => server_on_host.as_ref(),
            Target::Managed { .. } => None,
        }
    }

    /// Version and every precondition the results depend on.
    fn info(&self) -> BackendInfo {
        let mut p = BTreeMap::new();
        let version = match &self.target {
            Target::Managed { binaries, .. } => {
                p.insert(
                    "mode".to_string(),
                    "managed instance: mariadb-install-db per instance-level configuration, \
                     private Unix socket, no networking, removed afterwards"
                        .to_string(),
                );
                p.insert("server".to_string(), binaries.server.display().to_string());
                let pinned: Vec<String> = instance::PINNED
                    .iter()
                    .map(|(n, v)| format!("{n}={v}"))
                    .collect();
                p.insert(
                    "settings".to_string(),
                    format!(
                        "--no-defaults, the server's defaults plus {}, and each cell's options",
                        pinned.join(", ")
                    ),
                );
                binaries.version.clone()
            }
            Target::External {
                server, version, ..
            } => {
                p.insert(
                    "mode".to_string(),
                    format!(
                        "existing server at {} ({}): its configuration as it is; instance-level \
                         options refused",
                        connection::where_(server),
                        external::ENV
                    ),
                );
                version.clone()
            }
        };
        BackendInfo {
            kind: PROFILE.kind.keyword().into(),
            version,
            preconditions: p,
            ..BackendInfo::default()
        }
    }

    /// Refuses values MariaDB cannot honour (and, on an existing server, every instance-level
    /// option) before anything is created.
    fn check(&self, storage: &StorageSpec) -> Result<()> {
        options::check(storage, self.mode())
    }

    fn floor_storage(&self, storage: &StorageSpec) -> StorageSpec {
        options::floor(storage)
    }

    fn files_are_local(&self) -> bool {
        self.mode() == Mode::Managed
    }

    /// Managed: removes the instances killed runs left under the work dir. Existing server:
    /// drops the marked databases whose owner is gone.
    async fn sweep_stale(&mut self, work_dir: &Path) -> Vec<String> {
        self.swept = true;
        match &self.target {
            Target::Managed { .. } => stale::sweep(&Self::work_base(work_dir)),
            Target::External { server, .. } => {
                // Bounded by the teardown's deadline, as PostgreSQL's sweep: a server that does
                // not answer, or a drop behind another session's lock, gets a line, not a hang.
                let swept = async {
                    let mut admin = MariaDbConnection::connect(server, None).await?;
                    let lines = owner::sweep(&mut admin).await;
                    let _ = admin.close().await;
                    lines
                };
                let doing = "looking for databases left by earlier runs";
                crate::util::deadline::bounded(
                    crate::util::deadline::Deadline::Teardown,
                    doing,
                    swept,
                )
                .await
                .unwrap_or_else(|e| vec![format!("mariadb: could not sweep stale databases: {e}")])
            }
        }
    }

    async fn space_shortfalls(&mut self, plan: &DatabasePlan, fixture_rows: u64) -> Vec<Shortfall> {
        crate::util::space::shortfalls(&self.space_needs(plan, fixture_rows))
    }

    /// Starts a fork: a managed instance is stopped and removed, so the fork's first database
    /// gets a new one.
    fn new_fork(&mut self) -> Result<()> {
        match &mut self.target {
            Target::Managed { instance, .. } => match instance.take() {
                Some(old) => old.destroy(),
                None => Ok(()),
            },
            Target::External { .. } => Ok(()),
        }
    }

    /// Creates the database of `plan` (and the managed instance it needs).
    async fn create(&mut self, plan: &DatabasePlan) -> Result<MariaDbDatabase> {
        let mapping = options::map(&plan.storage)?;
        if !self.swept {
            for line in self.sweep_stale(&plan.work_dir).await {
                crate::util::console::say(&format!("dbbench › {line}"));
            }
        }
        let name = database::database_name(&plan.name);
        let declared = mapping.declared().clone();
        match &self.target {
            Target::External { server, .. } => {
                MariaDbDatabase::create(server.clone(), None, name, declared, false).await
            }
            Target::Managed { .. } => {
                let instance = self.instance_for(plan, &mapping).await?;
                MariaDbDatabase::create(
                    managed_opts(instance.socket(), instance.user()),
                    Some(instance),
                    name,
                    declared,
                    mapping.system_tablespace,
                )
                .await
            }
        }
    }
}
