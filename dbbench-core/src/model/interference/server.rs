//! Server activity: what a database server did for sessions other than dbbench's own while one
//! measured window was open, read by the engine from the server's own statistics at the window's
//! open and close (differences), and when that makes the window's timing untrustworthy.
//!
//! The client guard ([`super::Interference`]) sees only this machine. A shared or remote server
//! can be busy with another application's work that no counter here shows: its CPU, its buffer
//! pool and its disks are then shared with the cell, which reads "slower" with no warning. So
//! each engine with a server reads, outside dbbench's own database and sessions:
//!
//! * PostgreSQL: other databases' `pg_stat_database` differences (commits, rows written, blocks
//!   read) and the client backends of other databases seen in `pg_stat_activity`;
//! * MariaDB: `performance_schema`'s row operations on other schemas' tables and its threads
//!   of other schemas;
//! * SQL Server: other sessions' CPU, reads and writes (`sys.dm_exec_sessions`) and other
//!   databases' I/O on the cell's volumes (`sys.dm_io_virtual_file_stats`).
//!
//! A managed server (dbbench's own throwaway cluster or instance) has nothing outside dbbench:
//! it is not read, and the window carries no server activity. The thresholds
//! ([`ServerThresholds::DEFAULT`]) and the measurements behind them are in `docs/busy-machine.md`.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// What the server did outside dbbench's own database and sessions during one window. Every
/// figure is a difference over the window; `None` where the server cannot give it (the reason is
/// in [`ServerActivity::unavailable`]) or where the product has no such figure.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default)]
#[serde(default)]
pub struct ServerActivity {
    /// Where the figures were read (`pg_stat_database, pg_stat_activity`).
    pub source: String,
    /// Other sessions seen working during the window (not idle at the open or the close, or
    /// started during the window).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub other_sessions: Option<u64>,
    /// Other sessions' CPU time, in seconds.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub other_cpu_s: Option<f64>,
    /// Transactions committed in other databases.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub other_transactions: Option<u64>,
    /// Rows inserted, updated or deleted in other databases.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub other_rows_written: Option<u64>,
    /// Pages (blocks) other sessions or databases read from disk (SQL Server: logical reads of
    /// other sessions, which include the buffer pool's).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub other_reads: Option<u64>,
    /// Pages other sessions wrote.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub other_writes: Option<u64>,
    /// Bytes other databases read and wrote on the cell's volumes.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub other_io_bytes: Option<u64>,
    /// Figures the server could not give, with the reason (a missing permission, a product
    /// without the view).
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub unavailable: BTreeMap<String, String>,
}

/// From which rate of another workload's activity a window counts as disturbed.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ServerThresholds {
    /// Other sessions' CPU, in cores.
    pub other_cpu_cores: f64,
    /// Other databases' commits per second.
    pub other_transactions_per_s: f64,
    /// Other databases' rows written per second.
    pub other_rows_written_per_s: f64,
    /// Pages other sessions read per second.
    pub other_reads_per_s: f64,
    /// Pages other sessions wrote per second.
    pub other_writes_per_s: f64,
    /// Other databases' bytes read and written on the cell's volumes, per second.
    pub other_io_bytes_per_s: f64,
}

impl ServerThresholds {
    /// The documented thresholds (`docs/busy-machine.md`, "A busy server").
    pub const DEFAULT: ServerThresholds = ServerThresholds {
        other_cpu_cores: 0.25,
        other_transactions_per_s: 20.0,
        other_rows_written_per_s: 50.0,
        other_reads_per_s: 1000.0,
        other_writes_per_s: 100.0,
        other_io_bytes_per_s: 1_000_000.0,
    };
}

impl ServerActivity {
    /// Why the server counts as busy over a window of `window_s` seconds, each figure past its
    /// threshold in words (`other databases committed 812 transactions (540/s, threshold
    /// 20/s)`); empty when none is.
    pub fn busy(&self, window_s: f64, limits: &ServerThresholds) -> Vec<String> {
        let mut why = Vec::new();
        if window_s <= 0.0 {
            return why;
        }
        if let Some(cpu) = self.other_cpu_s {
            let cores = cpu / window_s;
            if cores >= limits.other_cpu_cores {
                why.push(format!(
                    "other sessions used {cores:.2} cores (threshold {:.2})",
                    limits.other_cpu_cores
                ));
            }
        }
        let counts = [
            (
                self.other_transactions,
                limits.other_transactions_per_s,
                "other databases committed",
                "transactions",
            ),
            (
                self.other_rows_written,
                limits.other_rows_written_per_s,
                "other databases wrote",
                "rows",
            ),
            (
                self.other_reads,
                limits.other_reads_per_s,
                "other sessions read",
                "pages",
            ),
            (
                self.other_writes,
                limits.other_writes_per_s,
                "other sessions wrote",
                "pages",
            ),
            (
                self.other_io_bytes,
                limits.other_io_bytes_per_s,
                "other databases moved",
                "bytes on the cell's volumes",
            ),
        ];
        for (count, limit, what, unit) in counts {
            let Some(count) = count else { continue };
            let rate = count as f64 / window_s;
            if rate >= limit {
                why.push(format!(
                    "{what} {count} {unit} ({rate:.0}/s, threshold {limit:.0}/s)"
                ));
            }
        }
        why
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn another_workload_past_a_threshold_is_named_and_a_quiet_one_is_not() {
        let limits = ServerThresholds::DEFAULT;
        let quiet = ServerActivity {
            source: "pg_stat_database".into(),
            other_transactions: Some(3),
            other_rows_written: Some(0),
            other_reads: Some(12),
            other_sessions: Some(1),
            ..ServerActivity::default()
        };
        assert!(quiet.busy(2.0, &limits).is_empty());
        let writer = ServerActivity {
            other_transactions: Some(1080),
            other_rows_written: Some(1080),
            ..quiet.clone()
        };
        assert_eq!(
            writer.busy(2.0, &limits),
            [
                "other databases committed 1080 transactions (540/s, threshold 20/s)",
                "other databases wrote 1080 rows (540/s, threshold 50/s)",
            ]
        );
        let cpu = ServerActivity {
            other_cpu_s: Some(1.5),
            other_io_bytes: Some(4_000_000),
            ..ServerActivity::default()
        };
        assert_eq!(
            cpu.busy(2.0, &limits),
            [
                "other sessions used 0.75 cores (threshold 0.25)",
                "other databases moved 4000000 bytes on the cell's volumes (2000000/s, \
                 threshold 1000000/s)",
            ]
        );
    }

    #[test]
    fn figures_a_server_cannot_give_are_absent_from_the_json() {
        let none = ServerActivity {
            source: "performance_schema".into(),
            unavailable: [("all".to_string(), "performance_schema is off".to_string())].into(),
            ..ServerActivity::default()
        };
        let json = serde_json::to_string(&none).unwrap();
        assert_eq!(
            json,
            r#"{"source":"performance_schema","unavailable":{"all":"performance_schema is off"}}"#
        );
        assert_eq!(serde_json::from_str::<ServerActivity>(&json).unwrap(), none);
    }
}
