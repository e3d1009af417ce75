//! Making a cell's database: the name PostgreSQL can hold, `CREATE DATABASE` with its markers and
//! per-database settings, and the WAL segments `log_pregrow` makes ahead of the window.

use super::connection::PostgresConnection;
use super::marker::{self, quote_ident};
use super::options::{Mapping, Pregrow};
use super::settings::PgSettings;
use crate::model::error::{Error, Result};

/// PostgreSQL truncates identifiers to 63 bytes (NAMEDATALEN − 1).
const MAX_IDENTIFIER: usize = 63;

/// `name` if it fits in an identifier; otherwise `dbbench_`, a hash of the whole name and its
/// tail (which holds the cell, repetition and pid), so different long names stay different.
pub fn database_name(name: &str) -> String {
    if name.len() <= MAX_IDENTIFIER {
        return name.to_string();
    }
    // FNV-1a: stable across runs and platforms, unlike the std hasher.
    let hash = name.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3)
    });
    let head = format!("{}{:08x}_", crate::model::plan::OWNED_PREFIX, hash as u32);
    let tail = &name[name.len() - (MAX_IDENTIFIER - head.len())..];
    format!("{head}{tail}")
}

/// Creates and marks database `name` with the mapping's per-database settings. On failure after
/// the `CREATE`, the half-made database is dropped again.
pub async fn create_database(
    settings: &PgSettings,
    admin: &mut PostgresConnection,
    name: &str,
    mapping: &Mapping,
) -> Result<()> {
    marker::claim(settings, admin, name).await?;
    // template0 and C collation: the same empty database whatever the server's template1 holds.
    admin
        .batch(&format!(
            "CREATE DATABASE {} TEMPLATE template0 ENCODING 'UTF8' LC_COLLATE 'C' LC_CTYPE 'C'",
            quote_ident(name)
        ))
        .await?;
    let marked = mark(settings, admin, name, mapping).await;
    if let Err(e) = marked {
        return match marker::drop_unchecked(admin, name).await {
            Ok(()) => Err(e),
            Err(d) => Err(Error::msg(format!(
                "{e}\n(cleanup: dropping the half-made database: {d})"
            ))),
        };
    }
    Ok(())
}

async fn mark(
    settings: &PgSettings,
    admin: &mut PostgresConnection,
    name: &str,
    mapping: &Mapping,
) -> Result<()> {
    admin.batch(&marker::comment_sql(name)).await?;
    for (setting, value) in &mapping.database {
        admin
            .batch(&format!(
                "ALTER DATABASE {} SET {setting} = {value}",
                quote_ident(name)
            ))
            .await?;
    }
    let mut inside = settings.connect(name).await?;
    inside.batch(&marker::table_sql()).await
}

/// The server's WAL segment size in bytes.
pub async fn wal_segment_bytes(conn: &mut PostgresConnection) -> Result<u64> {
    let rows = conn
        .query(
            "SELECT setting::bigint * CASE unit WHEN '8kB' THEN 8192 WHEN 'MB' THEN 1048576 \
             ELSE 1 END FROM pg_settings WHERE name = 'wal_segment_size'",
            &[],
        )
        .await?;
    rows.first()
        .ok_or_else(|| Error::msg("pg_settings has no wal_segment_size"))?
        .get(0)
}

/// Makes `pregrow.target_bytes` of WAL segments ahead of the insert position: writes one record
/// and switches to the next segment, segment after segment, with a checkpoint after every step so
/// the finished segments are recycled as future ones (`min_wal_size` keeps them). Returns the
/// segments switched through.
pub async fn pregrow(conn: &mut PostgresConnection, pregrow: Pregrow) -> Result<u64> {
    let segment = wal_segment_bytes(conn).await?;
    let segments = pregrow.target_bytes.div_ceil(segment);
    let per_step = pregrow.step_bytes.div_ceil(segment).max(1);
    for done in 1..=segments {
        // pg_switch_wal does nothing in a segment with no record since the last switch.
        conn.batch("UPDATE dbbench_marker.owner SET pid = pid")
            .await?;
        conn.batch("SELECT pg_switch_wal()").await?;
        if done % per_step == 0 || done == segments {
            conn.batch("CHECKPOINT").await?;
        }
    }
    Ok(segments)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_names_fit_in_an_identifier_and_stay_distinct() {
        assert_eq!(database_name("dbbench_short"), "dbbench_short");
        let a = format!("dbbench_{}_cell_a_r0_123", "m".repeat(80));
        let b = format!("dbbench_{}_cell_b_r0_123", "m".repeat(80));
        let (na, nb) = (database_name(&a), database_name(&b));
        assert!(na.len() <= MAX_IDENTIFIER && nb.len() <= MAX_IDENTIFIER);
        assert!(
            na.starts_with("dbbench_") && na.ends_with("cell_a_r0_123"),
            "{na}"
        );
        assert_ne!(na, nb);
    }
}
