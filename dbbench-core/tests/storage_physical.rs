//! Physical truth: what the storage options do to the files on disk, checked against the files
//! themselves (sizes, allocated blocks, contents) and against the statistics the layer reports.

mod support;

use dbbench_core::__internals::config::{Growth, StorageSpec};
use dbbench_core::__internals::embedded::storage::Layout;
use dbbench_core::__internals::Volumes;
use dbbench_core::results::{Evidence, FileKind};
use dbbench_core::units::{EXTENT, MIB};
use std::os::unix::fs::MetadataExt;
use support::*;

/// Runs `rows` inserts inside a measured window and checkpoints them into the data files.
fn measured(layout: &Layout, rows: u64) -> Evidence {
    let mut c = connect(layout);
    c.execute_batch("CREATE TABLE t (id INTEGER PRIMARY KEY, pad BLOB)")
        .unwrap();
    c.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()))
        .unwrap();
    layout.open_window();
    insert(&mut c, rows);
    c.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()))
        .unwrap();
    assert_intact(&c);
    layout.close_window()
}

fn growth_spec(ifi: bool) -> StorageSpec {
    StorageSpec {
        data_size: Some(mib(1, "1MB")),
        growth: Some(grow_mib(1, "1MB")),
        ifi: Some(ifi),
        ..StorageSpec::DEFAULT
    }
}

#[test]
fn one_megabyte_growth_without_ifi_zero_fills_every_growth() {
    let dir = scratch("physical-noifi");
    let layout = layout(&dir, &growth_spec(false), &Volumes::default());
    let run = measured(&layout, 20_000);
    let data = &run.files[0];
    assert_eq!((data.name.as_str(), data.kind), ("data_1", FileKind::Data));
    assert_eq!(data.size_before_bytes, MIB);
    let grown = data.size_after_bytes - data.size_before_bytes;
    assert_eq!(grown % MIB, 0, "grows in whole 1 MB steps");
    let k = grown / MIB;
    assert!(
        k >= 3,
        "20 000 rows of 200 bytes need several growths, got {k}"
    );
    assert_eq!(data.growth_events, k);
    assert_eq!(data.growth_bytes, grown);
    assert_eq!(data.zero_fill_bytes, grown, "every new byte was zeroed");
    assert!(
        data.bytes_written >= grown + 4 * MIB,
        "zero fill plus the data"
    );
    assert!(data.growth_max_ms > 0.0 && data.growth_total_ms >= data.growth_max_ms);
    let events: Vec<_> = run
        .autogrowths
        .iter()
        .filter(|e| e.file == "data_1")
        .collect();
    assert_eq!(events.len() as u64, k, "every growth is listed");
    for (i, e) in events.iter().enumerate() {
        assert_eq!((e.bytes, e.zero_filled), (MIB, true));
        assert_eq!(
            e.size_after_bytes,
            MIB * (i as u64 + 2),
            "sizes step by 1 MB"
        );
    }
    assert!(run.autogrowths.windows(2).all(|w| w[0].at_s <= w[1].at_s));

    let meta = std::fs::metadata(&layout.data_usage()[0].path).unwrap();
    assert_eq!(
        meta.len(),
        data.size_after_bytes,
        "the file is as big as reported"
    );
    let allocated = meta.blocks() * 512;
    assert!(
        allocated >= meta.len() && allocated <= meta.len() + MIB,
        "blocks on disk ({allocated}) match the grown size ({})",
        meta.len()
    );
    layout.remove().unwrap();
}

#[test]
fn one_megabyte_growth_with_ifi_writes_no_zeros() {
    let dir = scratch("physical-ifi");
    let layout = layout(&dir, &growth_spec(true), &Volumes::default());
    let run = measured(&layout, 20_000);
    let data = &run.files[0];
    let k = (data.size_after_bytes - data.size_before_bytes) / MIB;
    assert!(k >= 3);
    assert_eq!(data.growth_events, k);
    assert_eq!(
        data.zero_fill_bytes, 0,
        "instant file initialization writes no zeros"
    );
    assert_eq!(
        data.bytes_written,
        data.writes * 8192,
        "only pages were written, no zero fill"
    );
    let meta = std::fs::metadata(&layout.data_usage()[0].path).unwrap();
    assert_eq!(meta.len(), data.size_after_bytes);
    layout.remove().unwrap();
}

/// Extents of `path` holding at least one non-zero byte.
fn written_extents(path: &std::path::Path) -> u64 {
    let bytes = std::fs::read(path).unwrap();
    bytes
        .chunks(EXTENT as usize)
        .filter(|extent| extent.iter().any(|b| *b != 0))
        .count() as u64
}

