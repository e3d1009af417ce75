//! SQL Server's minimum file sizes, and raising a cell's scaled sizes to them.
//!
//! `CREATE DATABASE` fails with error 1803 when the primary data file is smaller than the primary
//! file of the server's `model` database (8 MB by default since SQL Server 2016, larger where a
//! DBA grew `model`), and no file may be smaller than 512 KB (the log included). Scaled-down
//! cells fall below both: at `smoke` a VLF cell's data file is 2 MB and the population log 64 KB.
//! The `model` size is read from the server at start-up; the floors then apply to every cell
//! before its effective sizes are recorded and its database is created, so the results show the
//! sizes that really ran, while the cell's `config` keeps the declared ones.
//!
//! Every data file is raised, not only the primary: files are declared equal so that
//! proportional fill spreads writes evenly, and an 8 MB primary beside 640 KB secondaries would
//! send nearly every write to the primary, which is a different layout from the one declared.

use crate::model::config::{Size, StorageSpec};
use crate::model::units::{EXTENT, PAGE};

const KIB: u64 = 1024;
use crate::model::value::Row;

/// Size in pages of `model`'s primary data file.
pub const MODEL_SIZE_SQL: &str = "SELECT CAST(size AS bigint) AS pages \
     FROM sys.master_files WHERE database_id = 3 AND file_id = 1;";

/// The smallest file SQL Server creates (data or log): 512 KB.
pub const FILE_MIN: u64 = 512 * KIB;

/// `model`'s primary file size on SQL Server 2016 and later, used only when the server does not
/// say (and the results say so).
pub const MODEL_DEFAULT: u64 = 8 * 1024 * KIB;

/// The floors of one server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Floors {
    /// The smallest primary data file: `model`'s primary file, in whole extents.
    pub primary_data: u64,
    /// The smallest secondary data file.
    pub secondary_data: u64,
    /// The smallest log file.
    pub log: u64,
    /// Where `primary_data` came from.
    pub source: String,
}

impl Floors {
    /// The floors from the result of [`MODEL_SIZE_SQL`]; `model`'s size unreadable (no row, as on
    /// servers that return an empty `sys.master_files`, or an error) falls back to 8 MB.
    pub fn from_model(result: std::result::Result<&[Row], String>) -> Floors {
        let pages = match result {
            Ok(rows) => match rows.first().map(|r| r.get::<i64>(0)) {
                Some(Ok(p)) if p > 0 => Ok(p as u64),
                Some(Ok(p)) => Err(format!("sys.master_files reports {p} pages for model")),
                Some(Err(e)) => Err(e.to_string()),
                None => Err("sys.master_files has no row for model".to_string()),
            },
            Err(e) => Err(e),
        };
        let (primary_data, source) = match pages {
            Ok(p) => (p * PAGE, format!("model database, {p} pages")),
            Err(why) => (
                MODEL_DEFAULT,
                format!("model's size unreadable ({why}); assumed 8 MB, the default since 2016"),
            ),
        };
        Floors {
            primary_data: primary_data.div_ceil(EXTENT) * EXTENT,
            secondary_data: FILE_MIN,
            log: FILE_MIN,
            source,
        }
    }

    /// Whether `model`'s size was read from the server (else 8 MB is assumed).
    pub fn model_read(&self) -> bool {
        self.source.starts_with("model database")
    }

    /// The precondition line recorded in the results.
    pub fn describe(&self) -> String {
        format!(
            "primary data file ≥ {} ({}), secondary data files ≥ {}, log ≥ {}; smaller declared \
             sizes are raised, every data file to the primary's floor so the files stay equal",
            human(self.primary_data),
            self.source,
            human(self.secondary_data),
            human(self.log)
        )
    }

    /// `spec` with every size below a floor raised to it. Idempotent: applying it to its own
    /// output changes nothing.
    pub fn apply(&self, spec: &StorageSpec) -> StorageSpec {
        let files = u64::from(spec.data_files.max(1));
        let per_file_floor = self.primary_data.max(self.secondary_data);
        let data_size = spec.data_size.map(|s| {
            let per_file = (s.bytes / files).div_ceil(EXTENT).max(1) * EXTENT;
            if per_file < per_file_floor {
                Size::new(per_file_floor * files, s.text)
            } else {
                s
            }
        });
        let at_least = |s: Option<Size>, floor: u64| {
            s.map(|s| {
                if s.bytes < floor {
                    Size::new(floor, s.text)
                } else {
                    s
                }
            })
        };
        StorageSpec {
            data_size,
            log_size: at_least(spec.log_size, self.log),
            // The log is created at one pre-growth step, so a step is a log size too.
            log_pregrow: at_least(spec.log_pregrow, self.log),
            tempdb_size: at_least(spec.tempdb_size, self.secondary_data),
            ..*spec
        }
    }

