//! Per-file evidence: sizes from `sys.database_files` when the window opens and closes, and I/O
//! as the difference of two `sys.dm_io_virtual_file_stats` snapshots, combined with the autogrowth
//! events into [`FileStats`].

use super::growth_events::FileGrowth;
use crate::model::error::Result;
use crate::model::evidence::{FileKind, FileStats};
use crate::model::units::PAGE;
use crate::model::value::Row;
use std::collections::BTreeMap;

/// The files of the current database with their sizes (in 8 KiB pages).
pub const FILES_SQL: &str =
    "SELECT CAST(file_id AS int) AS file_id, CAST(name AS nvarchar(128)) AS name, \
     CAST(type AS int) AS type, CAST(size AS bigint) AS size_pages \
     FROM sys.database_files ORDER BY file_id;";

/// Cumulative I/O per file of the current database since it came online.
pub const IO_SQL: &str =
    "SELECT CAST(file_id AS int) AS file_id, num_of_reads, num_of_bytes_read, \
     io_stall_read_ms, num_of_writes, num_of_bytes_written, io_stall_write_ms \
     FROM sys.dm_io_virtual_file_stats(DB_ID(), NULL);";

/// One database file at one moment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DbFile {
    /// `file_id`.
    pub file_id: i64,
    /// Logical name.
    pub name: String,
    /// Data or log (`type` 0 or 1; FILESTREAM and full-text files are ignored).
    pub kind: FileKind,
    /// Size in bytes.
    pub size_bytes: u64,
}

/// Reads the rows of [`FILES_SQL`].
pub fn files_from_rows(rows: &[Row]) -> Result<Vec<DbFile>> {
    let mut out = Vec::new();
    for row in rows {
        let kind = match row.get_named::<i64>("type")? {
            0 => FileKind::Data,
            1 => FileKind::Log,
            _ => continue,
        };
        out.push(DbFile {
            file_id: row.get_named("file_id")?,
            name: row.get_named::<String>("name")?.trim().to_string(),
            kind,
            size_bytes: row.get_named::<u64>("size_pages")? * PAGE,
        });
    }
    Ok(out)
}

/// Cumulative I/O counters of one file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct FileIo {
    /// `num_of_reads`.
    pub reads: u64,
    /// `num_of_bytes_read`.
    pub bytes_read: u64,
    /// `io_stall_read_ms`.
    pub read_stall_ms: u64,
    /// `num_of_writes`.
    pub writes: u64,
    /// `num_of_bytes_written`.
    pub bytes_written: u64,
    /// `io_stall_write_ms`.
    pub write_stall_ms: u64,
}

impl FileIo {
    fn minus(&self, before: &FileIo) -> FileIo {
        FileIo {
            reads: self.reads.saturating_sub(before.reads),
            bytes_read: self.bytes_read.saturating_sub(before.bytes_read),
            read_stall_ms: self.read_stall_ms.saturating_sub(before.read_stall_ms),
            writes: self.writes.saturating_sub(before.writes),
            bytes_written: self.bytes_written.saturating_sub(before.bytes_written),
            write_stall_ms: self.write_stall_ms.saturating_sub(before.write_stall_ms),
        }
    }
}

/// Reads the rows of [`IO_SQL`] by file id.
pub fn io_from_rows(rows: &[Row]) -> Result<BTreeMap<i64, FileIo>> {
    let mut out = BTreeMap::new();
    for row in rows {
        out.insert(
            row.get_named("file_id")?,
            FileIo {
                reads: row.get_named("num_of_reads")?,
                bytes_read: row.get_named("num_of_bytes_read")?,
                read_stall_ms: row.get_named("io_stall_read_ms")?,
                writes: row.get_named("num_of_writes")?,
                bytes_written: row.get_named("num_of_bytes_written")?,
                write_stall_ms: row.get_named("io_stall_write_ms")?,
            },
        );
    }
    Ok(out)
}

/// I/O snapshots by file id.
pub type IoSnapshot = BTreeMap<i64, FileIo>;

/// Everything known about the window, per file; `None` parts were unavailable.
pub struct WindowFiles<'a> {
    /// Files when the window opened.
    pub before: &'a [DbFile],
    /// Files when it closed.
    pub after: &'a [DbFile],
    /// I/O snapshots (before, after), if both were read.
    pub io: Option<(&'a IoSnapshot, &'a IoSnapshot)>,
    /// Growth events by file id, if they were read.
    pub growth: Option<&'a BTreeMap<i64, FileGrowth>>,
    /// Volume names by logical file name.
    pub volumes: &'a BTreeMap<String, String>,
}

