//! MariaDB as conformance targets: a managed instance ([`Managed`], a throwaway instance per
//! backend, removed with its server when the backend is dropped), and an existing server
//! ([`Existing`]). Skipped without MariaDB's programs (unless
//! `DBBENCH_REQUIRE_MARIADB=1`, which `available_for_tests` turns into a failure).

use super::{Owner, Target};
use crate::support::{listing, processes_under};
use dbbench_core::__internals::mariadb::{self, MariaDbBackend, MariaDbConnection};
use dbbench_core::__internals::{Backend, RunContext};
use dbbench_core::Connection;

/// A managed instance of this test's own.
pub struct Managed;

impl Target for Managed {
    async fn backend(&self) -> Option<Backend> {
        if !mariadb::available_for_tests() {
            return None;
        }
        Some(Backend::new(MariaDbBackend::managed().unwrap()))
    }

    /// Instance directories and server processes under the work dir.
    async fn leftovers(&self, ctx: &RunContext) -> Vec<String> {
        let base = MariaDbBackend::work_base(&ctx.work_dir);
        let mut left: Vec<String> = listing(&base)
            .into_iter()
            .map(|name| format!("instance directory {}", base.join(name).display()))
            .collect();
        for pid in processes_under(&ctx.work_dir) {
            left.push(format!("server process {pid}"));
        }
        left
    }

    fn placeholder(&self, _: usize) -> String {
        "?".into()
    }

    /// MariaDB's `char` holds at most 255 characters: a `varchar` filled by an expression.
    fn payload_column(&self) -> &'static str {
        "payload varchar(4100) NOT NULL DEFAULT (repeat('a', 4100))"
    }

    /// Durability (the redo log's flush, the binary log and its sync) and the redo log's size.
    fn settings(&self) -> &'static [&'static str] {
        &[
            "mdb.innodb_flush_log_at_trx_commit",
            "mdb.log_bin",
            "mdb.sync_binlog",
            "mdb.innodb_log_file_size",
            "mdb.innodb_doublewrite",
        ]
    }

    fn missing_table_error(&self) -> &'static [&'static str] {
        &["MariaDB error 1146", "no_such_table' doesn't exist"]
    }

    /// Runs until stopped, on the CPU only: a recursive CTE would fill a temporary table.
    fn runaway(&self) -> &'static str {
        "SELECT BENCHMARK(9000000000000000000, CRC32('dbbench'))"
    }

    async fn stage_foreign(&self, _: &RunContext, admin: &mut Connection, name: &str, half: bool) {
        // Someone else's database; half: a comment that names dbbench but no owner.
        let comment = if half { " COMMENT 'dbbench:owned'" } else { "" };
        admin
            .batch(&format!("CREATE DATABASE `{name}`{comment}"))
            .await
            .unwrap();
    }

    /// A managed instance is swept as a whole when the next one starts, not database by database.
    async fn stage_owned(&self, _: &RunContext, _: &mut Connection, _: &str, _: Owner) -> bool {
        false
    }

    /// The database's comment, which the claim reads.
    fn remark(&self, name: &str, pid: u32, start: Option<u64>) -> Option<String> {
        let host = std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap();
        let start = start.map_or_else(String::new, |s| format!(" owner_start={s}"));
        Some(format!(
            "ALTER DATABASE `{name}` COMMENT 'dbbench:owned owner_host={} owner_pid={pid}{start}'",
            host.trim()
        ))
    }

    async fn exists(&self, _: &RunContext, admin: &mut Connection, name: &str) -> bool {
        let sql = format!(
            "SELECT count(*) FROM information_schema.SCHEMATA WHERE SCHEMA_NAME = '{name}'"
        );
        admin.query_scalar::<i64>(&sql).await.unwrap() == 1
    }

    async fn remove(&self, _: &RunContext, admin: &mut Connection, name: &str) {
        admin
            .batch(&format!("DROP DATABASE `{name}`"))
            .await
            .unwrap();
    }
}

/// An existing server (`DBBENCH_MARIADB`) as a conformance target: a MariaDB instance this
/// target starts for the test, outside the work dir, that the backend reaches by its socket as
/// any server it did not make. Its databases are swept one by one by their owner.
#[derive(Default)]
pub struct Existing {
    server: std::sync::Mutex<Option<mariadb::instance::Instance>>,
}

/// The instances the existing-server tests of this process started, for their folders' names.
static STARTED: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);

