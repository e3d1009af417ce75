//! A managed MariaDB instance as a conformance target: a throwaway instance per backend, removed
//! with its server when the backend is dropped. Skipped without MariaDB's programs (unless
//! `DBBENCH_REQUIRE_MARIADB=1`, which `available_for_tests` turns into a failure).

use super::{Owner, Target};
use crate::support::{listing, processes_under};
use dbbench_core::__internals::mariadb::{self, MariaDbBackend};
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
