//! The PostgreSQL backend: the same benchmarks on a real server over tokio-postgres, either a
//! throwaway cluster dbbench creates from the machine's PostgreSQL binaries (the default; see
//! [`cluster`]) or the existing server named by `DBBENCH_POSTGRES` (a database per repetition;
//! its other databases and its settings are never touched).
//!
//! One database per repetition, created, marked as dbbench's ([`marker`]), loaded with COPY,
//! measured and dropped. Cluster-level options ([`options`]) decide the managed cluster: a cell
//! whose cluster options equal the running cluster's reuses it, any other gets a new cluster
//! (the old one is stopped and removed first). The cluster goes when the backend is dropped, also
//! after an error or a panic.

mod ahead;
pub mod cluster;
pub mod connection;
mod database;
pub mod effective;
mod endpoint;
mod errors;
pub mod evidence;
pub mod fixture;
mod inline;
pub mod local;
pub mod mapping;
pub mod marker;
pub mod options;
mod others;
pub mod pinned;
pub mod place;
mod plugin;
mod profile;
pub mod provision;
pub mod settings;
mod socket;
mod space;
mod stale;
mod target;
mod types;
pub mod waits;
mod wire;

pub use connection::PostgresConnection;
pub use database::PostgresDatabase;
pub use plugin::REGISTRATION;
pub use profile::PROFILE;
pub use settings::{LibpqTarget, PgSettings};

use super::plugin::EngineBackend;
use super::profile::Profile;
use crate::model::config::StorageSpec;
use crate::model::error::{Error, Result};
use crate::model::evidence::BackendInfo;
#[cfg(test)]
use crate::model::load::ErrorKind;
use crate::model::plan::DatabasePlan;
use crate::util::space::Shortfall;
use cluster::{Binaries, Cluster, ClusterSpec, RunAs};
use options::{Mapping, Mode};
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

/// Where the server is.
enum Target {
    /// A cluster dbbench runs itself.
    Managed {
        binaries: Binaries,
        run_as: Option<RunAs>,
        cluster: Option<Arc<Cluster>>,
        started: u32,
        swept: bool,
    },
    /// The server of `DBBENCH_POSTGRES`.
    External {
        settings: Box<PgSettings>,
        version: String,
        preconditions: BTreeMap<String, String>,
        /// The server's processes, when it runs on this machine ([`local`]).
        server_on_host: Option<crate::model::interference::ServerOnHost>,
    },
}

/// The PostgreSQL backend.
pub struct PostgresBackend {
    target: Target,
}

impl std::fmt::Debug for PostgresBackend {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.target {
            Target::Managed {
                binaries, cluster, ..
            } => f
                .debug_struct("PostgresBackend::Managed")
                .field("bindir", &binaries.dir)
                .field("cluster", cluster)
                .finish(),
            Target::External { settings, .. } => f
                .debug_struct("PostgresBackend::External")
                .field("server", settings)
                .finish(),
        }
    }
}

impl PostgresBackend {
    /// The server of `DBBENCH_POSTGRES`, or a managed cluster when it is unset.
    pub async fn from_env() -> Result<PostgresBackend> {
        match PgSettings::from_env()? {
            Some(settings) => PostgresBackend::external(settings).await,
            None => PostgresBackend::managed(),
        }
    }

    /// Whether its files are on this machine: a managed cluster's are (under the work dir and
    /// the bound volumes), an existing server's are not.
    pub fn is_local(&self) -> bool {
        matches!(self.target, Target::Managed { .. })
    }

    /// A backend that runs its own clusters from the machine's binaries; none is started yet.
    pub fn managed() -> Result<PostgresBackend> {
        Ok(PostgresBackend {
            target: Target::Managed {
                binaries: Binaries::find()?,
                run_as: cluster::run_as()?,
                cluster: None,
                started: 0,
                swept: false,
            },
        })
    }

    /// A backend on an existing server: connects once to read its version and settings.
    pub async fn external(settings: PgSettings) -> Result<PostgresBackend> {
        let admin_db = admin_db(&settings);
        let mut conn = settings.connect(&admin_db).await?;
        let row = conn
            .query(
                "SELECT version(), current_setting('server_version_num')::bigint, \
                 current_setting('wal_level'), current_setting('fsync'), \
                 current_setting('synchronous_commit'), current_setting('shared_buffers'), \
                 current_setting('is_superuser'), current_setting('wal_segment_size')",
                &[],
            )
            .await?
            .into_iter()
            .next()
            .ok_or_else(|| Error::msg("the server returned no version"))?;
        let mut preconditions = BTreeMap::new();
        for (i, name) in [
            (2, "wal_level"),
            (3, "fsync"),
            (4, "synchronous_commit"),
            (5, "shared_buffers"),
            (6, "superuser"),
            (7, "wal_segment_size"),
        ] {
            preconditions.insert(name.to_string(), row.get::<String>(i)?);
        }
        preconditions.insert("mode".into(), "existing server (DBBENCH_POSTGRES)".into());
        preconditions.insert("server".into(), settings.describe().to_string());
        let server_on_host = local::server_on_host(&mut conn).await;
        Ok(PostgresBackend {
            target: Target::External {
                version: row.get(0)?,
                settings: Box::new(settings),
                preconditions,
                server_on_host,
            },
        })
    }

