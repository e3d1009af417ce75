//! The SQL Server backend against a live server: every seed suite's cells (suites/src/vlf.rs,
//! population.rs, data_files.rs, mirrored here because dbbench-core cannot depend on the suites)
//! and cells that declare nothing about their files (the quick start's doubling on the credit
//! fixture, an index build, a concurrent load of eight connections) run end to end at smoke
//! scale (create, bulk-load the credit fixture, measure, collect evidence, drop), after the
//! preflight says which cells this server and login allow; plus a refused login, session
//! settings and the instance lock; and the conformance suite (`support::conformance`: lifecycle,
//! a timeout that kills a runaway statement, the driver, settings read-back, and the sweep that
//! drops a killed run's database at the next start). Every test removes what it created, also
//! when it fails (`Leftovers`, the live target's leftovers). Runs only when
//! `DBBENCH_MSSQL` holds an ADO connection string; otherwise it prints one line, `skipped:
//! DBBENCH_MSSQL not set`, and passes, unless `DBBENCH_REQUIRE_MSSQL=1` (CI, against Babelfish)
//! makes a missing server a failure.
//!
//! ```text
//! DBBENCH_MSSQL="server=tcp:localhost,1433;user id=sa;password=…;TrustServerCertificate=true" \
//!     cargo test -p dbbench-core --test mssql_live -- --nocapture
//! ```

mod support;

use dbbench_core::__internals::config::{
    BackendKind, FixtureKind, Recovery, RunSpec, Size, StorageSpec,
};
use dbbench_core::__internals::mssql::{marker, preflight, ConnectSettings, MssqlBackend};
use dbbench_core::__internals::run_benchmark;
use dbbench_core::__internals::Backend;
use dbbench_core::__internals::Volumes;
use dbbench_core::__internals::{BenchmarkSpec, BodyFuture, CellSpec};
use dbbench_core::driver::{Load, Op, Work};
use dbbench_core::results::{CellStatus, FileKind};
use dbbench_core::{Connection, Error, Scale, Session};
use std::io::Write;
use support::{cell, context, grow_mib, mib};

// Lifecycle, cancel (a timeout kills the runaway session from a second connection), driver,
// settings read-back and the stale sweep, on the live server: the conformance suite. Here rather
// than in a file of its own so that CI's live step (`--test mssql_live`) runs it.
support::backend_conformance!(conformance, support::conformance::mssql::Live);

/// The VLF suite's body: the article's doubling insert five times, with laps.
fn doubling(db: &mut Session) -> BodyFuture<'_> {
    Box::pin(async move {
        support::double(db, 5).await?;
        let rows: i64 = db
            .query_scalar("SELECT COUNT_BIG(*) FROM dbo.charge")
            .await?;
        db.record_count("rows_after", rows);
        Ok(())
    })
}

/// The population and data-files suites' body (suites/src/big_rows.rs): 4.1 KB rows inserted by
/// four connections in transactions of ten.
fn populate(db: &mut Session) -> BodyFuture<'_> {
    Box::pin(async move {
        db.execute(
            "CREATE TABLE dbo.big (c1 bigint IDENTITY NOT NULL, \
             c2 datetime NOT NULL DEFAULT GETDATE(), c3 char(4100) NOT NULL DEFAULT 'a')",
        )
        .await?;
        let rows = db.scale().count(16 << 30).div_ceil(8192).max(1);
        let load = Load::new(4, Work::Statements(rows)).statements_per_transaction(10);
        db.load(load)
            .run(async move |conn: &mut Connection, _op: Op| {
                conn.execute("INSERT INTO dbo.big DEFAULT VALUES").await
            })
            .await?;
        let count: i64 = db.query_scalar("SELECT count(*) FROM dbo.big").await?;
        db.record_count("rows_after", count);
        Ok(())
    })
}

const fn sized(mib_: u64, text: &'static str) -> Option<Size> {
    Some(mib(mib_, text))
}

