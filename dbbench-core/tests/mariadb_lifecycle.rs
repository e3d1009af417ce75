//! End to end on a managed MariaDB instance: a database on an instance made from the cell's
//! options (two system tablespace files, a 4 MB increment, a 16 MB redo log on a volume of its
//! own, the binary log on), the credit fixture at a small scale, a window around the article's
//! doubling with its evidence and settings read back, the drop, and nothing left: no server
//! process, no folder. Skipped with a message when `mariadbd` is not installed, unless
//! `DBBENCH_REQUIRE_MARIADB=1`.

mod support;

use dbbench_core::__internals::config::{FixtureKind, Growth, Recovery, Size, StorageSpec};
use dbbench_core::__internals::mariadb::{self, MariaDbBackend};
use dbbench_core::__internals::{Backend, DatabasePlan};
use dbbench_core::results::CacheState;
use dbbench_core::Scale;
use std::path::Path;

const MB: u64 = 1 << 20;

fn storage() -> StorageSpec {
    StorageSpec {
        data_files: 2,
        data_size: Some(Size::new(32 * MB, "32MB")),
        growth: Some(Growth::Fixed(Size::new(4 * MB, "4MB"))),
        log_size: Some(Size::new(16 * MB, "16MB")),
        log_on: Some("redo"),
        recovery: Some(Recovery::Full),
        ..StorageSpec::DEFAULT
    }
}

/// The process ids in the pid files of the instances under `base`.
fn server_pids(base: &Path) -> Vec<u32> {
    std::fs::read_dir(base)
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| std::fs::read_to_string(e.path().join("mariadbd.pid")).ok())
        .filter_map(|t| t.trim().parse().ok())
        .collect()
}

