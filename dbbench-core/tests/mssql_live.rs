//! The SQL Server backend against a live server: the whole lifecycle (create, bulk-load the
//! credit fixture, measure, collect evidence, drop) of a small two-cell benchmark, plus a refused
//! login. Runs only when `DBBENCH_MSSQL` holds an ADO connection string; otherwise it prints one
//! line, `skipped: DBBENCH_MSSQL not set`, and passes.
//!
//! ```text
//! DBBENCH_MSSQL="server=tcp:localhost,1433;user id=sa;password=…;TrustServerCertificate=true" \
//!     cargo test -p dbbench-core --test mssql_live -- --nocapture
//! ```

mod support;

use dbbench_core::backend::mssql::{ConnectSettings, MssqlBackend};
use dbbench_core::backend::Backend;
use dbbench_core::config::{FixtureKind, Growth, Recovery, RunSpec, StorageSpec};
use dbbench_core::results::{CellStatus, FileKind};
use dbbench_core::runner::run_benchmark;
use dbbench_core::spec::BodyFuture;
use dbbench_core::volume::Volumes;
use dbbench_core::{Error, Scale, Session};
use std::io::Write;
use support::{cell, context, double, grow_mib, mib};

/// Two loops of the article's doubling insert, with laps.
fn doubling(db: &mut Session) -> BodyFuture<'_> {
    Box::pin(async move {
        double(db, 2).await?;
        let rows: i64 = db
            .query_scalar("SELECT COUNT_BIG(*) FROM dbo.charge")
            .await?;
        db.record_count("rows_after", rows);
        Ok(())
    })
}

support::benchmark! {
    static BENCH = doubling,
    title: "Doubling the charge table on SQL Server",
    run: RunSpec {
        fixture: FixtureKind::Credit,
        ..RunSpec::DEFAULT
    },
    cells: [
        cell(
            "growth_1mb",
            StorageSpec {
                data_size: Some(mib(16, "16MB")),
                growth: Some(grow_mib(1, "1MB")),
                log_size: Some(mib(8, "8MB")),
                log_growth: Some(grow_mib(1, "1MB")),
                recovery: Some(Recovery::Full),
                ..StorageSpec::DEFAULT
            }
        ),
        cell(
            "two_files_pregrown_log",
            StorageSpec {
                data_files: 2,
                data_size: Some(mib(32, "32MB")),
                growth: Some(grow_mib(64, "64MB")),
                log_size: Some(mib(64, "64MB")),
                log_growth: Some(Growth::Percent(10)),
                log_pregrow: Some(mib(16, "16MB")),
                recovery: Some(Recovery::Simple),
                maxdop: Some(1),
                ..StorageSpec::DEFAULT
            }
        ),
    ],
}

fn say(line: &str) {
    let _ = writeln!(std::io::stderr().lock(), "{line}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn lifecycle_on_a_live_server() {
    let Some(ado) = std::env::var(dbbench_core::backend::mssql::ENV)
        .ok()
        .filter(|v| !v.trim().is_empty())
    else {
        say("skipped: DBBENCH_MSSQL not set");
        return;
    };
    let settings = ConnectSettings::parse(&ado).expect("DBBENCH_MSSQL parses");
    let mut backend = Backend::Mssql(Box::new(MssqlBackend::from_env().await.expect("connects")));
    let info = backend.info().await.unwrap();
    assert!(
        info.version.starts_with("Microsoft SQL Server"),
        "{}",
        info.version
    );
    for key in ["edition", "ifi", "product_version", "host_platform"] {
        assert!(info.preconditions.contains_key(key), "precondition {key}");
    }

    let ctx = context("mssql-live", Scale::smoke(), Volumes::from_env().unwrap());
    let result = run_benchmark(&BENCH, None, &ctx, &mut backend)
        .await
        .unwrap();
    say(&dbbench_core::summary::render(&result));

    let fixture_rows = Scale::smoke().credit_rows() as i64;
    for cell in &result.cells {
        assert_eq!(cell.status, CellStatus::Ok, "cell {}", cell.name);
        let run = &cell.runs[0];
        assert_eq!(run.counts["fixture_rows"], fixture_rows);
        assert_eq!(run.counts["rows_after"], fixture_rows * 4);
        assert_eq!(run.laps.len(), 2);
        // Every metric is either present or recorded as unavailable with the server's reason.
        assert!(
            !run.files.is_empty() || run.unavailable.contains_key("files"),
            "{:?}",
            run.unavailable
        );
        assert!(
            run.log.is_some() || run.unavailable.contains_key("vlf"),
            "{:?}",
            run.unavailable
        );
        assert!(
            !run.waits.is_empty() || run.unavailable.contains_key("waits"),
            "{:?}",
            run.unavailable
        );
        assert!(
            !run.series.is_empty() || run.unavailable.contains_key("counters"),
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
            assert_eq!(
                data_files as u32,
                BENCH
                    .cells
                    .iter()
                    .find(|c| c.name == cell.name)
                    .unwrap()
                    .storage
                    .data_files
            );
        }
    }

    // Every database of this process was dropped.
    let mut conn = settings.connect(Some("master")).await.unwrap();
    let pattern = format!("dbbench_%_{}", std::process::id());
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

    // The password appears nowhere in the results.
    let json = std::fs::read_to_string(dbbench_core::workdir::results_file(
        &ctx.work_dir,
        &BENCH.file_stem(),
    ))
    .unwrap();
    assert_eq!(
        settings.scrub(&json),
        json,
        "the results contain the password"
    );

    // A refused login is a server error 18456 that does not show the wrong password.
    let wrong = ConnectSettings::parse(&format!(
        "{};password=Wrong_Pass_4242!",
        ado.trim_end_matches(';')
    ))
    .unwrap();
    match wrong.connect(Some("master")).await {
        Err(Error::Server { code, message }) => {
            assert_eq!(code, 18456, "{message}");
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
