//! A managed PostgreSQL cluster as a conformance target: a throwaway cluster per backend,
//! removed with every process of it when the backend is dropped. Skipped without the server
//! binaries (unless `DBBENCH_REQUIRE_POSTGRES=1`, which `available_for_tests` turns into a
//! failure).

use super::{Owner, Target};
use crate::support::{listing, processes_under};
use dbbench_core::__internals::postgres::{cluster, place, PostgresBackend};
use dbbench_core::__internals::{Backend, RunContext};
use dbbench_core::Connection;

/// A managed cluster of this test's own.
pub struct Managed;

impl Target for Managed {
    async fn backend(&self) -> Option<Backend> {
        if !cluster::available_for_tests() {
            return None;
        }
        Some(Backend::new(PostgresBackend::managed().unwrap()))
    }

    /// Cluster directories and server processes: under the work dir, or dbbench's directory
    /// under the temp dir when the server's user cannot reach the work dir (shared with other
    /// processes' clusters, so only this process's count).
    async fn leftovers(&self, ctx: &RunContext) -> Vec<String> {
        let (base, moved) = place::work_base(&ctx.work_dir, cluster::run_as().unwrap());
        let ours = format!("pg-{}-", std::process::id());
        let mut left: Vec<String> = listing(&base)
            .into_iter()
            .filter(|name| moved.is_none() || name.starts_with(&ours))
            .map(|name| format!("cluster directory {}", base.join(name).display()))
            .collect();
        for pid in processes_under(&ctx.work_dir)
            .into_iter()
            .chain(processes_under(&base))
        {
            left.push(format!("server process {pid}"));
        }
        left
    }

    fn placeholder(&self, n: usize) -> String {
        format!("${n}")
    }

    fn settings(&self) -> &'static [&'static str] {
        &["pg.fsync", "pg.synchronous_commit", "pg.wal_level"]
    }

    fn missing_table_error(&self) -> &'static [&'static str] {
        &["42P01", "\"no_such_table\" does not exist"]
    }

    fn runaway(&self) -> &'static str {
        "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r) SELECT count(*) FROM r"
    }

    async fn stage_foreign(&self, _: &RunContext, admin: &mut Connection, name: &str, half: bool) {
        admin
            .batch(&format!("CREATE DATABASE {name}"))
            .await
            .unwrap();
        if half {
            // Someone else's database that carries a dbbench comment: its marker table is missing.
            let sql = format!("COMMENT ON DATABASE {name} IS 'dbbench:owned pid=1'");
            admin.batch(&sql).await.unwrap();
        }
    }

    /// A managed cluster is swept as a whole when the next one starts, not database by database.
    async fn stage_owned(&self, _: &RunContext, _: &mut Connection, _: &str, _: Owner) -> bool {
        false
    }

    /// The comment the claim reads (its marker table, which dbbench made, stays).
    fn remark(&self, name: &str, pid: u32, start: Option<u64>) -> Option<String> {
        let host = std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap();
        let start = start.map_or_else(|| "unknown".to_string(), |s| s.to_string());
        Some(format!(
            "COMMENT ON DATABASE {name} IS 'dbbench:owned pid={pid} host={} start={start}'",
            host.trim()
        ))
    }

    async fn exists(&self, _: &RunContext, admin: &mut Connection, name: &str) -> bool {
        let sql = format!("SELECT count(*) FROM pg_database WHERE datname = '{name}'");
        admin.query_scalar::<i64>(&sql).await.unwrap() == 1
    }

    async fn remove(&self, _: &RunContext, admin: &mut Connection, name: &str) {
        admin.batch(&format!("DROP DATABASE {name}")).await.unwrap();
    }
}
