//! A busy server is seen on PostgreSQL: a cluster this test starts, reached the way
//! `DBBENCH_POSTGRES` reaches a server (dbbench sees only the connection string), and another
//! client of the server writing into another database during some of the windows (a thread
//! inserting one row per transaction, bounded in time and rows). Those windows, and only those,
//! are marked `the server was busy: …`; the other windows read the server's activity too and are
//! not marked. The figures are printed for the record (`docs/busy-machine.md`).

mod support;

use dbbench_core::__internals::postgres::cluster;
use dbbench_core::__internals::postgres::settings::PgSettings;
use dbbench_core::__private::{BodyFuture, RunSpec, StorageSpec};
use dbbench_core::results::CellStatus;
use dbbench_core::{Scale, Session};
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::time::{Duration, Instant};
use support::existing_postgres::ExistingPostgres;
use support::neighbour::WRITING;
use tokio_postgres::NoTls;

/// Runs `sql` as the superuser.
fn as_superuser(url: &str, sql: &str) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let (client, connection) = tokio_postgres::connect(url, NoTls).await.unwrap();
        let io = tokio::spawn(connection);
        client.batch_execute(sql).await.unwrap();
        drop(client);
        let _ = io.await;
    });
}

/// The bodies run so far: every third one runs while the other client writes.
static BODIES: AtomicU32 = AtomicU32::new(0);

fn windows(db: &mut Session) -> BodyFuture<'_> {
    Box::pin(async move {
        let n = BODIES.fetch_add(1, Ordering::SeqCst);
        let busy = n % 3 == 1;
        db.execute("CREATE TABLE IF NOT EXISTS own (x bigint)")
            .await?;
        if busy {
            WRITING.start();
        }
        db.execute("INSERT INTO own SELECT g FROM generate_series(1, 1000) g")
            .await?;
        db.execute("SELECT pg_sleep(1.2)").await?;
        if busy {
            WRITING.stop().await;
        }
        db.record_count("neighbour_writing", i64::from(busy));
        Ok(())
    })
}

support::benchmark! {
    static WINDOWS = windows,
    title: "",
    run: RunSpec {
        repeat: 6,
        warmup: 0,
        ..RunSpec::DEFAULT
    },
    cells: [support::cell("only", StorageSpec::DEFAULT)],
}

/// The other client: inserts into `app.public.orders`, one row a transaction, while
/// [`WRITING`] says so; after each burst it makes its statistics report at once, as a
/// session that keeps writing would within a second.
fn other_client(url: String, stop: &'static AtomicBool) -> std::thread::JoinHandle<u64> {
    std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(async move {
            let (client, connection) = tokio_postgres::connect(&url, NoTls).await.unwrap();
            tokio::spawn(connection);
            client
                .batch_execute("CREATE TABLE orders (id bigserial PRIMARY KEY, note text)")
                .await
                .unwrap();
            let started = Instant::now();
            let mut rows = 0u64;
            // Bounded: a minute and 200,000 rows at most, whatever the run does.
            while !stop.load(Ordering::SeqCst)
                && started.elapsed() < Duration::from_secs(60)
                && rows < 200_000
            {
                if WRITING.wanted() {
                    client
                        .execute("INSERT INTO orders (note) VALUES ('another app')", &[])
                        .await
                        .unwrap();
                    rows += 1;
                } else if WRITING.stopping() {
                    client
                        .batch_execute("SELECT pg_stat_force_next_flush(); SELECT 1")
                        .await
                        .unwrap();
                    WRITING.stopped();
                } else {
                    tokio::time::sleep(Duration::from_millis(5)).await;
                }
            }
            rows
        })
    })
}

#[test]
fn another_client_writing_into_another_database_marks_its_windows_server_busy() {
    if !cluster::available_for_tests() {
        return;
    }
    let base = support::scratch("pg-server-busy");
    let server = ExistingPostgres::start(&base, "busy", Vec::new());
    let admin = server.admin();
    as_superuser(&admin, "CREATE DATABASE app");
    static STOP: AtomicBool = AtomicBool::new(false);
    let writer = other_client(format!("{admin} dbname=app"), &STOP);

    let ctx = support::context(
        "pg-server-busy-run",
        Scale::parse("0.002").unwrap(),
        Default::default(),
    );
    let settings = PgSettings::parse(&admin).unwrap();
    let result = support::try_run_external(&WINDOWS, &ctx, settings);
    STOP.store(true, Ordering::SeqCst);
    let rows = writer.join().unwrap();
    let result = result.unwrap();
    let cell = &result.cells[0];
    assert_eq!(cell.status, CellStatus::Ok, "{:?}", cell.status);
    assert!(rows > 0, "the other client wrote nothing");
    support::neighbour::check_windows(&cell.runs, "pg_stat_database");
}
