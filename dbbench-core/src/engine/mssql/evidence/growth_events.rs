//! Autogrowth events of the benchmark database during the window, from an Extended Events session
//! on `sqlserver.database_file_size_change` that dbbench creates when the window opens and drops
//! when it closes (or when the database is dropped, whatever happened in between).
//!
//! The events land in a `ring_buffer` target, read as XML from `sys.dm_xe_session_targets`. The
//! unit of the event's `duration` field is not documented consistently, so it is read from the
//! field's description in `sys.dm_xe_object_columns`; when that does not name a unit, durations
//! are reported as unavailable rather than guessed.

use super::super::tsql::{ident, literal};
use crate::model::error::{Error, Result};
use std::collections::BTreeMap;

/// The session's name for database `db`.
pub fn session_name(db: &str) -> String {
    format!("dbbench_growth_{db}")
}

/// Creates and starts the session, filtered to database `database_id`.
///
/// The ring buffer holds up to a million events in 64 MB, enough for the 1 MB-growth runs of the
/// VLF article; events are dispatched within a second, which the reader waits out.
pub fn create_sql(session: &str, database_id: i64) -> String {
    let name = ident(session);
    format!(
        "CREATE EVENT SESSION {name} ON SERVER\n\
         ADD EVENT sqlserver.database_file_size_change (WHERE (database_id = {database_id}))\n\
         ADD TARGET package0.ring_buffer (SET max_events_limit = 1000000, max_memory = 65536)\n\
         WITH (MAX_DISPATCH_LATENCY = 1 SECONDS, EVENT_RETENTION_MODE = ALLOW_SINGLE_EVENT_LOSS, STARTUP_STATE = OFF);\n\
         ALTER EVENT SESSION {name} ON SERVER STATE = START;"
    )
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

/// Drops the session if it exists (stopping it discards the ring buffer).
pub fn drop_sql(session: &str) -> String {
    format!(
        "IF EXISTS (SELECT 1 FROM sys.server_event_sessions WHERE name = {}) DROP EVENT SESSION {} ON SERVER;",
        literal(session),
        ident(session)
    )
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
        events.push(GrowthEvent {
            file_id: number("file_id")?,
            file_name: field("file_name").unwrap_or_default().to_string(),
            size_change_kb: number("size_change_kb")?,
            duration: field("duration").and_then(|v| v.parse().ok()),
            is_automatic: matches!(field("is_automatic"), Some("true") | Some("1")),
        });
    }
    let processed = attr("totalEventsProcessed").max(events.len() as u64);
    let truncated = root.attribute("truncated") == Some("1");
    let lost = attr("droppedCount")
        + if truncated {
            processed.saturating_sub(events.len() as u64)
        } else {
            0
        };
    Ok(RingBuffer {
        events,
        processed,
        lost,
    })
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
mod tests {
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
                file_id: 2,
                file_name: "log".into(),
                size_change_kb: 1024,
                duration: Some(2500),
                is_automatic: true
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
            DurationUnit::from_description(
                "The time taken (in microseconds) to change the file size"
            ),
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
        insta::assert_snapshot!(format!(
            "{}\n{}\n{}\n{}",
            create_sql(&name, 7),
            read_sql(&name),
            DURATION_UNIT_SQL,
            drop_sql(&name)
        ));
    }
}
