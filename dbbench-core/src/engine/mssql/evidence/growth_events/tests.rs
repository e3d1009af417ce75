use super::*;

/// The shape of `target_data` as SQL Server 2019 returns it for this event.
const RING_BUFFER: &str = r#"<RingBufferTarget truncated="0" processingTime="0" totalEventsProcessed="3" eventCount="3" droppedCount="0" memoryUsed="2048">
  <event name="database_file_size_change" package="sqlserver" timestamp="2024-05-01T10:00:01.123Z">
    <data name="database_id"><type name="uint16" package="package0" /><value>7</value></data>
    <data name="file_id"><type name="uint16" package="package0" /><value>2</value></data>
    <data name="file_type"><type name="database_file_type" package="sqlserver" /><value>1</value><text><![CDATA[Log]]></text></data>
    <data name="is_automatic"><type name="boolean" package="package0" /><value>true</value></data>
    <data name="total_size_kb"><type name="uint64" package="package0" /><value>410624</value></data>
    <data name="size_change_kb"><type name="int64" package="package0" /><value>1024</value></data>
    <data name="duration"><type name="uint64" package="package0" /><value>2500</value></data>
    <data name="file_name"><type name="unicode_string" package="package0" /><value><![CDATA[log]]></value></data>
  </event>
  <event name="database_file_size_change" package="sqlserver" timestamp="2024-05-01T10:00:02.456Z">
    <data name="file_id"><type name="uint16" package="package0" /><value>2</value></data>
    <data name="is_automatic"><type name="boolean" package="package0" /><value>true</value></data>
    <data name="size_change_kb"><type name="int64" package="package0" /><value>1024</value></data>
    <data name="duration"><type name="uint64" package="package0" /><value>7500</value></data>
    <data name="file_name"><type name="unicode_string" package="package0" /><value><![CDATA[log]]></value></data>
  </event>
  <event name="database_file_size_change" package="sqlserver" timestamp="2024-05-01T10:00:03.000Z">
    <data name="file_id"><type name="uint16" package="package0" /><value>1</value></data>
    <data name="is_automatic"><type name="boolean" package="package0" /><value>false</value></data>
    <data name="size_change_kb"><type name="int64" package="package0" /><value>65536</value></data>
    <data name="duration"><type name="uint64" package="package0" /><value>90000</value></data>
    <data name="file_name"><type name="unicode_string" package="package0" /><value><![CDATA[data_1]]></value></data>
  </event>
</RingBufferTarget>"#;

#[test]
fn parses_the_ring_buffer() {
    let rb = parse_ring_buffer(RING_BUFFER).unwrap();
    assert_eq!((rb.processed, rb.lost, rb.events.len()), (3, 0, 3));
    assert_eq!(
        rb.events[0],
        GrowthEvent {
            database_id: Some(7),
            file_id: 2,
            file_name: "log".into(),
            size_change_kb: 1024,
            duration: Some(2500),
            is_automatic: true,
            timestamp: Some("2024-05-01T10:00:01.123Z".into()),
        }
    );
    let growth = per_file(&rb.events, Some(DurationUnit::Micros));
    assert_eq!(
        growth[&2],
        FileGrowth {
            events: 2,
            bytes: 2 << 20,
            total_ms: 10.0,
            max_ms: 7.5
        }
    );
    assert!(
        !growth.contains_key(&1),
        "a manual MODIFY FILE is not autogrowth"
    );
    let unknown_unit = per_file(&rb.events, None);
    assert_eq!(
        (unknown_unit[&2].events, unknown_unit[&2].total_ms),
        (2, 0.0)
    );
}

