//! The embedded engine's settings in force at the close of a measured window, for the
//! confounder check ([`crate::model::setting`]): SQLite's pragmas as the window's connection
//! reports them (`pragma.*`) and the storage layer's parameters as its plan holds them
//! (`storage.*`).
//!
//! Each setting a storage option governs is marked `set_by` that option, declared or defaulted:
//! `pragma.wal_autocheckpoint` by `recovery`, `pragma.threads` by `maxdop`, `storage.data_growth`
//! by `growth`. A value derived from two options names both (`storage.data_file_size`:
//! `data_size,data_files`). The pragmas dbbench fixes for every database (`page_size`,
//! `journal_mode`, `synchronous`) and those it leaves at SQLite's defaults (`cache_size`,
//! `temp_store`, `mmap_size`…) are set by no option: a body or a build that changes one shows in
//! the check.

use super::storage::plan::LayoutPlan;
use crate::model::setting::{Setting, Settings};

/// A pragma read back: its name, the option that sets it (`None`: no option does) and how
/// SQLite's number reads in words, where it is an enumeration.
type Pragma = (
    &'static str,
    Option<&'static str>,
    Option<&'static [&'static str]>,
);

/// The pragmas read back.
const PRAGMAS: &[Pragma] = &[
    ("page_size", None, None),
    ("journal_mode", None, None),
    (
        "synchronous",
        None,
        Some(&["OFF", "NORMAL", "FULL", "EXTRA"]),
    ),
    ("wal_autocheckpoint", Some("recovery"), None),
    ("threads", Some("maxdop"), None),
    ("cache_size", None, None),
    // SQLite derives the spill threshold from `cache_size` unless it is set itself.
    ("cache_spill", None, None),
    ("locking_mode", None, None),
    ("temp_store", None, Some(&["DEFAULT", "FILE", "MEMORY"])),
    ("mmap_size", None, None),
    ("journal_size_limit", None, None),
    ("auto_vacuum", None, Some(&["NONE", "FULL", "INCREMENTAL"])),
    ("secure_delete", None, None),
    ("automatic_index", None, None),
    ("foreign_keys", None, None),
    ("cell_size_check", None, None),
];

/// Every pragma of [`PRAGMAS`] on `conn`, as `pragma.NAME`.
pub fn pragmas(conn: &rusqlite::Connection) -> rusqlite::Result<Settings> {
    let mut settings = Settings::new();
    for &(name, set_by, words) in PRAGMAS {
        use rusqlite::OptionalExtension;
        // A pragma SQLite does not answer here returns no row (`mmap_size` on dbbench's databases).
        let Some(value) = conn
            .query_row(&format!("PRAGMA {name}"), [], |r| {
                r.get::<_, rusqlite::types::Value>(0)
            })
            .optional()?
        else {
            continue;
        };
        let text = match value {
            rusqlite::types::Value::Integer(i) => words
                .and_then(|w| usize::try_from(i).ok().and_then(|i| w.get(i)))
                .map_or_else(|| i.to_string(), |w| w.to_string()),
            rusqlite::types::Value::Text(t) => t.to_lowercase(),
            rusqlite::types::Value::Real(r) => r.to_string(),
            rusqlite::types::Value::Null => "(null)".into(),
            rusqlite::types::Value::Blob(_) => "(blob)".into(),
        };
        let setting = Setting::plain(text).from_source("PRAGMA");
        let setting = match set_by {
            Some(option) => setting.set_by(option),
            None => setting,
        };
        settings.insert(format!("pragma.{name}"), setting);
    }
    Ok(settings)
}

/// The storage layer's parameters of `plan`, as `storage.NAME`.
pub fn storage(plan: &LayoutPlan) -> Settings {
    let layer = |value: String, option: &str| {
        Setting::plain(value)
            .from_source("storage layer")
            .set_by(option)
    };
    let volume = |v: &Option<String>| v.clone().unwrap_or_else(|| "(database directory)".into());
    let mut data_volumes: Vec<String> = plan.data.iter().map(|f| volume(&f.volume)).collect();
    data_volumes.dedup();
    [
        (
            "data_files",
            layer(plan.data.len().to_string(), "data_files"),
        ),
        (
            "data_file_size",
            layer(bytes(plan.data_file_bytes), "data_size,data_files"),
        ),
        ("data_growth", layer(plan.growth.describe(), "growth")),
        ("ifi", layer(plan.ifi.to_string(), "ifi")),
        (
            "log_initial_size",
            layer(bytes(plan.log_initial_bytes), "log_size,log_pregrow"),
        ),
        ("log_size", layer(bytes(plan.log_target_bytes), "log_size")),
        (
            "log_growth",
            layer(plan.log_growth.describe(), "log_growth"),
        ),
        ("data_volumes", layer(data_volumes.join(", "), "data_on")),
        ("log_volume", layer(volume(&plan.log.volume), "log_on")),
    ]
    .into_iter()
    .map(|(name, s)| (format!("storage.{name}"), s))
    .collect()
}

/// `8MB` for whole mebibytes, else bytes.
fn bytes(n: u64) -> String {
    dbbench_options::size::Growth::Fixed(n).describe()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::config::StorageSpec;

    #[test]
    fn pragmas_read_in_words_and_the_governed_ones_name_their_option() {
        let conn = rusqlite::Connection::open_in_memory().unwrap();
        conn.execute_batch("PRAGMA synchronous = FULL; PRAGMA temp_store = MEMORY;")
            .unwrap();
        let s = pragmas(&conn).unwrap();
        assert_eq!(s["pragma.synchronous"].value, "FULL");
        assert_eq!(s["pragma.temp_store"].value, "MEMORY");
        assert_eq!(s["pragma.journal_mode"].value, "memory");
        assert_eq!(
            s["pragma.wal_autocheckpoint"].set_by.as_deref(),
            Some("recovery")
        );
        assert_eq!(s["pragma.cache_size"].set_by, None);
        assert!(s.len() >= PRAGMAS.len() - 2, "{s:?}");
    }

    #[test]
    fn the_storage_plan_reads_back_with_its_options() {
        let dir = tempfile::tempdir().unwrap();
        let spec = StorageSpec {
            data_files: 2,
            ..StorageSpec::DEFAULT
        };
        let plan = LayoutPlan::new(
            &dir.path().join("x.db"),
            &spec,
            &crate::model::volume::Volumes::default(),
        )
        .unwrap();
        let s = storage(&plan);
        assert_eq!(s["storage.data_files"].value, "2");
        assert_eq!(s["storage.data_growth"].value, "64MB");
        assert_eq!(s["storage.data_growth"].set_by.as_deref(), Some("growth"));
        assert_eq!(s["storage.log_size"].value, "8MB");
        assert_eq!(s["storage.ifi"].value, "true");
        assert_eq!(s["storage.log_volume"].value, "(database directory)");
    }
}
