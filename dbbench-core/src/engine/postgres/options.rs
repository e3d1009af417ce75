//! What each storage option means on PostgreSQL, and the refusal of those with no honest
//! equivalent. `docs/postgres.md` has the same table in prose; keep them together.
//!
//! | option | PostgreSQL | level |
//! |---|---|---|
//! | `log_size` | `min_wal_size` = `max_wal_size` = the size: WAL up to it is recycled, and a checkpoint starts when that much WAL was written since the last | cluster |
//! | `log_growth` (fixed) | the WAL segment size, `initdb --wal-segsize` (a power of two, 1–1024 MB): the log grows a segment at a time | cluster |
//! | `log_pregrow` | segments made ahead of the window: WAL is switched through `log_size` in steps of `log_pregrow` and checkpointed, so the segments are recycled as future ones | per repetition |
//! | `ifi` | `wal_init_zero` = `!ifi`: whether new **WAL** segments are zero-filled; data files are never zero-filled on PostgreSQL | cluster |
//! | `recovery` | `simple` → `wal_level = minimal`, `max_wal_senders = 0`; `full` → `wal_level = replica`, `archive_mode = on` with no archive command, so WAL accumulates as a full-recovery log does without log backups | cluster |
//! | `maxdop` | `ALTER DATABASE … SET max_parallel_workers_per_gather` = `maxdop − 1` (the leader is the first), `0` → 1024 (as many as `max_parallel_workers` allows) | database |
//! | `data_on` | the data directory on that volume | cluster |
//! | `log_on` | the WAL directory on that volume, `initdb --waldir` | cluster |
//!
//! Cluster-level options need the managed cluster; on an existing server (`DBBENCH_POSTGRES`)
//! they are refused, since dbbench never changes a server's settings.

pub use super::mapping::{Mapping, Mode, Pregrow};
use crate::model::config::{Growth, Recovery, StorageSpec};
use crate::model::error::{Error, Result};
use dbbench_options::Key;

const DEFAULT_SEGMENT: u64 = 16 << 20;
const MIB: u64 = 1 << 20;

fn refuse(option: &'static str, reason: impl Into<String>) -> Error {
    Error::Unsupported {
        option,
        backend: "postgres",
        reason: reason.into(),
    }
}

/// Refuses a cluster-level option on an existing server.
fn managed_only(mode: Mode, option: &'static str, what: &str) -> Result<()> {
    match mode {
        Mode::Managed => Ok(()),
        Mode::External => Err(refuse(
            option,
            format!(
                "it maps to {what}, a setting of the whole server, and dbbench never changes an \
                 existing server's settings; unset {} so that dbbench runs a cluster of its own",
                super::settings::ENV
            ),
        )),
    }
}

/// `storage` raised to PostgreSQL's minimum, as SQL Server's file sizes are raised to its own: a
/// fixed `log_growth` (the WAL segment size) below 1 MB becomes 1 MB, the smallest segment
/// `initdb` makes. Scaling makes such sizes (the VLF article's 1 MB growth is 64 KB at the
/// default scale); the raised size is the one the results record as effective. A segment size
/// that is not a power of two, and a `log_size` below two segments, are left for [`map`] to
/// refuse: raising those would change what the benchmark declared, not just its scale's floor.
pub fn floor(storage: &StorageSpec) -> StorageSpec {
    let mut out = *storage;
    if let Some(Growth::Fixed(size)) = out.log_growth {
        if size.bytes < MIB {
            out.log_growth = Some(Growth::Fixed(crate::model::config::Size {
                bytes: MIB,
                ..size
            }));
        }
    }
    out
}

/// Fails with [`Error::Unsupported`] for the first option PostgreSQL cannot honour.
pub fn check(storage: &StorageSpec, mode: Mode) -> Result<()> {
    map(storage, mode).map(|_| ())
}