impl Existing {
    /// The socket of the target's server, started on first use.
    pub fn socket(&self) -> String {
        let mut server = self.server.lock().unwrap();
        let instance = server.get_or_insert_with(|| {
            let n = STARTED.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            let id = format!("mdbx-{}-{n}", std::process::id());
            let spec = mariadb::instance::InstanceSpec {
                work_base: std::env::temp_dir().join(format!("dbbench-{id}")),
                redo_base: None,
                settings: Vec::new(),
            };
            let binaries = mariadb::binaries::Binaries::find().unwrap();
            mariadb::instance::Instance::start(&binaries, spec, id).unwrap()
        });
        instance.socket().display().to_string()
    }

    /// The server's process id (it is started on first use).
    #[allow(dead_code)] // Used by the existing-server test file only.
    pub fn server_pid(&self) -> u32 {
        self.socket();
        let server = self.server.lock().unwrap();
        server.as_ref().and_then(|i| i.pid()).unwrap()
    }

    /// A connection to the server, in no database.
    pub async fn admin(&self) -> MariaDbConnection {
        let opts = mariadb::external::opts(&self.socket()).unwrap();
        MariaDbConnection::connect(&opts, None).await.unwrap()
    }
}

impl Drop for Existing {
    fn drop(&mut self) {
        let instance = self.server.get_mut().unwrap().take();
        if let Some(instance) = instance {
            let base = instance.spec().work_base.clone();
            drop(instance);
            let _ = std::fs::remove_dir(base);
        }
    }
}

/// A PID that was just in use and is not any more.
fn dead_pid() -> u32 {
    let mut child = std::process::Command::new("true").spawn().unwrap();
    let pid = child.id();
    child.wait().unwrap();
    pid
}

impl Target for Existing {
    async fn backend(&self) -> Option<Backend> {
        if !mariadb::available_for_tests() {
            return None;
        }
        let backend = MariaDbBackend::existing(&self.socket()).await.unwrap();
        Some(Backend::new(backend))
    }

    /// dbbench's databases on the server (the server is this test's own, so any is a leftover).
    async fn leftovers(&self, _: &RunContext) -> Vec<String> {
        let mut admin = self.admin().await;
        let rows = admin
            .query(
                "SELECT SCHEMA_NAME FROM information_schema.SCHEMATA \
                 WHERE SCHEMA_NAME LIKE 'dbbench\\_%'",
                &[],
            )
            .await
            .unwrap();
        rows.iter()
            .map(|r| format!("database {}", r.get::<String>(0).unwrap()))
            .collect()
    }

    fn placeholder(&self, n: usize) -> String {
        Managed.placeholder(n)
    }

    fn payload_column(&self) -> &'static str {
        Managed.payload_column()
    }

    fn settings(&self) -> &'static [&'static str] {
        Managed.settings()
    }

    fn missing_table_error(&self) -> &'static [&'static str] {
        Managed.missing_table_error()
    }

    fn runaway(&self) -> &'static str {
        Managed.runaway()
    }

    async fn stage_foreign(
        &self,
        ctx: &RunContext,
        admin: &mut Connection,
        name: &str,
        half: bool,
    ) {
        Managed.stage_foreign(ctx, admin, name, half).await;
    }

    /// A database with dbbench's comment naming `owner`, as a run of it leaves one.
    async fn stage_owned(
        &self,
        _: &RunContext,
        admin: &mut Connection,
        name: &str,
        owner: Owner,
    ) -> bool {
        let me = std::process::id();
        let (pid, start) = match owner {
            Owner::Gone => (dead_pid(), 1),
            Owner::Reused => (me, crate::support::my_start() + 1),
            Owner::Me => (me, crate::support::my_start()),
        };
        let host = std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap();
        let comment = format!(
            "dbbench:owned owner_host={} owner_pid={pid} owner_start={start}",
            host.trim()
        );
        admin
            .batch(&format!("CREATE DATABASE `{name}` COMMENT '{comment}'"))
            .await
            .unwrap();
        true
    }

    fn remark(&self, name: &str, pid: u32, start: Option<u64>) -> Option<String> {
        Managed.remark(name, pid, start)
    }

    async fn exists(&self, ctx: &RunContext, admin: &mut Connection, name: &str) -> bool {
        Managed.exists(ctx, admin, name).await
    }

    async fn remove(&self, ctx: &RunContext, admin: &mut Connection, name: &str) {
        Managed.remove(ctx, admin, name).await;
    }
}
