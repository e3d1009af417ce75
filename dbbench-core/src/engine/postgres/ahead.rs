//! WAL segments made ahead of the insert position before a window: removed on a managed cluster
//! when the cell does not declare them (reset, not refuse).
//!
//! A checkpoint renames segments it no longer needs into future ones while the WAL stays under
//! `min_wal_size` (`XLOGfileslop`), and preallocates the next one when the current is 75% used.
//! The WAL of an earlier repetition or of the fixture load can so become segments ahead of the
//! window, and a window that starts with them creates fewer segments than its cell declares: the
//! difference between the VLF suite's tests 1–3 (every segment created in the window) and test 4
//! (`log_pregrow`: made ahead on purpose). So after the window-opening checkpoint, on a managed
//! cluster and for a cell without `log_pregrow`, every segment file beyond the insert position is
//! removed; the server creates a segment again when it reaches it. Removing rather than refusing
//! keeps every repetition measurable: the segments are dbbench's own cluster's spare files, and
//! nothing has written into them (the segment the next record goes to is kept). If the insert
//! position enters another segment while they are removed, the window is refused with an error
//! (a file the server was about to use may be gone).
//! On an existing server nothing is removed; the count ahead at the window's start is recorded
//! either way (`pg_wal_segments_ahead_before`).

use super::connection::PostgresConnection;
use super::evidence::is_segment;
use crate::model::error::{Error, Result};
use std::path::Path;

/// The insert position's segment and offset in it. `pg_walfile_name_offset` names the previous
/// segment when the position sits exactly on a boundary (after a segment switch), with offset 0:
/// then the first segment after the named one is where the next record goes, and is kept.
const POSITION_SQL: &str =
    "SELECT file_name, file_offset::bigint FROM pg_walfile_name_offset(pg_current_wal_insert_lsn())";

async fn position(conn: &mut PostgresConnection) -> Result<(String, bool)> {
    let rows = conn.query(POSITION_SQL, &[]).await?;
    let row = rows
        .first()
        .ok_or_else(|| Error::msg("no WAL insert position"))?;
    let offset: i64 = row.get(1)?;
    Ok((row.get(0)?, offset == 0))
}

/// The segment file names in `dir` after `current`, in order.
fn ahead_of(dir: &Path, current: &str) -> Result<Vec<String>> {
    let entries =
        std::fs::read_dir(dir).map_err(|e| Error::io("cannot list the WAL directory", dir, e))?;
    let mut names: Vec<String> = entries
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| is_segment(n) && n.as_str() > current)
        .collect();
    names.sort();
    Ok(names)
}

/// Removes the segments ahead of the insert position from the managed cluster's WAL directory
/// `dir`; returns how many. Fails if the insert position left its segment meanwhile.
pub async fn reset(conn: &mut PostgresConnection, dir: &Path) -> Result<u64> {
    let (current, on_boundary) = position(conn).await?;
    let mut ahead = ahead_of(dir, &current)?;
    if on_boundary && !ahead.is_empty() {
        ahead.remove(0);
    }
    for name in &ahead {
        let path = dir.join(name);
        match std::fs::remove_file(&path) {
            Ok(()) => {}
            // The server may have recycled or removed it itself meanwhile.
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => {
                return Err(Error::io(
                    "cannot remove a WAL segment made ahead",
                    &path,
                    e,
                ))
            }
        }
    }
    let (after, _) = position(conn).await?;
    if after != current {
        return Err(Error::msg(format!(
            "the WAL insert position moved from segment {current} to {after} while dbbench \
             removed the {} segment(s) made ahead of it before the window; the server may have \
             needed one of them, so this window is not measured (is something else writing to \
             the managed cluster?)",
            ahead.len()
        )));
    }
    Ok(ahead.len() as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_segment_files_after_the_current_one_are_ahead() {
        let dir = std::env::temp_dir().join(format!("dbbench-ahead-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("archive_status")).unwrap();
        for name in [
            "000000010000000000000001",
            "000000010000000000000002",
            "000000010000000000000003",
            "000000010000000000000004",
            "00000001.history",
        ] {
            std::fs::write(dir.join(name), b"").unwrap();
        }
        let ahead = ahead_of(&dir, "000000010000000000000002").unwrap();
        assert_eq!(
            ahead,
            ["000000010000000000000003", "000000010000000000000004"]
        );
        let missing = ahead_of(&dir.join("gone"), "x").unwrap_err().to_string();
        assert!(missing.contains("gone"), "{missing}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
