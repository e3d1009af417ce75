//! Wait statistics of the measured window: the difference of two snapshots of
//! `sys.dm_os_wait_stats` (clearing them would reset the whole instance), benign waits filtered,
//! and the top waits with percent and running percent computed exactly as the VLF article's query:
//! percentages rounded to two decimals, summed in descending order, and rows kept while
//! `running_pct - pct <= 99`.

use crate::model::error::Result;
use crate::model::evidence::WaitStat;
use crate::model::value::Row;
use std::collections::BTreeMap;

/// The snapshot query. Zero rows are left out: a wait type missing from a snapshot counts as 0.
pub const SNAPSHOT_SQL: &str = "SELECT CAST(wait_type AS nvarchar(60)) AS wait_type, \
     waiting_tasks_count, wait_time_ms, signal_wait_time_ms \
     FROM sys.dm_os_wait_stats WHERE wait_time_ms > 0 OR waiting_tasks_count > 0;";

/// Which benign-wait list [`BENIGN_WAITS`] is, recorded as the `wait_filter` precondition.
pub const LIST_VERSION: &str = "SQLskills benign waits (Paul Randal, \"Wait statistics, or please \
     tell me where it hurts\", list last updated 2019-10-30) plus the SQL Server 2019/2022 idle \
     waits of the SQLskills wait library (SOS_WORK_DISPATCHER, PVS_PREALLOCATE, \
     PWAIT_EXTENSIBILITY_CLEANUP_TASK, QDS_SHUTDOWN_QUEUE, REDO_THREAD_PENDING_WORK, \
     VDI_CLIENT_OTHER, UCS_SESSION_REGISTRATION, STARTUP_DEPENDENCY_MANAGER, \
     HADR_FABRIC_CALLBACK), dbbench list 2026-12; PREEMPTIVE_OS_FILEOPS, PREEMPTIVE_OS_WRITEFILE \
     and PREEMPTIVE_OS_FLUSHFILEBUFFERS kept visible";

