//! The preflight's checks and per-cell decisions from recorded server answers (no live server):
//! a sysadmin on SQL Server 2022, a least-privileged login that may only create databases, and
//! Babelfish for PostgreSQL; plus `preflight::run` against a scripted server, which must create
//! nothing. The cells are the seed suites' (suites/src/vlf.rs, population.rs, data_files.rs) at
//! smoke scale.

use dbbench_core::__internals::config::{Growth, Recovery, RunSpec, Size, StorageSpec};
use dbbench_core::__internals::mssql::double::instance::setup_tempdb;
use dbbench_core::__internals::mssql::double::{Api, Reply, ScriptedServer};
use dbbench_core::__internals::mssql::floors::Floors;
use dbbench_core::__internals::mssql::identity::Product;
use dbbench_core::__internals::mssql::ifi::IfiState;
use dbbench_core::__internals::mssql::instance::TempdbFile;
use dbbench_core::__internals::mssql::preflight::{self, Answers, Permissions, Probe};
use dbbench_core::__internals::mssql::provision::{Platform, ServerDirs};
use dbbench_core::__internals::mssql::ConnectSettings;
use dbbench_core::results::CacheState;
use dbbench_core::{Scale, Value};

const MB: u64 = 1 << 20;

fn mb(n: u64) -> Option<Size> {
    Some(Size::new(n * MB, "declared"))
}

fn grow(n: u64) -> Option<Growth> {
    Some(Growth::Fixed(Size::new(n * MB, "declared")))
}

/// A cell as the preflight takes it: `(benchmark, cell, storage, cache)`.
type Cell = (&'static str, &'static str, StorageSpec, CacheState);

/// The seed suites' cells at smoke scale, each with a warm cache (as the suites run).
fn seed_cells() -> Vec<Cell> {
    seed_storage()
        .into_iter()
        .map(|(bench, cell, spec)| (bench, cell, spec, CacheState::Warm))
        .collect()
}

/// The seed suites' cells at smoke scale, `(benchmark, cell, storage)`.
fn seed_storage() -> Vec<(&'static str, &'static str, StorageSpec)> {
    let smoke = |divisor: u32, spec: StorageSpec| {
        let run = RunSpec {
            smoke_divisor: divisor,
            ..RunSpec::DEFAULT
        };
        spec.scaled(true, &Scale::smoke().for_benchmark(&run))
    };
    let vlf = StorageSpec {
        data_size: mb(1000),
        log_size: mb(400),
        recovery: Some(Recovery::Full),
        ifi: Some(true),
        growth: grow(1024),
        log_growth: grow(1024),
        ..StorageSpec::DEFAULT
    };
    let pregrown = StorageSpec {
        log_size: mb(32000),
        log_pregrow: mb(4000),
        ..vlf
    };
    let population = StorageSpec {
        data_size: mb(1 << 20),
        growth: grow(1024),
        ifi: Some(true),
        log_size: mb(250),
        log_growth: grow(50),
        ..StorageSpec::DEFAULT
    };
    let files = |n| StorageSpec {
        data_files: n,
        data_size: mb(160 << 10),
        growth: grow(1024),
        ifi: Some(true),
        log_size: mb(8 << 10),
        log_growth: grow(1024),
        ..StorageSpec::DEFAULT
    };
    let mut out = vec![
        (
            "vlf::doubling",
            "test_1",
            smoke(
                512,
                StorageSpec {
                    growth: grow(1),
                    log_growth: grow(1),
                    ifi: Some(false),
                    ..vlf
                },
            ),
        ),
        (
            "vlf::doubling",
            "test_2",
            smoke(
                512,
                StorageSpec {
                    growth: grow(1),
                    log_growth: grow(1),
                    ..vlf
                },
            ),
        ),
        ("vlf::doubling", "test_3", smoke(512, vlf)),
        ("vlf::doubling", "test_4", smoke(512, pregrown)),
        (
            "vlf::doubling",
            "test_5",
            smoke(
                512,
                StorageSpec {
                    maxdop: Some(4),
                    ..pregrown
                },
            ),
        ),
        (
            "vlf::doubling",
            "test_6",
            smoke(
                512,
                StorageSpec {
                    maxdop: Some(4),
                    tempdb_files: Some(4),
                    tempdb_size: mb(2048),
                    tempdb_growth: grow(1024),
                    ..pregrown
                },
            ),
        ),
        (
            "population::population",
            "same_volume",
            smoke(65536, population),
        ),
        (
            "population::population",
            "separate_volumes",
            smoke(
                65536,
                StorageSpec {
                    data_on: &["data"],
                    log_on: Some("log"),
                    ..population
                },
            ),
        ),
    ];
    for (n, name) in [
        (1, "data_files_1"),
        (2, "data_files_2"),
        (4, "data_files_4"),
        (8, "data_files_8"),
        (16, "data_files_16"),
    ] {
        out.push(("data_files::equal_shares", name, smoke(16384, files(n))));
    }
    out
}

