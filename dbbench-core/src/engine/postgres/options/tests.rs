use super::*;
use crate::model::config::Size;

fn refused(storage: StorageSpec, mode: Mode) -> String {
    match map(&storage, mode) {
        Err(Error::Unsupported { option, .. }) => option.to_string(),
        other => panic!("expected a refusal, got {other:?}"),
    }
}

#[test]
fn a_scaled_segment_below_one_megabyte_is_raised_to_it() {
    let fixed = |bytes| Some(Growth::Fixed(Size::new(bytes, "1MB")));
    let small = StorageSpec {
        log_growth: fixed(64 << 10),
        log_size: Some(Size::new(1 << 20, "400MB")),
        ..StorageSpec::DEFAULT
    };
    let floored = floor(&small);
    assert_eq!(floored.log_growth, fixed(MIB));
    // Two segments are not made up: a log_size below them stays refused by name.
    assert_eq!(floored.log_size, small.log_size);
    assert_eq!(refused(floored, Mode::Managed), "log_size");
    let large = StorageSpec {
        log_growth: fixed(3 * MIB),
        ..StorageSpec::DEFAULT
    };
    assert_eq!(floor(&large), large);
    assert_eq!(refused(large, Mode::Managed), "log_growth");
}

#[test]
fn maps_the_log_options_to_wal_settings() {
    let spec = StorageSpec {
        log_size: Some(Size::new(64 << 20, "64MB")),
        log_growth: Some(Growth::Fixed(Size::new(4 << 20, "4MB"))),
        log_pregrow: Some(Size::new(8 << 20, "8MB")),
        ifi: Some(false),
        recovery: Some(Recovery::Simple),
        maxdop: Some(4),
        log_on: Some("log"),
        ..StorageSpec::DEFAULT
    };
    let m = map(&spec, Mode::Managed).unwrap();
    assert_eq!(m.wal_segsize_mb, Some(4));
    let server: Vec<String> = m.server.iter().map(|(k, v)| format!("{k}={v}")).collect();
    assert_eq!(
        server,
        [
            "min_wal_size='64MB'",
            "max_wal_size='64MB'",
            "wal_init_zero=on",
            "wal_level=minimal",
            "max_wal_senders=0",
            "archive_mode=off",
            "wal_buffers='4MB'",
            "autovacuum=off"
        ]
    );
    assert_eq!(
        m.database,
        [
            ("max_parallel_workers_per_gather".into(), "3".into()),
            ("jit".into(), "off".into())
        ]
    );
    // Every setting an option maps to is marked with it; the pinned ones are not.
    let declared: Vec<String> = m
        .declared
        .iter()
        .map(|(s, o)| format!("{s}<-{o}"))
        .collect();
    assert_eq!(
        declared,
        [
            "wal_segment_size<-log_growth",
            "min_wal_size<-log_size",
            "max_wal_size<-log_size",
            "wal_init_zero<-ifi",
            "wal_level<-recovery",
            "max_wal_senders<-recovery",
            "archive_mode<-recovery",
            "archive_command<-recovery",
            "max_parallel_workers_per_gather<-maxdop"
        ]
    );
    assert_eq!(m.wal_volume, Some("log"));
    assert_eq!(
        m.pregrow,
        Some(Pregrow {
            target_bytes: 64 << 20,
            step_bytes: 8 << 20
        })
    );
    let full = StorageSpec {
        recovery: Some(Recovery::Full),
        ifi: Some(true),
        ..StorageSpec::DEFAULT
    };
    let m = map(&full, Mode::Managed).unwrap();
    assert!(m.server.contains(&("archive_mode".into(), "on".into())));
    assert!(m.server.contains(&("wal_init_zero".into(), "off".into())));
}

#[test]
fn refuses_what_has_no_equivalent() {
    let size = |b: u64| Some(Size::new(b, "x"));
    let data = StorageSpec {
        data_size: size(1 << 30),
        ..StorageSpec::DEFAULT
    };
    assert_eq!(refused(data, Mode::Managed), "data_size");
    let files = StorageSpec {
        data_files: 4,
        ..StorageSpec::DEFAULT
    };
    assert_eq!(refused(files, Mode::Managed), "data_files");
    let growth = StorageSpec {
        growth: Some(Growth::Percent(10)),
        ..StorageSpec::DEFAULT
    };
    assert_eq!(refused(growth, Mode::Managed), "growth");
    let odd_segment = StorageSpec {
        log_growth: Some(Growth::Fixed(Size::new(3 << 20, "3MB"))),
        ..StorageSpec::DEFAULT
    };
    assert_eq!(refused(odd_segment, Mode::Managed), "log_growth");
    let tiny_log = StorageSpec {
        log_size: size(1 << 20),
        ..StorageSpec::DEFAULT
    };
    assert_eq!(refused(tiny_log, Mode::Managed), "log_size");
    let tempdb = StorageSpec {
        tempdb_size: size(1 << 20),
        ..StorageSpec::DEFAULT
    };
    assert_eq!(refused(tempdb, Mode::Managed), "tempdb_size");
    let bulk = StorageSpec {
        recovery: Some(Recovery::BulkLogged),
        ..StorageSpec::DEFAULT
    };
    assert_eq!(refused(bulk, Mode::Managed), "recovery");
}

#[test]
fn an_existing_server_takes_only_database_options() {
    let maxdop = StorageSpec {
        maxdop: Some(1),
        ..StorageSpec::DEFAULT
    };
    assert!(map(&maxdop, Mode::External).is_ok());
    let ifi = StorageSpec {
        ifi: Some(true),
        ..StorageSpec::DEFAULT
    };
    let err = map(&ifi, Mode::External).unwrap_err().to_string();
    assert!(
        err.contains("`ifi`") && err.contains("DBBENCH_POSTGRES"),
        "{err}"
    );
    let wal = StorageSpec {
        log_on: Some("log"),
        ..StorageSpec::DEFAULT
    };
    assert_eq!(refused(wal, Mode::External), "log_on");
}
