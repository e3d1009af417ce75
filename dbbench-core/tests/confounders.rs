//! The confounder check end to end: each backend reads its settings back for every window, a cell
//! that differs from its baseline by one declared option shows nothing else differing, and a
//! setting changed behind dbbench's back (a pragma the body sets, a server option a DBA changes
//! with `sp_configure`) is listed by name with both values; so is a setting that changes between
//! the repetitions of one cell. SQL Server runs against the scripted double, in builds that have
//! it (`_mssql_scripted`, which `cargo test --workspace` turns on).

mod support;

use dbbench_core::__internals::config::{RunSpec, StorageSpec};
#[cfg(feature = "_mssql_scripted")]
use dbbench_core::__internals::mssql::double::{Recorded, Reply, ScriptedServer};
#[cfg(feature = "_mssql_scripted")]
use dbbench_core::__internals::mssql::{ConnectSettings, Hooks, MssqlBackend};
#[cfg(feature = "_mssql_scripted")]
use dbbench_core::__internals::run_benchmark;
#[cfg(feature = "_mssql_scripted")]
use dbbench_core::__internals::Backend;
use dbbench_core::__internals::BodyFuture;
use dbbench_core::__internals::Volumes;
use dbbench_core::results::{CellStatus, ConfounderKind, SettingsCheck};
#[cfg(feature = "_mssql_scripted")]
use dbbench_core::Value;
use dbbench_core::{Scale, Session};
use std::sync::atomic::{AtomicU32, Ordering};
use support::{cell, context, grow_mib};

/// A body that writes a little, and in the cell `tampered` changes what the engine runs with.
fn tampering(db: &mut Session) -> BodyFuture<'_> {
    Box::pin(async move {
        if db.cell() == "tampered" {
            // `wal_autocheckpoint` is set by `recovery`, which does not differ here: still a
            // confounder.
            db.batch("PRAGMA cache_size = -4000; PRAGMA wal_autocheckpoint = 10;")
                .await?;
        }
        db.execute("CREATE TABLE t (a INTEGER)").await?;
        db.execute("INSERT INTO t VALUES (1)").await.map(|_| ())
    })
}

const GROWN: StorageSpec = StorageSpec {
    growth: Some(grow_mib(128, "128MB")),
    ..StorageSpec::DEFAULT
};

support::benchmark! {
    static TAMPERING = tampering,
    title: "one declared difference, one behind dbbench's back",
    run: RunSpec::DEFAULT,
    cells: [
        cell("base", StorageSpec::DEFAULT),
        cell("grown", GROWN),
        cell("tampered", GROWN),
    ],
}

fn assert_ok(result: &dbbench_core::results::BenchmarkResult) {
    for c in &result.cells {
        assert_eq!(c.status, CellStatus::Ok, "{}", c.name);
    }
}

#[test]
fn embedded_a_declared_difference_is_all_that_differs_and_a_changed_pragma_is_listed() {
    let ctx = context("confounders-embedded", Scale::smoke(), Volumes::default());
    let result = support::run_embedded(&TAMPERING, &ctx);
    assert_ok(&result);
    let settings = |cell: usize| &result.cells[cell].runs[0].settings;
    // The read-back holds pragmas and storage parameters, the declared one marked as such.
    assert_eq!(settings(0)["pragma.journal_mode"].value, "wal");
    assert_eq!(settings(0)["pragma.synchronous"].value, "FULL");
    assert_eq!(settings(0)["storage.data_growth"].value, "64MB");
    assert_eq!(settings(1)["storage.data_growth"].value, "128MB");
    assert_eq!(
        settings(1)["storage.data_growth"].set_by.as_deref(),
        Some("growth")
    );
    let check = SettingsCheck::of(&result);
    assert!(check.compared > 15, "{check:?}");
    // `grown` differs from `base` in `growth` only; `tampered` in two pragmas besides.
    assert!(
        check.confounders.iter().all(|c| c.cell == "tampered"),
        "{check:?}"
    );
    let lines = check.described();
    assert_eq!(
        lines,
        vec![
            "pragma.cache_size: -2000 in base (baseline), -4000 in tampered".to_string(),
            // SQLite derives the spill threshold from the cache size: listed too.
            "pragma.cache_spill: 245 in base (baseline), 491 in tampered".to_string(),
            "pragma.wal_autocheckpoint: 1000 in base (baseline), 10 in tampered".to_string(),
        ],
        "{check:?}"
    );
    // The console summary and the report say it.
    let summary = dbbench_core::__internals::summary::render(&result);
    assert!(
        summary.contains("settings: 3 differ where no declared option says they should"),
        "{summary}"
    );
    assert!(
        summary.contains("pragma.cache_size: -2000 in base (baseline), -4000 in tampered"),
        "{summary}"
    );
}

