//! The storage layer under SQLite: data files, extents, log, several connections, teardown.

mod common;

use common::*;
use dbbench_core::config::StorageSpec;
use dbbench_core::volume::Volumes;

#[test]
fn default_options_hold_a_database_and_remove_every_file() {
    let dir = scratch("layout-default");
    let layout = layout(&dir, &StorageSpec::DEFAULT, &Volumes::default());
    {
        let mut c = connect(&layout);
        fill(&mut c, 5000);
        let n: i64 = c.query_row("SELECT count(*) FROM t", [], |r| r.get(0)).unwrap();
        assert_eq!(n, 5000);
        c.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(())).unwrap();
        assert_intact(&c);
    }
    let usage = layout.data_usage();
    assert_eq!(usage.len(), 1);
    assert!(usage[0].extents > 10, "{usage:?}");
    assert!(!listing(&dir).iter().any(|f| f.ends_with("-wal")), "{:?}", listing(&dir));
    layout.remove().unwrap();
    assert_eq!(listing(&dir), Vec::<String>::new());
}