#[test]
fn counts_lost_events() {
    let truncated = RING_BUFFER.replace(
        r#"truncated="0" processingTime="0" totalEventsProcessed="3""#,
        r#"truncated="1" processingTime="0" totalEventsProcessed="10""#,
    );
    let rb = parse_ring_buffer(&truncated).unwrap();
    assert_eq!((rb.processed, rb.lost), (10, 7));
    // target_data cut at ~4 MB: the target processed 4 812 events, the XML holds 3, and the
    // root does not say `truncated`. The loss is still counted.
    let silent = RING_BUFFER.replace(
        r#"totalEventsProcessed="3" eventCount="3""#,
        r#"totalEventsProcessed="4812" eventCount="4812""#,
    );
    let rb = parse_ring_buffer(&silent).unwrap();
    assert_eq!((rb.processed, rb.lost, rb.events.len()), (4812, 4809, 3));
    assert!(parse_ring_buffer("<RingBufferTarget><event>").is_err());
    let empty = parse_ring_buffer(
        r#"<RingBufferTarget truncated="0" totalEventsProcessed="0" droppedCount="0" />"#,
    )
    .unwrap();
    assert_eq!(empty, RingBuffer::default());
}

#[test]
fn reads_the_duration_unit_from_its_description() {
    assert_eq!(
        DurationUnit::from_description("The time taken (in microseconds) to change the file size"),
        Some(DurationUnit::Micros)
    );
    assert_eq!(
        DurationUnit::from_description("Duration in milliseconds"),
        Some(DurationUnit::Millis)
    );
    assert_eq!(DurationUnit::from_description("Duration"), None);
    assert_eq!(DurationUnit::Millis.to_ms(3), 3.0);
}

#[test]
fn session_statements() {
    let name = session_name("dbbench_x_r0_4242");
    let file = "/var/opt/mssql/log/dbbench_growth_dbbench_x_r0_4242_0_133512345678900000.xel";
    let pattern = file_pattern(file, &name);
    assert_eq!(
        pattern,
        "/var/opt/mssql/log/dbbench_growth_dbbench_x_r0_4242_0_*.xel"
    );
    insta::assert_snapshot!([
        create_sql(&name, 7, Target::EventFile),
        file_name_sql(&name),
        read_file_sql(&pattern),
        files_sql(&pattern),
        delete_file_sql(file),
        create_sql(&name, 7, Target::RingBuffer),
        read_sql(&name),
        DURATION_UNIT_SQL.to_string(),
        drop_sql(&name),
    ]
    .join("\n"));
}

#[test]
fn only_this_sessions_files_are_its_own() {
    // Run A's database is dbbench_s_c_r0_42, run B's dbbench_s_c_r0_4242 (PIDs 42 and 4242).
    let a = session_name("dbbench_s_c_r0_42");
    let dir = "C:\\Program Files\\Microsoft SQL Server\\MSSQL16.MSSQLSERVER\\MSSQL\\Log\\";
    assert!(is_own_file(
        &format!("{dir}{a}_0_133512345678900000.xel"),
        &a
    ));
    assert!(is_own_file(&format!("/var/opt/mssql/log/{a}_0_1.xel"), &a));
    for other in [
        format!("{dir}dbbench_growth_dbbench_s_c_r0_4242_0_133512345678900000.xel"),
        // A database whose name extends this one with `_0_…`.
        format!("{dir}{a}_0_x_r0_7_0_133512345678900000.xel"),
        format!("{dir}{a}_0_.xel"),
        format!("{dir}{a}.xel"),
    ] {
        assert!(!is_own_file(&other, &a), "{other}");
    }
}

