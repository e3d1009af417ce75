//! The whole sequence that creates one repetition's database, as data: instance changes, the
//! IFI checks around `CREATE DATABASE`, and the database's own configuration. The backend executes
//! exactly these steps in this order, so the rendered script in the snapshots is what runs on the
//! server.

use super::instance::Change;
use super::marker::Marking;
use super::provision::Provision;
use super::{ifi, marker, readback};

/// One step of the creation script.
#[derive(Debug, Clone, PartialEq)]
pub enum Step {
    /// An instance-level change kept until the database is dropped.
    Instance(Change),
    /// Fails unless `DBCC TRACESTATUS` shows the flag on globally.
    ConfirmTraceFlag(u32),
    /// A change undone right after `CREATE DATABASE` (zero-fill logging).
    Probe(Change),
    /// `CREATE DATABASE`.
    Create(String),
    /// Reads the error log (the statement) and fails unless every data file was zero-filled;
    /// `flags` are the IFI-off trace flags dbbench turned on (empty: IFI was reported off).
    VerifyZeroing {
        /// The error-log query.
        sql: String,
        /// The IFI-off flags set for this repetition.
        flags: Vec<u32>,
    },
    /// Reads the error log (the statement) and fails if any data file was zero-filled: proof of
    /// `ifi = true` by the absence of data-file `Zeroing` lines.
    VerifyInstant {
        /// The error-log query.
        sql: String,
    },
    /// Undoes the probe changes.
    EndProbe,
    /// Marks the new database as dbbench's and reads the mark back from inside it (through a
    /// connection to it).
    Mark(Marking),
    /// Reads back where the server placed the files of a cell that declared none (through a
    /// connection to the new database).
    Locate,
    /// Reads the created files back (through a connection to the new database) and compares
    /// them with the plan.
    ReadBack,
    /// Any other statement.
    Run(String),
}

/// What the script is built from besides the provisioning statements.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Inputs {
    /// Turn IFI off with these trace flags (those of [`ifi::TF_NO_IFI`] not already on).
    pub disable_ifi: Vec<u32>,
    /// Prove with the error log's zeroing lines that every data file is zero-filled (every
    /// `ifi = false` cell).
    pub verify_zeroing: bool,
    /// Prove `ifi = true` by the absence of data-file zeroing lines (opted in, sysadmin).
    pub verify_instant: bool,
    /// Zero-fill logging flags not already on (set only while creating).
    pub probe_flags: Vec<u32>,
    /// The server's clock before the creation ([`ifi::NOW_SQL`]): only zeroing lines from then
    /// on prove anything.
    pub zeroing_since: String,
    /// tempdb changes.
    pub tempdb: Vec<Change>,
    /// The ownership marker.
    pub owner: Marking,
}

/// The steps that create database `name` as `provision` says.
pub fn steps(name: &str, provision: &Provision, inputs: &Inputs) -> Vec<Step> {
    // tempdb first: with IFI turned off, its added files and raised sizes would be zero-filled
    // on tempdb's volume for every session's sake (finding N6).
    let mut out: Vec<Step> = inputs.tempdb.iter().cloned().map(Step::Instance).collect();
    if !inputs.disable_ifi.is_empty() {
        out.push(Step::Instance(ifi::trace_flags_change(
            &inputs.disable_ifi,
            "ifi = false",
        )));
        out.extend(
            inputs
                .disable_ifi
                .iter()
                .copied()
                .map(Step::ConfirmTraceFlag),
        );
    }
    let verify = inputs.verify_zeroing || inputs.verify_instant;
    if verify && !inputs.probe_flags.is_empty() {
        out.push(Step::Probe(ifi::trace_flags_change(
            &inputs.probe_flags,
            if inputs.verify_zeroing {
                "log zero-filling to verify ifi = false"
            } else {
                "log zero-filling to verify ifi = true"
            },
        )));
    }
    let mut create = provision.create.iter();
    if let Some(first) = create.next() {
        out.push(Step::Create(first.clone()));
    }
    // Where the server put the files is needed before anything reads them (the zeroing check).
    if provision.server_placed {
        out.push(Step::Locate);
    }
    if inputs.verify_zeroing {
        out.push(Step::VerifyZeroing {
            sql: ifi::zeroing_log_sql(name, &inputs.zeroing_since),
            flags: inputs.disable_ifi.clone(),
        });
    } else if inputs.verify_instant {
        out.push(Step::VerifyInstant {
            sql: ifi::zeroing_log_sql(name, &inputs.zeroing_since),
        });
    }
    if verify {
        out.push(Step::EndProbe);
    }
    // The mark comes before any other work in the database, so a server that cannot hold it is
    // refused before the body could run.
    out.push(Step::Mark(inputs.owner.clone()));
    out.extend(create.chain(&provision.configure).cloned().map(Step::Run));
    if !provision.server_placed {
        out.push(Step::ReadBack);
    }
    out
}

