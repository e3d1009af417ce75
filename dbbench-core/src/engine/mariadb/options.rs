//! What each storage option means on MariaDB (InnoDB), and the refusal of those with no honest
//! equivalent. `docs/mariadb.md` has the same table in prose; keep them together.
//!
//! | option | MariaDB | level |
//! |---|---|---|
//! | `data_files`, `data_size` | the system tablespace's files, `innodb_data_file_path = ibdata1:S;…;ibdataN:S:autoextend` (S = `data_size` / `data_files`, whole MiB), with `innodb_file_per_table = OFF` so the tables live in them; InnoDB fills the files one after another, not proportionally | instance |
//! | `growth` | fixed: `innodb_autoextend_increment` in MiB (1–1000), which only the last file's `:autoextend` uses; `none`: no `:autoextend` (the tablespace is full at its size) | instance |
//! | `log_size` | `innodb_log_file_size`: the one circular redo log `ib_logfile0` | instance |
//! | `log_on` | `innodb_log_group_home_dir`: the redo log's directory on that volume | instance |
//! | `recovery` | `simple`: binary log off (`skip-log-bin`); `full`: binary log on with `sync_binlog = 1` and `innodb_flush_log_at_trx_commit = 1` | instance |
//!
//! The options the profile leaves out are refused by the dispatcher with the reasons of
//! `refusals.rs`; `check` here refuses only values (`bulk_logged`, a percentage growth)
//! and, on an existing server, every option above (they configure the instance).

use crate::model::config::{Growth, Recovery, Size, StorageSpec};
use crate::model::error::{Error, Result};
use std::collections::BTreeMap;

const MIB: u64 = 1 << 20;
/// InnoDB's first system tablespace file when none is declared (`ibdata1:12M:autoextend`), and
/// each file's size when `data_files` is given without `data_size`.
const DEFAULT_FILE_MIB: u64 = 12;
/// `innodb_autoextend_increment`'s range, in MiB.
const INCREMENT_MIB: std::ops::RangeInclusive<u64> = 1..=1000;
/// The smallest `innodb_log_file_size` MariaDB 10.11 accepts: 4 MiB (`mariadbd
/// --innodb-log-file-size=1M` warns "unsigned value 1048576 adjusted to 4194304" and makes a
/// 4 MiB `ib_logfile0`), so a smaller scaled size is raised here, where the effective size says
/// so, not by the server.
const MIN_LOG: u64 = 4 * MIB;

/// The backend's keyword in refusals.
const BACKEND: &str = "mariadb";

pub(super) fn refuse(option: &'static str, reason: impl Into<String>) -> Error {
    Error::Unsupported {
        option,
        backend: BACKEND,
        reason: reason.into(),
    }
}

/// Whether the backend runs its own instances or uses an existing server.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Managed instances, made from each cell's instance-level settings.
    Managed,
    /// The server in `DBBENCH_MARIADB`, whose configuration dbbench does not change.
    External,
}

/// What a cell's options set on the managed instance.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Mapping {
    /// Server options, `--name=value` on mariadbd's and mariadb-install-db's command lines, in
    /// this order.
    pub server: Vec<(String, String)>,
    /// The volume of the redo log's directory (`log_on`).
    pub log_volume: Option<&'static str>,
    /// Whether the tables live in the system tablespace (`innodb_file_per_table = OFF`): its
    /// files keep the pages a dropped table freed, so such an instance serves one database.
    pub system_tablespace: bool,
    /// Setting (as `@@name` reads it) → the declared option(s) it comes from.
    declared: BTreeMap<String, String>,
}

impl Mapping {
    fn set(&mut self, name: &str, value: impl Into<String>, option: &str) {
        self.server.push((name.to_string(), value.into()));
        self.declare(name, option);
    }

    fn declare(&mut self, setting: &str, option: &str) {
        let entry = self.declared.entry(setting.to_string()).or_default();
        if !entry.split(',').any(|o| o == option) {
            if !entry.is_empty() {
                entry.push(',');
            }
            entry.push_str(option);
        }
    }

    /// The settings the declared options set, each with the option(s) it comes from.
    pub fn declared(&self) -> &BTreeMap<String, String> {
        &self.declared
    }
}

/// `storage` raised to MariaDB's minimum: a fixed `growth` below 1 MiB (the smallest
/// `innodb_autoextend_increment`) becomes 1 MiB, a `log_size` below 4 MiB becomes 4 MiB.
/// Scaling makes such sizes; the raised size is the one the results record as effective.
pub fn floor(storage: &StorageSpec) -> StorageSpec {
    let mut out = *storage;
    if let Some(Growth::Fixed(size)) = out.growth {
        if size.bytes < MIB {
            out.growth = Some(Growth::Fixed(Size { bytes: MIB, ..size }));
        }
    }
    if let Some(size) = out.log_size {
        if size.bytes < MIN_LOG {
            out.log_size = Some(Size {
                bytes: MIN_LOG,
                ..size
            });
        }
    }
    out
}