#[tokio::test(flavor = "current_thread")]
async fn a_database_on_a_managed_instance_is_made_measured_and_removed() {
    if !mariadb::available_for_tests() {
        return;
    }
    let work_dir = support::scratch("mariadb-lifecycle");
    let volumes = support::volumes(&work_dir.join("volumes"), &["redo"]);
    let scale = Scale::parse("0.002").unwrap();
    let plan = DatabasePlan {
        name: "dbbench_mdb_lifecycle_1".into(),
        storage: storage(),
        volumes,
        work_dir: work_dir.clone(),
        scale: scale.clone(),
    };
    let mut backend = Backend::new(MariaDbBackend::managed().unwrap());
    backend.check(&plan.storage).unwrap();
    let db = backend.create(&plan).await.unwrap();
    let base = MariaDbBackend::work_base(&work_dir);
    let pids = server_pids(&base);
    assert_eq!(pids.len(), 1, "one server runs: {pids:?}");

    let mut conn = db.connect().await.unwrap();
    let rows = db
        .load_fixture(&mut conn, FixtureKind::Credit, &scale)
        .await
        .unwrap();
    assert_eq!(rows, scale.credit_rows());
    let counted: i64 = conn
        .query_scalar("SELECT count(*) FROM charge")
        .await
        .unwrap();
    assert_eq!(counted as u64, rows);

    db.open_window(&mut conn, CacheState::Warm).await.unwrap();
    for n in 1..=3 {
        let sql = dbbench_core::fixture::doubling_insert(mariadb::DIALECT, n);
        conn.execute(&sql).await.unwrap();
    }
    let ev = db.close_window(&mut conn).await.unwrap();
    let doubled: i64 = conn
        .query_scalar("SELECT count(*) FROM charge")
        .await
        .unwrap();
    assert_eq!(doubled as u64, rows * 8);

    let count = |n: &str| ev.values.get(n).copied();
    let seen = format!("{:?}, unavailable {:?}", ev.values, ev.unavailable);
    assert!(count("mdb_redo_bytes").is_some_and(|b| b > 0.0), "{seen}");
    assert!(count("mdb_redo_writes").is_some_and(|n| n > 0.0), "{seen}");
    assert!(count("mdb_data_fsyncs").is_some_and(|n| n > 0.0), "{seen}");
    let unavailable: Vec<&String> = ev.unavailable.keys().collect();
    assert_eq!(unavailable, ["redo log I/O time"], "{seen}");
    // Full recovery: every commit writes and syncs the binary log, a wait on its file. The
    // storage engine's row calls (table I/O) hold other waits and are not listed.
    let binlog = ev
        .waits
        .iter()
        .find(|w| w.wait_type == "wait/io/file/sql/binlog");
    assert!(
        binlog.is_some_and(|w| w.waiting_tasks > 0 && w.wait_time_s > 0.0),
        "waits: {:?}",
        ev.waits
    );
    assert!(
        ev.waits
            .iter()
            .all(|w| !w.wait_type.starts_with("wait/io/table/")),
        "waits: {:?}",
        ev.waits
    );
    // The redo log's writes, which the performance schema does not see, are InnoDB's counters.
    let redo = &ev.files[2];
    assert_eq!(
        redo.bytes_written as f64, ev.values["mdb_redo_bytes"],
        "{seen}"
    );
    assert_eq!(redo.writes as f64, ev.values["mdb_redo_writes"], "{seen}");
    let names: Vec<&str> = ev.files.iter().map(|f| f.name.as_str()).collect();
    assert_eq!(names, ["ibdata1", "ibdata2", "ib_logfile0"]);
    assert_eq!(ev.files[2].size_after_bytes, 16 * MB);
    let setting = |n: &str| ev.settings[&format!("mdb.{n}")].clone();
    let path = setting("innodb_data_file_path");
    assert_eq!(path.value, "ibdata1:16M;ibdata2:16M:autoextend");
    assert_eq!(path.set_by.as_deref(), Some("data_files,data_size,growth"));
    assert_eq!(setting("innodb_autoextend_increment").value, "4");
    assert_eq!(setting("innodb_log_file_size").value, (16 * MB).to_string());
    assert_eq!(setting("log_bin").value, "1");
    assert_eq!(setting("sync_binlog").value, "1");
    assert_eq!(setting("innodb_file_per_table").value, "0");
    assert_eq!(setting("performance_schema").value, "1");
    // The redo log is on its volume, not in the data directory.
    let redo_volume = work_dir.join("volumes").join("redo");
    let on_volume: Vec<_> = std::fs::read_dir(&redo_volume).unwrap().flatten().collect();
    assert_eq!(on_volume.len(), 1, "{on_volume:?}");
    eprintln!(
        "evidence: values {:?}; files {:?}",
        ev.values,
        ev.files
            .iter()
            .map(|f| (
                f.name.as_str(),
                f.size_before_bytes,
                f.size_after_bytes,
                f.bytes_written
            ))
            .collect::<Vec<_>>()
    );

    drop(conn);
    db.drop_database().await.unwrap();
    drop(backend);
    for pid in pids {
        assert!(
            !Path::new(&format!("/proc/{pid}")).exists()
                || std::fs::read_to_string(format!("/proc/{pid}/stat"))
                    .is_ok_and(|s| s.contains(") Z ")),
            "mariadbd {pid} still runs"
        );
    }
    let left: Vec<_> = std::fs::read_dir(&base)
        .into_iter()
        .flatten()
        .flatten()
        .collect();
    assert!(left.is_empty(), "left behind: {left:?}");
    let left: Vec<_> = std::fs::read_dir(&redo_volume).unwrap().flatten().collect();
    assert!(left.is_empty(), "left on the redo volume: {left:?}");
    std::fs::remove_dir_all(&work_dir).unwrap();
}

#[test]
fn options_without_an_equivalent_are_refused_before_anything_is_made() {
    if !mariadb::available_for_tests() {
        return;
    }
    let backend = Backend::new(MariaDbBackend::managed().unwrap());
    for (storage, option, words) in [
        (
            StorageSpec {
                ifi: Some(false),
                ..StorageSpec::DEFAULT
            },
            "ifi",
            "fallocate()",
        ),
        (
            StorageSpec {
                maxdop: Some(4),
                ..StorageSpec::DEFAULT
            },
            "maxdop",
            "one thread",
        ),
        (
            StorageSpec {
                recovery: Some(Recovery::BulkLogged),
                ..StorageSpec::DEFAULT
            },
            "recovery",
            "only on SQL Server",
        ),
    ] {
        let why = backend.check(&storage).unwrap_err().to_string();
        assert!(
            why.starts_with(&format!(
                "option `{option}` is not supported by the mariadb backend"
            )) && why.contains(words),
            "{why}"
        );
    }
}

