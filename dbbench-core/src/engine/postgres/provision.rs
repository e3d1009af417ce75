//! Making a cell's database: the name PostgreSQL can hold, `CREATE DATABASE` with its markers and
//! per-database settings, and the WAL segments `log_pregrow` makes ahead of the window.

use super::connection::PostgresConnection;
use super::marker::{self, quote_ident};
use super::options::{Mapping, Pregrow};
use super::settings::PgSettings;
use crate::model::error::{Error, Result};

/// PostgreSQL truncates identifiers to 63 bytes (NAMEDATALEN − 1).
const MAX_IDENTIFIER: usize = 63;

/// `name` if it fits in a database name; otherwise shortened to fit, distinct and with its
/// tail (`util::short_name`).
pub fn database_name(name: &str) -> String {
    crate::util::short_name::fit(name, MAX_IDENTIFIER)
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
    fn a_long_name_is_cut_to_the_servers_limit() {
        let long = format!("dbbench_{}_cell_a_r0_123", "m".repeat(80));
        assert_eq!(database_name(&long).len(), 63);
    }
}
