use super::*;
use crate::model::value::Value;
use std::sync::Arc;

fn rows(columns: &[&str], values: Vec<Vec<Value>>) -> Vec<Row> {
    let columns: Arc<[String]> = columns.iter().map(|c| c.to_string()).collect();
    values
        .into_iter()
        .map(|v| Row::new(columns.clone(), v))
        .collect()
}

#[test]
fn reads_the_service_state() {
    let y = rows(&["ifi"], vec![vec![Value::Text("Y".into())]]);
    assert_eq!(IfiState::from_rows(&y), IfiState::Enabled);
    let n = rows(&["ifi"], vec![vec![Value::Text("N".into())]]);
    assert_eq!(IfiState::from_rows(&n), IfiState::Disabled);
    assert!(matches!(IfiState::from_rows(&[]), IfiState::Unknown(_)));
    let null = rows(&["ifi"], vec![vec![Value::Null]]);
    assert!(matches!(IfiState::from_rows(&null), IfiState::Unknown(_)));
}

#[test]
fn decides_or_refuses() {
    let none = IfiPlan::default();
    let both = IfiPlan {
        set: vec![1805, 1806],
        verify: true,
    };
    let verify_only = IfiPlan {
        set: Vec::new(),
        verify: true,
    };
    assert_eq!(decide(None, &IfiState::Disabled, &[]).unwrap(), none);
    assert_eq!(decide(Some(false), &IfiState::Enabled, &[]).unwrap(), both);
    // A flag already on is left as it is, and not turned off afterwards.
    assert_eq!(
        decide(Some(false), &IfiState::Enabled, &[1806]).unwrap(),
        IfiPlan {
            set: vec![1805],
            verify: true
        }
    );
    assert_eq!(
        decide(Some(false), &IfiState::Enabled, &TF_NO_IFI).unwrap(),
        verify_only
    );
    // Every ifi = false cell sets both flags and is verified, also where the server
    // reports IFI off: that report may be wrong (finding A2: the Linux service view).
    assert_eq!(decide(Some(false), &IfiState::Disabled, &[]).unwrap(), both);
    assert_eq!(
        decide(Some(false), &IfiState::Unknown("x".into()), &[]).unwrap(),
        both
    );
    assert_eq!(decide(Some(true), &IfiState::Enabled, &[]).unwrap(), none);
    let err = decide(Some(true), &IfiState::Disabled, &[])
        .unwrap_err()
        .to_string();
    assert!(err.contains("Perform volume maintenance tasks"), "{err}");
    assert!(decide(Some(true), &IfiState::Enabled, &[1805]).is_err());
    assert!(decide(Some(true), &IfiState::Unknown("no view".into()), &[]).is_err());
}

#[test]
fn reads_the_error_log_startup_line() {
    let line = |t: &str| {
        rows(
            &["LogDate", "ProcessInfo", "Text"],
            vec![vec![
                Value::Text("2026-12-01 09:00:00.000".into()),
                Value::Text("Server".into()),
                Value::Text(t.into()),
            ]],
        )
    };
    let enabled = line("Database Instant File Initialization: enabled. For security and performance considerations see the topic 'Database Instant File Initialization' in SQL Server Books Online. This is an informational message only. No user action is required.");
    assert_eq!(IfiState::from_errorlog(&enabled), Some(IfiState::Enabled));
    let disabled = line("Database Instant File Initialization: disabled. For security and performance considerations see the topic 'Database Instant File Initialization' in SQL Server Books Online. This is an informational message only. No user action is required.");
    assert_eq!(IfiState::from_errorlog(&disabled), Some(IfiState::Disabled));
    assert_eq!(IfiState::from_errorlog(&[]), None);
}

#[test]
fn zeroing_without_known_files_proves_nothing() {
    let judged = judge_zeroing(Ok(Vec::new()), &[], &[1805]);
    assert!(
        matches!(&judged, Zeroing::Unverified(why) if why.contains("paths are unknown")),
        "{judged:?}"
    );
    let files = vec!["/d/x.mdf".to_string()];
    assert!(matches!(
        judge_zeroing(Ok(Vec::new()), &files, &[]),
        Zeroing::NotZeroed(_)
    ));
}

#[test]
fn reads_trace_status() {
    let on = rows(
        &["TraceFlag", "Status", "Global", "Session"],
        vec![vec![
            Value::Int(1806),
            Value::Int(1),
            Value::Int(1),
            Value::Int(0),
        ]],
    );
    assert!(is_on_globally(&on).unwrap());
    let off = rows(
        &["TraceFlag", "Status", "Global", "Session"],
        vec![vec![
            Value::Int(1806),
            Value::Int(0),
            Value::Int(0),
            Value::Int(0),
        ]],
    );
    assert!(!is_on_globally(&off).unwrap());
}

#[test]
fn finds_zeroing_lines_for_each_data_file() {
    let log = rows(
        &["LogDate", "ProcessInfo", "Text"],
        vec![
            vec![
                Value::Text("2024-05-01 10:00:00.000".into()),
                Value::Text("spid52".into()),
                Value::Text("Zeroing C:\\SQLData\\dbbench_x_data_1.mdf from page 0 to 128000 (0x0 to 0x3e800000)".into()),
            ],
            vec![
                Value::Text("2024-05-01 10:00:01.000".into()),
                Value::Text("spid52".into()),
                Value::Text("Zeroing L:\\Logs\\dbbench_x_log.ldf from page 0 to 51200 (0x0 to 0x19000000)".into()),
            ],
        ],
    );
    let files = vec![
        "C:\\SQLData\\dbbench_x_data_1.mdf".to_string(),
        "C:\\SQLData\\dbbench_x_data_2.ndf".to_string(),
    ];
    assert_eq!(
        unzeroed_files(&log, &files).unwrap(),
        vec!["C:\\SQLData\\dbbench_x_data_2.ndf".to_string()]
    );
    assert!(unzeroed_files(&log, &files[..1]).unwrap().is_empty());
}

#[test]
fn trace_flag_statements() {
    insta::assert_snapshot!(format!(
        "{}\n{}\n{}\n{}\n{}\n{}",
        STATE_SQL,
        errorlog_state_sql(0),
        trace_status_sql(TF_NO_IFI[0]),
        super::super::instance::render(&[
            trace_flags_change(&TF_NO_IFI, "ifi = false"),
            trace_flags_change(&TF_LOG_ZEROING, "verify that data files are zero-filled"),
        ]),
        zeroing_log_sql("dbbench_x", "2026-12-01 10:00:00.000"),
        ""
    ));
}
