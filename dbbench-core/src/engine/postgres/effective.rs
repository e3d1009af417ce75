//! The server's settings in force during a window, read back from `pg_settings` when the window
//! opens and when it closes: what the confounder check compares between cells and between
//! repetitions (`model::setting`).
//!
//! Every setting the session can see is recorded as `pg.<name>`, its value as `SHOW` gives it
//! (units included: `4MB`, `1GB`) and its `source` (`default`, `configuration file`, `database`).
//! A setting a declared option maps to ([`super::options::Mapping::declared`]) is marked
//! `set_by` that option: it is the declared difference, not a confounder. Settings that only
//! say where a cluster lives are left out ([`EXCLUDED`]), so that two cells never differ by a
//! path. A setting is recorded with its value when the window opened (the state the window
//! started from); one whose value changed while the window was open gets a second entry,
//! `pg.<name>@close`, with its value at the close. That entry exists only in the repetition where
//! the change happened, so the check between repetitions and the one against the baseline list
//! it, and the change shows in the next window's value.

use super::connection::PostgresConnection;
use crate::model::setting::{Setting, Settings};
use std::collections::BTreeMap;

/// Settings left out, with why: each names a place (a path, a port, a process id file) that
/// differs between any two managed clusters by construction and changes nothing measured.
pub const EXCLUDED: &[(&str, &str)] = &[
    ("data_directory", "the cluster's directory"),
    ("config_file", "a path under the data directory"),
    ("hba_file", "a path under the data directory"),
    ("ident_file", "a path under the data directory"),
    ("external_pid_file", "a path"),
    ("port", "a free port picked for each managed cluster"),
    (
        "unix_socket_directories",
        "the cluster's private socket directory",
    ),
    (
        "listen_addresses",
        "where clients connect, not how the server writes",
    ),
    ("log_directory", "a path"),
    ("log_filename", "a file name pattern"),
    ("ssl_cert_file", "a path"),
    ("ssl_key_file", "a path"),
    ("ssl_ca_file", "a path"),
    ("ssl_crl_file", "a path"),
    ("ssl_crl_dir", "a path"),
    ("krb_server_keyfile", "a path"),
    ("stats_temp_directory", "a path (before PostgreSQL 15)"),
    ("application_name", "the client's name for its connection"),
];

/// The prefix of every PostgreSQL setting's name in [`Settings`].
pub const PREFIX: &str = "pg.";

/// The suffix of the entry that keeps a setting's value at the window's close when it changed.
pub const AT_CLOSE: &str = "@close";

const SQL: &str = "SELECT name, current_setting(name, true), source FROM pg_settings ORDER BY name";

/// Every visible setting but the excluded ones, by prefixed name, each marked `set_by` the option
/// `declared` maps it from.
pub async fn read(
    conn: &mut PostgresConnection,
    declared: &BTreeMap<String, String>,
) -> Result<Settings, String> {
    let rows = conn.query(SQL, &[]).await.map_err(|e| e.to_string())?;
    let mut out = Settings::new();
    for row in rows {
        let name: String = row.get(0).map_err(|e| e.to_string())?;
        let value: Option<String> = row.get(1).map_err(|e| e.to_string())?;
        let source: Option<String> = row.get(2).map_err(|e| e.to_string())?;
        if let Some((name, setting)) = entry(&name, value, source, declared) {
            out.insert(name, setting);
        }
    }
    Ok(out)
}

/// One row of `pg_settings` as an entry, or `None` for an excluded or unreadable setting.
fn entry(
    name: &str,
    value: Option<String>,
    source: Option<String>,
    declared: &BTreeMap<String, String>,
) -> Option<(String, Setting)> {
    if EXCLUDED.iter().any(|(n, _)| *n == name) {
        return None;
    }
    let mut setting = Setting::plain(value?);
    if let Some(source) = source {
        setting = setting.from_source(source);
    }
    if let Some(option) = declared.get(name) {
        setting = setting.set_by(option);
    }
    Some((format!("{PREFIX}{name}"), setting))
}

/// The window's settings: the values at the open, and `…@close` beside each one whose value at
/// the close was different (a setting that appeared only at the close gets just that entry).
pub fn merge(mut open: Settings, close: Settings) -> Settings {
    for (name, at_close) in close {
        let changed = open.get(&name).is_none_or(|o| o.value != at_close.value);
        if changed {
            open.insert(format!("{name}{AT_CLOSE}"), at_close);
        }
    }
    open
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_are_left_out_and_declared_settings_are_marked() {
        let declared = BTreeMap::from([("max_wal_size".to_string(), "log_size".to_string())]);
        let row = |name: &str, value: &str| {
            entry(
                name,
                Some(value.into()),
                Some("configuration file".into()),
                &declared,
            )
        };
        assert_eq!(row("data_directory", "/tmp/x/data"), None);
        assert_eq!(row("port", "54321"), None);
        let (name, max) = row("max_wal_size", "1GB").unwrap();
        assert_eq!(name, "pg.max_wal_size");
        assert_eq!(max.set_by.as_deref(), Some("log_size"));
        let (_, buffers) = row("wal_buffers", "4MB").unwrap();
        assert_eq!(
            buffers,
            Setting::plain("4MB").from_source("configuration file")
        );
        // A setting the session may not read (NULL) is not made up.
        assert_eq!(entry("x", None, None, &declared), None);
    }

    #[test]
    fn a_value_changed_inside_the_window_keeps_both() {
        let map = |pairs: &[(&str, &str)]| -> Settings {
            pairs
                .iter()
                .map(|(n, v)| (n.to_string(), Setting::plain(*v)))
                .collect()
        };
        let open = map(&[("pg.commit_delay", "0"), ("pg.jit", "off")]);
        let close = map(&[("pg.commit_delay", "10"), ("pg.jit", "off")]);
        let merged = merge(open, close);
        assert_eq!(merged["pg.commit_delay"].value, "0");
        assert_eq!(merged["pg.commit_delay@close"].value, "10");
        assert!(!merged.contains_key("pg.jit@close"), "{merged:?}");
    }
}
