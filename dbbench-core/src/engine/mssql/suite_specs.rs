//! Every statement the backend sends for each cell of the three seed suites at `smoke`,
//! `default` and `full` scale, as insta snapshots: creation (instance changes, IFI checks,
//! `CREATE DATABASE` with floored sizes, the ownership mark, configuration, the read-back), the
//! statements before the window, the window's evidence, and the teardown.
//!
//! dbbench-core cannot depend on the suites crate, so the cells are reproduced here from their
//! `#[db_bench]` attributes: `suites/src/vlf.rs` (`vlf::doubling`), `suites/src/population.rs`
//! (`population::population`) and `suites/src/data_files.rs` (`data_files::equal_shares`). A
//! change there must be mirrored here; the live test declares the same cells.

use super::evidence::{counters, file_stats, growth_events, vlf, waits};
use super::floors::Floors;
use super::instance::{tempdb_plan_for, TempdbFile};
use super::provision::{plan, Platform, ServerDirs, Target};
use super::script::{self, Inputs, Step};
use super::{ifi, marker, teardown};
use crate::model::config::{Growth, Recovery, RunSpec, Size, StorageSpec};
use crate::model::scale::Scale;
use crate::model::volume::Volumes;

const MB: u64 = 1 << 20;

/// The floors of a server whose model database has the default 8 MB (1024 pages).
pub(crate) fn test_floors() -> Floors {
    Floors::from_model(Ok(&super::double::rows(
        &["pages"],
        vec![vec![crate::model::value::Value::Int(1024)]],
    )))
}

