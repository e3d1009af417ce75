//! A busy server is seen on MariaDB: an instance this test starts, reached the way
//! `DBBENCH_MARIADB` reaches an existing server (`support::conformance::mariadb::Existing`), and
//! another client writing into another schema during some of the windows (a thread inserting one
//! row per statement, bounded in time and rows). Those windows, and only those, are marked `the
//! server was busy: …`; the others read the server's activity too and are not marked. Skipped
//! without MariaDB's programs unless `DBBENCH_REQUIRE_MARIADB=1`. The figures are printed for the
//! record (`docs/busy-machine.md`).

mod support;

use dbbench_core::__internals::mariadb::{self, MariaDbBackend, MariaDbConnection};
use dbbench_core::__internals::{run_benchmark, Backend};
use dbbench_core::__private::{BodyFuture, RunSpec, StorageSpec};
use dbbench_core::results::CellStatus;
use dbbench_core::{Scale, Session};
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::time::{Duration, Instant};
use support::conformance::mariadb::Existing;
use support::neighbour::WRITING;

/// The bodies run so far: every third one runs while the other client writes.
static BODIES: AtomicU32 = AtomicU32::new(0);

fn windows(db: &mut Session) -> BodyFuture<'_> {
    Box::pin(async move {
        let n = BODIES.fetch_add(1, Ordering::SeqCst);
        let busy = n % 3 == 1;
        db.execute("CREATE TABLE IF NOT EXISTS own (x bigint) ENGINE=InnoDB")
            .await?;
        if busy {
            WRITING.start();
        }
        db.execute("INSERT INTO own SELECT seq FROM seq_1_to_1000")
            .await?;
        db.execute("DO SLEEP(1.2)").await?;
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

/// The other client: inserts into `app.orders`, one row a statement (autocommit), while
/// [`WRITING`] says so.
fn other_client(socket: String, stop: &'static AtomicBool) -> std::thread::JoinHandle<u64> {
    std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(async move {
            let opts = mariadb::external::opts(&socket).unwrap();
            let mut conn = MariaDbConnection::connect(&opts, None).await.unwrap();
            conn.batch(
                "CREATE DATABASE app; CREATE TABLE app.orders (id bigint AUTO_INCREMENT \
                 PRIMARY KEY, note varchar(40)) ENGINE=InnoDB",
            )
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
                    conn.batch("INSERT INTO app.orders (note) VALUES ('another app')")
                        .await
                        .unwrap();
                    rows += 1;
                } else if WRITING.stopping() {
                    WRITING.stopped();
                } else {
                    tokio::time::sleep(Duration::from_millis(5)).await;
                }
            }
            let _ = conn.close().await;
            rows
        })
    })
}

#[test]
fn another_client_writing_into_another_schema_marks_its_windows_server_busy() {
    if !mariadb::available_for_tests() {
        return;
    }
    let server = Existing::default();
    let socket = server.socket();
    static STOP: AtomicBool = AtomicBool::new(false);
    let writer = other_client(socket.clone(), &STOP);

    let ctx = support::context(
        "mariadb-server-busy-run",
        Scale::parse("0.002").unwrap(),
        Default::default(),
    );
    let result = support::exclusively(async {
        let mut backend = Backend::new(MariaDbBackend::existing(&socket).await?);
        run_benchmark(&WINDOWS, None, &ctx, &mut backend).await
    });
    STOP.store(true, Ordering::SeqCst);
    let rows = writer.join().unwrap();
    let result = result.unwrap();
    drop(server);
    let cell = &result.cells[0];
    assert_eq!(cell.status, CellStatus::Ok, "{:?}", cell.status);
    assert!(rows > 0, "the other client wrote nothing");
    support::neighbour::check_windows(&cell.runs, "performance_schema");
}