/// Fails with [`Error::Unsupported`] for a value MariaDB cannot honour of an option the profile
/// lists (the dispatcher refused the unlisted ones, `super::refusals`); on an existing server,
/// for any of them, all of which configure the instance (`super::external`).
pub fn check(storage: &StorageSpec, mode: Mode) -> Result<()> {
    if mode == Mode::External {
        super::external::refuse_instance_options(storage)?;
    }
    map(storage).map(|_| ())
}

/// The mapping of `storage`, or the refusal of its first value without an equivalent. The
/// options are taken in a fixed order, so a cell with several refusals reports the same first.
pub fn map(storage: &StorageSpec) -> Result<Mapping> {
    let mut m = Mapping::default();
    map_system_tablespace(storage, &mut m)?;
    if let Some(size) = storage.log_size {
        if size.bytes < MIN_LOG {
            return Err(refuse(
                "log_size",
                format!(
                    "innodb_log_file_size must be at least 4MiB; `{}` is {} bytes here (after \
                     scaling)",
                    size.text, size.bytes
                ),
            ));
        }
        // Whole MiB: the server rounds other sizes itself, and the read-back must equal this.
        let bytes = size.bytes.div_ceil(MIB) * MIB;
        m.set("innodb_log_file_size", bytes.to_string(), "log_size");
    }
    if let Some(volume) = storage.log_on {
        m.log_volume = Some(volume);
        m.declare("innodb_log_group_home_dir", "log_on");
    }
    map_recovery(storage, &mut m)?;
    Ok(m)
}

/// `data_files`, `data_size` and `growth` as the system tablespace's files and increment. Left
/// to the server's defaults (file per table) when none is declared.
fn map_system_tablespace(storage: &StorageSpec, m: &mut Mapping) -> Result<()> {
    if storage.data_files <= 1 && storage.data_size.is_none() && storage.growth.is_none() {
        return Ok(());
    }
    let files = u64::from(storage.data_files.max(1));
    let each_mib = match storage.data_size {
        Some(size) => size.bytes.div_ceil(files).div_ceil(MIB).max(1),
        None => DEFAULT_FILE_MIB,
    };
    let autoextend = match storage.growth {
        None => {
            m.declare("innodb_autoextend_increment", "growth");
            true
        }
        Some(Growth::Fixed(size)) => {
            let mib = size.bytes.div_ceil(MIB);
            if !INCREMENT_MIB.contains(&mib) {
                return Err(refuse(
                    "growth",
                    format!(
                        "growth is innodb_autoextend_increment on MariaDB, from 1MB to 1000MB in \
                         whole MiB; `{}` is {} bytes here (after scaling)",
                        size.text, size.bytes
                    ),
                ));
            }
            m.set("innodb_autoextend_increment", mib.to_string(), "growth");
            true
        }
        Some(Growth::None) => false,
        Some(Growth::Percent(p)) => {
            return Err(refuse(
                "growth",
                format!(
                    "InnoDB extends its system tablespace by a fixed number of MiB \
                     (innodb_autoextend_increment), never by a percentage; `{p}%` has no \
                     equivalent: give a fixed size"
                ),
            ))
        }
    };
    let path = data_file_path(files, each_mib, autoextend);
    m.set("innodb_data_file_path", path, "data_files");
    m.declare("innodb_data_file_path", "data_size");
    m.declare("innodb_data_file_path", "growth");
    m.set("innodb_file_per_table", "OFF", "data_files");
    m.system_tablespace = true;
    Ok(())
}

/// `ibdata1:64M;ibdata2:64M:autoextend`.
pub fn data_file_path(files: u64, each_mib: u64, autoextend: bool) -> String {
    let mut parts: Vec<String> = (1..=files)
        .map(|i| format!("ibdata{i}:{each_mib}M"))
        .collect();
    if autoextend {
        if let Some(last) = parts.last_mut() {
            last.push_str(":autoextend");
        }
    }
    parts.join(";")
}

