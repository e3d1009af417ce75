use super::*;
use crate::model::value::Value;
use std::sync::Arc;

/// The waits the VLF article's query filters, verbatim from Listing 2.
const ARTICLE_FILTER: [&str; 27] = [
    "CLR_SEMAPHORE",
    "LAZYWRITER_SLEEP",
    "RESOURCE_QUEUE",
    "SLEEP_TASK",
    "SLEEP_SYSTEMTASK",
    "SQLTRACE_BUFFER_FLUSH",
    "WAITFOR",
    "LOGMGR_QUEUE",
    "CHECKPOINT_QUEUE",
    "REQUEST_FOR_DEADLOCK_SEARCH",
    "XE_TIMER_EVENT",
    "BROKER_TO_FLUSH",
    "BROKER_TASK_STOP",
    "CLR_MANUAL_EVENT",
    "CLR_AUTO_EVENT",
    "DISPATCHER_QUEUE_SEMAPHORE",
    "FT_IFTS_SCHEDULER_IDLE_WAIT",
    "XE_DISPATCHER_WAIT",
    "XE_DISPATCHER_JOIN",
    "SQLTRACE_INCREMENTAL_FLUSH_SLEEP",
    "ONDEMAND_TASK_QUEUE",
    "BROKER_EVENTHANDLER",
    "SLEEP_BPOOL_FLUSH",
    "SLEEP_DBSTARTUP",
    "DIRTY_PAGE_POLL",
    "HADR_FILESTREAM_IOMGR_IOCOMPLETION",
    "SP_SERVER_DIAGNOSTICS_SLEEP",
];

fn snapshot_rows(waits: &[(&str, i64, i64)]) -> Vec<Row> {
    let columns: Arc<[String]> = [
        "wait_type",
        "waiting_tasks_count",
        "wait_time_ms",
        "signal_wait_time_ms",
    ]
    .iter()
    .map(|c| c.to_string())
    .collect();
    waits
        .iter()
        .map(|(w, tasks, ms)| {
            Row::new(
                columns.clone(),
                vec![
                    Value::Text(format!("{w}   ")),
                    Value::Int(*tasks),
                    Value::Int(*ms),
                    Value::Int(ms / 10),
                ],
            )
        })
        .collect()
}

#[test]
fn the_filter_covers_the_article_and_keeps_growth_waits() {
    for wait in ARTICLE_FILTER {
        assert!(BENIGN_WAITS.contains(&wait), "{wait} must be filtered");
    }
    for wait in [
        "PREEMPTIVE_OS_FILEOPS",
        "PREEMPTIVE_OS_WRITEFILE",
        "PREEMPTIVE_OS_WRITEFILEGATHER",
        "PREEMPTIVE_OS_FLUSHFILEBUFFERS",
        "WRITELOG",
        "CXPACKET",
    ] {
        assert!(!BENIGN_WAITS.contains(&wait), "{wait} must stay visible");
    }
}