fn floors() -> Floors {
    Floors::from_model(Ok(&dbbench_core::__internals::mssql::double::rows(
        &["pages"],
        vec![vec![Value::Int(1024)]],
    )))
}

fn sysadmin_2022() -> Answers {
    Answers {
        server: "sql2022,1433".into(),
        product: Product::SqlServer,
        version: "Microsoft SQL Server 16.0.4135.4 (RTM CU15) Developer Edition (64-bit)".into(),
        major: 16,
        platform: Platform::Linux,
        // SQL Server 2022 on Linux: sys.dm_server_services has no engine row; the startup line.
        ifi: IfiState::Enabled,
        ifi_from: "the error log's startup line (xp_readerrorlog 0); sys.dm_server_services: \
                   sys.dm_server_services has no SQL Server service row"
            .into(),
        // Setup on an 8-core machine: eight data files of 8 MB.
        tempdb_files: Ok(setup_tempdb(8, "/var/opt/mssql/data/", '/')
            .into_iter()
            .map(|f| TempdbFile {
                name: f.name,
                physical: f.physical,
                size_pages: f.startup_pages,
                current_pages: f.current_pages,
                growth: f.growth,
                is_percent: f.is_percent,
            })
            .collect()),
        permissions: Permissions {
            sysadmin: Some(true),
            alter_settings: Some(true),
            alter_any_event_session: Some(true),
            view_server_state: Some(true),
            view_database_state: Some(true),
            alter_any_database: Some(true),
            create_any_database: Some(true),
            create_database_in_master: Some(true),
            alter_any_connection: Some(true),
        },
        dirs: Ok(ServerDirs {
            data: "/var/opt/mssql/data/".into(),
            log: "/var/opt/mssql/data/".into(),
        }),
        floors: floors(),
        allow_instance_changes: true,
        trace_status: Ok(()),
        ifi_off_flag_on: false,
        cold_cache: false,
        restart_hook: false,
        probes: preflight::PROBES
            .iter()
            .map(|(metric, source, _)| Probe {
                metric,
                source,
                outcome: Ok(()),
            })
            .collect(),
    }
}

#[test]
fn a_sysadmin_on_2022_can_run_every_seed_cell() {
    let report = preflight::evaluate(&sysadmin_2022(), &seed_cells());
    assert!(
        report.cells.iter().all(|c| c.blockers.is_empty()),
        "{}",
        report.render()
    );
    assert!(
        report.checks.iter().all(|c| c.ok == Some(true)),
        "{}",
        report.render()
    );
    insta::assert_snapshot!(report.render());
}

#[test]
fn a_least_privileged_login_is_told_what_each_cell_lacks() {
    let answers = Answers {
        permissions: Permissions {
            sysadmin: Some(false),
            alter_settings: Some(false),
            alter_any_event_session: Some(false),
            view_server_state: Some(false),
            view_database_state: Some(false),
            alter_any_database: Some(false),
            create_any_database: Some(true),
            create_database_in_master: Some(true),
            alter_any_connection: Some(false),
        },
        ifi: IfiState::Unknown("VIEW SERVER STATE permission was denied on object 'server'".into()),
        allow_instance_changes: false,
        // Without VIEW SERVER STATE the server-wide views answer error 300.
        probes: preflight::PROBES
            .iter()
            .map(|(metric, source, _)| Probe {
                metric,
                source,
                outcome: if *metric == "files" {
                    Ok(())
                } else {
                    Err(
                        "SQL Server error 300: VIEW SERVER STATE permission was denied on \
                         object 'server', database 'master'."
                            .into(),
                    )
                },
            })
            .collect(),
        ..sysadmin_2022()
    };
    let report = preflight::evaluate(&answers, &seed_cells());
    let verdict = |cell: &str| report.cells.iter().find(|c| c.cell == cell).unwrap();
    // Every `ifi = false` cell sets trace flags (1805/1806, and 3004/3605 for the zeroing
    // proof), whatever the IFI state: sysadmin, from the permission table (finding A1).
    assert!(verdict("test_1")
        .blockers
        .iter()
        .any(|b| b.starts_with("`DBCC TRACEON`, `DBCC TRACEOFF` need sysadmin")));
    assert!(verdict("test_2")
        .blockers
        .iter()
        .any(|b| b.contains("IFI state is unreadable")));
    assert!(verdict("test_6")
        .blockers
        .iter()
        .any(|b| b.contains("DBBENCH_MSSQL_ALLOW_INSTANCE_CHANGES=1")));
    // Server-wide facts are said once, in the checks, not on every cell.
    assert!(report
        .checks
        .iter()
        .any(|c| c.what.starts_with("VIEW SERVER STATE") && c.ok == Some(false)));
    assert!(verdict("data_files_16")
        .notes
        .iter()
        .all(|n| !n.contains("VIEW SERVER STATE")));
    insta::assert_snapshot!(report.render());
}