    fn mode(&self) -> Mode {
        match self.target {
            Target::Managed { .. } => Mode::Managed,
            Target::External { .. } => Mode::External,
        }
    }
}

impl EngineBackend for PostgresBackend {
    type Database = PostgresDatabase;

    fn profile(&self) -> &'static Profile {
        &PROFILE
    }

    /// An existing server's processes on this machine, if it runs here (a managed cluster's
    /// are dbbench's own).
    fn server_on_host(&self) -> Option<&crate::model::interference::ServerOnHost> {
        match &self.target {
            Target::External { server_on_host, .. } => server_on_host.as_ref(),
            Target::Managed { .. } => None,
        }
    }

    /// Version and every precondition the results depend on.
    fn info(&self) -> BackendInfo {
        match &self.target {
            Target::Managed {
                binaries, run_as, ..
            } => {
                let mut p = BTreeMap::new();
                let mut put = |k: &str, v: String| {
                    p.insert(k.to_string(), v);
                };
                put(
                    "mode",
                    "managed cluster: initdb per cluster-level configuration, private Unix socket, \
                     removed afterwards"
                        .into(),
                );
                put("bindir", binaries.dir.display().to_string());
                put(
                    "server_user",
                    match run_as {
                        Some(who) => {
                            format!("postgres (uid {}), since dbbench runs as root", who.uid)
                        }
                        None => "the current user".into(),
                    },
                );
                put(
                    "settings",
                    "initdb defaults (fsync on, synchronous_commit on, shared_buffers 128MB) plus \
                     track_io_timing and track_wal_io_timing on, pinned wal_buffers 4MB, \
                     autovacuum off and jit off (docs/postgres.md, Pinned settings), and each \
                     cell's options"
                        .into(),
                );
                put(
                    "wait_sampling",
                    format!("pg_stat_activity every {} ms", waits::INTERVAL.as_millis()),
                );
                BackendInfo {
                    kind: "postgres".into(),
                    version: binaries.version.clone(),
                    preconditions: p,
                    ..BackendInfo::default()
                }
            }
            Target::External {
                version,
                preconditions,
                ..
            } => BackendInfo {
                kind: "postgres".into(),
                version: version.clone(),
                preconditions: preconditions.clone(),
                ..BackendInfo::default()
            },
        }
    }

    /// Refuses options PostgreSQL cannot honour before anything is created.
    fn check(&self, storage: &StorageSpec) -> Result<()> {
        options::check(storage, self.mode())
    }

    fn floor_storage(&self, storage: &StorageSpec) -> StorageSpec {
        options::floor(storage)
    }

    fn files_are_local(&self) -> bool {
        self.is_local()
    }

    /// On an existing server, drops the marked databases whose owner is gone (bounded by the
    /// teardown's deadline: a server that does not answer gets a line, not a hang).
    /// (A managed cluster's leftovers are swept when a cluster starts.)
    async fn sweep_stale(&mut self, _work_dir: &std::path::Path) -> Vec<String> {
        let Target::External { settings, .. } = &self.target else {
            return Vec::new();
        };
        let settings = (**settings).clone();
        let admin = admin_db(&settings);
        let doing = "looking for databases left by earlier runs";
        let sweep = async { Ok(stale::sweep(&settings, &admin).await) };
        match crate::util::deadline::bounded(
            crate::util::deadline::Deadline::Teardown,
            doing,
            sweep,
        )
        .await
        {
            Ok(lines) => lines,
            Err(e) => vec![format!("postgres: {e}")],
        }
    }

    async fn space_shortfalls(&mut self, plan: &DatabasePlan, fixture_rows: u64) -> Vec<Shortfall> {
        crate::util::space::shortfalls(&self.space_needs(plan, fixture_rows))
    }

    /// Starts a fork: a managed cluster is stopped and removed, so the fork's first database
    /// gets a new one (its own directory, WAL and shared buffers); an existing server is left as
    /// it is (a database per repetition is all dbbench makes there).
    fn new_fork(&mut self) -> Result<()> {
        if let Target::Managed { cluster, .. } = &mut self.target {
            if let Some(old) = cluster.take() {
                old.destroy()?;
            }
        }
        Ok(())
    }

    /// Creates the database of `plan` (and, on a managed cluster, the cluster it needs).
    async fn create(&mut self, plan: &DatabasePlan) -> Result<PostgresDatabase> {
        let mapping = options::map(&plan.storage, self.mode())?;
        let name = provision::database_name(&plan.name);
        let (settings, cluster, admin_db) = match &mut self.target {
            Target::Managed {
                binaries,
                run_as,
                cluster,
                started,
                swept,
            } => {
                let spec = cluster_spec(plan, &mapping, *run_as)?;
                if !*swept {
                    cluster::sweep_stale(&spec.work_base, cluster::workers(*run_as));
                    *swept = true;
                }
                let reusable = cluster
                    .as_ref()
                    .is_some_and(|c| c.spec() == &spec && c.exited().is_none());
                if !reusable {
                    if let Some(old) = cluster.take() {
                        tokio::task::spawn_blocking(move || old.destroy())
                            .await
                            .map_err(|e| {
                                Error::msg(format!("stopping the previous cluster: {e}"))
                            })??;
                    }
                    *started += 1;
                    let id = format!("pg-{}-{}", std::process::id(), started);
                    let binaries = binaries.clone();
                    let made =
                        tokio::task::spawn_blocking(move || Cluster::start(&binaries, spec, id))
                            .await
                            .map_err(|e| Error::msg(format!("starting the cluster: {e}")))??;
                    *cluster = Some(Arc::new(made));
                }
                let running = cluster.clone().expect("a cluster was just made");
                (running.settings(), Some(running), "postgres".to_string())
            }
            Target::External { settings, .. } => ((**settings).clone(), None, admin_db(settings)),
        };
        let gone = |e: Error| match cluster.as_ref().and_then(|c| c.exited()) {
            Some(why) => Error::msg(format!("{e}; the managed PostgreSQL server is gone: {why}")),
            None => e,
        };
        let mut admin = settings.connect(&admin_db).await.map_err(gone)?;
        let version_num: i64 = admin
            .query("SELECT current_setting('server_version_num')::bigint", &[])
            .await?
            .first()
            .ok_or_else(|| Error::msg("no server_version_num"))?
            .get(0)?;
        provision::create_database(&settings, &mut admin, &name, &mapping).await?;
        let mut counts = BTreeMap::new();
        if let Some(pregrow) = mapping.pregrow {
            let made = async {
                let mut conn = settings.connect(&name).await?;
                provision::pregrow(&mut conn, pregrow).await
            }
            .await;
            match made {
                Ok(segments) => {
                    counts.insert("pg_pregrow_segments".to_string(), segments as i64);
                }
                Err(e) => {
                    let _ = marker::drop_owned(&settings, &mut admin, &name).await;
                    return Err(e);
                }
            }
        }
        let reset_ahead = cluster.is_some() && mapping.pregrow.is_none();
        Ok(PostgresDatabase {
            name,
            settings,
            admin_db,
            cluster,
            version_num,
            window: Mutex::new(None),
            counts,
            declared: mapping.declared_by_setting(),
            reset_ahead,
            cancel: crate::util::cancel::Cancel::new(),
        })
    }
}