#[test]
fn four_data_files_fill_evenly() {
    let dir = scratch("physical-four");
    let spec = StorageSpec {
        data_files: 4,
        data_size: Some(mib(16, "16MB")),
        ..StorageSpec::DEFAULT
    };
    let layout = layout(&dir, &spec, &Volumes::default());
    let run = measured(&layout, 20_000);
    let usage = layout.data_usage();
    assert_eq!(usage.len(), 4);
    let extents: Vec<u64> = usage.iter().map(|u| u.extents).collect();
    let (min, max) = (extents.iter().min().unwrap(), extents.iter().max().unwrap());
    assert!(*min > 10 && max - min <= 1, "extent counts {extents:?}");
    for u in &usage {
        assert_eq!(u.size_bytes, 4 * MIB, "no file grew");
        assert_eq!(written_extents(&u.path), u.extents, "{} on disk", u.name);
    }
    let names: Vec<&str> = run.files.iter().map(|f| f.name.as_str()).collect();
    assert_eq!(names, ["data_1", "data_2", "data_3", "data_4", "log"]);
    assert_eq!(run.counts["data_3_extents"], extents[2] as i64);
    layout.remove().unwrap();
}

#[test]
fn two_volumes_alternate_the_data_files() {
    let dir = scratch("physical-volumes");
    let volumes = volumes(&dir, &["fast", "slow"]);
    let (a, b) = (dir.join("fast"), dir.join("slow"));
    let spec = StorageSpec {
        data_files: 4,
        data_on: &["fast", "slow"],
        log_on: Some("slow"),
        ..StorageSpec::DEFAULT
    };
    let home = dir.join("home");
    std::fs::create_dir_all(&home).unwrap();
    let layout = layout(&home, &spec, &volumes);
    let run = measured(&layout, 2000);
    assert_eq!(listing(&a), ["db_data_1.mdf", "db_data_3.ndf"]);
    assert_eq!(
        listing(&b),
        ["db_data_2.ndf", "db_data_4.ndf", "db_log.ldf"]
    );
    let volume_of = |name: &str| {
        run.files
            .iter()
            .find(|f| f.name == name)
            .and_then(|f| f.volume.clone())
    };
    assert_eq!(volume_of("data_1").as_deref(), Some("fast"));
    assert_eq!(volume_of("data_2").as_deref(), Some("slow"));
    assert_eq!(volume_of("log").as_deref(), Some("slow"));
    layout.remove().unwrap();
    assert!(listing(&a).is_empty() && listing(&b).is_empty() && listing(&home).is_empty());
}

#[test]
fn the_log_is_zero_initialised_pregrown_and_counts_segments() {
    let dir = scratch("physical-log");
    let spec = StorageSpec {
        log_size: Some(mib(8, "8MB")),
        log_pregrow: Some(mib(2, "2MB")),
        log_growth: Some(grow_mib(1, "1MB")),
        ifi: Some(true),
        ..StorageSpec::DEFAULT
    };
    let layout = layout(&dir, &spec, &Volumes::default());
    let (path, size, segments) = layout.log_usage();
    assert_eq!(size, 8 * MIB);
    assert_eq!(
        segments,
        4 * 4,
        "2 MB creation then three 2 MB steps, 4 segments each"
    );
    let meta = std::fs::metadata(&path).unwrap();
    assert!(
        meta.blocks() * 512 >= 8 * MIB,
        "pre-grown log is written, not sparse"
    );

    let run = measured(&layout, 60_000);
    let log = run.log.clone().unwrap();
    let file = run.files.iter().find(|f| f.kind == FileKind::Log).unwrap();
    assert!(
        log.growths > 0,
        "one transaction of ~15 MB outgrows an 8 MB log"
    );
    assert_eq!(log.growths, file.growth_events);
    assert_eq!(log.size_after_bytes, 8 * MIB + log.growths * MIB);
    assert_eq!(
        file.zero_fill_bytes,
        log.growths * MIB,
        "ifi does not apply to the log"
    );
    // 1 MB is not below 1/8 of 8 MB (4 segments); every later growth is (1 segment).
    assert_eq!(
        log.segments_after,
        log.segments_before + 4 + (log.growths - 1)
    );
    assert_eq!(
        std::fs::metadata(&path).unwrap().len(),
        log.size_after_bytes
    );
    layout.remove().unwrap();
}

#[test]
fn a_full_data_file_without_growth_names_the_file() {
    let dir = scratch("physical-full");
    let spec = StorageSpec {
        data_size: Some(mib(1, "1MB")),
        growth: Some(Growth::None),
        ..StorageSpec::DEFAULT
    };
    let layout = layout(&dir, &spec, &Volumes::default());
    let mut c = connect(&layout);
    c.execute_batch("CREATE TABLE t (id INTEGER PRIMARY KEY, pad BLOB)")
        .unwrap();
    let err = c
        .execute_batch(
            "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 5000) \
             INSERT INTO t (pad) SELECT randomblob(1000) FROM n",
        )
        .unwrap_err();
    assert_eq!(err.sqlite_error_code(), Some(rusqlite::ErrorCode::DiskFull));
    let message = layout.explain(err).to_string();
    assert!(
        message.contains("db_data_1.mdf")
            && message.contains("is full")
            && message.contains("none"),
        "{message}"
    );
    // The statement was rolled back; the database is intact and still usable.
    insert(&mut c, 10);
    assert_intact(&c);
    drop(c);
    layout.remove().unwrap();
    assert!(listing(&dir).is_empty(), "{:?}", listing(&dir));
}