/// `recovery` as the binary log and its sync.
fn map_recovery(storage: &StorageSpec, m: &mut Mapping) -> Result<()> {
    match storage.recovery {
        None => {}
        Some(Recovery::BulkLogged) => {
            return Err(refuse(
                "recovery",
                "bulk_logged exists only on SQL Server; MariaDB logs every change in its redo \
                 log whatever the binary log does (recovery = \"simple\" turns the binary log \
                 off)",
            ))
        }
        Some(Recovery::Simple) => {
            m.set("skip-log-bin", "", "recovery");
            m.declare("log_bin", "recovery");
        }
        Some(Recovery::Full) => {
            // Relative to the data directory: the binary log is the instance's own.
            m.set("log-bin", "binlog", "recovery");
            m.declare("log_bin", "recovery");
            m.set("sync_binlog", "1", "recovery");
            m.set("innodb_flush_log_at_trx_commit", "1", "recovery");
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refused(storage: StorageSpec) -> String {
        match map(&storage) {
            Err(Error::Unsupported { option, reason, .. }) => format!("{option}: {reason}"),
            other => panic!("expected a refusal, got {other:?}"),
        }
    }

    const MB: fn(u64) -> Size = |n| Size {
        bytes: n * MIB,
        text: "n",
    };

    #[test]
    fn the_defaults_set_nothing() {
        assert_eq!(map(&StorageSpec::DEFAULT).unwrap(), Mapping::default());
    }

    #[test]
    fn data_files_size_and_growth_make_the_system_tablespace() {
        let m = map(&StorageSpec {
            data_files: 4,
            data_size: Some(MB(256)),
            growth: Some(Growth::Fixed(MB(8))),
            ..StorageSpec::DEFAULT
        })
        .unwrap();
        let get = |n: &str| {
            m.server
                .iter()
                .find(|(k, _)| k == n)
                .map(|(_, v)| v.as_str())
        };
        assert_eq!(
            get("innodb_data_file_path"),
            Some("ibdata1:64M;ibdata2:64M;ibdata3:64M;ibdata4:64M:autoextend")
        );
        assert_eq!(get("innodb_autoextend_increment"), Some("8"));
        assert_eq!(get("innodb_file_per_table"), Some("OFF"));
        assert!(m.system_tablespace);
        assert_eq!(
            m.declared()["innodb_data_file_path"],
            "data_files,data_size,growth"
        );
        let none = map(&StorageSpec {
            growth: Some(Growth::None),
            ..StorageSpec::DEFAULT
        })
        .unwrap();
        assert_eq!(none.server[0].1, "ibdata1:12M");
    }

    #[test]
    fn the_redo_log_and_recovery_map_to_instance_settings() {
        let m = map(&StorageSpec {
            log_size: Some(Size {
                bytes: 5 * MIB + 1,
                text: "5MB",
            }),
            log_on: Some("fast"),
            recovery: Some(Recovery::Full),
            ..StorageSpec::DEFAULT
        })
        .unwrap();
        assert_eq!(
            m.server[0],
            ("innodb_log_file_size".into(), (6 * MIB).to_string())
        );
        assert_eq!(m.log_volume, Some("fast"));
        assert!(m.server.contains(&("sync_binlog".into(), "1".into())));
        assert_eq!(m.declared()["log_bin"], "recovery");
        let simple = map(&StorageSpec {
            recovery: Some(Recovery::Simple),
            ..StorageSpec::DEFAULT
        })
        .unwrap();
        assert_eq!(simple.server, [("skip-log-bin".into(), String::new())]);
    }

    #[test]
    fn values_without_an_equivalent_are_refused_with_why() {
        let cases: [(StorageSpec, &str, &str); 3] = [
            (
                StorageSpec {
                    growth: Some(Growth::Percent(10)),
                    ..StorageSpec::DEFAULT
                },
                "growth",
                "never by a percentage",
            ),
            (
                StorageSpec {
                    growth: Some(Growth::Fixed(MB(1001))),
                    ..StorageSpec::DEFAULT
                },
                "growth",
                "1000MB",
            ),
            (
                StorageSpec {
                    recovery: Some(Recovery::BulkLogged),
                    ..StorageSpec::DEFAULT
                },
                "recovery",
                "only on SQL Server",
            ),
        ];
        for (storage, option, why) in cases {
            let text = refused(storage);
            assert!(
                text.starts_with(&format!("{option}: ")) && text.contains(why),
                "{text}"
            );
        }
    }

    #[test]
    fn an_existing_server_refuses_what_a_managed_instance_honours() {
        let storage = StorageSpec {
            log_size: Some(MB(64)),
            ..StorageSpec::DEFAULT
        };
        assert!(check(&storage, Mode::Managed).is_ok());
        match check(&storage, Mode::External) {
            Err(Error::Unsupported { option, reason, .. }) => {
                assert_eq!(option, "log_size");
                assert!(reason.contains("DBBENCH_MARIADB"), "{reason}");
            }
            other => panic!("expected a refusal, got {other:?}"),
        }
        assert!(check(&StorageSpec::DEFAULT, Mode::External).is_ok());
    }

    #[test]
    fn sizes_below_the_minimum_are_raised() {
        let small = Size {
            bytes: 64 << 10,
            text: "64KB",
        };
        let raised = floor(&StorageSpec {
            growth: Some(Growth::Fixed(small)),
            log_size: Some(small),
            ..StorageSpec::DEFAULT
        });
        assert_eq!(
            raised.growth,
            Some(Growth::Fixed(Size {
                bytes: MIB,
                ..small
            }))
        );
        // MariaDB 10.11's floor for the redo log is 4 MiB, not 1 MiB.
        assert_eq!(raised.log_size.unwrap().bytes, 4 * MIB);
        assert!(map(&raised).is_ok());
        let under = StorageSpec {
            log_size: Some(Size {
                bytes: 3 * MIB,
                text: "3MB",
            }),
            ..StorageSpec::DEFAULT
        };
        assert!(
            map(&under).is_err(),
            "a 3 MiB redo log is below the server's floor"
        );
    }
}