/// `cache = "cold"` on a managed instance: the window after a cold opening reads the table it
/// scans from disk (the restart emptied the buffer pool), a warm one from the pool; the window's
/// connection is a working one after the restart, and the server process is a new one.
#[tokio::test(flavor = "current_thread")]
async fn a_cold_window_starts_with_an_empty_buffer_pool() {
    if !mariadb::available_for_tests() {
        return;
    }
    let work_dir = support::scratch("mariadb-cold");
    let scale = Scale::parse("0.01").unwrap();
    let plan = DatabasePlan {
        name: "dbbench_mdb_cold_1".into(),
        storage: StorageSpec::DEFAULT,
        volumes: support::volumes(&work_dir.join("volumes"), &[]),
        work_dir: work_dir.clone(),
        scale: scale.clone(),
    };
    let mut backend = Backend::new(MariaDbBackend::managed().unwrap());
    let db = backend.create(&plan).await.unwrap();
    let base = MariaDbBackend::work_base(&work_dir);
    let mut conn = db.connect().await.unwrap();
    let rows = db
        .load_fixture(&mut conn, FixtureKind::Credit, &scale)
        .await
        .unwrap();
    let scan = "SELECT count(*) FROM charge WHERE charge_amt >= 0";
    let mut reads = Vec::new();
    for cache in [CacheState::Warm, CacheState::Cold] {
        let before = server_pids(&base);
        db.open_window(&mut conn, cache).await.unwrap();
        let counted: i64 = conn.query_scalar(scan).await.unwrap();
        assert_eq!(counted as u64, rows, "{cache:?}");
        let ev = db.close_window(&mut conn).await.unwrap();
        let after = server_pids(&base);
        match cache {
            CacheState::Warm => assert_eq!(before, after, "a warm window restarts nothing"),
            CacheState::Cold => assert_ne!(before, after, "a cold window restarts the server"),
        }
        reads.push(ev.values["mdb_pool_reads"]);
    }
    eprintln!("pages read from disk: warm {}, cold {}", reads[0], reads[1]);
    assert!(
        reads[0] < 10.0,
        "a warm scan reads from the pool: {reads:?}"
    );
    assert!(
        reads[1] > 10.0 * (reads[0] + 1.0),
        "a cold scan reads from disk: {reads:?}"
    );
    drop(conn);
    db.drop_database().await.unwrap();
    drop(backend);
    let left: Vec<_> = std::fs::read_dir(&base)
        .into_iter()
        .flatten()
        .flatten()
        .collect();
    assert!(left.is_empty(), "left behind: {left:?}");
    std::fs::remove_dir_all(&work_dir).unwrap();
}

fn scan_body(db: &mut dbbench_core::Session) -> dbbench_core::__internals::BodyFuture<'_> {
    Box::pin(async move {
        let n: i64 = db
            .query_scalar("SELECT count(*) FROM charge WHERE charge_amt >= 0")
            .await?;
        db.record_count("scanned", n);
        Ok(())
    })
}

support::benchmark! {
    static COLD_SCAN = scan_body,
    title: "a scan of the fixture in a cold window",
    run: dbbench_core::__private::RunSpec {
        repeat: 1,
        warmup: 0,
        fixture: FixtureKind::Credit,
        cache: CacheState::Cold,
        ..dbbench_core::__private::RunSpec::DEFAULT
    },
    cells: [support::cell("only", StorageSpec::DEFAULT)],
}

/// Through the runner, as a `#[db_bench(cache = "cold")]` benchmark runs: the cell runs on the
/// restarted instance (its window reads the table from disk), the OS page cache is dropped too
/// (root), the repetition records a cold start, and nothing is left.
#[test]
fn a_cold_benchmark_runs_through_the_runner() {
    if !mariadb::available_for_tests() {
        return;
    }
    let ctx = support::context(
        "mariadb-cold-run",
        Scale::parse("0.01").unwrap(),
        Default::default(),
    );
    let result = support::exclusively(async {
        let mut backend = Backend::new(MariaDbBackend::managed().unwrap());
        dbbench_core::__internals::run_benchmark(&COLD_SCAN, None, &ctx, &mut backend).await
    })
    .unwrap();
    let cell = &result.cells[0];
    assert_eq!(
        cell.status,
        dbbench_core::results::CellStatus::Ok,
        "{:?}",
        cell.status
    );
    let run = cell.runs.iter().find(|r| !r.warmup).unwrap();
    assert_eq!(
        run.counts["scanned"] as u64,
        Scale::parse("0.01").unwrap().credit_rows()
    );
    assert_eq!(run.start.as_ref().unwrap().cache, CacheState::Cold);
    assert!(run.values["mdb_pool_reads"] > 10.0, "{:?}", run.values);
    let base = MariaDbBackend::work_base(&ctx.work_dir);
    let left: Vec<_> = std::fs::read_dir(&base)
        .into_iter()
        .flatten()
        .flatten()
        .collect();
    assert!(left.is_empty(), "left behind: {left:?}");
}
