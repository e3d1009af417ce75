use super::*;
use crate::engine::mssql::suite_specs::test_floors;
use crate::model::config::Size;

const MB: u64 = 1024 * 1024;

fn dirs() -> ServerDirs {
    ServerDirs {
        data: "C:\\Program Files\\Microsoft SQL Server\\MSSQL16.MSSQLSERVER\\MSSQL\\DATA\\".into(),
        log: "C:\\Program Files\\Microsoft SQL Server\\MSSQL16.MSSQLSERVER\\MSSQL\\DATA\\".into(),
    }
}

fn render(spec: &StorageSpec, volumes: &Volumes, platform: Platform) -> String {
    let defaults = match platform {
        Platform::Windows => dirs(),
        Platform::Linux => ServerDirs {
            data: "/var/opt/mssql/data/".into(),
            log: "/var/opt/mssql/data/".into(),
        },
    };
    let floors = test_floors();
    let target = Target {
        name: "dbbench_vlf_doubling_test_1_r0_4242",
        volumes,
        defaults: Ok(&defaults),
        platform,
        floors: &floors,
    };
    let p = plan(spec, &target).unwrap();
    let mut out = String::new();
    let chain: Vec<String> = p.chain_check.iter().cloned().collect();
    let mut phases = vec![
        ("create", &p.create),
        ("configure", &p.configure),
        ("before_window", &p.before_window),
    ];
    if !chain.is_empty() {
        phases.push(("chain_check (last_log_backup_lsn must not be NULL)", &chain));
    }
    for (phase, statements) in phases {
        out.push_str(&format!("-- {phase}\n"));
        for s in statements {
            out.push_str(s);
            out.push('\n');
        }
    }
    out
}

fn fixed(bytes: u64, text: &'static str) -> Growth {
    Growth::Fixed(Size::new(bytes, text))
}

#[test]
fn one_file_default_sizes() {
    insta::assert_snapshot!(render(
        &StorageSpec::DEFAULT,
        &Volumes::default(),
        Platform::Linux
    ));
}

#[test]
fn one_file_fixed_growth_full_recovery() {
    // Test 1 of the VLF article: 1000 MB data, 400 MB log, 1 MB growth, FULL recovery.
    let spec = StorageSpec {
        data_size: Some(Size::new(1000 * MB, "1000MB")),
        growth: Some(fixed(MB, "1MB")),
        log_size: Some(Size::new(400 * MB, "400MB")),
        log_growth: Some(fixed(MB, "1MB")),
        recovery: Some(Recovery::Full),
        ..StorageSpec::DEFAULT
    };
    insta::assert_snapshot!(render(&spec, &Volumes::default(), Platform::Windows));
}

#[test]
fn sixteen_files_percent_growth() {
    let spec = StorageSpec {
        data_files: 16,
        data_size: Some(Size::new(1000 * MB, "1000MB")),
        growth: Some(Growth::Percent(10)),
        log_growth: Some(Growth::Percent(10)),
        recovery: Some(Recovery::Simple),
        ..StorageSpec::DEFAULT
    };
    insta::assert_snapshot!(render(&spec, &Volumes::default(), Platform::Linux));
}

#[test]
fn pregrown_log_on_separate_volumes_with_maxdop() {
    // Test 4/5 of the VLF article: log pre-grown to 32000 MB in 4000 MB steps, 1024 MB growth,
    // the log on its own (faster) volume, MAXDOP 4.
    let spec = StorageSpec {
        data_files: 2,
        data_size: Some(Size::new(1000 * MB, "1000MB")),
        growth: Some(fixed(1024 * MB, "1024MB")),
        log_size: Some(Size::new(32000 * MB, "32000MB")),
        log_growth: Some(fixed(1024 * MB, "1024MB")),
        log_pregrow: Some(Size::new(4000 * MB, "4000MB")),
        recovery: Some(Recovery::Full),
        maxdop: Some(4),
        data_on: &["data"],
        log_on: Some("fastlog"),
        ..StorageSpec::DEFAULT
    };
    let volumes = Volumes::parse("data=C:\\SQLData,fastlog=L:\\SQLLogs\\").unwrap();
    insta::assert_snapshot!(render(&spec, &volumes, Platform::Windows));
}