/// Recorded-style snapshots whose window delta has the proportions of the article's Table 1:
/// the computed table must match it row for row, benign waits and the tail excluded.
#[test]
fn reproduces_table_1_of_the_article() {
    let before = snapshot_from_rows(&snapshot_rows(&[
        ("CXPACKET", 1_000, 50_000),
        ("LAZYWRITER_SLEEP", 9_000, 9_000_000),
        ("WRITELOG", 100, 1_000),
        ("SOS_SCHEDULER_YIELD", 10, 10),
    ]))
    .unwrap();
    let after = snapshot_from_rows(&snapshot_rows(&[
        ("CXPACKET", 91_000, 50_000 + 722_200),
        ("PREEMPTIVE_OS_FLUSHFILEBUFFERS", 5_000, 130_100),
        ("PREEMPTIVE_OS_WRITEFILEGATHER", 4_000, 65_200),
        ("WRITELOG", 30_100, 1_000 + 21_300),
        ("PREEMPTIVE_OS_FILEOPS", 800, 13_900),
        ("PAGEIOLATCH_EX", 700, 9_700),
        ("ASYNC_IO_COMPLETION", 10, 8_200),
        ("WRITE_COMPLETION", 300, 7_100),
        ("IO_COMPLETION", 600, 6_700),
        ("LATCH_SH", 400, 6_200),
        ("SOS_SCHEDULER_YIELD", 5_010, 10 + 5_000),
        ("PAGELATCH_EX", 90, 4_400),
        ("LAZYWRITER_SLEEP", 10_000, 9_000_000 + 1_100_000),
        ("XE_TIMER_EVENT", 40, 1_200_000),
    ]))
    .unwrap();
    let waits = top_waits(&window_delta(&before, &after));
    let table: Vec<(&str, f64, f64)> = waits
        .iter()
        .map(|w| (w.wait_type.as_str(), w.pct, w.running_pct))
        .collect();
    assert_eq!(
        table,
        vec![
            ("CXPACKET", 72.22, 72.22),
            ("PREEMPTIVE_OS_FLUSHFILEBUFFERS", 13.01, 85.23),
            ("PREEMPTIVE_OS_WRITEFILEGATHER", 6.52, 91.75),
            ("WRITELOG", 2.13, 93.88),
            ("PREEMPTIVE_OS_FILEOPS", 1.39, 95.27),
            ("PAGEIOLATCH_EX", 0.97, 96.24),
            ("ASYNC_IO_COMPLETION", 0.82, 97.06),
            ("WRITE_COMPLETION", 0.71, 97.77),
            ("IO_COMPLETION", 0.67, 98.44),
            ("LATCH_SH", 0.62, 99.06),
        ]
    );
    assert_eq!(waits[0].waiting_tasks, 90_000);
    assert_eq!(waits[0].wait_time_s, 722.2);
    insta::assert_snapshot!(render_table(&waits));
}

#[test]
fn idle_waits_of_2019_and_2022_are_filtered() {
    // Recorded-style snapshot of an idle SQL Server 2022: SOS_WORK_DISPATCHER grows by the
    // window's length on every idle worker and would top the table.
    let before = snapshot_from_rows(&snapshot_rows(&[
        ("SOS_WORK_DISPATCHER", 50_000, 90_000_000),
        ("WRITELOG", 10, 100),
    ]))
    .unwrap();
    let after = snapshot_from_rows(&snapshot_rows(&[
        ("SOS_WORK_DISPATCHER", 52_000, 90_000_000 + 480_000),
        ("PVS_PREALLOCATE", 3, 60_000),
        ("WRITELOG", 410, 4_100),
    ]))
    .unwrap();
    let waits = top_waits(&window_delta(&before, &after));
    assert_eq!(waits.len(), 1);
    assert_eq!(
        (waits[0].wait_type.as_str(), waits[0].pct),
        ("WRITELOG", 100.0)
    );
    for wait in [
        "SOS_WORK_DISPATCHER",
        "PVS_PREALLOCATE",
        "QDS_SHUTDOWN_QUEUE",
        "VDI_CLIENT_OTHER",
    ] {
        assert!(BENIGN_WAITS.contains(&wait), "{wait}");
    }
    assert!(LIST_VERSION.contains("SOS_WORK_DISPATCHER") && LIST_VERSION.contains("2019-10-30"));
}

#[test]
fn cleared_counters_and_empty_windows() {
    let before = snapshot_from_rows(&snapshot_rows(&[("WRITELOG", 100, 5_000)])).unwrap();
    let after = snapshot_from_rows(&snapshot_rows(&[("WRITELOG", 3, 40)])).unwrap();
    let delta = window_delta(&before, &after);
    assert_eq!(
        delta["WRITELOG"].wait_ms, 40,
        "a clear during the window keeps `after`"
    );
    assert!(top_waits(&WaitSnapshot::new()).is_empty());
    assert!(top_waits(&window_delta(&before, &before)).is_empty());
}

#[test]
fn snapshot_query() {
    insta::assert_snapshot!(SNAPSHOT_SQL);
}