/// The mapping of `storage`, or the refusal of its first option without an equivalent.
///
/// The options are taken in this order, so a cell with several refusals always reports the same
/// first one.
pub fn map(storage: &StorageSpec, mode: Mode) -> Result<Mapping> {
    // The options PostgreSQL has no equivalent of: the dispatcher refuses them before `check`,
    // and the mapping never takes them either.
    super::PROFILE.refuse_unlisted(storage)?;
    let mut m = Mapping::default();
    let segment = map_log_growth(storage, mode, &mut m)?;
    map_log_size(storage, mode, segment, &mut m)?;
    if let Some(ifi) = storage.ifi {
        managed_only(mode, "ifi", "wal_init_zero")?;
        m.server.push((
            "wal_init_zero".into(),
            if ifi { "off" } else { "on" }.into(),
        ));
        m.declare("wal_init_zero", "ifi");
    }
    map_recovery(storage, mode, &mut m)?;
    map_log_pregrow(storage, mode, segment, &mut m)?;
    if let Some(maxdop) = storage.maxdop {
        let workers = if maxdop == 0 { 1024 } else { maxdop - 1 };
        m.database.push((
            "max_parallel_workers_per_gather".into(),
            workers.to_string(),
        ));
        m.declare("max_parallel_workers_per_gather", "maxdop");
    }
    map_volumes(storage, mode, &mut m)?;
    super::pinned::pin(&mut m, storage, segment, mode);
    Ok(m)
}

/// The end of every refusal of an option that PostgreSQL lacks but the other backends have.
macro_rules! restrict {
    ($why:literal) => {
        concat!(
            $why,
            ", or limit the case to the other backends with `backends = [\"embedded\", \"mssql\"]`"
        )
    };
}

/// Why the data and tempdb file options are refused (the profile's `refusals`): they describe
/// SQL Server's files, which PostgreSQL does not have.
pub const REFUSALS: &[(Key, &str)] = &[
    (
        Key::DataFiles,
        restrict!(
            "PostgreSQL keeps every table and index in files of its own (1 GB segments) and \
             has no filegroup of several files to spread a table over; remove data_files"
        ),
    ),
    (
        Key::DataSize,
        restrict!(
            "PostgreSQL does not pre-size data files: a table's files grow page by page as \
             rows arrive, so there is no initial size to give; remove data_size"
        ),
    ),
    (
        Key::Growth,
        restrict!(
            "PostgreSQL has no setting for how data files grow (a table extends by 8 KB \
             pages, several at once under contention); remove growth"
        ),
    ),
    (Key::TempdbFiles, NO_TEMPDB),
    (Key::TempdbSize, NO_TEMPDB),
    (Key::TempdbGrowth, NO_TEMPDB),
];

const NO_TEMPDB: &str = restrict!(
    "PostgreSQL has no shared tempdb: temporary tables and sort spills are files in \
     `temp_tablespaces`, created as needed; remove the tempdb options"
);

/// `log_growth` as the WAL segment size; returns the segment size in bytes, which the log size
/// and the pre-grow steps are measured against.
fn map_log_growth(storage: &StorageSpec, mode: Mode, m: &mut Mapping) -> Result<u64> {
    match storage.log_growth {
        None => Ok(DEFAULT_SEGMENT),
        Some(Growth::Fixed(size)) => {
            managed_only(
                mode,
                "log_growth",
                "the WAL segment size (initdb --wal-segsize)",
            )?;
            let mb = size.bytes / MIB;
            let valid = size.bytes % MIB == 0 && (1..=1024).contains(&mb) && mb.is_power_of_two();
            if !valid {
                return Err(refuse(
                    "log_growth",
                    format!(
                        "on PostgreSQL the log grows one WAL segment at a time, and log_growth is \
                         the segment size (initdb --wal-segsize), which must be a power of two \
                         from 1MB to 1024MB; `{}` is {} bytes here (after scaling)",
                        size.text, size.bytes
                    ),
                ));
            }
            m.wal_segsize_mb = Some(mb as u32);
            m.declare("wal_segment_size", "log_growth");
            Ok(size.bytes)
        }
        Some(other) => Err(refuse(
            "log_growth",
            format!(
                "PostgreSQL's WAL grows by whole segments of a size fixed at initdb, never by \
                 a percentage and never not at all; `{}` has no equivalent: give a fixed \
                 size (the segment size)",
                other.describe()
            ),
        )),
    }
}