const VLF: StorageSpec = StorageSpec {
    data_size: sized(1000, "1000MB"),
    log_size: sized(400, "400MB"),
    recovery: Some(Recovery::Full),
    ifi: Some(true),
    growth: Some(grow_mib(1024, "1024MB")),
    log_growth: Some(grow_mib(1024, "1024MB")),
    ..StorageSpec::DEFAULT
};
const PREGROWN: StorageSpec = StorageSpec {
    log_size: sized(32000, "32000MB"),
    log_pregrow: sized(4000, "4000MB"),
    ..VLF
};
const POPULATION: StorageSpec = StorageSpec {
    data_size: sized(1 << 20, "1TB"),
    growth: Some(grow_mib(1024, "1024MB")),
    ifi: Some(true),
    log_size: sized(250, "250MB"),
    log_growth: Some(grow_mib(50, "50MB")),
    ..StorageSpec::DEFAULT
};
const fn files(n: u32) -> StorageSpec {
    StorageSpec {
        data_files: n,
        data_size: sized(160 << 10, "160GB"),
        growth: Some(grow_mib(1024, "1024MB")),
        ifi: Some(true),
        log_size: sized(8 << 10, "8GB"),
        log_growth: Some(grow_mib(1024, "1024MB")),
        ..StorageSpec::DEFAULT
    }
}
const MSSQL_ONLY: &[BackendKind] = &[BackendKind::named("mssql")];
const fn on_mssql(name: &'static str, storage: StorageSpec) -> CellSpec {
    CellSpec {
        name,
        storage,
        backends: MSSQL_ONLY,
    }
}

support::benchmark! {
    static VLF_DOUBLING = doubling,
    title: "vlf::doubling on SQL Server",
    run: RunSpec { fixture: FixtureKind::Credit, scale_storage: true, ..RunSpec::DEFAULT },
    cells: [
        on_mssql("test_1", StorageSpec { growth: Some(grow_mib(1, "1MB")), log_growth: Some(grow_mib(1, "1MB")), ifi: Some(false), ..VLF }),
        on_mssql("test_2", StorageSpec { growth: Some(grow_mib(1, "1MB")), log_growth: Some(grow_mib(1, "1MB")), ..VLF }),
        on_mssql("test_3", VLF),
        on_mssql("test_4", PREGROWN),
        on_mssql("test_5", StorageSpec { maxdop: Some(4), ..PREGROWN }),
        on_mssql("test_6", StorageSpec {
            maxdop: Some(4),
            tempdb_files: Some(4),
            tempdb_size: sized(2048, "2048MB"),
            tempdb_growth: Some(grow_mib(1024, "1024MB")),
            ..PREGROWN
        }),
    ],
}

support::benchmark! {
    static POPULATION_LOAD = populate,
    title: "population::population on SQL Server",
    run: RunSpec { scale_storage: true, smoke_divisor: 65536, default_divisor: 1024, ..RunSpec::DEFAULT },
    cells: [
        on_mssql("same_volume", POPULATION),
        on_mssql("separate_volumes", StorageSpec { data_on: &["data"], log_on: Some("log"), ..POPULATION }),
    ],
}

support::benchmark! {
    static EQUAL_SHARES = populate,
    title: "data_files::equal_shares on SQL Server",
    run: RunSpec { scale_storage: true, smoke_divisor: 16384, default_divisor: 256, ..RunSpec::DEFAULT },
    cells: [
        on_mssql("data_files_1", files(1)),
        on_mssql("data_files_2", files(2)),
        on_mssql("data_files_4", files(4)),
        on_mssql("data_files_8", files(8)),
        on_mssql("data_files_16", files(16)),
    ],
}

/// The custom benchmark's body (examples/src/custom_benchmark.rs): an index on the fixture.
fn index_build(db: &mut Session) -> BodyFuture<'_> {
    Box::pin(async move {
        db.execute("CREATE INDEX charge_member ON dbo.charge (member_no, charge_dt)")
            .await?;
        db.record_count("rows_after", 32 * db.scale().credit_rows() as i64);
        Ok(())
    })
}

/// A concurrent load on the fixture: one doubling `INSERT … SELECT`, then eight connections
/// inserting 4.1 KB rows in transactions of ten through the driver.
fn concurrent(db: &mut Session) -> BodyFuture<'_> {
    Box::pin(async move {
        let sql = dbbench_core::fixture::doubling_insert(db.dialect(), 1);
        db.execute(&sql).await?;
        db.execute(
            "CREATE TABLE dbo.big (c1 bigint IDENTITY NOT NULL, \
             c2 datetime NOT NULL DEFAULT GETDATE(), c3 char(4100) NOT NULL DEFAULT 'a')",
        )
        .await?;
        let load = Load::new(8, Work::Statements(400)).statements_per_transaction(10);
        db.load(load)
            .run(async move |conn: &mut Connection, _op: Op| {
                conn.execute("INSERT INTO dbo.big DEFAULT VALUES").await
            })
            .await?;
        let count: i64 = db.query_scalar("SELECT count(*) FROM dbo.big").await?;
        db.record_count("rows_after", count);
        Ok(())
    })
}

