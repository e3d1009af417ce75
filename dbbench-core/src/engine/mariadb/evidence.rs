//! What a window measures on MariaDB: the InnoDB status counters' deltas (redo bytes and writes,
//! fsyncs, data bytes written, log waits), the checkpoint age at the close, the system
//! tablespace's and the redo log's file sizes before and after (and the extensions they imply),
//! `performance_schema`'s file I/O per file and its waits (`super::waits`).
//!
//! There is no growth counter in InnoDB: the system tablespace's extensions are its size change
//! divided by `innodb_autoextend_increment`, which is exact since only the last file grows, by
//! whole increments.

use super::connection::MariaDbConnection;
use crate::model::error::Result;
use crate::model::evidence::{Evidence, FileKind, FileStats, LogStats};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The status counters read at both ends of the window, and the names their deltas get in
/// [`Evidence::values`]: measurements, not counts, for InnoDB's background threads (page cleaner,
/// purge, the log writer) move them by different amounts in two runs of the same work, so they
/// must not be snapshot as the deterministic part of a run; the table's evidence columns read
/// them from there.
pub const COUNTERS: &[(&str, &str)] = &[
    ("Innodb_os_log_written", "mdb_redo_bytes"),
    // MariaDB 10.11 counts no redo fsyncs of their own (they are in Innodb_data_fsyncs).
    ("Innodb_log_writes", "mdb_redo_writes"),
    ("Innodb_data_fsyncs", "mdb_data_fsyncs"),
    ("Innodb_data_written", "mdb_data_written_bytes"),
    ("Innodb_data_writes", "mdb_data_writes"),
    ("Innodb_log_waits", "mdb_log_waits"),
    ("Innodb_dblwr_pages_written", "mdb_doublewrite_pages"),
    // Pages read from disk because the buffer pool lacked them: what a cold window pays.
    ("Innodb_buffer_pool_reads", "mdb_pool_reads"),
];

/// Read at the close only: levels, not counters.
const LEVELS: &[(&str, &str)] = &[
    ("Innodb_checkpoint_age", "mdb_checkpoint_age_bytes"),
    ("Innodb_checkpoint_max_age", "mdb_checkpoint_max_age_bytes"),
];

/// Every status variable read, for one `SHOW GLOBAL STATUS`.
fn status_sql() -> String {
    let names: Vec<String> = COUNTERS
        .iter()
        .chain(LEVELS)
        .map(|(n, _)| format!("'{n}'"))
        .collect();
    format!(
        "SHOW GLOBAL STATUS WHERE Variable_name IN ({})",
        names.join(", ")
    )
}

/// The status variables by name.
pub async fn status(conn: &mut MariaDbConnection) -> Result<BTreeMap<String, i64>> {
    let rows = conn.query(&status_sql(), &[]).await?;
    let mut out = BTreeMap::new();
    for row in rows {
        let name: String = row.get(0)?;
        let value: i64 = row.get(1)?;
        out.insert(name, value);
    }
    Ok(out)
}

/// One file's I/O as `performance_schema.file_summary_by_instance` counts it.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct FileIo {
    /// Reads.
    pub reads: u64,
    /// Writes.
    pub writes: u64,
    /// Other operations: syncs, size changes, opens and closes.
    pub misc: u64,
    /// Bytes read.
    pub bytes_read: u64,
    /// Bytes written.
    pub bytes_written: u64,
    /// Time in reads, picoseconds.
    pub read_ps: u64,
    /// Time in writes, picoseconds.
    pub write_ps: u64,
}

const FILE_IO_SQL: &str = "SELECT FILE_NAME, COUNT_READ, COUNT_WRITE, COUNT_MISC, \
     SUM_NUMBER_OF_BYTES_READ, SUM_NUMBER_OF_BYTES_WRITE, SUM_TIMER_READ, SUM_TIMER_WRITE \
     FROM performance_schema.file_summary_by_instance \
     WHERE EVENT_NAME LIKE 'wait/io/file/innodb/%'";

/// InnoDB's files' I/O by file name (the file's last path component).
pub async fn file_io(conn: &mut MariaDbConnection) -> Result<BTreeMap<String, FileIo>> {
    let rows = conn.query(FILE_IO_SQL, &[]).await?;
    let mut out = BTreeMap::new();
    for row in rows {
        let path: String = row.get(0)?;
        let name = Path::new(&path)
            .file_name()
            .map_or(path.clone(), |n| n.to_string_lossy().into_owned());
        let n = |i| row.get::<u64>(i);
        let io = FileIo {
            reads: n(1)?,
            writes: n(2)?,
            misc: n(3)?,
            bytes_read: n(4)?,
            bytes_written: n(5)?,
            read_ps: n(6)?,
            write_ps: n(7)?,
        };
        // Several handles of one file are summed.
        let e: &mut FileIo = out.entry(name).or_default();
        e.reads += io.reads;
        e.writes += io.writes;
        e.misc += io.misc;
        e.bytes_read += io.bytes_read;
        e.bytes_written += io.bytes_written;
        e.read_ps += io.read_ps;
        e.write_ps += io.write_ps;
    }
    Ok(out)
}