#[test]
fn parses_event_file_records() {
    // event_data rows of sys.fn_xe_file_target_read_file: one <event> document per row.
    let session = session_name("dbbench_x_r0_42");
    let own = format!("/var/opt/mssql/log/{session}_0_133512345678900000.xel");
    let event = |db: i64, i: u64| {
        format!(
            r#"<event name="database_file_size_change" package="sqlserver" timestamp="2024-05-01T10:00:0{i}.000Z"><data name="database_id"><value>{db}</value></data><data name="file_id"><value>2</value></data><data name="size_change_kb"><value>1024</value></data><data name="duration"><value>{}</value></data><data name="is_automatic"><value>true</value></data><data name="file_name"><value><![CDATA[log]]></value></data></event>"#,
            1000 * (i + 1)
        )
    };
    let mut records: Vec<(String, String)> = (0..3).map(|i| (own.clone(), event(7, i))).collect();
    // Another database's event in this file, and another session's file: neither counts.
    records.push((own.clone(), event(9, 4)));
    records.push((
        "/var/opt/mssql/log/dbbench_growth_dbbench_x_r0_4242_0_133512345678900000.xel".into(),
        event(7, 5),
    ));
    let events = parse_event_file(&records, &session, 7, None).unwrap();
    let growth = per_file(&events, Some(DurationUnit::Micros));
    assert_eq!(
        (growth[&2].events, growth[&2].bytes, growth[&2].max_ms),
        (3, 3 << 20, 3.0)
    );
    assert!(parse_event_file(&[(own.clone(), "<event".to_string())], &session, 7, None).is_err());
    // Finding C2: an earlier session of the same name left this file; its events, stamped
    // before the window opened (SYSUTCDATETIME then), are not this window's.
    let since = "2024-05-01T10:00:01.5000000";
    let events = parse_event_file(&records, &session, 7, Some(since)).unwrap();
    assert_eq!(events.len(), 2, "{events:?}");
}

/// `pattern` (with `*` wildcards, as `sys.xp_delete_files` takes it) matches `path`.
fn matches(pattern: &str, path: &str) -> bool {
    let parts: Vec<&str> = pattern.split('*').collect();
    let mut rest = path;
    for (i, part) in parts.iter().enumerate() {
        if i == 0 {
            let Some(r) = rest.strip_prefix(part) else {
                return false;
            };
            rest = r;
        } else if i == parts.len() - 1 {
            return rest.ends_with(part);
        } else {
            let Some(at) = rest.find(part) else {
                return false;
            };
            rest = &rest[at + part.len()..];
        }
    }
    rest.is_empty()
}

/// Finding 8 of issue 29: run A (database `…_r0_42`) cleans up its growth session while run
/// B (`…_r0_4242`, PID 4242) still writes its event file in the same directory. SQL Server
/// 2022 answers `target_data` with A's current file and `sys.fn_xe_file_target_read_file`
/// with the file names its pattern matched; A deletes its own files only, each by its exact
/// name.
#[tokio::test]
async fn the_clean_up_deletes_only_this_sessions_files() {
    use crate::engine::mssql::double::{Reply, ScriptedServer};
    use crate::engine::mssql::ConnectSettings;
    use crate::model::value::Value;
    let server = ScriptedServer::new();
    let a = session_name("dbbench_s_c_r0_42");
    let dir = "/var/opt/mssql/log/";
    let current = format!("{dir}{a}_0_133512345678900000.xel");
    let rollover = format!("{dir}{a}_0_133512345600000000.xel");
    let live = format!("{dir}dbbench_growth_dbbench_s_c_r0_4242_0_133512345678900000.xel");
    server.on(
        "EventFileTarget/File/@name",
        Reply::rows(
            &["file_name", "dropped_buffers"],
            vec![vec![Value::Text(current.clone()), Value::Int(0)]],
        ),
    );
    server.on(
        "SELECT DISTINCT CAST(file_name",
        Reply::rows(
            &["file_name"],
            [&current, &rollover, &live]
                .iter()
                .map(|f| vec![Value::Text(f.to_string())])
                .collect(),
        ),
    );
    let settings =
        ConnectSettings::scripted("server=tcp:h,1433;user id=u;password=p", &server).unwrap();
    let mut conn = settings.connect(Some("master")).await.unwrap();
    let problems = stop_and_clean(&mut conn, &a).await;
    assert!(problems.is_empty(), "{problems:?}");
    let deleted: Vec<String> = server
        .calls_with("xp_delete_files")
        .iter()
        .filter_map(|c| {
            let start = c.sql.find("N'")? + 2;
            let end = c.sql.rfind('\'')?;
            Some(c.sql[start..end].replace("''", "'"))
        })
        .collect();
    assert!(
        deleted.iter().all(|pattern| !matches(pattern, &live)),
        "a live run's event file would be deleted: {deleted:?}"
    );
    for own in [&current, &rollover] {
        assert!(
            deleted.iter().any(|pattern| matches(pattern, own)),
            "{own} is left: {deleted:?}"
        );
    }
}