/// Babelfish for PostgreSQL 4.2.0's answers, recorded from the server `shared/babelfish/` builds.
fn babelfish_42() -> Answers {
    let missing = |what: &str| {
        Err(format!(
            "Babelfish error 33557097: running `SELECT …`: relation \"{what}\" does not exist \
             (severity 16, state 1)"
        ))
    };
    Answers {
        product: Product::Babelfish,
        version: "Babelfish for PostgreSQL 12.0.2000.8 (SP2.0) Standard Edition".into(),
        major: 12,
        ifi: IfiState::Unknown(
            "Babelfish error 33557097: relation \"sys.dm_server_services\" does not exist".into(),
        ),
        // HAS_PERMS_BY_NAME answers for every permission, ALTER ANY EVENT SESSION 0.
        permissions: Permissions {
            sysadmin: Some(true),
            alter_settings: Some(true),
            alter_any_event_session: Some(false),
            view_server_state: Some(true),
            view_database_state: Some(true),
            alter_any_database: Some(true),
            create_any_database: Some(true),
            create_database_in_master: Some(true),
            // Recorded: HAS_PERMS_BY_NAME answers 0 for ALTER ANY CONNECTION (its KILL works all
            // the same: mssql_live's timeout test).
            alter_any_connection: Some(false),
        },
        dirs: Err(
            "the server reports no default data or log directory (SERVERPROPERTY(\
             'InstanceDefaultDataPath') is NULL; sys.master_files has no row for master)"
                .into(),
        ),
        floors: Floors::from_model(Ok(&[])),
        tempdb_files: Ok(Vec::new()),
        trace_status: Err(
            "Babelfish error 33557097: running `DBCC TRACESTATUS(1805, -1)`: DBCC TRACESTATUS \
             is not currently supported in Babelfish (severity 16, state 1)"
                .into(),
        ),
        probes: vec![
            Probe {
                metric: "waits",
                source: "sys.dm_os_wait_stats",
                outcome: missing("sys.dm_os_wait_stats"),
            },
            Probe {
                metric: "files",
                source: "sys.database_files",
                outcome: Err("the server answered with no rows".into()),
            },
        ],
        ..sysadmin_2022()
    }
}

#[test]
fn babelfish_cells_are_refused_with_one_sentence_per_reason() {
    let mut cells = seed_cells();
    // A cell that declares nothing about its files: the server places them, so it runs.
    cells.push((
        "quick_start",
        "server_placed",
        StorageSpec::DEFAULT,
        CacheState::Warm,
    ));
    let report = preflight::evaluate(&babelfish_42(), &cells);
    let text = report.render();
    assert!(
        report
            .cells
            .iter()
            .all(|c| c.blockers.is_empty() == (c.cell == "server_placed")),
        "{text}"
    );
    let test_5 = report.cells.iter().find(|c| c.cell == "test_5").unwrap();
    assert!(
        test_5
            .blockers
            .iter()
            .any(|b| b.starts_with("`maxdop`: it has no ALTER DATABASE SCOPED CONFIGURATION")),
        "{:?}",
        test_5.blockers
    );
    // What the product lacks decides alone: no version rule of SQL Server, no directories.
    assert!(
        !text.contains("SQL Server 2016 or later") && !text.contains("set DBBENCH_VOLUMES;"),
        "{text}"
    );
    // Every [ok] stands on an answer: no trace flags, no DMVs, no files listed here.
    for line in [
        "[no] trace flags",
        "[no] waits",
        "[no] files",
        "[no] size floors",
    ] {
        assert!(text.contains(line), "{line}: {text}");
    }
    assert!(text.starts_with("dbbench preflight: Babelfish for PostgreSQL at sql2022,1433"));
    // Each reason is written once, however many cells it blocks.
    assert_eq!(
        text.matches("ignores file specifications").count(),
        1,
        "{text}"
    );
    insta::assert_snapshot!(text);
}

