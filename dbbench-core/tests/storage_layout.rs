//! The storage layer under SQLite: data files, extents, log, several connections, teardown.

mod support;

use dbbench_core::__internals::config::StorageSpec;
use dbbench_core::__internals::Volumes;
use support::*;

#[test]
fn default_options_hold_a_database_and_remove_every_file() {
    let dir = scratch("layout-default");
    let layout = layout(&dir, &StorageSpec::DEFAULT, &Volumes::default());
    {
        let mut c = connect(&layout);
        fill(&mut c, 5000);
        let n: i64 = c
            .query_row("SELECT count(*) FROM t", [], |r| r.get(0))
            .unwrap();
        assert_eq!(n, 5000);
        c.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()))
            .unwrap();
        assert_intact(&c);
    }
    let usage = layout.data_usage();
    assert_eq!(usage.len(), 1);
    assert!(usage[0].extents > 10, "{usage:?}");
    assert!(
        !listing(&dir).iter().any(|f| f.ends_with("-wal")),
        "{:?}",
        listing(&dir)
    );
    layout.remove().unwrap();
    assert_eq!(listing(&dir), Vec::<String>::new());
}

#[test]
fn several_connections_write_at_once_in_every_configuration() {
    let volumes_dir = scratch("layout-threads-volumes");
    let mut volumes = Volumes::default();
    volumes.bind("v", &volumes_dir);
    let configs = [
        StorageSpec::DEFAULT,
        StorageSpec {
            data_files: 3,
            data_size: Some(mib(1, "1MB")),
            growth: Some(grow_mib(1, "1MB")),
            ifi: Some(false),
            log_size: Some(mib(1, "1MB")),
            log_growth: Some(grow_mib(1, "1MB")),
            data_on: &["v"],
            ..StorageSpec::DEFAULT
        },
        StorageSpec {
            data_files: 2,
            growth: Some(dbbench_core::__internals::config::Growth::Percent(10)),
            log_on: Some("v"),
            ..StorageSpec::DEFAULT
        },
    ];
    for (i, spec) in configs.iter().enumerate() {
        let dir = scratch(&format!("layout-threads-{i}"));
        let layout = layout(&dir, spec, &volumes);
        connect(&layout)
            .execute_batch("CREATE TABLE t (id INTEGER PRIMARY KEY, pad BLOB)")
            .unwrap();
        std::thread::scope(|s| {
            for _ in 0..4 {
                s.spawn(|| {
                    let mut c = connect(&layout);
                    for _ in 0..20 {
                        insert(&mut c, 100);
                        let _: i64 = c
                            .query_row("SELECT count(*) FROM t", [], |r| r.get(0))
                            .unwrap();
                    }
                });
            }
        });
        let c = connect(&layout);
        let n: i64 = c
            .query_row("SELECT count(*) FROM t", [], |r| r.get(0))
            .unwrap();
        assert_eq!(n, 4 * 20 * 100, "config {i}");
        assert_intact(&c);
        drop(c);
        layout.remove().unwrap();
        assert!(listing(&dir).is_empty(), "config {i}: {:?}", listing(&dir));
    }
    assert!(listing(&volumes_dir).is_empty());
}

#[test]
fn a_closed_database_reattaches_with_its_data() {
    let dir = scratch("layout-attach");
    let spec = StorageSpec {
        data_files: 2,
        data_size: Some(mib(1, "1MB")),
        growth: Some(grow_mib(1, "1MB")),
        ..StorageSpec::DEFAULT
    };
    let first = layout(&dir, &spec, &Volumes::default());
    {
        let mut c = connect(&first);
        c.execute_batch("PRAGMA wal_autocheckpoint = 0").unwrap();
        fill(&mut c, 20_000);
    }
    let usage = first.data_usage();
    let (_, log_size, segments) = first.log_usage();
    drop(first);

    let again =
        dbbench_core::__internals::embedded::storage::Layout::attach(&dir.join("db.db")).unwrap();
    assert_eq!(again.data_usage(), usage, "sizes and extents come back");
    assert_eq!(again.log_usage().1, log_size);
    assert_eq!(
        again.log_usage().2,
        segments,
        "segments are replayed from the size"
    );
    let mut c = connect(&again);
    let n: i64 = c
        .query_row("SELECT count(*) FROM t", [], |r| r.get(0))
        .unwrap();
    assert_eq!(n, 20_000);
    insert(&mut c, 1000);
    assert_intact(&c);
    drop(c);
    again.remove().unwrap();
    assert!(listing(&dir).is_empty(), "{:?}", listing(&dir));
}