/// Counts the windows of [`drifting`], across its repetitions.
static WINDOWS: AtomicU32 = AtomicU32::new(0);

/// A body that changes a pragma in its second window only.
fn drifting(db: &mut Session) -> BodyFuture<'_> {
    Box::pin(async move {
        if WINDOWS.fetch_add(1, Ordering::SeqCst) == 1 {
            db.batch("PRAGMA cache_size = -3000;").await?;
        }
        db.execute("CREATE TABLE t (a INTEGER)").await.map(|_| ())
    })
}

support::benchmark! {
    static DRIFTING = drifting,
    title: "a pragma that changes between repetitions",
    run: RunSpec { repeat: 3, ..RunSpec::DEFAULT },
    cells: [cell("only", StorageSpec::DEFAULT)],
}

#[test]
fn embedded_a_setting_that_changes_between_repetitions_is_listed() {
    let ctx = context("confounders-drift", Scale::smoke(), Volumes::default());
    let result = support::run_embedded(&DRIFTING, &ctx);
    assert_ok(&result);
    let check = SettingsCheck::of(&result);
    assert_eq!(
        check.described(),
        vec![
            "pragma.cache_size: changed between repetitions of only (-2000 → -3000)".to_string(),
            "pragma.cache_spill: changed between repetitions of only (245 → 368)".to_string(),
        ],
        "{check:?}"
    );
    assert!(matches!(
        check.confounders[0].kind,
        ConfounderKind::BetweenRepetitions { .. }
    ));
}

#[cfg(feature = "_mssql_scripted")]
const ADO: &str = "server=tcp:sql2022,1433;user id=bench;password=C0nfound!Pass";

/// SQL Server 2022 on Linux as the scripted double answers it, with its settings model.
#[cfg(feature = "_mssql_scripted")]
fn sql_server_2022() -> ScriptedServer {
    let text = |v: &str| Value::Text(v.to_string());
    let server = ScriptedServer::new().with_catalog(Recorded::SqlServer2022);
    server
        .on(
            "SERVERPROPERTY('ProductVersion')",
            Reply::rows(
                &[
                    "product_version",
                    "product_level",
                    "product_update_level",
                    "edition",
                    "engine_edition",
                    "babelfish",
                    "default_data_path",
                    "default_log_path",
                    "machine_name",
                    "is_sysadmin",
                    "version_text",
                ],
                vec![vec![
                    text("16.0.4135.4"),
                    text("RTM"),
                    text("CU15"),
                    text("Developer Edition (64-bit)"),
                    Value::Int(3),
                    Value::Null,
                    text("/var/opt/mssql/data/"),
                    text("/var/opt/mssql/data/"),
                    text("sql2022"),
                    Value::Int(1),
                    text(
                        "Microsoft SQL Server 2022 (RTM-CU15) (KB5041321) - 16.0.4135.4 (X64)\n\t\
                         Developer Edition (64-bit) on Linux (Ubuntu 22.04.4 LTS) <X64>",
                    ),
                ]],
            ),
        )
        .on(
            "sys.dm_os_host_info",
            Reply::rows(&["host_platform"], vec![vec![text("Linux")]]),
        )
        .on(
            "sys.dm_server_services",
            Reply::rows(&["ifi"], vec![vec![text("Y")]]),
        )
        .on(
            "AS recovery FROM sys.databases",
            Reply::rows(&["recovery"], vec![vec![text("FULL")]]),
        )
        .on(
            "database_id = 3 AND file_id = 1",
            Reply::rows(&["pages"], vec![vec![Value::Int(1024)]]),
        );
    server
}