/// Waits that accumulate on an idle server and say nothing about a workload: SQLskills' list
/// (Paul Randal's "Wait statistics, or please tell me where it hurts", as maintained there and in
/// Glenn Berry's diagnostic queries) with the idle waits SQL Server 2019 and 2022 added, which
/// contains every wait the VLF article's query filters. `SOS_WORK_DISPATCHER` (idle workers in
/// the dispatcher pool, instance-wide) alone would otherwise dominate the percentages on 2019+.
///
/// Three entries of that list are deliberately kept visible: `PREEMPTIVE_OS_FILEOPS`,
/// `PREEMPTIVE_OS_WRITEFILE` and `PREEMPTIVE_OS_FLUSHFILEBUFFERS`. They are file growth, zeroing
/// and flushing, the very thing storage experiments measure; the article's Tables 1 and 2 list
/// `PREEMPTIVE_OS_FILEOPS` and `PREEMPTIVE_OS_FLUSHFILEBUFFERS` among the top waits.
pub const BENIGN_WAITS: &[&str] = &[
    "BROKER_EVENTHANDLER",
    "BROKER_RECEIVE_WAITFOR",
    "BROKER_TASK_STOP",
    "BROKER_TO_FLUSH",
    "BROKER_TRANSMITTER",
    "CHECKPOINT_QUEUE",
    "CHKPT",
    "CLR_AUTO_EVENT",
    "CLR_MANUAL_EVENT",
    "CLR_SEMAPHORE",
    "CXCONSUMER",
    "DBMIRROR_DBM_EVENT",
    "DBMIRROR_EVENTS_QUEUE",
    "DBMIRROR_WORKER_QUEUE",
    "DBMIRRORING_CMD",
    "DIRTY_PAGE_POLL",
    "DISPATCHER_QUEUE_SEMAPHORE",
    "EXECSYNC",
    "FSAGENT",
    "FT_IFTS_SCHEDULER_IDLE_WAIT",
    "FT_IFTSHC_MUTEX",
    "HADR_CLUSAPI_CALL",
    "HADR_FABRIC_CALLBACK",
    "HADR_FILESTREAM_IOMGR_IOCOMPLETION",
    "HADR_LOGCAPTURE_WAIT",
    "HADR_NOTIFICATION_DEQUEUE",
    "HADR_TIMER_TASK",
    "HADR_WORK_QUEUE",
    "KSOURCE_WAKEUP",
    "LAZYWRITER_SLEEP",
    "LOGMGR_QUEUE",
    "MEMORY_ALLOCATION_EXT",
    "ONDEMAND_TASK_QUEUE",
    "PARALLEL_REDO_DRAIN_WORKER",
    "PARALLEL_REDO_LOG_CACHE",
    "PARALLEL_REDO_TRAN_LIST",
    "PARALLEL_REDO_WORKER_SYNC",
    "PARALLEL_REDO_WORKER_WAIT_WORK",
    "PREEMPTIVE_HADR_LEASE_MECHANISM",
    "PREEMPTIVE_SP_SERVER_DIAGNOSTICS",
    "PREEMPTIVE_OS_LIBRARYOPS",
    "PREEMPTIVE_OS_COMOPS",
    "PREEMPTIVE_OS_CRYPTOPS",
    "PREEMPTIVE_OS_PIPEOPS",
    "PREEMPTIVE_OS_AUTHENTICATIONOPS",
    "PREEMPTIVE_OS_GENERICOPS",
    "PREEMPTIVE_OS_VERIFYTRUST",
    "PREEMPTIVE_OS_DEVICEOPS",
    "PREEMPTIVE_OS_QUERYREGISTRY",
    "PREEMPTIVE_XE_CALLBACKEXECUTE",
    "PREEMPTIVE_XE_DISPATCHER",
    "PREEMPTIVE_XE_GETTARGETSTATE",
    "PREEMPTIVE_XE_SESSIONCOMMIT",
    "PREEMPTIVE_XE_TARGETINIT",
    "PREEMPTIVE_XE_TARGETFINALIZE",
    "PVS_PREALLOCATE",
    "PWAIT_ALL_COMPONENTS_INITIALIZED",
    "PWAIT_DIRECTLOGCONSUMER_GETNEXT",
    "PWAIT_EXTENSIBILITY_CLEANUP_TASK",
    "QDS_PERSIST_TASK_MAIN_LOOP_SLEEP",
    "QDS_ASYNC_QUEUE",
    "QDS_CLEANUP_STALE_QUERIES_TASK_MAIN_LOOP_SLEEP",
    "QDS_SHUTDOWN_QUEUE",
    "REDO_THREAD_PENDING_WORK",
    "REQUEST_FOR_DEADLOCK_SEARCH",
    "RESOURCE_QUEUE",
    "SERVER_IDLE_CHECK",
    "SLEEP_BPOOL_FLUSH",
    "SLEEP_DBSTARTUP",
    "SLEEP_DCOMSTARTUP",
    "SLEEP_MASTERDBREADY",
    "SLEEP_MASTERMDREADY",
    "SLEEP_MASTERUPGRADED",
    "SLEEP_MSDBSTARTUP",
    "SLEEP_SYSTEMTASK",
    "SLEEP_TASK",
    "SLEEP_TEMPDBSTARTUP",
    "SNI_HTTP_ACCEPT",
    "SOS_WORK_DISPATCHER",
    "SP_SERVER_DIAGNOSTICS_SLEEP",
    "SQLTRACE_BUFFER_FLUSH",
    "SQLTRACE_INCREMENTAL_FLUSH_SLEEP",
    "SQLTRACE_WAIT_ENTRIES",
    "STARTUP_DEPENDENCY_MANAGER",
    "UCS_SESSION_REGISTRATION",
    "VDI_CLIENT_OTHER",
    "WAIT_FOR_RESULTS",
    "WAITFOR",
    "WAITFOR_TASKSHUTDOWN",
    "WAIT_XTP_HOST_WAIT",
    "WAIT_XTP_OFFLINE_CKPT_NEW_LOG",
    "WAIT_XTP_CKPT_CLOSE",
    "WAIT_XTP_RECOVERY",
    "XE_BUFFERMGR_ALLPROCESSED_EVENT",
    "XE_DISPATCHER_JOIN",
    "XE_DISPATCHER_WAIT",
    "XE_LIVE_TARGET_TVF",
    "XE_TIMER_EVENT",
];

