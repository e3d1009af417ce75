//! Autogrowth events of the benchmark database during the window, from an Extended Events session
//! on `sqlserver.database_file_size_change` that dbbench creates when the window opens and drops
//! when it closes (or when the database is dropped, whatever happened in between).
//!
//! The events go to an `event_file` target, read with `sys.fn_xe_file_target_read_file`: a
//! `ring_buffer`'s `target_data` returns only about 4 MB of XML (a few thousand events), so a
//! 1 MB-growth run would be cut short. The file has no path, so SQL Server writes it to its
//! error-log directory; it is deleted after reading (`sys.xp_delete_files`, SQL Server 2019+),
//! and a file that cannot be deleted is reported with its path. Where the file target cannot be
//! created, a ring buffer is the fallback, and the events it processed are compared with the
//! events parsed, so a loss is recorded rather than silently undercounted.
//!
//! The unit of the event's `duration` field is not documented consistently, so it is read from the
//! field's description in `sys.dm_xe_object_columns`; when that does not name a unit, durations
//! are reported as unavailable rather than guessed.

use super::super::errors::{self, Category};
use super::super::tsql::{ident, literal};
use super::super::MssqlConnection;
use crate::model::error::{Error, Result};
use std::collections::BTreeMap;

/// The session's name for database `db`.
pub fn session_name(db: &str) -> String {
    format!("dbbench_growth_{db}")
}

/// Where the session keeps its events.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Target {
    /// `package0.event_file`, complete.
    EventFile,
    /// `package0.ring_buffer`, truncated beyond about 4 MB of XML: the fallback.
    RingBuffer,
}

/// Creates and starts the session, filtered to database `database_id`.
///
/// Events are dispatched within a second, which the reader waits out. The event file may grow to
/// 1 GB (a few million events), more than the 1 MB-growth runs of the VLF article produce.
pub fn create_sql(session: &str, database_id: i64, target: Target) -> String {
    let name = ident(session);
    let target = match target {
        Target::EventFile => format!(
            "package0.event_file (SET filename = {}, max_file_size = 1024, max_rollover_files = 4)",
            literal(&format!("{session}.xel"))
        ),
        Target::RingBuffer => {
            "package0.ring_buffer (SET max_events_limit = 1000000, max_memory = 65536)".to_string()
        }
    };
    format!(
        "CREATE EVENT SESSION {name} ON SERVER\n\
         ADD EVENT sqlserver.database_file_size_change (WHERE (database_id = {database_id}))\n\
         ADD TARGET {target}\n\
         WITH (MAX_DISPATCH_LATENCY = 1 SECONDS, EVENT_RETENTION_MODE = ALLOW_SINGLE_EVENT_LOSS, STARTUP_STATE = OFF);\n\
         ALTER EVENT SESSION {name} ON SERVER STATE = START;"
    )
}

/// The running session's event file (full path) and dropped buffers, from the file target's
/// `target_data`.
pub fn file_name_sql(session: &str) -> String {
    format!(
        "SELECT CAST(t.target_data AS xml).value('(EventFileTarget/File/@name)[1]', 'nvarchar(4000)') AS file_name, \
         CAST(t.target_data AS xml).value('(EventFileTarget/Buffers/@dropped)[1]', 'bigint') AS dropped_buffers \
         FROM sys.dm_xe_session_targets AS t \
         JOIN sys.dm_xe_sessions AS s ON s.address = t.event_session_address \
         WHERE s.name = {} AND t.target_name = N'event_file';",
        literal(session)
    )
}

/// The pattern that matches every rollover file of the session whose current file is `file`
/// (`…/dbbench_growth_x_0_133512345.xel` → `…/dbbench_growth_x_0_*.xel`). SQL Server names an
/// event file `<filename>_0_<long integer>.xel`, for the first file and every rollover file
/// (Event File Target, SQL Server 2012–2016 docs; unchanged through 2022). The `_0_` keeps the
/// pattern from matching the files of a database whose name merely extends this one
/// (`…_r0_42` and `…_r0_4242`); [`is_own_file`] checks each name exactly.
pub fn file_pattern(file: &str, session: &str) -> String {
    match file.rfind(session) {
        Some(pos) => format!("{}{session}_0_*.xel", &file[..pos]),
        None => file.to_string(),
    }
}

