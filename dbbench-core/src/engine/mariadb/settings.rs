//! The server's settings in force during a window, read back with one `SELECT @@…` when the
//! window opens: what the confounder check compares between cells and repetitions
//! (`model::setting`). Each is recorded as `mdb.<name>`; a setting a declared option maps to
//! ([`super::options::Mapping::declared`]) is marked `set_by` that option. Paths (the data
//! directory, the redo log's directory, the socket) are left out: they differ between any two
//! managed instances by construction.

use super::connection::MariaDbConnection;
use crate::model::setting::{Setting, Settings};
use std::collections::BTreeMap;

/// The prefix of every MariaDB setting's name in [`Settings`].
pub const PREFIX: &str = "mdb.";

/// The settings read back: the ones the options map to, the pinned ones, and those that change
/// what a write costs.
pub const NAMES: &[&str] = &[
    "innodb_data_file_path",
    "innodb_autoextend_increment",
    "innodb_file_per_table",
    "innodb_log_file_size",
    "innodb_log_buffer_size",
    "log_bin",
    "sync_binlog",
    "innodb_flush_log_at_trx_commit",
    "innodb_flush_method",
    "innodb_doublewrite",
    "innodb_buffer_pool_size",
    "innodb_io_capacity",
    "innodb_flush_neighbors",
    "innodb_undo_tablespaces",
    "innodb_buffer_pool_load_at_startup",
    "innodb_buffer_pool_dump_at_shutdown",
    "performance_schema",
    "version",
];

/// `SELECT @@a, @@b, …` of [`NAMES`].
fn sql() -> String {
    let list: Vec<String> = NAMES.iter().map(|n| format!("@@{n}")).collect();
    format!("SELECT {}", list.join(", "))
}

/// Every setting of [`NAMES`], each marked `set_by` the option `declared` maps it from.
pub async fn read(
    conn: &mut MariaDbConnection,
    declared: &BTreeMap<String, String>,
) -> Result<Settings, String> {
    let rows = conn.query(&sql(), &[]).await.map_err(|e| e.to_string())?;
    let row = rows.first().ok_or("SELECT @@… returned no row")?;
    let mut out = Settings::new();
    for (i, name) in NAMES.iter().enumerate() {
        let value: Option<String> = row.get(i).map_err(|e| e.to_string())?;
        let mut setting = Setting::plain(value.unwrap_or_default());
        if let Some(option) = declared.get(*name) {
            setting = setting.set_by(option);
        }
        out.insert(format!("{PREFIX}{name}"), setting);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_name_is_read_and_no_path() {
        let sql = sql();
        assert!(sql.starts_with("SELECT @@innodb_data_file_path, @@innodb_autoextend_increment"));
        assert_eq!(sql.matches("@@").count(), NAMES.len());
        assert!(!NAMES
            .iter()
            .any(|n| n.contains("dir") || n.contains("socket")));
    }
}
