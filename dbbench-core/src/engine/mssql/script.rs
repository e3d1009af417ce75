//! The whole sequence that creates one repetition's database, as data: instance changes, the
//! IFI checks around `CREATE DATABASE`, and the database's own configuration. The backend executes
//! exactly these steps in this order, so the rendered script in the snapshots is what runs on the
//! server.

use super::ifi;
use super::instance::Change;
use super::provision::Provision;

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
    /// Reads the error log and fails unless every data file was zero-filled.
    VerifyZeroing(String),
    /// Undoes the probe changes.
    EndProbe,
    /// Any other statement.
    Run(String),
}

/// What the script is built from besides the provisioning statements.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Inputs {
    /// Turn IFI off with trace flag 1806 and verify it.
    pub disable_ifi: bool,
    /// Zero-fill logging flags not already on (set only while creating).
    pub probe_flags: Vec<u32>,
    /// tempdb changes.
    pub tempdb: Vec<Change>,
}

/// The steps that create database `name` as `provision` says.
pub fn steps(name: &str, provision: &Provision, inputs: &Inputs) -> Vec<Step> {
    let mut out = Vec::new();
    if inputs.disable_ifi {
        out.push(Step::Instance(ifi::trace_flags_change(
            &[ifi::TF_NO_IFI],
            "ifi = false",
        )));
        out.push(Step::ConfirmTraceFlag(ifi::TF_NO_IFI));
    }
    out.extend(inputs.tempdb.iter().cloned().map(Step::Instance));
    let verify = inputs.disable_ifi;
    if verify && !inputs.probe_flags.is_empty() {
        out.push(Step::Probe(ifi::trace_flags_change(
            &inputs.probe_flags,
            "log zero-filling to verify ifi = false",
        )));
    }
    let mut create = provision.create.iter();
    if let Some(first) = create.next() {
        out.push(Step::Create(first.clone()));
    }
    if verify {
        out.push(Step::VerifyZeroing(ifi::zeroing_log_sql(name)));
        out.push(Step::EndProbe);
    }
    out.extend(create.chain(&provision.configure).cloned().map(Step::Run));
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
            Step::VerifyZeroing(sql) => out.push_str(&format!(
                "-- every data file must have a 'Zeroing' line\n{sql}\n"
            )),
            Step::EndProbe => {
                for change in probe_undo {
                    for undo in &change.undo {
                        out.push_str(&format!("{undo}\n"));
                    }
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::mssql::instance::{tempdb_plan, TempdbFile};
    use crate::engine::mssql::provision::{plan, Platform, ServerDirs, Target};
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
                defaults: &dirs,
                platform: Platform::Linux,
                marker: "created by dbbench 0.1.0",
            },
        )
        .unwrap();
        let tempdb = tempdb_plan(
            &spec,
            &[TempdbFile {
                name: "tempdev".into(),
                physical: "/var/opt/mssql/data/tempdb.mdf".into(),
                size_pages: 1024,
                growth: 8192,
                is_percent: false,
            }],
            Platform::Linux,
        )
        .unwrap();
        let inputs = Inputs {
            disable_ifi: true,
            probe_flags: ifi::TF_LOG_ZEROING.to_vec(),
            tempdb,
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

    #[test]
    fn no_ifi_request_means_no_instance_step() {
        let provision = Provision {
            files: Vec::new(),
            create: vec!["CREATE DATABASE [x];".into(), "EXEC marker;".into()],
            configure: vec!["ALTER x;".into()],
            before_window: Vec::new(),
        };
        let steps = steps("x", &provision, &Inputs::default());
        assert_eq!(
            steps,
            vec![
                Step::Create("CREATE DATABASE [x];".into()),
                Step::Run("EXEC marker;".into()),
                Step::Run("ALTER x;".into()),
            ]
        );
    }
}