/// Whether `path` is one of `session`'s event files: its name is exactly
/// `<session>_0_<digits>.xel`, as SQL Server names them (a database whose name extends this one,
/// `<db>_0_<more>`, still has a name that is not all digits there).
pub fn is_own_file(path: &str, session: &str) -> bool {
    let name = path.rsplit(['/', '\\']).next().unwrap_or(path);
    name.strip_prefix(session)
        .and_then(|rest| rest.strip_prefix("_0_"))
        .and_then(|rest| rest.strip_suffix(".xel"))
        .is_some_and(|digits| !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()))
}

/// Every growth event in the event files matching `pattern`, with the file each came from (the
/// caller keeps only the session's own files and database).
pub fn read_file_sql(pattern: &str) -> String {
    format!(
        "SELECT CAST(file_name AS nvarchar(260)) AS file_name, \
         CAST(event_data AS nvarchar(max)) AS event_data \
         FROM sys.fn_xe_file_target_read_file({}, NULL, NULL, NULL) \
         WHERE object_name = N'database_file_size_change';",
        literal(pattern)
    )
}

/// The event files matching `pattern` that hold at least one event (a rollover file always
/// does: it rolled over because it was full).
pub fn files_sql(pattern: &str) -> String {
    format!(
        "SELECT DISTINCT CAST(file_name AS nvarchar(260)) AS file_name \
         FROM sys.fn_xe_file_target_read_file({}, NULL, NULL, NULL);",
        literal(pattern)
    )
}

/// Deletes exactly the event file `path` (SQL Server 2019+, sysadmin). `sys.xp_delete_files` also
/// takes wildcards; dbbench names each file, so no file of another session is ever matched.
pub fn delete_file_sql(path: &str) -> String {
    format!("EXEC master.sys.xp_delete_files {};", literal(path))
}

/// The session's event files: the current one and every rollover file of exactly this session
/// that holds events.
pub async fn own_files(
    conn: &mut MssqlConnection,
    file: &str,
    session: &str,
) -> Result<Vec<String>> {
    let mut files = vec![file.to_string()];
    let rows = conn
        .query(&files_sql(&file_pattern(file, session)), &[])
        .await?;
    for row in rows {
        let name = row.get::<String>(0)?;
        if is_own_file(&name, session) && !files.contains(&name) {
            files.push(name);
        }
    }
    Ok(files)
}

/// Reads the ring buffer's XML.
pub fn read_sql(session: &str) -> String {
    format!(
        "SELECT CAST(t.target_data AS nvarchar(max)) AS target_data \
         FROM sys.dm_xe_session_targets AS t \
         JOIN sys.dm_xe_sessions AS s ON s.address = t.event_session_address \
         WHERE s.name = {} AND t.target_name = N'ring_buffer';",
        literal(session)
    )
}

/// Drops the session if it exists (stopping it discards a ring buffer).
pub fn drop_sql(session: &str) -> String {
    format!(
        "IF EXISTS (SELECT 1 FROM sys.server_event_sessions WHERE name = {}) DROP EVENT SESSION {} ON SERVER;",
        literal(session),
        ident(session)
    )
}

/// The session's event file while it runs: `Ok(None)` for a ring-buffer session or none at all.
pub async fn running_file(
    conn: &mut MssqlConnection,
    session: &str,
) -> Result<Option<(String, i64)>> {
    let rows = conn.query(&file_name_sql(session), &[]).await?;
    Ok(rows.first().and_then(|r| {
        let file = r.get_named::<Option<String>>("file_name").ok().flatten()?;
        let dropped = r
            .get_named::<Option<i64>>("dropped_buffers")
            .ok()
            .flatten()
            .unwrap_or(0);
        Some((file, dropped))
    }))
}