#[test]
fn no_growth_and_quoted_paths() {
    let spec = StorageSpec {
        data_size: Some(Size::new(64 * MB, "64MB")),
        growth: Some(Growth::None),
        data_on: &["odd"],
        ..StorageSpec::DEFAULT
    };
    let volumes = Volumes::parse("odd=/srv/o'brien").unwrap();
    let sql = render(&spec, &volumes, Platform::Linux);
    assert!(
        sql.contains("FILENAME = N'/srv/o''brien/dbbench_vlf_doubling_test_1_r0_4242_data_1.mdf'"),
        "{sql}"
    );
    assert!(sql.contains("FILEGROWTH = 0"), "{sql}");
}

#[test]
fn log_steps_end_exactly_at_log_size() {
    let spec = StorageSpec {
        log_size: Some(Size::new(10 * MB, "10MB")),
        log_pregrow: Some(Size::new(4 * MB, "4MB")),
        ..StorageSpec::DEFAULT
    };
    assert_eq!(log_sizes(&spec), vec![4 * MB, 8 * MB, 10 * MB]);
    let bigger_step = StorageSpec {
        log_pregrow: Some(Size::new(20 * MB, "20MB")),
        ..spec
    };
    assert_eq!(log_sizes(&bigger_step), vec![10 * MB]);
}

#[test]
fn refuses_unbound_volumes_and_pregrow_without_size() {
    let spec = StorageSpec {
        log_on: Some("fast"),
        ..StorageSpec::DEFAULT
    };
    let defaults = dirs();
    let floors = test_floors();
    let target = Target {
        name: "dbbench_x",
        volumes: &Volumes::default(),
        defaults: Ok(&defaults),
        platform: Platform::Windows,
        floors: &floors,
    };
    let err = plan(&spec, &target).unwrap_err().to_string();
    assert!(err.contains("DBBENCH_VOLUMES"), "{err}");
    // No default directory known: the sentence of start-up says what to set.
    let no_dirs = Target {
        defaults: Err("set DBBENCH_VOLUMES=\"data=…,log=…\""),
        ..target.clone()
    };
    let sized = StorageSpec {
        data_size: Some(Size::new(64 * MB, "64MB")),
        ..StorageSpec::DEFAULT
    };
    let err = plan(&sized, &no_dirs).unwrap_err().to_string();
    assert!(err.contains("set DBBENCH_VOLUMES"), "{err}");
    // A cell that declares nothing about its files needs no directory: the server places
    // them, and the files are read back afterwards.
    let placed = plan(&StorageSpec::DEFAULT, &no_dirs).unwrap();
    assert!(placed.server_placed && placed.files.is_empty());
    assert_eq!(placed.create, vec!["CREATE DATABASE [dbbench_x];"]);
    let pregrow = StorageSpec {
        log_pregrow: Some(Size::new(MB, "1MB")),
        ..StorageSpec::DEFAULT
    };
    assert!(validate(&pregrow)
        .unwrap_err()
        .to_string()
        .contains("log_size"));
}

#[test]
fn ownership_and_drop_statements() {
    insta::assert_snapshot!(format!(
        "{}\n{}\n{}",
        exists_sql("dbbench_a"),
        super::super::marker::read_property_sql(),
        super::super::teardown::single_user_and_drop_sql("dbbench_a")
    ));
}

#[test]
fn detects_the_platform() {
    assert_eq!(Platform::detect(Some("Linux"), "C:\\x"), Platform::Linux);
    assert_eq!(
        Platform::detect(None, "/var/opt/mssql/data/"),
        Platform::Linux
    );
    assert_eq!(Platform::detect(None, "D:\\data"), Platform::Windows);
    assert_eq!(Platform::Linux.null_device(), "NUL");
    assert_eq!(Platform::Windows.null_device(), "NUL");
    assert_eq!(join("/a", "b", Platform::Linux), "/a/b");
    assert_eq!(join("C:\\a\\", "b", Platform::Windows), "C:\\a\\b");
}