    /// What [`apply`](Self::apply) raised in `spec`, one phrase per size.
    pub fn raised(&self, spec: &StorageSpec) -> Vec<String> {
        let floored = self.apply(spec);
        let mut out = Vec::new();
        let mut compare = |what: &str, before: Option<Size>, after: Option<Size>| {
            if let (Some(b), Some(a)) = (before, after) {
                if a.bytes != b.bytes {
                    out.push(format!(
                        "{what} {} raised to {}",
                        human(b.bytes),
                        human(a.bytes)
                    ));
                }
            }
        };
        compare("data_size", spec.data_size, floored.data_size);
        compare("log_size", spec.log_size, floored.log_size);
        compare("log_pregrow", spec.log_pregrow, floored.log_pregrow);
        compare("tempdb_size", spec.tempdb_size, floored.tempdb_size);
        out
    }
}

/// `bytes` as `8 MB` or `512 KB`.
fn human(bytes: u64) -> String {
    if bytes.is_multiple_of(1024 * KIB) {
        format!("{} MB", bytes / (1024 * KIB))
    } else {
        format!("{} KB", bytes.div_ceil(KIB))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::mssql::double::rows;
    use crate::model::value::Value;

    fn floors(pages: i64) -> Floors {
        Floors::from_model(Ok(&rows(&["pages"], vec![vec![Value::Int(pages)]])))
    }

    #[test]
    fn reads_model_and_falls_back_with_the_reason() {
        assert_eq!(floors(1024).primary_data, 8 << 20);
        // A DBA grew model to 64 MB: the floor follows.
        assert_eq!(floors(8192).primary_data, 64 << 20);
        // 1001 pages is not whole extents: rounded up to 126 extents.
        assert_eq!(floors(1001).primary_data, 126 * EXTENT);
        let empty = Floors::from_model(Ok(&[]));
        assert_eq!(empty.primary_data, MODEL_DEFAULT);
        assert!(empty
            .describe()
            .contains("unreadable (sys.master_files has no row for model)"));
        let denied = Floors::from_model(Err("error 229".into()));
        assert!(denied.source.contains("error 229"), "{}", denied.source);
        assert!(floors(1024)
            .describe()
            .starts_with("primary data file ≥ 8 MB (model database"));
    }

    #[test]
    fn raises_small_sizes_and_keeps_files_equal() {
        let f = floors(1024);
        let spec = StorageSpec {
            data_files: 16,
            data_size: Some(Size::new(10 << 20, "160GB")),
            log_size: Some(Size::new(64 * KIB, "250MB")),
            log_pregrow: Some(Size::new(128 * KIB, "4000MB")),
            ..StorageSpec::DEFAULT
        };
        let out = f.apply(&spec);
        assert_eq!(out.data_size.unwrap().bytes, 16 * (8 << 20));
        assert_eq!(
            out.data_size.unwrap().text,
            "160GB",
            "the declared text stays"
        );
        assert_eq!(out.log_size.unwrap().bytes, FILE_MIN);
        assert_eq!(out.log_pregrow.unwrap().bytes, FILE_MIN);
        assert_eq!(f.apply(&out), out, "idempotent");
        assert_eq!(
            f.raised(&spec),
            vec![
                "data_size 10 MB raised to 128 MB",
                "log_size 64 KB raised to 512 KB",
                "log_pregrow 128 KB raised to 512 KB"
            ]
        );
        let big = StorageSpec {
            data_size: Some(Size::new(1000 << 20, "1000MB")),
            ..StorageSpec::DEFAULT
        };
        assert_eq!(f.apply(&big), big);
        assert!(f.raised(&big).is_empty());
        assert_eq!(f.apply(&StorageSpec::DEFAULT), StorageSpec::DEFAULT);
    }
}