/// Stops and drops the session and deletes its event files; returns the errors of each step
/// (every step runs). A server without Extended Events views had no session to stop.
pub async fn stop_and_clean(conn: &mut MssqlConnection, session: &str) -> Vec<String> {
    let mut problems = Vec::new();
    let file = match running_file(conn, session).await {
        Ok(file) => file,
        Err(e) => {
            let unsupported = errors::server_error(&e).is_some_and(|(code, message)| {
                errors::category(code, message) == Category::Unsupported
            });
            if unsupported {
                return problems;
            }
            problems.push(e.to_string());
            None
        }
    };
    if let Err(e) = conn.batch(&drop_sql(session)).await {
        problems.push(e.to_string());
    }
    if let Some((file, _)) = file {
        let files = match own_files(conn, &file, session).await {
            Ok(files) => files,
            Err(e) => {
                problems.push(format!("listing the event files of {session}: {e}"));
                vec![file]
            }
        };
        for path in files {
            if let Err(e) = conn.batch(&delete_file_sql(&path)).await {
                problems.push(format!(
                    "the event file {path} remains on the server; delete it by hand ({e})"
                ));
            }
        }
    }
    problems
}

/// The description of the event's `duration` field, which names its unit.
pub const DURATION_UNIT_SQL: &str = "SELECT CAST(description AS nvarchar(4000)) AS description \
     FROM sys.dm_xe_object_columns \
     WHERE object_name = N'database_file_size_change' AND name = N'duration';";

/// The unit of the `duration` field.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DurationUnit {
    /// Microseconds.
    Micros,
    /// Milliseconds.
    Millis,
}

impl DurationUnit {
    /// The unit named in a field description ("… in microseconds"), if any.
    pub fn from_description(text: &str) -> Option<DurationUnit> {
        let text = text.to_ascii_lowercase();
        if text.contains("microsecond") {
            Some(DurationUnit::Micros)
        } else if text.contains("millisecond") {
            Some(DurationUnit::Millis)
        } else {
            None
        }
    }

    /// `value` in milliseconds.
    pub fn to_ms(self, value: u64) -> f64 {
        match self {
            DurationUnit::Micros => value as f64 / 1000.0,
            DurationUnit::Millis => value as f64,
        }
    }
}

/// One `database_file_size_change` event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GrowthEvent {
    /// `database_id`, where the event carries it.
    pub database_id: Option<i64>,
    /// `file_id`.
    pub file_id: i64,
    /// `file_name` (logical).
    pub file_name: String,
    /// `size_change_kb`: positive for growth, negative for shrink.
    pub size_change_kb: i64,
    /// `duration` in the server's unit.
    pub duration: Option<u64>,
    /// `is_automatic`: autogrowth rather than `ALTER DATABASE`.
    pub is_automatic: bool,
    /// The event's `timestamp` attribute (UTC, `2024-05-01T10:00:01.123Z`), where it has one.
    pub timestamp: Option<String>,
}

/// The ring buffer's content.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct RingBuffer {
    /// The events, oldest first.
    pub events: Vec<GrowthEvent>,
    /// Events the session processed (`totalEventsProcessed`).
    pub processed: u64,
    /// Events lost (`droppedCount`) or cut from the XML (`truncated`).
    pub lost: u64,
}

/// Parses the ring buffer XML of [`read_sql`].
pub fn parse_ring_buffer(xml: &str) -> Result<RingBuffer> {
    let doc = roxmltree::Document::parse(xml)
        .map_err(|e| Error::msg(format!("the ring buffer is not XML: {e}")))?;
    let root = doc.root_element();
    let attr = |name: &str| {
        root.attribute(name)
            .and_then(|v| v.parse::<u64>().ok())
            .unwrap_or(0)
    };
    let mut events = Vec::new();
    for event in root.children().filter(|n| n.has_tag_name("event")) {
        events.push(parse_event(event)?);
    }
    let processed = attr("totalEventsProcessed").max(events.len() as u64);
    // The XML is cut at about 4 MB without always saying so: every processed event that is not
    // in the XML is lost to the reader, whatever `truncated` and `droppedCount` say.
    let lost = attr("droppedCount").max(processed - events.len() as u64);
    Ok(RingBuffer {
        events,
        processed,
        lost,
    })
}