/// One wait type's cumulative counters in a snapshot.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct WaitCounters {
    /// `waiting_tasks_count`.
    pub tasks: u64,
    /// `wait_time_ms`.
    pub wait_ms: u64,
    /// `signal_wait_time_ms`.
    pub signal_ms: u64,
}

/// A snapshot: counters by wait type.
pub type WaitSnapshot = BTreeMap<String, WaitCounters>;

/// Reads the rows of [`SNAPSHOT_SQL`].
pub fn snapshot_from_rows(rows: &[Row]) -> Result<WaitSnapshot> {
    let mut out = BTreeMap::new();
    for row in rows {
        out.insert(
            row.get_named::<String>("wait_type")?.trim().to_string(),
            WaitCounters {
                tasks: row.get_named("waiting_tasks_count")?,
                wait_ms: row.get_named("wait_time_ms")?,
                signal_ms: row.get_named("signal_wait_time_ms")?,
            },
        );
    }
    Ok(out)
}

/// `after - before` per wait type, benign waits removed. Counters never go backwards unless
/// someone cleared them during the window; then the type's `after` value is the best estimate.
pub fn window_delta(before: &WaitSnapshot, after: &WaitSnapshot) -> WaitSnapshot {
    after
        .iter()
        .filter(|(wait, _)| !BENIGN_WAITS.contains(&wait.as_str()))
        .map(|(wait, a)| {
            let b = before.get(wait).copied().unwrap_or_default();
            let delta = if a.wait_ms < b.wait_ms || a.tasks < b.tasks {
                *a
            } else {
                WaitCounters {
                    tasks: a.tasks - b.tasks,
                    wait_ms: a.wait_ms - b.wait_ms,
                    signal_ms: a.signal_ms.saturating_sub(b.signal_ms),
                }
            };
            (wait.clone(), delta)
        })
        .filter(|(_, d)| d.wait_ms > 0)
        .collect()
}

/// Rounds half away from zero to two decimals, as `CAST(… AS decimal(12,2))` does.
fn round2(x: f64) -> f64 {
    (x * 100.0).round() / 100.0
}

/// The top waits of `delta`, as the article's query tabulates them.
pub fn top_waits(delta: &WaitSnapshot) -> Vec<WaitStat> {
    let total: u64 = delta.values().map(|c| c.wait_ms).sum();
    if total == 0 {
        return Vec::new();
    }
    let mut rows: Vec<(&String, &WaitCounters)> = delta.iter().collect();
    // The article orders by pct; ties in pct keep wait time, then name, for a stable result.
    rows.sort_by(|a, b| b.1.wait_ms.cmp(&a.1.wait_ms).then(a.0.cmp(b.0)));
    let mut running_hundredths: i64 = 0;
    let mut out = Vec::new();
    for (wait, counters) in rows {
        let pct = round2(100.0 * counters.wait_ms as f64 / total as f64);
        // Sum in hundredths so the running total is exact, like SQL Server's decimal sum.
        let pct_hundredths = (pct * 100.0).round() as i64;
        running_hundredths += pct_hundredths;
        if running_hundredths - pct_hundredths > 99 * 100 {
            break;
        }
        out.push(WaitStat {
            wait_type: wait.clone(),
            wait_time_s: round2(counters.wait_ms as f64 / 1000.0),
            waiting_tasks: counters.tasks,
            pct,
            running_pct: running_hundredths as f64 / 100.0,
        });
    }
    out
}

/// The waits as the article's tables show them: wait type, percent, running percent.
pub fn render_table(waits: &[WaitStat]) -> String {
    let mut out = format!(
        "{:<40} {:>8} {:>16}\n",
        "Wait Type", "Percent", "Running Percent"
    );
    for w in waits {
        out.push_str(&format!(
            "{:<40} {:>8.2} {:>16.2}\n",
            w.wait_type, w.pct, w.running_pct
        ));
    }
    out
}

#[cfg(test)]
mod tests;