/// `log_size` as `min_wal_size` = `max_wal_size`, at least two segments of `segment` bytes.
fn map_log_size(storage: &StorageSpec, mode: Mode, segment: u64, m: &mut Mapping) -> Result<()> {
    let Some(size) = storage.log_size else {
        return Ok(());
    };
    managed_only(mode, "log_size", "min_wal_size and max_wal_size")?;
    if size.bytes < 2 * segment {
        return Err(refuse(
            "log_size",
            format!(
                "log_size is min_wal_size and max_wal_size on PostgreSQL, which must be at \
                 least two WAL segments ({} bytes); `{}` is {} bytes here (after scaling): \
                 give a larger log_size or a smaller log_growth (the segment size)",
                2 * segment,
                size.text,
                size.bytes
            ),
        ));
    }
    let mb = size.bytes.div_ceil(MIB);
    m.server.push(("min_wal_size".into(), format!("'{mb}MB'")));
    m.server.push(("max_wal_size".into(), format!("'{mb}MB'")));
    m.declare("min_wal_size", "log_size");
    m.declare("max_wal_size", "log_size");
    Ok(())
}

/// `recovery` as `wal_level` and archiving; `bulk_logged` is SQL Server's alone.
fn map_recovery(storage: &StorageSpec, mode: Mode, m: &mut Mapping) -> Result<()> {
    match storage.recovery {
        None => {}
        Some(Recovery::BulkLogged) => {
            return Err(refuse(
                "recovery",
                "bulk_logged exists only on SQL Server; PostgreSQL's `wal_level = minimal` \
                 (recovery = \"simple\") is the setting that skips WAL for bulk loads",
            ))
        }
        Some(Recovery::Simple) => {
            managed_only(mode, "recovery", "wal_level")?;
            m.server.push(("wal_level".into(), "minimal".into()));
            m.server.push(("max_wal_senders".into(), "0".into()));
            m.server.push(("archive_mode".into(), "off".into()));
            // `archive_command` is not sent, but SHOW renders it "(disabled)" when archive_mode
            // is off: its shown value follows this option.
            for setting in [
                "wal_level",
                "max_wal_senders",
                "archive_mode",
                "archive_command",
            ] {
                m.declare(setting, "recovery");
            }
        }
        Some(Recovery::Full) => {
            managed_only(mode, "recovery", "wal_level and archive_mode")?;
            m.server.push(("wal_level".into(), "replica".into()));
            m.server.push(("archive_mode".into(), "on".into()));
            for setting in ["wal_level", "archive_mode", "archive_command"] {
                m.declare(setting, "recovery");
            }
        }
    }
    Ok(())
}

/// `log_pregrow` as WAL switched ahead of the window, in steps of at least one segment.
fn map_log_pregrow(storage: &StorageSpec, mode: Mode, segment: u64, m: &mut Mapping) -> Result<()> {
    let Some(step) = storage.log_pregrow else {
        return Ok(());
    };
    managed_only(
        mode,
        "log_pregrow",
        "WAL segments made in the cluster ahead of the window",
    )?;
    if storage.recovery == Some(Recovery::Full) {
        return Err(refuse(
            "log_pregrow",
            "with recovery = \"full\" (archive_mode = on) PostgreSQL keeps every segment for \
             the archiver, so segments made before the window cannot be recycled into \
             segments ahead of it; drop log_pregrow or use recovery = \"simple\"",
        ));
    }
    let target = storage.log_size.map_or(0, |s| s.bytes);
    m.pregrow = Some(Pregrow {
        target_bytes: target,
        step_bytes: step.bytes.max(segment),
    });
    Ok(())
}

/// `data_on` and `log_on` as the data and WAL directories' volumes.
fn map_volumes(storage: &StorageSpec, mode: Mode, m: &mut Mapping) -> Result<()> {
    match storage.data_on {
        [] => {}
        [volume] => {
            managed_only(mode, "data_on", "the data directory (or a tablespace)")?;
            m.data_volume = Some(volume);
        }
        _ => {
            return Err(refuse(
                "data_on",
                format!(
                    restrict!(
                        "a PostgreSQL database lives in one directory (its tablespace), so it \
                         cannot be spread over {} volumes; name one volume"
                    ),
                    storage.data_on.len()
                ),
            ))
        }
    }
    if let Some(volume) = storage.log_on {
        managed_only(mode, "log_on", "the WAL directory (initdb --waldir)")?;
        m.wal_volume = Some(volume);
    }
    Ok(())
}

#[cfg(test)]
mod tests;