#[tokio::test]
async fn run_asks_the_server_and_creates_nothing() {
    let server = ScriptedServer::new();
    server
        .on(
            "SERVERPROPERTY('ProductVersion')",
            Reply::rows(
                &[
                    "product_version",
                    "edition",
                    "engine_edition",
                    "default_data_path",
                    "default_log_path",
                    "version_text",
                ],
                vec![vec![
                    Value::Text("16.0.4135.4".into()),
                    Value::Text("Developer Edition (64-bit)".into()),
                    Value::Int(3),
                    Value::Text("/var/opt/mssql/data/".into()),
                    Value::Text("/var/opt/mssql/data/".into()),
                    Value::Text("Microsoft SQL Server 2022".into()),
                ]],
            ),
        )
        .on(
            "HAS_PERMS_BY_NAME",
            Reply::rows(
                &[
                    "sysadmin",
                    "alter_any_event_session",
                    "view_server_state",
                    "create_any_database",
                ],
                vec![vec![
                    Value::Int(0),
                    Value::Int(1),
                    Value::Int(1),
                    Value::Int(1),
                ]],
            ),
        );
    let settings = ConnectSettings::scripted(
        "server=tcp:sql2022,1433;user id=dba;password=Pre!flight9",
        &server,
    )
    .unwrap();
    let report = preflight::run(&settings, &seed_cells(), false)
        .await
        .unwrap();
    let text = report.render();
    assert!(
        text.starts_with(
            "dbbench preflight: Microsoft SQL Server at sql2022,1433 (nothing was created)"
        ),
        "{text}"
    );
    assert!(text.contains("[no] trace flags"), "{text}");
    assert!(
        text.contains("[ok] server-scoped Extended Events"),
        "{text}"
    );
    assert!(!text.contains("Pre!flight9"));
    // Only reads: SELECTs, DBCC TRACESTATUS, DBCC LOGINFO and the error log, nothing that creates
    // or changes.
    let writes: Vec<_> = server
        .calls()
        .into_iter()
        .filter(|c| c.api != Api::Login)
        .filter(|c| {
            !c.sql.starts_with("SELECT")
                && !c.sql.starts_with("DBCC TRACESTATUS")
                && !c.sql.starts_with("DBCC LOGINFO")
                && !c.sql.starts_with("EXEC sys.xp_readerrorlog")
        })
        .collect();
    assert!(
        writes.is_empty(),
        "the preflight changes nothing: {writes:?}"
    );
    assert!(server.calls().len() > 5, "it did ask the server");
}

/// Finding A4: right after a crashed run left an IFI-off flag on, the run refuses `ifi = true`
/// cells; the preflight says so too, instead of "can run".
#[test]
fn ifi_true_cells_cannot_run_while_an_ifi_off_flag_is_on() {
    let answers = Answers {
        ifi_off_flag_on: true,
        ..sysadmin_2022()
    };
    let report = preflight::evaluate(&answers, &seed_cells());
    let verdict = |cell: &str| report.cells.iter().find(|c| c.cell == cell).unwrap();
    assert!(
        verdict("test_2")
            .blockers
            .iter()
            .any(|b| b.contains("trace flag 1805 or 1806 is on globally")),
        "{}",
        report.render()
    );
    assert!(verdict("test_1").blockers.is_empty(), "{}", report.render());
}

