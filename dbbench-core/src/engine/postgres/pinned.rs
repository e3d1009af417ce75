//! Settings pinned to one value in every cell: what PostgreSQL would otherwise derive from a
//! declared option, or leave to chance inside a window, so that two cells differ only in what
//! they declare (`docs/postgres.md`, "Pinned settings").
//!
//! - `wal_buffers = 4MB` (managed cluster): the default `-1` sizes them as shared_buffers/32
//!   capped at one WAL segment, so 1 MB-segment cells would run with 1 MB of WAL buffers and
//!   larger-segment cells with 4 MB (`XLOGChooseNumBuffers` in xlog.c); 4 MB is what the default
//!   gives with 16 MB segments and 128 MB of shared buffers.
//! - `autovacuum = off` (managed cluster) or `autovacuum_enabled = off` on each of the
//!   database's tables (an existing server, whose settings dbbench never changes): inserts alone
//!   start autovacuum since PostgreSQL 13, and a worker landing in one window and not another
//!   is noise. Whether one ran anyway is recorded ([`Activity`]).
//! - `jit = off` on the benchmark's database (`ALTER DATABASE … SET`): a statement is compiled
//!   once its estimated cost passes `jit_above_cost`, which a large `INSERT … SELECT` may cross
//!   in one cell and not another.
//! - `min_wal_size`/`max_wal_size` at 80MB/1GB when `log_growth` (the segment size) is declared
//!   without `log_size`: `initdb` writes them as 5 and 64 segments, so their bytes would follow
//!   the segment size. Raised to two segments where that is more (PostgreSQL's minimum), and then
//!   marked as set by `log_growth`.

use super::connection::PostgresConnection;
use super::mapping::{Mapping, Mode};
use crate::model::config::StorageSpec;

/// One pinned setting: its name, value as written, and why it is pinned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Pin {
    /// The setting.
    pub name: &'static str,
    /// Its value, as written in `postgresql.conf` or `ALTER DATABASE … SET`.
    pub value: &'static str,
    /// Where it is set.
    pub scope: &'static str,
}

/// Pinned in every managed cluster's `postgresql.conf`.
pub const SERVER: &[Pin] = &[
    Pin {
        name: "wal_buffers",
        value: "'4MB'",
        scope: "server (managed cluster)",
    },
    Pin {
        name: "autovacuum",
        value: "off",
        scope: "server (managed cluster)",
    },
];

/// Pinned on every benchmark database, on any server.
pub const DATABASE: &[Pin] = &[Pin {
    name: "jit",
    value: "off",
    scope: "database (ALTER DATABASE … SET)",
}];

const MIB: u64 = 1 << 20;
/// PostgreSQL's defaults with 16 MB segments, in MB.
const MIN_WAL_MB: u64 = 80;
const MAX_WAL_MB: u64 = 1024;

/// Adds the pins to `m`: the server's on a managed cluster, the database's always, and the WAL
/// sizes when the segment size is declared without `log_size`.
pub fn pin(m: &mut Mapping, storage: &StorageSpec, segment_bytes: u64, mode: Mode) {
    for pin in DATABASE {
        m.database.push((pin.name.into(), pin.value.into()));
    }
    if mode != Mode::Managed {
        return;
    }
    for pin in SERVER {
        m.server.push((pin.name.into(), pin.value.into()));
    }
    if storage.log_growth.is_some() && storage.log_size.is_none() {
        let two_segments = (2 * segment_bytes).div_ceil(MIB);
        for (name, default) in [("min_wal_size", MIN_WAL_MB), ("max_wal_size", MAX_WAL_MB)] {
            let mb = default.max(two_segments);
            m.server.push((name.into(), format!("'{mb}MB'")));
            if mb != default {
                m.declared.push((name.into(), "log_growth"));
            }
        }
    }
}

