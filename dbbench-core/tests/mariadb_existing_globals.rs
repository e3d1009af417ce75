//! An existing MariaDB server's global settings are never changed (security finding 8): the
//! flushing threshold `innodb_max_dirty_pages_pct`, which a managed instance sets to 0 before
//! each window, stays what its DBA set on a server reached through `DBBENCH_MARIADB`, on every
//! path: a window that ends well, one whose statement fails, one its timeout cancels (its repetitions end as timed out). A second
//! session reads the global every few milliseconds for the whole run, so a change restored
//! afterwards is seen too. The server is an instance this test starts, reached the way
//! `DBBENCH_MARIADB` reaches an existing one (the conformance suite's existing-server target,
//! `support::conformance::mariadb::Existing`). Skipped without MariaDB's programs unless
//! `DBBENCH_REQUIRE_MARIADB=1`.

mod support;

use dbbench_core::__internals::mariadb::{self, MariaDbBackend, MariaDbConnection};
use dbbench_core::__internals::{run_benchmark, Backend};
use dbbench_core::__private::{BodyFuture, RunSpec, StorageSpec};
use dbbench_core::results::CellStatus;
use dbbench_core::{Scale, Session};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};
use support::conformance::mariadb::Existing;

/// The DBA's value: not MariaDB's default (90), so a restore to the default is seen too.
const DBA_PCT: &str = "77";

fn writes(db: &mut Session) -> BodyFuture<'_> {
    Box::pin(async move {
        db.execute("CREATE TABLE IF NOT EXISTS own (x bigint) ENGINE=InnoDB")
            .await?;
        db.execute("INSERT INTO own SELECT seq FROM seq_1_to_2000")
            .await?;
        Ok(())
    })
}

fn fails(db: &mut Session) -> BodyFuture<'_> {
    Box::pin(async move {
        db.execute("INSERT INTO no_such_table VALUES (1)").await?;
        Ok(())
    })
}

fn outlives_its_timeout(db: &mut Session) -> BodyFuture<'_> {
    Box::pin(async move {
        db.execute("DO SLEEP(30)").await?;
        Ok(())
    })
}

const RUN: RunSpec = RunSpec {
    repeat: 2,
    warmup: 0,
    ..RunSpec::DEFAULT
};

support::benchmark! {
    static WRITES = writes,
    title: "",
    run: RUN,
    cells: [support::cell("only", StorageSpec::DEFAULT)],
}

support::benchmark! {
    static FAILS = fails,
    title: "",
    run: RUN,
    cells: [support::cell("only", StorageSpec::DEFAULT)],
}

support::benchmark! {
    static TIMED_OUT = outlives_its_timeout,
    title: "",
    run: RunSpec {
        timeout: Some(Duration::from_secs(1)),
        ..RUN
    },
    cells: [support::cell("only", StorageSpec::DEFAULT)],
}

/// Reads `@@GLOBAL.innodb_max_dirty_pages_pct` until `stop`, every value it saw that is not the
/// DBA's, and how many reads it made.
fn watcher(
    socket: String,
    stop: &'static AtomicBool,
) -> std::thread::JoinHandle<(Vec<String>, u32)> {
    std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(async move {
            let opts = mariadb::external::opts(&socket).unwrap();
            let mut conn = MariaDbConnection::connect(&opts, None).await.unwrap();
            let (mut other, mut reads) = (Vec::new(), 0);
            let started = Instant::now();
            while !stop.load(Ordering::SeqCst) && started.elapsed() < Duration::from_secs(300) {
                let pct = global(&mut conn).await;
                reads += 1;
                if pct != DBA_PCT {
                    other.push(pct);
                }
                tokio::time::sleep(Duration::from_millis(2)).await;
            }
            let _ = conn.close().await;
            (other, reads)
        })
    })
}

/// The global as a number (`77` for the server's `77.000000`).
async fn global(conn: &mut MariaDbConnection) -> String {
    let rows = conn
        .query("SELECT @@GLOBAL.innodb_max_dirty_pages_pct", &[])
        .await
        .unwrap();
    let text: String = rows[0].get(0).unwrap();
    text.parse::<f64>().unwrap().to_string()
}

/// Runs `work` to its end on a runtime of its own.
fn block_on<T>(work: impl std::future::Future<Output = T>) -> T {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
        .block_on(work)
}

#[test]
fn an_existing_server_s_flushing_threshold_is_never_changed_on_any_path() {
    if !mariadb::available_for_tests() {
        return;
    }
    let server = Existing::default();
    let socket = server.socket();
    block_on(async {
        let mut dba = server.admin().await;
        dba.batch(&format!(
            "SET GLOBAL innodb_max_dirty_pages_pct = {DBA_PCT}"
        ))
        .await
        .unwrap();
        assert_eq!(global(&mut dba).await, DBA_PCT);
        let _ = dba.close().await;
    });
    static STOP: AtomicBool = AtomicBool::new(false);
    let watching = watcher(socket.clone(), &STOP);

    let ctx = support::context(
        "mariadb-existing-globals-run",
        Scale::parse("0.002").unwrap(),
        Default::default(),
    );
    let statuses: Vec<CellStatus> = [&WRITES, &FAILS, &TIMED_OUT]
        .into_iter()
        .map(|bench| {
            let result = support::exclusively(async {
                let mut backend = Backend::new(MariaDbBackend::existing(&socket).await?);
                run_benchmark(bench, None, &ctx, &mut backend).await
            })
            .unwrap();
            result.cells[0].status.clone()
        })
        .collect();
    STOP.store(true, Ordering::SeqCst);
    let (other, reads) = watching.join().unwrap();
    let after = block_on(async {
        let mut dba = server.admin().await;
        let pct = global(&mut dba).await;
        let _ = dba.close().await;
        pct
    });
    drop(server);
    assert_eq!(statuses[0], CellStatus::Ok, "{statuses:?}");
    assert_ne!(statuses[1], CellStatus::Ok, "the failing window failed");
    assert!(reads > 10, "the watcher read the global {reads} times");
    assert!(
        other.is_empty(),
        "the global was changed during the run: {other:?}"
    );
    assert_eq!(after, DBA_PCT);
}
