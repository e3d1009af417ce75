//! The options MariaDB leaves out of its profile, each with why, in its own words: the
//! dispatcher refuses a cell that sets one before anything is created (`Profile::refusals`).

use dbbench_options::Key;

/// The end of every refusal of an option that MariaDB lacks but other backends have.
macro_rules! restrict {
    ($why:literal) => {
        concat!(
            $why,
            ", or limit the case to the other backends with `backends = [\"embedded\", \
             \"mssql\", \"postgres\"]`"
        )
    };
}

/// Why each option MariaDB does not honour is refused.
pub const REFUSALS: &[(Key, &str)] = &[
    (
        Key::LogGrowth,
        restrict!(
            "MariaDB's redo log is one circular file (ib_logfile0) made at its full size, \
             innodb_log_file_size, and never grows: there are no segments to size; declare \
             log_size instead"
        ),
    ),
    (
        Key::LogPregrow,
        restrict!(
            "MariaDB's redo log is created at its full size (innodb_log_file_size), so there is \
             nothing to grow ahead of the window; remove log_pregrow"
        ),
    ),
    (
        Key::Ifi,
        restrict!(
            "MariaDB has no switch for it: InnoDB always extends its files with fallocate() \
             (zero-filling only where the file system refuses it), which is instant file \
             initialization in every configuration; remove ifi"
        ),
    ),
    (
        Key::Maxdop,
        restrict!(
            "MariaDB runs each statement on one thread: neither inserts nor queries are \
             parallelised, so there is no degree of parallelism to set; remove maxdop"
        ),
    ),
    (Key::TempdbFiles, NO_TEMPDB),
    (Key::TempdbSize, NO_TEMPDB),
    (Key::TempdbGrowth, NO_TEMPDB),
    (
        Key::DataOn,
        restrict!(
            "the MariaDB backend does not place data files on volumes yet (only the redo log, \
             log_on); remove data_on"
        ),
    ),
];

const NO_TEMPDB: &str = restrict!(
    "MariaDB has no shared tempdb: temporary tables live in the temporary tablespace ibtmp1 and \
     in files under tmpdir, per instance; remove the tempdb options"
);

#[cfg(test)]
mod tests {
    use super::super::PROFILE;
    use super::*;
    use crate::model::config::{Growth, Size, StorageSpec};
    use crate::model::error::Error;

    fn refused(storage: StorageSpec) -> String {
        match PROFILE.refuse_unlisted(&storage) {
            Err(Error::Unsupported {
                option,
                backend,
                reason,
            }) => {
                assert_eq!(backend, "mariadb");
                format!("{option}: {reason}")
            }
            other => panic!("expected a refusal, got {other:?}"),
        }
    }

    #[test]
    fn every_option_left_out_has_its_reason_and_none_listed_has_one() {
        for key in Key::STORAGE {
            let listed = PROFILE.options.contains(&key);
            let reasoned = REFUSALS.iter().any(|(k, _)| *k == key);
            assert!(
                listed != reasoned,
                "{key:?}: listed {listed}, reasoned {reasoned}"
            );
        }
    }

    #[test]
    fn options_without_an_equivalent_are_refused_with_why() {
        let mb = Size {
            bytes: 1 << 20,
            text: "1MB",
        };
        let cases: [(StorageSpec, &str, &str); 5] = [
            (
                StorageSpec {
                    ifi: Some(true),
                    ..StorageSpec::DEFAULT
                },
                "ifi",
                "fallocate",
            ),
            (
                StorageSpec {
                    log_growth: Some(Growth::Fixed(mb)),
                    ..StorageSpec::DEFAULT
                },
                "log_growth",
                "never grows",
            ),
            (
                StorageSpec {
                    maxdop: Some(2),
                    ..StorageSpec::DEFAULT
                },
                "maxdop",
                "one thread",
            ),
            (
                StorageSpec {
                    tempdb_files: Some(4),
                    ..StorageSpec::DEFAULT
                },
                "tempdb_files",
                "no shared tempdb",
            ),
            (
                StorageSpec {
                    tempdb_size: Some(mb),
                    ..StorageSpec::DEFAULT
                },
                "tempdb_size",
                "no shared tempdb",
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
}