/// [`FileStats`] for every file that exists when the window closes. SQL Server does not report
/// flushes or zero-fill bytes per file; those fields stay 0 and the caller records them as
/// unavailable.
pub fn file_stats(window: &WindowFiles<'_>) -> Vec<FileStats> {
    window
        .after
        .iter()
        .map(|after| {
            let before = window.before.iter().find(|f| f.file_id == after.file_id);
            let io = window
                .io
                .map(|(b, a)| {
                    let zero = FileIo::default();
                    a.get(&after.file_id)
                        .unwrap_or(&zero)
                        .minus(b.get(&after.file_id).unwrap_or(&zero))
                })
                .unwrap_or_default();
            let growth = window
                .growth
                .and_then(|g| g.get(&after.file_id).copied())
                .unwrap_or_default();
            FileStats {
                name: after.name.clone(),
                kind: after.kind,
                volume: window.volumes.get(&after.name).cloned(),
                size_before_bytes: before.map_or(0, |b| b.size_bytes),
                size_after_bytes: after.size_bytes,
                reads: io.reads,
                writes: io.writes,
                bytes_read: io.bytes_read,
                bytes_written: io.bytes_written,
                read_stall_ms: io.read_stall_ms as f64,
                write_stall_ms: io.write_stall_ms as f64,
                flushes: 0,
                growth_events: growth.events,
                growth_bytes: growth.bytes,
                zero_fill_bytes: 0,
                growth_total_ms: growth.total_ms,
                growth_max_ms: growth.max_ms,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::value::Value;
    use std::sync::Arc;

    fn file_rows(sizes: &[(i64, &str, i64, i64)]) -> Vec<Row> {
        let columns: Arc<[String]> = ["file_id", "name", "type", "size_pages"]
            .iter()
            .map(|c| c.to_string())
            .collect();
        sizes
            .iter()
            .map(|(id, name, kind, pages)| {
                Row::new(
                    columns.clone(),
                    vec![
                        Value::Int(*id),
                        Value::Text(format!("{name}  ")),
                        Value::Int(*kind),
                        Value::Int(*pages),
                    ],
                )
            })
            .collect()
    }

    fn io_rows(values: &[[i64; 7]]) -> Vec<Row> {
        let columns: Arc<[String]> = [
            "file_id",
            "num_of_reads",
            "num_of_bytes_read",
            "io_stall_read_ms",
            "num_of_writes",
            "num_of_bytes_written",
            "io_stall_write_ms",
        ]
        .iter()
        .map(|c| c.to_string())
        .collect();
        values
            .iter()
            .map(|v| Row::new(columns.clone(), v.iter().map(|x| Value::Int(*x)).collect()))
            .collect()
    }

    #[test]
    fn combines_sizes_io_and_growth() {
        let before = files_from_rows(&file_rows(&[
            (1, "data_1", 0, 128_000),
            (2, "log", 1, 51_200),
        ]))
        .unwrap();
        let after = files_from_rows(&file_rows(&[
            (1, "data_1", 0, 128_128),
            (2, "log", 1, 51_328),
        ]))
        .unwrap();
        assert_eq!(before[0].size_bytes, 128_000 * 8192);
        let io_b = io_from_rows(&io_rows(&[
            [1, 10, 81_920, 5, 100, 819_200, 40],
            [2, 1, 4096, 0, 50, 409_600, 20],
        ]))
        .unwrap();
        let io_a = io_from_rows(&io_rows(&[
            [1, 12, 98_304, 6, 300, 2_457_600, 140],
            [2, 1, 4096, 0, 950, 7_782_400, 320],
        ]))
        .unwrap();
        let mut growth = BTreeMap::new();
        growth.insert(
            2,
            FileGrowth {
                events: 1,
                bytes: 1 << 20,
                total_ms: 12.5,
                max_ms: 12.5,
            },
        );
        let mut volumes = BTreeMap::new();
        volumes.insert("log".to_string(), "fastlog".to_string());
        let stats = file_stats(&WindowFiles {
            before: &before,
            after: &after,
            io: Some((&io_b, &io_a)),
            growth: Some(&growth),
            volumes: &volumes,
        });
        assert_eq!(stats.len(), 2);
        let data = &stats[0];
        assert_eq!((data.name.as_str(), data.kind), ("data_1", FileKind::Data));
        assert_eq!(data.size_after_bytes - data.size_before_bytes, 128 * 8192);
        assert_eq!(
            (data.reads, data.writes, data.bytes_written),
            (2, 200, 1_638_400)
        );
        assert_eq!(data.write_stall_ms, 100.0);
        assert_eq!(data.growth_events, 0);
        let log = &stats[1];
        assert_eq!(log.volume.as_deref(), Some("fastlog"));
        assert_eq!(
            (log.writes, log.bytes_written, log.write_stall_ms),
            (900, 7_372_800, 300.0)
        );
        assert_eq!(
            (log.growth_events, log.growth_bytes, log.growth_max_ms),
            (1, 1 << 20, 12.5)
        );
    }

    #[test]
    fn ignores_filestream_and_missing_io() {
        let files =
            files_from_rows(&file_rows(&[(1, "data_1", 0, 8), (65537, "fs", 2, 0)])).unwrap();
        assert_eq!(files.len(), 1);
        let stats = file_stats(&WindowFiles {
            before: &files,
            after: &files,
            io: None,
            growth: None,
            volumes: &BTreeMap::new(),
        });
        assert_eq!((stats[0].reads, stats[0].growth_events), (0, 0));
    }

    #[test]
    fn queries() {
        insta::assert_snapshot!(format!("{FILES_SQL}\n{IO_SQL}"));
    }
}