// Cells that declare nothing about their files: the server places them, so these run on every
// product that speaks TDS, Babelfish included.
support::benchmark! {
    static QUICK_START = doubling,
    title: "the quick start's doubling with the server's own file placement",
    run: RunSpec { fixture: FixtureKind::Credit, ..RunSpec::DEFAULT },
    cells: [cell("server_placed", StorageSpec::DEFAULT)],
}

support::benchmark! {
    static INDEX_BUILD = index_build,
    title: "the custom benchmark's index build",
    run: RunSpec { fixture: FixtureKind::Credit, ..RunSpec::DEFAULT },
    cells: [cell("server_placed", StorageSpec::DEFAULT)],
}

support::benchmark! {
    static CONCURRENT = concurrent,
    title: "INSERT … SELECT and eight connections through the driver",
    run: RunSpec { fixture: FixtureKind::Credit, ..RunSpec::DEFAULT },
    cells: [cell("server_placed", StorageSpec::DEFAULT)],
}

/// Every benchmark of this test: the seed suites' and the product-agnostic ones.
fn benchmarks() -> [&'static BenchmarkSpec; 6] {
    [
        &VLF_DOUBLING,
        &POPULATION_LOAD,
        &EQUAL_SHARES,
        &QUICK_START,
        &INDEX_BUILD,
        &CONCURRENT,
    ]
}

/// The server of `DBBENCH_MSSQL`, or `None` (the test is skipped).
fn server() -> Option<String> {
    support::conformance::mssql::live_server()
}

/// Removes, when dropped (also while a failed assertion unwinds), every database of this test
/// process (`dbbench_%<pid>%`) and any `dbbench_owner` property on master naming a process this
/// test staged, through a fresh connection on a thread of its own, so that a failing live test
/// leaves nothing behind on the server.
struct Leftovers {
    settings: ConnectSettings,
    markers: Vec<String>,
}

impl Drop for Leftovers {
    fn drop(&mut self) {
        let settings = self.settings.clone();
        let markers = std::mem::take(&mut self.markers);
        let done = std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .unwrap();
            runtime.block_on(remove_leftovers(&settings, &markers))
        })
        .join();
        if let Ok(Err(e)) | Err(e) = done.map_err(|_| "the clean-up panicked".to_string()) {
            say(&format!("could not clean up after the test: {e}"));
        }
    }
}

async fn remove_leftovers(settings: &ConnectSettings, markers: &[String]) -> Result<(), String> {
    let mut conn = Connection::new(
        settings
            .connect(Some("master"))
            .await
            .map_err(|e| e.to_string())?,
    );
    let pattern = format!("dbbench[_]%{}%", std::process::id());
    let names: Vec<String> = conn
        .query(&format!(
            "SELECT CAST(name AS nvarchar(128)) AS name FROM sys.databases WHERE name LIKE '{pattern}'"
        ))
        .await
        .map_err(|e| e.to_string())?
        .iter()
        .map(|r| r.get::<String>(0).unwrap())
        .collect();
    for name in names {
        // The plain drop works on every product; SET SINGLE_USER first where it exists.
        let _ = conn
            .batch(&format!(
                "ALTER DATABASE [{name}] SET SINGLE_USER WITH ROLLBACK IMMEDIATE"
            ))
            .await;
        conn.batch(&format!("DROP DATABASE [{name}]"))
            .await
            .map_err(|e| format!("dropping {name}: {e}"))?;
        say(&format!("removed {name}, which the test left"));
    }
    for marker in markers {
        conn.batch(&marker::stray_property_cleanup_sql(marker))
            .await
            .map_err(|e| e.to_string())?;
    }
    Ok(())
}