/// One `<event>` element of either target.
fn parse_event(event: roxmltree::Node<'_, '_>) -> Result<GrowthEvent> {
    let field = |name: &str| {
        event
            .children()
            .find(|d| d.has_tag_name("data") && d.attribute("name") == Some(name))
            .and_then(|d| d.children().find(|v| v.has_tag_name("value")))
            .and_then(|v| v.text())
            .map(str::trim)
    };
    let number = |name: &str| -> Result<i64> {
        field(name)
            .and_then(|v| v.parse::<i64>().ok())
            .ok_or_else(|| Error::msg(format!("a growth event has no numeric `{name}`")))
    };
    Ok(GrowthEvent {
        database_id: field("database_id").and_then(|v| v.parse().ok()),
        file_id: number("file_id")?,
        file_name: field("file_name").unwrap_or_default().to_string(),
        size_change_kb: number("size_change_kb")?,
        duration: field("duration").and_then(|v| v.parse().ok()),
        is_automatic: matches!(field("is_automatic"), Some("true") | Some("1")),
        timestamp: event.attribute("timestamp").map(str::to_string),
    })
}

/// The server's UTC clock, in the form of an event's `timestamp` up to the second.
pub const NOW_UTC_SQL: &str = "SELECT CONVERT(nvarchar(30), SYSUTCDATETIME(), 126) AS now_utc;";

/// Whether an event stamped `timestamp` happened before `since` (both UTC, ISO 8601), compared
/// to the second: an event of the window's first second is kept.
fn before(timestamp: &str, since: &str) -> bool {
    let second = |t: &str| t.get(..19).unwrap_or(t).to_string();
    second(timestamp) < second(since)
}

/// Parses the `(file_name, event_data)` rows of [`read_file_sql`], one `<event>` document each,
/// keeping only events from `session`'s own files ([`is_own_file`]) about database
/// `database_id` (the session's filter already says so; a file of another session that the
/// pattern still matched must not add its events), stamped at or after `since`, the window's
/// start: a file an earlier session of the same name left (2016/2017 have no `xp_delete_files`,
/// a stopped session's files are never deleted) matches the name exactly, and `database_id`s are
/// reused after a drop (finding C2).
pub fn parse_event_file(
    records: &[(String, String)],
    session: &str,
    database_id: i64,
    since: Option<&str>,
) -> Result<Vec<GrowthEvent>> {
    let mut events = Vec::with_capacity(records.len());
    for (file, text) in records {
        if !is_own_file(file, session) {
            continue;
        }
        let doc = roxmltree::Document::parse(text)
            .map_err(|e| Error::msg(format!("an event_file record is not XML: {e}")))?;
        let event = parse_event(doc.root_element())?;
        if event.database_id.is_some_and(|id| id != database_id) {
            continue;
        }
        if let (Some(at), Some(since)) = (&event.timestamp, since) {
            if before(at, since) {
                continue;
            }
        }
        events.push(event);
    }
    Ok(events)
}

/// Autogrowth of one file in the window.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct FileGrowth {
    /// Autogrowth events.
    pub events: u64,
    /// Bytes added.
    pub bytes: u64,
    /// Total duration (0 when the unit is unknown).
    pub total_ms: f64,
    /// Longest single growth (0 when the unit is unknown).
    pub max_ms: f64,
}

/// Automatic growths per file id; durations converted with `unit` when it is known.
pub fn per_file(events: &[GrowthEvent], unit: Option<DurationUnit>) -> BTreeMap<i64, FileGrowth> {
    let mut out: BTreeMap<i64, FileGrowth> = BTreeMap::new();
    for event in events
        .iter()
        .filter(|e| e.is_automatic && e.size_change_kb > 0)
    {
        let entry = out.entry(event.file_id).or_default();
        entry.events += 1;
        entry.bytes += event.size_change_kb as u64 * 1024;
        if let (Some(unit), Some(d)) = (unit, event.duration) {
            let ms = unit.to_ms(d);
            entry.total_ms += ms;
            entry.max_ms = entry.max_ms.max(ms);
        }
    }
    out
}

#[cfg(test)]
mod tests;