/// Finding A5: a login with `CREATE DATABASE` granted in master (not `CREATE ANY DATABASE`) can
/// create databases, as the CREATE DATABASE docs say; findings A1 and B3: a login that is not
/// sysadmin cannot run `ifi = false` cells even where IFI is already off, and without the
/// opt-in every instance-wide change is refused and listed once with a shared-server warning.
#[test]
fn create_database_in_master_is_enough_and_instance_changes_are_listed() {
    let answers = Answers {
        permissions: Permissions {
            sysadmin: Some(false),
            create_any_database: Some(false),
            create_database_in_master: Some(true),
            alter_any_database: Some(false),
            ..sysadmin_2022().permissions
        },
        ifi: IfiState::Disabled,
        allow_instance_changes: false,
        ..sysadmin_2022()
    };
    let report = preflight::evaluate(&answers, &seed_cells());
    let verdict = |cell: &str| report.cells.iter().find(|c| c.cell == cell).unwrap();
    assert!(
        report
            .cells
            .iter()
            .all(|c| !c.blockers.iter().any(|b| b.contains("CREATE DATABASE"))),
        "{}",
        report.render()
    );
    let test_1 = &verdict("test_1").blockers;
    assert!(
        test_1.iter().any(|b| b.contains("`DBCC TRACEON`"))
            && test_1
                .iter()
                .any(|b| b.contains("DBBENCH_MSSQL_ALLOW_INSTANCE_CHANGES=1")),
        "{test_1:?}"
    );
    let shared = report
        .checks
        .iter()
        .find(|c| c.what.starts_with("instance-wide changes"))
        .unwrap();
    assert_eq!(shared.ok, Some(false));
    assert!(
        shared
            .detail
            .contains("turns instant file initialization off for the whole instance")
            && shared.detail.contains("vlf::doubling test_1")
            && shared.detail.contains("other people's sessions"),
        "{}",
        shared.detail
    );
}

/// Finding N8: a benchmark's `cache = "cold"` is seen by the preflight. Its statements, their
/// server-wide effect and the permission they need are shown, and on a shared server without
/// the opt-in the cell is refused up front, as the run's admission refuses it.
#[test]
fn a_cold_cache_cell_is_shown_and_refused_without_the_opt_in() {
    let cold = vec![(
        "cold::reads",
        "cold_cell",
        StorageSpec::DEFAULT,
        CacheState::Cold,
    )];
    let allowed = preflight::evaluate(&sysadmin_2022(), &cold);
    let text = allowed.render();
    let cell = &allowed.cells[0];
    assert!(cell.blockers.is_empty(), "{text}");
    assert!(
        cell.notes
            .iter()
            .any(|n| n.contains("CHECKPOINT; DBCC DROPCLEANBUFFERS") && n.contains("sysadmin")),
        "{text}"
    );
    assert!(
        text.contains("DBCC DROPCLEANBUFFERS empties the whole instance's buffer pool")
            && text.contains("cold::reads cold_cell"),
        "{text}"
    );
    let shared = Answers {
        allow_instance_changes: false,
        ..sysadmin_2022()
    };
    let refused = preflight::evaluate(&shared, &cold);
    assert!(
        refused.cells[0]
            .blockers
            .iter()
            .any(|b| b.starts_with("`cache`")
                && b.contains("DBBENCH_MSSQL_ALLOW_INSTANCE_CHANGES=1")),
        "{}",
        refused.render()
    );
    // The same cell with a warm cache changes nothing outside its database.
    let warm = vec![(
        "cold::reads",
        "warm_cell",
        StorageSpec::DEFAULT,
        CacheState::Warm,
    )];
    assert!(preflight::evaluate(&shared, &warm).cells[0]
        .blockers
        .is_empty());
}

/// Finding N14: the restart hook restarts the whole instance before every repetition; the
/// preflight's shared-server warning names it (not its command), and without the opt-in the
/// cells are refused, as the run's admission refuses them.
#[test]
fn the_shared_server_warning_names_the_restart_hook() {
    let shared = Answers {
        allow_instance_changes: false,
        restart_hook: true,
        ..sysadmin_2022()
    };
    let cells = vec![(
        "quick_start",
        "plain",
        StorageSpec::DEFAULT,
        CacheState::Warm,
    )];
    let report = preflight::evaluate(&shared, &cells);
    let check = report
        .checks
        .iter()
        .find(|c| c.what == "instance-wide changes (shared server)")
        .unwrap();
    assert_eq!(check.ok, Some(false), "{}", report.render());
    assert!(report.cells[0]
        .blockers
        .iter()
        .any(|b| b.starts_with("DBBENCH_MSSQL_RESTART restarts the whole instance")));
    assert!(
        check
            .detail
            .contains("DBBENCH_MSSQL_RESTART restarts the whole instance")
            && check
                .detail
                .contains("is not set, so these cells are refused"),
        "{}",
        check.detail
    );
    let quiet = Answers {
        allow_instance_changes: false,
        ..sysadmin_2022()
    };
    let report = preflight::evaluate(&quiet, &cells);
    assert!(report
        .checks
        .iter()
        .all(|c| !c.detail.contains("DBBENCH_MSSQL_RESTART")));
}