fn say(line: &str) {
    let _ = writeln!(std::io::stderr().lock(), "{line}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn lifecycle_on_a_live_server() {
    let Some(ado) = server() else {
        return;
    };
    let settings = ConnectSettings::parse(&ado).expect("DBBENCH_MSSQL parses");
    let _leftovers = Leftovers {
        settings: settings.clone(),
        markers: Vec::new(),
    };
    let volumes = Volumes::from_env().unwrap();
    // The preflight first, as a DBA would run it: it decides which cells must succeed here.
    let cells: Vec<(&str, &str, StorageSpec, dbbench_core::results::CacheState)> = benchmarks()
        .iter()
        .flat_map(|b| {
            let scale = Scale::smoke().for_benchmark(&b.run);
            b.cells.iter().map(move |c| {
                (
                    b.name,
                    c.name,
                    c.storage.scaled(b.run.scale_storage, &scale),
                    b.run.cache,
                )
            })
        })
        .collect();
    let allow = dbbench_core::__internals::mssql::instance::allowed_by_env();
    let report = preflight::run(&settings, &cells, allow)
        .await
        .expect("preflight");
    say(&report.render());

    let mut backend = Backend::new(MssqlBackend::from_env().await.expect("connects"));
    let info = backend.info().await.unwrap();
    for key in [
        "edition",
        "ifi",
        "product",
        "product_version",
        "host_platform",
        "size floors",
        "wait_filter",
    ] {
        assert!(info.preconditions.contains_key(key), "precondition {key}");
    }

    let ctx = context("mssql-live", Scale::smoke(), volumes);
    let fixture_rows = Scale::smoke().credit_rows() as i64;
    let mut ran = Vec::new();
    for bench in benchmarks() {
        let result = run_benchmark(bench, None, &ctx, &mut backend)
            .await
            .unwrap();
        dbbench_core::__internals::publish(&result, &bench.file_stem(), &ctx.work_dir).unwrap();
        say(&dbbench_core::__internals::summary::render(&result));
        for cell in &result.cells {
            let verdict = report
                .cells
                .iter()
                .find(|v| v.benchmark == bench.name && v.cell == cell.name)
                .unwrap();
            if !verdict.blockers.is_empty() {
                assert_ne!(
                    cell.status,
                    CellStatus::Ok,
                    "the preflight said {} cannot run",
                    cell.name
                );
                continue;
            }
            // A build where the IFI-off trace flag does not work fails such cells, saying so.
            if let CellStatus::Failed(why) = &cell.status {
                if why.contains("IFI cannot be turned off at runtime on this build") {
                    say(&format!("{} {}: {why}", bench.name, cell.name));
                    continue;
                }
            }
            assert_eq!(cell.status, CellStatus::Ok, "cell {}", cell.name);
            let run = &cell.runs[0];
            if bench.run.fixture == FixtureKind::Credit {
                assert_eq!(run.counts["fixture_rows"], fixture_rows);
            }
            if bench.name == "doubling" {
                assert_eq!(run.counts["rows_after"], fixture_rows * 32);
                assert_eq!(run.laps.len(), 5);
            } else {
                assert!(run.counts["rows_after"] > 0);
            }
            ran.push(format!("{}::{}", bench.name, cell.name));
            // Every metric is either present or recorded as unavailable with the server's reason.
            for (present, key) in [
                (!run.files.is_empty(), "files"),
                (run.log.is_some(), "vlf"),
                (!run.waits.is_empty(), "waits"),
                (!run.series.is_empty(), "counters"),
            ] {
                assert!(
                    present || run.unavailable.contains_key(key),
                    "{key}: {:?}",
                    run.unavailable
                );
            }
            assert!(
                run.counts.get("files_verified") == Some(&1)
                    || run.unavailable.contains_key("files_verified"),
                "{:?}",
                run.unavailable
            );
            if let Some(log) = &run.log {
                assert!(log.segments_before > 0 && log.segments_after >= log.segments_before);
            }
            let data_files = run
                .files
                .iter()
                .filter(|f| f.kind == FileKind::Data)
                .count();
            if !run.files.is_empty() {
                let declared = bench.cells.iter().find(|c| c.name == cell.name).unwrap();
                assert_eq!(data_files as u32, declared.storage.data_files);
            }
        }
        // The password appears nowhere in the results.
        let json = std::fs::read_to_string(dbbench_core::__internals::paths::results_file(
            &ctx.work_dir,
            &bench.file_stem(),
        ))
        .unwrap();
        assert_eq!(
            settings.scrub(&json),
            json,
            "the results contain the password"
        );
    }

    // Every product that speaks TDS runs the cells that declare nothing about their files.
    for expected in [
        "doubling::server_placed",
        "index_build::server_placed",
        "concurrent::server_placed",
    ] {
        assert!(
            ran.iter().any(|r| r == expected),
            "{expected} did not run: {ran:?}"
        );
    }
    say(&format!("ran: {}", ran.join(", ")));

    // Every database of this process was dropped.
    let mut conn = settings.connect(Some("master")).await.unwrap();
    let pattern = format!("dbbench_%_{}", dbbench_core::__internals::process_tag());
    let left: i64 = conn
        .raw()
        .unwrap()
        .query(
            "SELECT COUNT(*) FROM sys.databases WHERE name LIKE @P1",
            &[&pattern],
        )
        .await
        .unwrap()
        .into_row()
        .await
        .unwrap()
        .and_then(|r| r.get::<i32, _>(0))
        .unwrap_or(-1)
        .into();
    assert_eq!(left, 0, "databases left behind");

    // A refused login is a server error 18456 that does not show the wrong password.
    let wrong = ConnectSettings::parse(&format!(
        "{};password=Wrong_Pass_4242!",
        ado.trim_end_matches(';')
    ))
    .unwrap();
    match wrong.connect(Some("master")).await {
        Err(Error::Database {
            system: "SQL Server",
            code: Some(code),
            message,
            ..
        }) => {
            assert_eq!(code, "18456", "{message}");
            assert!(!message.contains("Wrong_Pass_4242!"), "{message}");
            assert!(
                message.contains("check the user id and password"),
                "{message}"
            );
        }
        other => panic!("expected login failure 18456, got {other:?}"),
    }
    let _ = std::fs::remove_dir_all(&ctx.work_dir);
}

/// A session setting sent through `Connection::execute` lasts for the rest of the session: it
/// goes as a plain batch, not through `sp_executesql`, which restores SET options when it
/// returns (SET Statements (Transact-SQL)). Read back from `sys.dm_exec_sessions`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_setting_lasts_on_a_live_server() {
    let Some(ado) = server() else {
        return;
    };
    let settings = ConnectSettings::parse(&ado).expect("DBBENCH_MSSQL parses");
    let mut conn = Connection::new(settings.connect(Some("master")).await.unwrap());
    let level = "SELECT CAST(transaction_isolation_level AS int) AS transaction_isolation_level \
                 FROM sys.dm_exec_sessions WHERE session_id = @@SPID";
    let before: i64 = conn.query_scalar(level).await.unwrap();
    assert_eq!(before, 2, "READ COMMITTED by default");
    // Babelfish 4.2 refuses SERIALIZABLE unless configured ("not currently supported"): the
    // first level the server accepts is the one checked.
    let mut checked = None;
    for (name, number) in [("SERIALIZABLE", 4), ("REPEATABLE READ", 3), ("SNAPSHOT", 5)] {
        let set = format!("SET TRANSACTION ISOLATION LEVEL {name}");
        match conn.execute(&set).await {
            Ok(_) => {
                checked = Some((name, number));
                break;
            }
            Err(e) => say(&format!("{set}: {e}")),
        }
    }
    let (name, number) = checked.expect("the server accepts some isolation level");
    let after: i64 = conn.query_scalar(level).await.unwrap();
    assert_eq!(after, number, "{name} for the rest of the session");
    conn.execute("SET LOCK_TIMEOUT 1234").await.unwrap();
    let wait: i64 = conn
        .query_scalar("SELECT CAST(@@LOCK_TIMEOUT AS int)")
        .await
        .unwrap();
    assert_eq!(wait, 1234);
}

/// Finding B4 of the third review on a live server: the application lock `dbbench:instance`
/// (`sp_getapplock`, exclusive, session scope) held by one dbbench process keeps a second from
/// taking it, and is free again once the holder's session has ended.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_instance_lock_admits_one_holder_on_a_live_server() {
    use dbbench_core::__internals::mssql::applock::{Mode, ServerLock};
    use std::time::Duration;
    let Some(ado) = server() else {
        return;
    };
    let settings = ConnectSettings::parse(&ado).expect("DBBENCH_MSSQL parses");
    let first = ServerLock::acquire(&settings, Mode::Exclusive, Duration::ZERO)
        .await
        .expect("the first process takes the lock");
    let second = ServerLock::acquire(&settings, Mode::Exclusive, Duration::from_secs(2)).await;
    let err = second.expect_err("a second holder while the first holds it");
    assert!(err.to_string().contains("returned -1"), "{err}");
    drop(first);
    ServerLock::acquire(&settings, Mode::Exclusive, Duration::from_secs(10))
        .await
        .expect("free again once the holder's session ended");
}
