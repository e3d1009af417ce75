use super::*;
use crate::model::volume::Volumes;

/// What a loaded database is, as the window sees it: its pages, its rows, where its extents
/// went in the data files, the log, and the data files' bytes (page 1's header aside: its
/// change counters say how the pages got there).
#[derive(Debug, PartialEq)]
struct State {
    pages: i64,
    rows: (i64, f64, String),
    data: Vec<(u64, u64)>,
    log: (u64, u64),
    bytes: Vec<Vec<u8>>,
}

async fn state(db: &EmbeddedDatabase, conn: &mut EmbeddedConnection) -> State {
    db.open_window(conn, CacheState::Warm).await.unwrap();
    let c = &conn.conn;
    let pages = c.query_row("PRAGMA page_count", [], |r| r.get(0)).unwrap();
    let rows = c
        .query_row(
            "SELECT count(*), sum(charge_amt * member_no), group_concat(charge_code, '') \
                 FROM (SELECT * FROM charge ORDER BY charge_no)",
            [],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
        )
        .unwrap();
    let layout = db.layout().unwrap();
    let usage = layout.data_usage();
    let (_, log_size, segments) = layout.log_usage();
    let bytes = usage
        .iter()
        .map(|f| {
            let mut b = std::fs::read(&f.path).unwrap();
            // The header's file change counter and "version valid for" (offsets 24 and 92).
            for at in [24..28, 92..96] {
                b[at].fill(0);
            }
            b
        })
        .collect();
    State {
        pages,
        rows,
        data: usage.iter().map(|f| (f.size_bytes, f.extents)).collect(),
        log: (log_size, segments),
        bytes,
    }
}

/// A copied fixture is the loaded one: the same pages in the same extents of the data files,
/// the same log; the first database of a backend loads the template, the others copy it.
#[tokio::test]
async fn a_copied_fixture_is_the_loaded_one_page_for_page() {
    let tmp = tempfile::tempdir().unwrap();
    // The default scale's 100,000 rows: more than SQLite's page cache holds, so the load
    // spills pages into the WAL before it commits, as the VLF suite's does.
    let scale = Scale::default_scale();
    let rows = scale.credit_rows();
    let mut storage = StorageSpec::DEFAULT;
    // Several files, so the extents' placement (proportional fill) is compared too.
    storage.data_files = 3;
    let plan = |name: &str| DatabasePlan {
        name: format!("dbbench_fixture_unit_{name}_{}", std::process::id()),
        storage,
        volumes: Volumes::default(),
        work_dir: tmp.path().to_path_buf(),
        scale: scale.clone(),
    };
    let mut backend = EmbeddedBackend::new();

    let loaded = backend.create(&plan("loaded")).await.unwrap();
    let mut conn = loaded.connect().await.unwrap();
    fixture::load_credit(&mut conn.conn, rows).unwrap();
    let expected = state(&loaded, &mut conn).await;
    assert_eq!(expected.rows.0, rows as i64);
    drop(conn);
    loaded.drop_database().await.unwrap();

    for (name, copy) in [("first", false), ("second", true)] {
        let db = backend.create(&plan(name)).await.unwrap();
        let mut conn = db.connect().await.unwrap();
        assert_eq!(
            db.load_fixture(&mut conn, FixtureKind::Credit, &scale)
                .await
                .unwrap(),
            rows
        );
        assert_eq!(db.fixture_copied.load(Ordering::Relaxed), copy, "{name}");
        assert_eq!(
            db.reused().iter().any(|r| r.contains("fixture copied")),
            copy
        );
        assert_eq!(state(&db, &mut conn).await, expected, "{name}");
        assert_intact(&conn.conn);
        drop(conn);
        db.drop_database().await.unwrap();
    }
    backend.release_kept().unwrap();
}