/// The instance's files the evidence follows: the system tablespace's, then the redo log.
#[derive(Debug, Clone)]
pub struct Files {
    /// The system tablespace's files, `ibdata1` first.
    pub data: Vec<PathBuf>,
    /// The redo log, `ib_logfile0`.
    pub redo: Option<PathBuf>,
}

impl Files {
    /// `ibdata*` in `datadir` (sorted, so `ibdata1` first) and `redo_dir/ib_logfile0`.
    pub fn of(datadir: &Path, redo_dir: &Path) -> Files {
        let mut data: Vec<PathBuf> = std::fs::read_dir(datadir)
            .into_iter()
            .flatten()
            .flatten()
            .map(|e| e.path())
            .filter(|p| {
                p.file_name()
                    .and_then(|n| n.to_str())
                    .is_some_and(|n| n.starts_with("ibdata"))
            })
            .collect();
        data.sort_by_key(|p| {
            let name = p.file_name().and_then(|n| n.to_str()).unwrap_or("");
            name.trim_start_matches("ibdata")
                .parse::<u32>()
                .unwrap_or(0)
        });
        Files {
            data,
            redo: Some(redo_dir.join("ib_logfile0")),
        }
    }

    /// No files: an existing server's are not read.
    pub fn none() -> Files {
        Files {
            data: Vec::new(),
            redo: None,
        }
    }

    /// Every file's size now (0 for a file that is not there).
    pub fn sizes(&self) -> Vec<u64> {
        self.data
            .iter()
            .chain(&self.redo)
            .map(|p| std::fs::metadata(p).map_or(0, |m| m.len()))
            .collect()
    }
}

/// What the window's opening read.
#[derive(Debug, Clone)]
pub struct Opening {
    /// The status variables.
    pub status: BTreeMap<String, i64>,
    /// The file I/O by file name.
    pub io: BTreeMap<String, FileIo>,
    /// The sizes of [`Files`], in its order.
    pub sizes: Vec<u64>,
    /// The wait sums, `None` without `performance_schema`.
    pub waits: Option<super::waits::Sums>,
}

/// The redo log's writes into its file's row (the last one pushed): MariaDB 10.11's
/// `performance_schema` has no instrument for the redo log, so its bytes and writes are InnoDB's
/// own counters, and the time they took is not known.
fn redo_writes(ev: &mut Evidence, open: &Opening, close: &Opening) {
    let delta = |status: &str| {
        let before = open.status.get(status)?;
        Some(close.status.get(status)?.saturating_sub(*before).max(0) as u64)
    };
    if let Some(file) = ev.files.last_mut() {
        file.bytes_written = delta("Innodb_os_log_written").unwrap_or(0);
        file.writes = delta("Innodb_log_writes").unwrap_or(0);
    }
    ev.unavailable.insert(
        "redo log I/O time".into(),
        "MariaDB's performance_schema does not instrument the redo log's I/O; its bytes and \
         writes are InnoDB's counters (Innodb_os_log_written, Innodb_log_writes)"
            .into(),
    );
}