/// The steps as a reviewable T-SQL script, undo statements shown as comments.
pub fn render(steps: &[Step], probe_undo: &[Change]) -> String {
    let mut out = String::new();
    for step in steps {
        match step {
            Step::Instance(change) | Step::Probe(change) => {
                out.push_str(&super::instance::render(std::slice::from_ref(change)));
            }
            Step::ConfirmTraceFlag(flag) => {
                out.push_str(&format!(
                    "-- must show Global = 1\n{}\n",
                    ifi::trace_status_sql(*flag)
                ));
            }
            Step::Create(sql) | Step::Run(sql) => out.push_str(&format!("{sql}\n")),
            Step::VerifyInstant { sql } => out.push_str(&format!(
                "-- no data file may have a 'Zeroing' line\n{sql}\n"
            )),
            Step::VerifyZeroing { sql, .. } => out.push_str(&format!(
                "-- every data file must have a 'Zeroing' line\n{sql}\n"
            )),
            Step::Mark(o) => out.push_str(&format!(
                "-- in a connection to {db}:\n{}\n-- must return the marker:\n{}\n-- else (the property is not inside the database; in master):\n{}\n-- in a connection to {db}:\n{}\n-- must return the marker, else the database is dropped and the cell refused:\n{}\n",
                marker::add_property_here_sql(&o.marker),
                marker::read_property_sql(),
                marker::stray_property_cleanup_sql(&o.marker),
                marker::add_table_sql(&o.marker, &o.host, o.pid, o.started),
                marker::read_table_sql(),
                db = super::tsql::ident(&o.db),
            )),
            Step::Locate => out.push_str(&format!(
                "-- where the server placed the files (in a connection to the new database); no rows = unavailable\n{}\n",
                readback::FILES_SQL
            )),
            Step::ReadBack => out.push_str(&format!(
                "-- every file must match the plan (size, growth), in a connection to the new database; no rows = unavailable\n{}\n",
                readback::FILES_SQL
            )),
            Step::EndProbe => {
                for change in probe_undo {
                    for undo in &change.undo {
                        out.push_str(&format!(
                            "{}\n",
                            undo.sql(super::instance::RENDERED_MAJOR)
                        ));
                    }
                }
            }
        }
    }
    out
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::engine::mssql::instance::{tempdb_plan_for, TempdbFile};
    use crate::engine::mssql::provision::{plan, Platform, ServerDirs, Target};
    use crate::engine::mssql::suite_specs::test_floors;
    use crate::model::config::{Growth, Recovery, Size, StorageSpec};
    use crate::model::volume::Volumes;

    /// Test 1 of the VLF article on a Linux container: IFI off, 1 MB growth, FULL recovery,
    /// plus the tempdb layout of Test 6 (opt-in).
    #[test]
    fn ifi_off_with_tempdb_opt_in() {
        let mb = 1024 * 1024;
        let spec = StorageSpec {
            data_size: Some(Size::new(1000 * mb, "1000MB")),
            growth: Some(Growth::Fixed(Size::new(mb, "1MB"))),
            log_size: Some(Size::new(400 * mb, "400MB")),
            log_growth: Some(Growth::Fixed(Size::new(mb, "1MB"))),
            ifi: Some(false),
            recovery: Some(Recovery::Full),
            tempdb_files: Some(2),
            tempdb_size: Some(Size::new(2048 * mb, "2048MB")),
            ..StorageSpec::DEFAULT
        };
        let dirs = ServerDirs {
            data: "/var/opt/mssql/data".into(),
            log: "/var/opt/mssql/data".into(),
        };
        let name = "dbbench_vlf_doubling_test_1_r0_4242";
        let provision = plan(
            &spec,
            &Target {
                name,
                volumes: &Volumes::default(),
                defaults: Ok(&dirs),
                platform: Platform::Linux,
                floors: &test_floors(),
            },
        )
        .unwrap();
        let tempdb = tempdb_plan_for(
            &spec,
            &[TempdbFile {
                name: "tempdev".into(),
                physical: "/var/opt/mssql/data/tempdb.mdf".into(),
                size_pages: 1024,
                current_pages: 1024,
                growth: 8192,
                is_percent: false,
            }],
            Platform::Linux,
            4242,
        )
        .unwrap()
        .changes;
        let inputs = Inputs {
            disable_ifi: ifi::TF_NO_IFI.to_vec(),
            verify_zeroing: true,
            verify_instant: false,
            probe_flags: ifi::TF_LOG_ZEROING.to_vec(),
            zeroing_since: "2026-12-01 10:00:00.000".into(),
            tempdb,
            owner: test_owner(name),
        };
        let steps = steps(name, &provision, &inputs);
        let probe: Vec<Change> = steps
            .iter()
            .filter_map(|s| match s {
                Step::Probe(c) => Some(c.clone()),
                _ => None,
            })
            .collect();
        insta::assert_snapshot!(render(&steps, &probe));
    }

    /// The owner of the snapshots: a fixed host, pid and start.
    pub(crate) fn test_owner(db: &str) -> Marking {
        Marking {
            db: db.into(),
            marker: marker::marker_text(
                "bench-host",
                1_780_000_000,
                &crate::util::owner::Owner {
                    host: "bench-host".into(),
                    machine: None,
                    pid: 4242,
                    start: Some(987_654),
                    boot: None,
                    pid_ns: None,
                },
            ),
            host: "bench-host".into(),
            pid: 4242,
            started: 1_780_000_000,
        }
    }

    #[test]
    fn no_ifi_request_means_no_instance_step() {
        let provision = Provision {
            files: Vec::new(),
            server_placed: false,
            create: vec!["CREATE DATABASE [x];".into()],
            configure: vec!["ALTER x;".into()],
            before_window: Vec::new(),
            chain_check: None,
        };
        let inputs = Inputs {
            owner: test_owner("x"),
            ..Inputs::default()
        };
        assert_eq!(
            steps("x", &provision, &inputs),
            vec![
                Step::Create("CREATE DATABASE [x];".into()),
                Step::Mark(test_owner("x")),
                Step::Run("ALTER x;".into()),
                Step::ReadBack,
            ]
        );
        // A cell that declares no files: the server places them and dbbench reads where.
        let placed = Provision {
            server_placed: true,
            ..provision
        };
        assert_eq!(
            steps("x", &placed, &inputs),
            vec![
                Step::Create("CREATE DATABASE [x];".into()),
                Step::Locate,
                Step::Mark(test_owner("x")),
                Step::Run("ALTER x;".into()),
            ]
        );
    }
}