/// One seed suite: its divisors and its cells at full scale.
pub(crate) struct Suite {
    /// `module::function`.
    pub name: &'static str,
    /// `smoke_divisor`.
    pub smoke: u32,
    /// `default_divisor`.
    pub default: u32,
    /// Whether the suite loads the credit fixture (`fixture = "credit"`).
    pub credit: bool,
    /// `(cell, storage)` as declared (before scaling).
    pub cells: Vec<(&'static str, StorageSpec)>,
}

fn mb(n: u64, text: &'static str) -> Size {
    Size::new(n * MB, text)
}

fn grow(n: u64, text: &'static str) -> Option<Growth> {
    Some(Growth::Fixed(mb(n, text)))
}

/// The seed suites' cells (every suite has `scale_storage = true`).
pub(crate) fn seed_suites() -> Vec<Suite> {
    vec![vlf_suite(), population_suite(), data_files_suite()]
}

/// `suites/src/vlf.rs`: the VLF article's six tests.
fn vlf_suite() -> Suite {
    let vlf = StorageSpec {
        data_size: Some(mb(1000, "1000MB")),
        log_size: Some(mb(400, "400MB")),
        recovery: Some(Recovery::Full),
        ifi: Some(true),
        growth: grow(1024, "1024MB"),
        log_growth: grow(1024, "1024MB"),
        ..StorageSpec::DEFAULT
    };
    let pregrown = StorageSpec {
        log_size: Some(mb(32000, "32000MB")),
        log_pregrow: Some(mb(4000, "4000MB")),
        ..vlf
    };
    Suite {
        name: "vlf::doubling",
        credit: true,
        smoke: RunSpec::DEFAULT.smoke_divisor,
        default: RunSpec::DEFAULT.default_divisor,
        cells: vec![
            (
                "test_1",
                StorageSpec {
                    growth: grow(1, "1MB"),
                    log_growth: grow(1, "1MB"),
                    ifi: Some(false),
                    ..vlf
                },
            ),
            (
                "test_2",
                StorageSpec {
                    growth: grow(1, "1MB"),
                    log_growth: grow(1, "1MB"),
                    ..vlf
                },
            ),
            ("test_3", vlf),
            ("test_4", pregrown),
            (
                "test_5",
                StorageSpec {
                    maxdop: Some(4),
                    ..pregrown
                },
            ),
            (
                "test_6",
                StorageSpec {
                    maxdop: Some(4),
                    tempdb_files: Some(4),
                    tempdb_size: Some(mb(2048, "2048MB")),
                    tempdb_growth: grow(1024, "1024MB"),
                    ..pregrown
                },
            ),
        ],
    }
}

/// `suites/src/population.rs`: the data and the log on one volume or two.
fn population_suite() -> Suite {
    let population = StorageSpec {
        data_size: Some(mb(1 << 20, "1TB")),
        growth: grow(1024, "1024MB"),
        ifi: Some(true),
        log_size: Some(mb(250, "250MB")),
        log_growth: grow(50, "50MB"),
        ..StorageSpec::DEFAULT
    };
    Suite {
        name: "population::population",
        credit: false,
        smoke: 65536,
        default: 1024,
        cells: vec![
            ("same_volume", population),
            (
                "separate_volumes",
                StorageSpec {
                    data_on: &["data"],
                    log_on: Some("log"),
                    ..population
                },
            ),
        ],
    }
}

/// `suites/src/data_files.rs`: the same data in 1 to 16 files.
fn data_files_suite() -> Suite {
    let files = |n: u32| StorageSpec {
        data_files: n,
        data_size: Some(mb(160 << 10, "160GB")),
        growth: grow(1024, "1024MB"),
        ifi: Some(true),
        log_size: Some(mb(8 << 10, "8GB")),
        log_growth: grow(1024, "1024MB"),
        ..StorageSpec::DEFAULT
    };
    Suite {
        name: "data_files::equal_shares",
        credit: false,
        smoke: 16384,
        default: 256,
        cells: [1, 2, 4, 8, 16]
            .into_iter()
            .zip([
                "data_files_1",
                "data_files_2",
                "data_files_4",
                "data_files_8",
                "data_files_16",
            ])
            .map(|(n, name)| (name, files(n)))
            .collect(),
    }
}

/// `suite`'s cell storage at `scale`, scaled as the runner scales it (before the floors).
pub(crate) fn scaled(suite: &Suite, spec: &StorageSpec, scale: &Scale) -> StorageSpec {
    let run = RunSpec {
        smoke_divisor: suite.smoke,
        default_divisor: suite.default,
        ..RunSpec::DEFAULT
    };
    spec.scaled(true, &scale.for_benchmark(&run))
}

/// Every statement for one cell on a Linux container whose service has IFI on.
fn render_cell(db: &str, spec: &StorageSpec, credit: bool) -> String {
    let dirs = ServerDirs {
        data: "/var/opt/mssql/data".into(),
        log: "/var/opt/mssql/data".into(),
    };
    let volumes = Volumes::parse("data=/mnt/data,log=/mnt/log").unwrap();
    let floors = test_floors();
    let target = Target {
        name: db,
        volumes: &volumes,
        defaults: Ok(&dirs),
        platform: Platform::Linux,
        floors: &floors,
    };
    let provision = plan(spec, &target).unwrap();
    let steps = script::steps(db, &provision, &inputs(db, spec));
    let probe: Vec<_> = steps
        .iter()
        .filter_map(|s| match s {
            Step::Probe(c) => Some(c.clone()),
            _ => None,
        })
        .collect();
    let mut out = claim_sql(db, spec);
    out.push_str(&format!("-- creation\n{}", script::render(&steps, &probe)));
    if credit {
        out.push_str("-- fixture\n");
        out.push_str(super::fixture::SQL.credit_schema);
        out.push_str("\nINSERT BULK dbo.charge WITH (TABLOCK)\n");
    }
    out.push_str("-- before the window\n");
    for s in provision.before_window.iter().chain(&provision.chain_check) {
        out.push_str(&format!("{s}\n"));
    }
    out.push_str(&format!(
        "-- the recovery in effect (FULL or BULK_LOGGED: and whether the log chain started)\n{}\n{}\n",
        super::readback::recovery_model_sql(db),
        super::provision::chain_check_sql(db),
    ));
    let locked = super::creation::lock_mode(spec, spec.ifi == Some(true)).is_some();
    out.push_str(&window_and_teardown_sql(db, locked));
    out.push_str(&undo_sql(&steps, locked));
    out
}

/// The script's inputs for `spec`: the IFI trace flags when it turns IFI off, and tempdb's
/// changes from a server with one 8 MB tempdb file.
fn inputs(db: &str, spec: &StorageSpec) -> Inputs {
    let tempdb = if spec.tempdb_files.is_some() {
        let current = [TempdbFile {
            name: "tempdev".into(),
            physical: "/var/opt/mssql/data/tempdb.mdf".into(),
            size_pages: 1024,
            current_pages: 1024,
            growth: 8192,
            is_percent: false,
        }];
        tempdb_plan_for(spec, &current, Platform::Linux, 4242)
            .unwrap()
            .changes
    } else {
        Vec::new()
    };
    let ifi_off = spec.ifi == Some(false);
    // As a sysadmin login with DBBENCH_MSSQL_ALLOW_INSTANCE_CHANGES=1 runs them: `ifi = true` is
    // proven too.
    let verify = spec.ifi.is_some();
    Inputs {
        disable_ifi: if ifi_off {
            ifi::TF_NO_IFI.to_vec()
        } else {
            Vec::new()
        },
        verify_zeroing: ifi_off,
        verify_instant: spec.ifi == Some(true),
        probe_flags: if verify {
            ifi::TF_LOG_ZEROING.to_vec()
        } else {
            Vec::new()
        },
        // As GETDATE() would answer before the creation.
        zeroing_since: if verify {
            "2026-12-01 10:00:00.000".into()
        } else {
            String::new()
        },
        tempdb,
        owner: script::tests::test_owner(db),
    }
}

/// What is read before the script: whether the name is free, the IFI state, tempdb's files.
fn claim_sql(db: &str, spec: &StorageSpec) -> String {
    let mut out = format!(
        "-- claim (a leftover is dropped only with its marker)\n{}\n",
        super::provision::exists_sql(db)
    );
    // As a sysadmin login with the opt-in runs them: `ifi = true` is proven, so every cell with
    // `ifi` or tempdb options changes the instance and takes the lock exclusively.
    if let Some(mode) = super::creation::lock_mode(spec, spec.ifi == Some(true)) {
        // Before the first read of instance state, on a connection of its own, held until the
        // last undo is verified; then the server's identity and its record of owed undo.
        out.push_str(&format!(
            "-- the server lock (a connection of its own), before any instance state is read\n{}\n{}\n{}\n",
            super::applock::get_sql(mode, 1000),
            super::applock::IDENTITY_SQL,
            super::record::LIST_SQL,
        ));
    }
    if spec.ifi.is_some() {
        out.push_str(&ifi_state_sql());
        for flag in ifi::TF_NO_IFI {
            out.push_str(&format!("{}\n", ifi::trace_status_sql(flag)));
        }
    }
    if spec.tempdb_files.is_some() {
        out.push_str(&format!("{}\n", super::instance::TEMPDB_FILES_SQL));
    }
    if spec.ifi.is_some() {
        // The zeroing proof's start time, then the zero-fill logging flags already on?
        out.push_str(&format!("{}\n", ifi::NOW_SQL));
        for flag in ifi::TF_LOG_ZEROING {
            out.push_str(&format!("{}\n", ifi::trace_status_sql(flag)));
        }
    }
    out
}

/// The undo of `steps`' instance changes at the drop, last change first, with the lock checked
/// before them: each bounded, read back, and its server record dropped.
fn undo_sql(steps: &[Step], locked: bool) -> String {
    let mut out = String::new();
    if locked {
        out.push_str(&format!(
            "-- the lock still held? (its own connection)\n{}\n",
            super::applock::MODE_SQL
        ));
    }
    let changes: Vec<&super::instance::Change> = steps
        .iter()
        .filter_map(|s| match s {
            Step::Instance(c) => Some(c),
            _ => None,
        })
        .collect();
    for change in changes.iter().rev() {
        for undo in change.undo.iter().rev() {
            out.push_str(&format!(
                "{}\n-- read back, then:\n{}\n",
                undo.sql(super::instance::RENDERED_MAJOR),
                super::record::drop_sql("dbbench_owed:<when>:<pid>:<n>")
            ));
        }
    }
    out
}

/// The window's evidence statements and the teardown's.
fn window_and_teardown_sql(db: &str, locked: bool) -> String {
    let session = growth_events::session_name(db);
    let file = format!("/var/opt/mssql/log/{session}_0_133512345678900000.xel");
    let pattern = growth_events::file_pattern(&file, &session);
    let mut out = String::new();
    out.push_str(&format!(
        "-- window\n{}\n{}\n{}\n{}\n{}\n{}\n{}\n{}\n{}\n{}\n{}\n{}\n{}\n{}\n",
        super::evidence::session_waits::SNAPSHOT_SQL,
        growth_events::NOW_UTC_SQL,
        growth_events::file_name_sql(&session),
        growth_events::drop_sql(&session),
        growth_events::create_sql(&session, 7, growth_events::Target::EventFile),
        growth_events::DURATION_UNIT_SQL,
        counters::sample_sql(db),
        file_stats::FILES_SQL,
        file_stats::IO_SQL,
        vlf::LOG_INFO_SQL,
        waits::SNAPSHOT_SQL,
        growth_events::read_file_sql(&pattern),
        growth_events::files_sql(&pattern),
        growth_events::delete_file_sql(&file),
    ));
    if locked {
        out.push_str(&format!(
            "-- at the window's close: the lock still held? (its own connection)\n{}\n",
            super::applock::MODE_SQL
        ));
    }
    out.push_str(&format!(
        "-- teardown\n-- in a connection to the database:\n{}\n-- in master:\n{}\n{}\n{}\n",
        marker::read_property_sql(),
        teardown::single_user_and_drop_sql(db),
        super::provision::exists_sql(db),
        teardown::plain_drop_sql(db),
    ));
    out
}

/// The IFI state's query and its fallback.
fn ifi_state_sql() -> String {
    format!(
        "{}\n-- when it has no row (Linux) or fails: the startup line, current log first, up to {} logs\n{}\n",
        ifi::STATE_SQL,
        ifi::ERRORLOGS_SEARCHED,
        ifi::errorlog_state_sql(0)
    )
}

/// Every statement of every cell of `suite` at `scale`.
fn render_suite(suite: &Suite, scale: &Scale) -> String {
    let floors = test_floors();
    let start_up = [
        super::server::PROPERTIES_SQL.to_string(),
        super::server::HOST_SQL.to_string(),
        super::server::MASTER_PATH_SQL.to_string(),
        ifi_state_sql().trim_end().to_string(),
        ifi::trace_status_sql(ifi::TF_NO_IFI[0]),
        ifi::trace_status_sql(ifi::TF_NO_IFI[1]),
        super::server::MODEL_RECOVERY_SQL.to_string(),
        super::floors::MODEL_SIZE_SQL.to_string(),
    ];
    let mut out = format!(
        "-- {} at {} scale\n-- size floors: {}\n\
         -- start-up, once per process (master's files only without default paths)\n{}\n",
        suite.name,
        scale.name,
        floors.describe(),
        start_up.join("\n")
    );
    for (cell, spec) in &suite.cells {
        let scaled = scaled(suite, spec, scale);
        let raised = floors.raised(&scaled);
        out.push_str(&format!(
            "\n-- ===== cell {cell}{} =====\n",
            if raised.is_empty() {
                String::new()
            } else {
                format!(" ({})", raised.join(", "))
            }
        ));
        let module = suite.name.split("::").next().unwrap_or_default();
        out.push_str(&render_cell(
            &format!("dbbench_{module}_{cell}_r0_4242"),
            &scaled,
            suite.credit,
        ));
    }
    out
}

macro_rules! suite_snapshot {
    ($name:ident, $index:expr, $scale:expr) => {
        #[test]
        fn $name() {
            insta::assert_snapshot!(render_suite(&seed_suites()[$index], &$scale));
        }
    };
}

suite_snapshot!(vlf_smoke, 0, Scale::smoke());
suite_snapshot!(vlf_default, 0, Scale::default_scale());
suite_snapshot!(vlf_full, 0, Scale::full());
suite_snapshot!(population_smoke, 1, Scale::smoke());
suite_snapshot!(population_default, 1, Scale::default_scale());
suite_snapshot!(population_full, 1, Scale::full());
suite_snapshot!(data_files_smoke, 2, Scale::smoke());
suite_snapshot!(data_files_default, 2, Scale::default_scale());
suite_snapshot!(data_files_full, 2, Scale::full());

#[test]
fn smoke_sizes_are_raised_to_the_floors() {
    let suites = seed_suites();
    let at = |suite: usize, cell: usize, scale: &Scale| {
        let s = &suites[suite];
        test_floors().apply(&scaled(s, &s.cells[cell].1, scale))
    };
    // VLF at smoke: 1000 MB / 512 → 2 MB declared, raised to model's 8 MB.
    assert_eq!(at(0, 0, &Scale::smoke()).data_size.unwrap().bytes, 8 * MB);
    // Population at smoke and default: 250 MB / 65536 and / 1024 → below 512 KB, raised.
    assert_eq!(at(1, 0, &Scale::smoke()).log_size.unwrap().bytes, 512 << 10);
    assert_eq!(
        at(1, 0, &Scale::default_scale()).log_size.unwrap().bytes,
        512 << 10
    );
    // 16 files at smoke: 640 KB each, every file raised to 8 MB so they stay equal.
    assert_eq!(
        at(2, 4, &Scale::smoke()).data_size.unwrap().bytes,
        16 * 8 * MB
    );
    // Full scale is the articles' sizes: nothing raised.
    for (i, suite) in suites.iter().enumerate() {
        for (c, (cell, spec)) in suite.cells.iter().enumerate() {
            let full = scaled(suite, spec, &Scale::full());
            assert_eq!(at(i, c, &Scale::full()), full, "{cell}");
        }
    }
    let sql = render_suite(&suites[2], &Scale::smoke());
    assert!(!sql.contains("SIZE = 640KB"), "no file below the floor");
    // data_files_1 keeps its 10 MB; the 2..16-file cells are raised to 8 MB per file.
    assert!(sql.contains("SIZE = 10240KB"));
    assert_eq!(sql.matches("SIZE = 8192KB").count(), 2 + 4 + 8 + 16);
}