/// Turns autovacuum off on every table of the connection's database (an existing server):
/// `autovacuum_enabled` and its TOAST counterpart. Returns the tables changed.
pub async fn autovacuum_off_per_table(conn: &mut PostgresConnection) -> Result<u64, String> {
    let rows = conn
        .query(
            "SELECT quote_ident(schemaname) || '.' || quote_ident(relname) FROM pg_stat_user_tables \
             WHERE schemaname <> 'dbbench_marker'",
            &[],
        )
        .await
        .map_err(|e| e.to_string())?;
    let mut changed = 0;
    for row in rows {
        let table: String = row.get(0).map_err(|e| e.to_string())?;
        conn.batch(&format!(
            "ALTER TABLE {table} SET (autovacuum_enabled = off, toast.autovacuum_enabled = off)"
        ))
        .await
        .map_err(|e| format!("{table}: {e}"))?;
        changed += 1;
    }
    Ok(changed)
}

/// Autovacuum's work on the database's tables so far: runs of vacuum and of analyze.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Activity {
    /// `sum(autovacuum_count)`.
    pub vacuums: i64,
    /// `sum(autoanalyze_count)`.
    pub analyzes: i64,
}

impl Activity {
    /// The counters now.
    pub async fn read(conn: &mut PostgresConnection) -> Result<Activity, String> {
        let rows = conn
            .query(
                "SELECT coalesce(sum(autovacuum_count), 0)::bigint, \
                 coalesce(sum(autoanalyze_count), 0)::bigint FROM pg_stat_user_tables",
                &[],
            )
            .await
            .map_err(|e| e.to_string())?;
        let row = rows.first().ok_or("pg_stat_user_tables returned no row")?;
        Ok(Activity {
            vacuums: row.get(0).map_err(|e| e.to_string())?,
            analyzes: row.get(1).map_err(|e| e.to_string())?,
        })
    }
}

/// Autovacuum workers running now, on any database of the server.
pub async fn workers(conn: &mut PostgresConnection) -> Result<i64, String> {
    let rows = conn
        .query(
            "SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'autovacuum worker'",
            &[],
        )
        .await
        .map_err(|e| e.to_string())?;
    rows.first()
        .ok_or("pg_stat_activity returned no row")?
        .get(0)
        .map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::config::{Growth, Size};

    #[test]
    fn every_cell_gets_the_same_pins_and_wal_sizes_do_not_follow_the_segment() {
        let plain = super::super::options::map(&StorageSpec::DEFAULT, Mode::Managed).unwrap();
        for pin in SERVER {
            assert!(plain.server.contains(&(pin.name.into(), pin.value.into())));
        }
        assert!(plain.database.contains(&("jit".into(), "off".into())));
        assert!(plain.declared.is_empty(), "{:?}", plain.declared);
        let segment = |mb: u64| StorageSpec {
            log_growth: Some(Growth::Fixed(Size::new(mb * MIB, "x"))),
            ..StorageSpec::DEFAULT
        };
        let small = super::super::options::map(&segment(1), Mode::Managed).unwrap();
        assert!(small
            .server
            .contains(&("min_wal_size".into(), "'80MB'".into())));
        assert!(small
            .server
            .contains(&("max_wal_size".into(), "'1024MB'".into())));
        let declared: Vec<&str> = small.declared.iter().map(|d| d.0.as_str()).collect();
        assert_eq!(declared, ["wal_segment_size"]);
        // 1 GB segments: two of them are more than the defaults, so the segment size sets them.
        let large = super::super::options::map(&segment(1024), Mode::Managed).unwrap();
        assert!(large
            .server
            .contains(&("min_wal_size".into(), "'2048MB'".into())));
        assert!(large
            .declared
            .contains(&("min_wal_size".into(), "log_growth")));
        // An existing server's settings are never changed: only the database's jit.
        let external = super::super::options::map(&StorageSpec::DEFAULT, Mode::External).unwrap();
        assert!(external.server.is_empty());
        assert_eq!(external.database, [("jit".to_string(), "off".to_string())]);
    }
}