/// The evidence of a window from its opening and closing reads; `increment` is the system
/// tablespace's autoextend increment in bytes (its extensions are counted in it).
pub fn evidence(
    files: &Files,
    open: &Opening,
    close: &Opening,
    increment: Option<u64>,
) -> Evidence {
    let mut ev = Evidence::default();
    for (status, name) in COUNTERS {
        let before = open.status.get(*status).copied();
        match (before, close.status.get(*status)) {
            (Some(b), Some(a)) => {
                ev.values.insert(name.to_string(), (a - b) as f64);
            }
            _ => {
                ev.unavailable.insert(
                    name.to_string(),
                    format!("the server has no status variable {status}"),
                );
            }
        }
    }
    for (status, name) in LEVELS {
        if let Some(v) = close.status.get(*status) {
            ev.values.insert(name.to_string(), *v as f64);
        }
    }
    let paths: Vec<(&PathBuf, FileKind)> = files
        .data
        .iter()
        .map(|p| (p, FileKind::Data))
        .chain(files.redo.iter().map(|p| (p, FileKind::Log)))
        .collect();
    for (i, (path, kind)) in paths.into_iter().enumerate() {
        let name = path
            .file_name()
            .map_or(String::new(), |n| n.to_string_lossy().into_owned());
        let before = open.sizes.get(i).copied().unwrap_or(0);
        let after = close.sizes.get(i).copied().unwrap_or(0);
        let grown = after.saturating_sub(before);
        let growth_events = match (kind, increment) {
            (FileKind::Data, Some(step)) if step > 0 => grown.div_ceil(step),
            _ => 0,
        };
        let io_before = open.io.get(&name).copied().unwrap_or_default();
        let io_after = close.io.get(&name).copied().unwrap_or_default();
        ev.files.push(FileStats {
            name: name.clone(),
            kind,
            volume: None,
            size_before_bytes: before,
            size_after_bytes: after,
            reads: io_after.reads.saturating_sub(io_before.reads),
            writes: io_after.writes.saturating_sub(io_before.writes),
            bytes_read: io_after.bytes_read.saturating_sub(io_before.bytes_read),
            bytes_written: io_after
                .bytes_written
                .saturating_sub(io_before.bytes_written),
            read_stall_ms: io_after.read_ps.saturating_sub(io_before.read_ps) as f64 / 1e9,
            write_stall_ms: io_after.write_ps.saturating_sub(io_before.write_ps) as f64 / 1e9,
            flushes: io_after.misc.saturating_sub(io_before.misc),
            growth_events,
            growth_bytes: grown,
            zero_fill_bytes: 0,
            growth_total_ms: 0.0,
            growth_max_ms: 0.0,
        });
        if kind == FileKind::Log {
            redo_writes(&mut ev, open, close);
            ev.log = Some(LogStats {
                growths: 0,
                segments_before: 1,
                segments_after: 1,
                size_before_bytes: before,
                size_after_bytes: after,
            });
        }
    }
    match (&open.waits, &close.waits) {
        (Some(before), Some(after)) => ev.waits = super::waits::table(before, after),
        _ => {
            for metric in ["waits", "file I/O"] {
                ev.unavailable
                    .insert(metric.into(), super::waits::SCHEMA_OFF.into());
            }
        }
    }
    let extensions: u64 = ev.files.iter().map(|f| f.growth_events).sum();
    // A value too: with concurrent writers the pages reach the tablespace in varying order.
    ev.values
        .insert("mdb_tablespace_extensions".into(), extensions as f64);
    ev
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deltas_sizes_and_extensions() {
        let files = Files {
            data: vec![PathBuf::from("/d/ibdata1"), PathBuf::from("/d/ibdata2")],
            redo: Some(PathBuf::from("/r/ib_logfile0")),
        };
        let status = |redo: i64| {
            COUNTERS
                .iter()
                .map(|(n, _)| {
                    (
                        n.to_string(),
                        if *n == "Innodb_os_log_written" {
                            redo
                        } else {
                            5
                        },
                    )
                })
                .chain([("Innodb_checkpoint_age".to_string(), 77)])
                .collect()
        };
        let mut io = BTreeMap::new();
        io.insert(
            "ib_logfile0".to_string(),
            FileIo {
                writes: 3,
                bytes_written: 4096,
                ..FileIo::default()
            },
        );
        let open = Opening {
            status: status(1000),
            io: BTreeMap::new(),
            sizes: vec![16 << 20, 16 << 20, 8 << 20],
            waits: Some(BTreeMap::new()),
        };
        let close = Opening {
            status: status(5000),
            io,
            sizes: vec![16 << 20, 40 << 20, 8 << 20],
            waits: Some(
                [("wait/io/file/innodb/innodb_log_file".to_string(), (2, 500))]
                    .into_iter()
                    .collect(),
            ),
        };
        let ev = evidence(&files, &open, &close, Some(8 << 20));
        assert_eq!(ev.values["mdb_redo_bytes"], 4000.0);
        assert_eq!(ev.values["mdb_data_fsyncs"], 0.0);
        assert_eq!(ev.values["mdb_checkpoint_age_bytes"], 77.0);
        assert_eq!(ev.values["mdb_tablespace_extensions"], 3.0);
        // Nothing of InnoDB's counters is a deterministic count of the snapshot.
        assert!(ev.counts.is_empty(), "{:?}", ev.counts);
        assert_eq!(ev.files[1].growth_bytes, 24 << 20);
        assert_eq!(ev.files[2].kind, FileKind::Log);
        // The redo log's bytes are InnoDB's counter, not the (absent) file I/O's.
        assert_eq!(ev.files[2].bytes_written, 4000);
        assert_eq!(ev.files[2].writes, 0);
        assert!(ev.unavailable.contains_key("redo log I/O time"));
        assert_eq!(ev.log.as_ref().unwrap().size_after_bytes, 8 << 20);
        assert!(status_sql().contains("'Innodb_os_log_written'"));
        assert_eq!(ev.waits.len(), 1);
        assert_eq!(ev.waits[0].waiting_tasks, 2);
        assert!(!ev.unavailable.contains_key("waits"));
        let off = Opening {
            waits: None,
            ..close.clone()
        };
        let ev = evidence(&files, &off, &off, None);
        assert!(ev.waits.is_empty());
        assert!(ev.unavailable["waits"].contains("performance_schema is off"));
    }
}