impl PostgresBackend {
    /// The managed cluster that runs now, if any.
    pub fn cluster(&self) -> Option<&Arc<Cluster>> {
        match &self.target {
            Target::Managed { cluster, .. } => cluster.as_ref(),
            Target::External { .. } => None,
        }
    }

    /// What a cell on a managed cluster puts on each volume before its body runs (the `space`
    /// module); nothing for an existing server, whose disks are the server's, or for a plan that
    /// cannot be mapped (the cell is skipped for that before this is asked).
    pub fn space_needs(
        &self,
        plan: &DatabasePlan,
        fixture_rows: u64,
    ) -> Vec<crate::util::space::Need> {
        if !self.is_local() {
            return Vec::new();
        }
        let Target::Managed { run_as, .. } = &self.target else {
            return Vec::new();
        };
        let Ok(mapping) = options::map(&plan.storage, Mode::Managed) else {
            return Vec::new();
        };
        // The file systems the cluster will really use, also where it moves to the temp dir.
        match place::place(&plan.work_dir, &plan.volumes, &mapping, *run_as) {
            Ok(placed) => space::needs(plan, &mapping, fixture_rows, &placed),
            Err(_) => Vec::new(),
        }
    }
}

/// The database an existing server's connection string names, else `postgres`.
fn admin_db(settings: &PgSettings) -> String {
    settings.admin_db().unwrap_or("postgres").to_string()
}

/// The managed cluster a plan needs: its directories and cluster-level settings.
fn cluster_spec(
    plan: &DatabasePlan,
    mapping: &Mapping,
    run_as: Option<RunAs>,
) -> Result<ClusterSpec> {
    let placed = place::place(&plan.work_dir, &plan.volumes, mapping, run_as)?;
    placed.prepare()?;
    Ok(ClusterSpec {
        work_base: placed.work_base,
        data_base: placed.data_base,
        wal_base: placed.wal_base,
        wal_segsize_mb: mapping.wal_segsize_mb,
        settings: mapping.server.clone(),
    })
}

#[cfg(test)]
mod profile_tests;
