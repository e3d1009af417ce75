use super::*;

#[test]
fn growths_serialize_in_their_own_form() {
    let spec = StorageSpec {
        growth: Some(Growth::Fixed(Size::new(1 << 20, "1MB"))),
        log_growth: Some(Growth::Percent(10)),
        tempdb_growth: Some(Growth::None),
        ..StorageSpec::DEFAULT
    };
    let json = serde_json::to_string(&spec).unwrap();
    assert!(
        json.contains(r#""growth":{"fixed":{"bytes":1048576}}"#),
        "{json}"
    );
    assert!(json.contains(r#""log_growth":{"percent":10}"#), "{json}");
    assert!(json.contains(r#""tempdb_growth":"none""#), "{json}");
    assert!(json.contains(r#""log_pregrow":null"#), "{json}");
    assert_eq!(
        Growth::Fixed(Size::new(1 << 30, "1024MB")).describe(),
        "1024MB"
    );
}

#[test]
fn defaults_are_the_options_crate_s() {
    assert_eq!(RunSpec::DEFAULT.fixture.keyword(), defaults::FIXTURE);
    assert_eq!(RunSpec::DEFAULT.order.keyword(), defaults::ORDER);
}

#[test]
fn an_option_is_set_when_it_differs_from_the_default() {
    assert_eq!(StorageSpec::DEFAULT.set_options().count(), 0);
    let size = Some(Size::new(1 << 20, "1MB"));
    let growth = Some(Growth::Percent(10));
    let d = StorageSpec::DEFAULT;
    let only = [
        (Key::DataFiles, StorageSpec { data_files: 4, ..d }),
        (
            Key::DataSize,
            StorageSpec {
                data_size: size,
                ..d
            },
        ),
        (Key::Growth, StorageSpec { growth, ..d }),
        (
            Key::LogSize,
            StorageSpec {
                log_size: size,
                ..d
            },
        ),
        (
            Key::LogGrowth,
            StorageSpec {
                log_growth: growth,
                ..d
            },
        ),
        (
            Key::LogPregrow,
            StorageSpec {
                log_pregrow: size,
                ..d
            },
        ),
        (
            Key::Ifi,
            StorageSpec {
                ifi: Some(true),
                ..d
            },
        ),
        (
            Key::Recovery,
            StorageSpec {
                recovery: Some(Recovery::Simple),
                ..d
            },
        ),
        (
            Key::Maxdop,
            StorageSpec {
                maxdop: Some(1),
                ..d
            },
        ),
        (
            Key::TempdbFiles,
            StorageSpec {
                tempdb_files: Some(2),
                ..d
            },
        ),
        (
            Key::TempdbSize,
            StorageSpec {
                tempdb_size: size,
                ..d
            },
        ),
        (
            Key::TempdbGrowth,
            StorageSpec {
                tempdb_growth: growth,
                ..d
            },
        ),
        (
            Key::DataOn,
            StorageSpec {
                data_on: &["fast"],
                ..d
            },
        ),
        (
            Key::LogOn,
            StorageSpec {
                log_on: Some("slow"),
                ..d
            },
        ),
    ];
    let keys: Vec<Key> = only.iter().map(|(key, _)| *key).collect();
    assert_eq!(keys, Key::STORAGE, "one spec per storage option");
    for (key, spec) in only {
        assert_eq!(spec.set_options().collect::<Vec<_>>(), [key], "{key}");
    }
    // One data file is the default, written or not.
    let one = StorageSpec {
        data_files: 1,
        recovery: Some(Recovery::Full),
        ..StorageSpec::DEFAULT
    };
    assert_eq!(one.set_options().collect::<Vec<_>>(), [Key::Recovery]);
    assert!(!one.sets(Key::Repeat));
}

#[test]
fn backends_are_the_name_table_s() {
    let table: Vec<&str> = keyword::BACKENDS.iter().map(|b| b.keyword).collect();
    let all: Vec<&str> = BackendKind::ALL.iter().map(|k| k.keyword()).collect();
    assert_eq!(all, table);
    assert_eq!(BackendKind::DEFAULT.keyword(), keyword::EMBEDDED);
    for kind in BackendKind::ALL {
        assert_eq!(BackendKind::from_keyword(kind.keyword()), Some(kind));
    }
    assert_eq!(BackendKind::from_keyword("mysql"), None);
    assert_eq!(BackendKind::named(keyword::MSSQL).title(), "SQL Server");
}

#[test]
fn a_backend_is_serialized_as_its_keyword_and_read_back_by_name() {
    // As the enum's `rename_all = "snake_case"` unit variants were: results stay the same.
    const SERVERS: &[BackendKind] = &[BackendKind::named("mssql"), BackendKind::named("postgres")];
    let json = serde_json::to_string(&RunSpec {
        backends: SERVERS,
        ..RunSpec::DEFAULT
    })
    .unwrap();
    assert!(
        json.contains(r#""backends":["mssql","postgres"]"#),
        "{json}"
    );
    for kind in BackendKind::ALL {
        let text = serde_json::to_string(&kind).unwrap();
        assert_eq!(text, format!("\"{}\"", kind.keyword()));
        let back: BackendKind = serde_json::from_str(&text).unwrap();
        assert_eq!(back, kind);
    }
    let error = serde_json::from_str::<BackendKind>(r#""mysql""#)
        .unwrap_err()
        .to_string();
    assert!(
        error.starts_with(
            "unknown backend `mysql`: a backend is `embedded` or `mssql` or `postgres`"
        ),
        "{error}"
    );
}