/// In the cell `tampered`, a DBA's `sp_configure` lands before the body: a server option changed
/// behind dbbench's back.
#[cfg(feature = "_mssql_scripted")]
fn configuring(db: &mut Session) -> BodyFuture<'_> {
    Box::pin(async move {
        if db.cell() == "tampered" {
            db.batch("EXEC sp_configure N'cost threshold for parallelism', 50; RECONFIGURE;")
                .await?;
        }
        db.execute("CREATE TABLE dbo.t (a int)").await.map(|_| ())
    })
}

#[cfg(feature = "_mssql_scripted")]
support::benchmark! {
    static CONFIGURING = configuring,
    title: "a server option changed behind dbbench's back",
    run: RunSpec::DEFAULT,
    cells: [
        cell("base", StorageSpec::DEFAULT),
        cell("parallel", StorageSpec { maxdop: Some(4), ..StorageSpec::DEFAULT }),
        cell("tampered", StorageSpec { maxdop: Some(4), ..StorageSpec::DEFAULT }),
    ],
}

#[cfg(feature = "_mssql_scripted")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mssql_a_declared_difference_is_all_that_differs_and_sp_configure_is_listed() {
    let server = sql_server_2022();
    let settings = ConnectSettings::scripted(ADO, &server).unwrap();
    let mut backend = Backend::new(
        MssqlBackend::connect(settings, Hooks::default(), false)
            .await
            .unwrap(),
    );
    let ctx = context("confounders-mssql", Scale::smoke(), Volumes::default());
    let result = run_benchmark(&CONFIGURING, None, &ctx, &mut backend)
        .await
        .unwrap();
    assert_ok(&result);
    let settings = |cell: usize| &result.cells[cell].runs[0].settings;
    assert_eq!(settings(0)["database.recovery_model"].value, "FULL");
    assert_eq!(settings(0)["scoped.MAXDOP"].value, "0");
    assert_eq!(settings(1)["scoped.MAXDOP"].value, "4");
    assert_eq!(
        settings(1)["scoped.MAXDOP"].set_by.as_deref(),
        Some("maxdop")
    );
    assert_eq!(
        settings(0)["server.cost threshold for parallelism"].value,
        "5"
    );
    assert_eq!(
        server
            .server_option("cost threshold for parallelism")
            .as_deref(),
        Some("50")
    );
    let check = SettingsCheck::of(&result);
    assert!(check.compared > 25, "{check:?}");
    assert_eq!(
        check.described(),
        // The balanced order runs `tampered` before `parallel` in the first round (Williams:
        // base, tampered, parallel), and the server option outlives the cell that set it: the
        // check names both cells that ran under it.
        vec![
            "server.cost threshold for parallelism: 5 in base (baseline), 50 in parallel"
                .to_string(),
            "server.cost threshold for parallelism: 5 in base (baseline), 50 in tampered"
                .to_string()
        ],
        "{check:?}"
    );
    // One read-back batch per window.
    assert_eq!(
        server
            .calls_with("FROM sys.database_scoped_configurations")
            .len(),
        3
    );
}

#[cfg(feature = "_mssql_scripted")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mssql_a_refused_view_costs_its_scope_only() {
    let server = sql_server_2022();
    server.on(
        "sys.configurations",
        Reply::error(
            229,
            "The SELECT permission was denied on the object 'configurations'.",
        ),
    );
    let settings = ConnectSettings::scripted(ADO, &server).unwrap();
    let mut backend = Backend::new(
        MssqlBackend::connect(settings, Hooks::default(), false)
            .await
            .unwrap(),
    );
    let ctx = context(
        "confounders-mssql-refused",
        Scale::smoke(),
        Volumes::default(),
    );
    let result = run_benchmark(&CONFIGURING, Some(&["base"]), &ctx, &mut backend)
        .await
        .unwrap();
    assert_ok(&result);
    let run = &result.cells[0].runs[0];
    assert!(
        run.unavailable["settings.server"].contains("SELECT permission was denied"),
        "{:?}",
        run.unavailable
    );
    assert!(run.settings.keys().all(|k| !k.starts_with("server.")));
    assert_eq!(run.settings["database.recovery_model"].value, "FULL");
    assert!(run.settings.contains_key("scoped.MAXDOP"));
}
