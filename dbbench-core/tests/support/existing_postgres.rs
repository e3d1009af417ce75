//! An existing PostgreSQL server for the tests that reach one the way `DBBENCH_POSTGRES` does: a
//! cluster the test starts, of which dbbench sees only a connection string, removed with its
//! processes when dropped (also when an assertion fails).

use dbbench_core::__internals::postgres::cluster::{self, Binaries, Cluster, ClusterSpec};
use dbbench_core::__internals::postgres::place;
use std::path::Path;

/// The server; `cluster` for what a test reads of its files.
pub struct ExistingPostgres {
    pub cluster: Cluster,
}

impl Drop for ExistingPostgres {
    fn drop(&mut self) {
        let _ = self.cluster.destroy();
    }
}

impl ExistingPostgres {
    /// Starts a cluster `<name>-<pid>` under `base`, or under dbbench's directory in the temp
    /// dir when the server's user cannot reach `base` (as the backend does), with `settings`
    /// appended to its `postgresql.conf` (later lines win).
    pub fn start(base: &Path, name: &str, settings: Vec<(String, String)>) -> ExistingPostgres {
        let binaries = Binaries::find().unwrap();
        let (work_base, _) = place::work_base(base, cluster::run_as().unwrap());
        std::fs::create_dir_all(&work_base).unwrap();
        let spec = ClusterSpec {
            work_base,
            data_base: None,
            wal_base: None,
            wal_segsize_mb: None,
            settings,
        };
        let cluster = Cluster::start(&binaries, spec, format!("{name}-{}", std::process::id()))
            .expect("the existing server starts");
        ExistingPostgres { cluster }
    }

    /// The server's port.
    pub fn port(&self) -> u16 {
        self.cluster.settings().target("postgres").port
    }

    /// The superuser's connection string, over the socket directory (trust).
    pub fn admin(&self) -> String {
        let t = self.cluster.settings().target("postgres");
        format!(
            "host={} port={} user={} dbname=postgres",
            t.host, t.port, t.user
        )
    }
}
