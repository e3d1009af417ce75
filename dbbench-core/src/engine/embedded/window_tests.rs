use super::*;
use crate::model::volume::Volumes;

fn plan(work_dir: &Path, name: &str) -> DatabasePlan {
    DatabasePlan {
        name: format!("dbbench_window_unit_{name}_{}", std::process::id()),
        storage: StorageSpec::DEFAULT,
        volumes: Volumes::default(),
        work_dir: work_dir.to_path_buf(),
        scale: Scale::smoke(),
    }
}

fn frames_in_wal(conn: &rusqlite::Connection) -> i64 {
    conn.query_row("PRAGMA wal_checkpoint(PASSIVE)", [], |r| r.get(1))
        .unwrap()
}

/// The window's connection closes without checkpointing: its WAL is still there, valid, for
/// a later connection, and the log kept for the next database is zero all the same.
#[tokio::test]
async fn the_window_connection_closes_without_a_checkpoint() {
    let tmp = tempfile::tempdir().unwrap();
    let mut backend = EmbeddedBackend::new();
    let db = backend.create(&plan(tmp.path(), "a")).await.unwrap();
    let mut conn = db.connect().await.unwrap();
    conn.conn
        .execute_batch("CREATE TABLE t (x INTEGER); INSERT INTO t VALUES (1);")
        .unwrap();
    db.open_window(&mut conn, CacheState::Warm).await.unwrap();
    conn.conn
        .execute_batch(
            "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r WHERE n < 500) \
                 INSERT INTO t SELECT n FROM r;",
        )
        .unwrap();
    db.close_window(&mut conn).await.unwrap();
    drop(conn);
    let later = db.connect().await.unwrap();
    assert!(
        frames_in_wal(&later.conn) > 0,
        "closing the window's connection checkpointed its WAL"
    );
    let rows: i64 = later
        .conn
        .query_row("SELECT count(*) FROM t", [], |r| r.get(0))
        .unwrap();
    assert_eq!(rows, 501);
    assert_intact(&later.conn);
    drop(later);
    db.drop_database().await.unwrap();

    let next = backend.create(&plan(tmp.path(), "b")).await.unwrap();
    assert!(!next.reused().is_empty(), "the log was kept");
    let log = next
        .layout()
        .unwrap()
        .files()
        .into_iter()
        .find(|p| p.to_string_lossy().ends_with("_log.ldf"))
        .unwrap();
    let bytes = std::fs::read(&log).unwrap();
    assert!(!bytes.is_empty() && bytes.iter().all(|b| *b == 0));
    next.drop_database().await.unwrap();
    backend.release_kept().unwrap();
}
