//! The engine's settings in force during a measured window, as the engine itself reports them:
//! what the confounder check compares between cells and between repetitions of one cell.
//!
//! A cell is meant to differ from its baseline only in what it declares. Engines derive settings
//! of their own from declared ones (PostgreSQL sizes `wal_buffers` from `shared_buffers`), inherit
//! them (a SQL Server database takes `model`'s options), or have them changed behind dbbench's
//! back (a DBA's `sp_configure` last week). Reading them back for every window is how a
//! difference that no declaration explains becomes visible.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// One setting's value in a window.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct Setting {
    /// The value as the engine shows it, units included (`4MB`, `on`, `FULL`).
    pub value: String,
    /// Where the engine says the value comes from (`pg_settings.source`: `default`,
    /// `configuration file`; `sys.configurations`; `dbbench`), when it says.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
    /// The declared option dbbench set this setting from (`log_size`, `recovery`), when it did:
    /// a difference in such a setting is the declared difference, not a confounder, when that
    /// option's declared value differs too. A value derived from several options names them
    /// separated by commas (`data_size,data_files`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub set_by: Option<String>,
}

impl Setting {
    /// A value with no source and not set from a declared option.
    pub fn plain(value: impl Into<String>) -> Setting {
        Setting {
            value: value.into(),
            source: None,
            set_by: None,
        }
    }

    /// The same value, marked as set from the declared option `option`.
    pub fn set_by(mut self, option: &str) -> Setting {
        self.set_by = Some(option.to_string());
        self
    }

    /// The same value, with where the engine says it comes from.
    pub fn from_source(mut self, source: impl Into<String>) -> Setting {
        self.source = Some(source.into());
        self
    }
}

/// Settings by name (`wal_buffers`, `server.max degree of parallelism`, `pragma.synchronous`).
/// Names carry a scope prefix where an engine has several scopes, so that one name means one
/// thing.
pub type Settings = BTreeMap<String, Setting>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_plain_setting_serialises_as_its_value_alone() {
        let json = serde_json::to_string(&Setting::plain("4MB")).unwrap();
        assert_eq!(json, r#"{"value":"4MB"}"#);
        let set = Setting::plain("1GB")
            .set_by("log_size")
            .from_source("dbbench");
        let back: Setting = serde_json::from_str(&serde_json::to_string(&set).unwrap()).unwrap();
        assert_eq!(back, set);
    }
}
