//! Virtual log file (VLF) counts: `sys.dm_db_log_info` (SQL Server 2016 SP2 and later, one row per
//! VLF; it needs VIEW DATABASE STATE on the database, not VIEW SERVER STATE) with `DBCC LOGINFO`
//! as the fallback on servers that lack it. Both run in the benchmark database's context.
//!
//! How many VLFs a growth makes depends on the version: up to 2012 a growth of ≤ 64 MB makes 4,
//! ≤ 1 GB 8 and more 16; from 2014 a growth smaller than 1/8 of the current log makes 1 VLF (the
//! rule above applies otherwise); from 2022 (and Azure SQL) a growth ≤ 64 MB in that "otherwise"
//! branch makes 1 VLF instead of 4.

use crate::model::error::{Error, Result};
use crate::model::value::Row;

/// The count from `sys.dm_db_log_info`, aggregated on the server so a log of 100 000 VLFs does
/// not cross the network row by row.
pub const LOG_INFO_SQL: &str = "SELECT COUNT_BIG(*) AS vlf_count, \
     COALESCE(SUM(CASE WHEN vlf_active = 1 THEN 1 ELSE 0 END), 0) AS active_vlf_count \
     FROM sys.dm_db_log_info(DB_ID());";

/// The fallback: one row per VLF, `Status` 2 for active ones.
pub const LOGINFO_SQL: &str = "DBCC LOGINFO WITH NO_INFOMSGS;";

/// VLFs of the log at one moment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct VlfCount {
    /// All VLFs.
    pub total: u64,
    /// VLFs that hold active log.
    pub active: u64,
}

/// Reads the single row of [`LOG_INFO_SQL`].
pub fn from_log_info(rows: &[Row]) -> Result<VlfCount> {
    let row = rows
        .first()
        .ok_or_else(|| Error::msg("sys.dm_db_log_info returned no row"))?;
    Ok(VlfCount {
        total: row.get_named("vlf_count")?,
        active: row.get_named("active_vlf_count")?,
    })
}

/// Counts the rows of [`LOGINFO_SQL`]; the column set differs between versions, only `Status`
/// is read.
pub fn from_loginfo(rows: &[Row]) -> Result<VlfCount> {
    let mut active = 0;
    for row in rows {
        if row.get_named::<i64>("Status")? == 2 {
            active += 1;
        }
    }
    Ok(VlfCount {
        total: rows.len() as u64,
        active,
    })
}

/// Reads the VLF count through `conn`, preferring the DMV; when both ways fail, the error names
/// both.
pub async fn read(conn: &mut super::super::MssqlConnection) -> Result<VlfCount> {
    let primary = match conn.query(LOG_INFO_SQL, &[]).await {
        Ok(rows) => match from_log_info(&rows) {
            Ok(count) => return Ok(count),
            Err(e) => e,
        },
        Err(e) => e,
    };
    match conn.query(LOGINFO_SQL, &[]).await {
        Ok(rows) => from_loginfo(&rows),
        Err(fallback) => Err(Error::msg(format!(
            "sys.dm_db_log_info (needs VIEW DATABASE STATE): {primary}; DBCC LOGINFO: {fallback}"
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::value::Value;
    use std::sync::Arc;

    #[test]
    fn counts_from_the_dmv_row() {
        let columns: Arc<[String]> = Arc::from(vec![
            "vlf_count".to_string(),
            "active_vlf_count".to_string(),
        ]);
        let rows = vec![Row::new(columns, vec![Value::Int(126_399), Value::Int(3)])];
        assert_eq!(
            from_log_info(&rows).unwrap(),
            VlfCount {
                total: 126_399,
                active: 3
            }
        );
        assert!(from_log_info(&[]).is_err());
    }

    /// `DBCC LOGINFO` rows as SQL Server 2012+ returns them (RecoveryUnitId first).
    #[test]
    fn counts_loginfo_rows() {
        let columns: Arc<[String]> = [
            "RecoveryUnitId",
            "FileId",
            "FileSize",
            "StartOffset",
            "FSeqNo",
            "Status",
            "Parity",
            "CreateLSN",
        ]
        .iter()
        .map(|c| c.to_string())
        .collect();
        let vlf = |offset: i64, seq: i64, status: i64, lsn: i64| {
            Row::new(
                columns.clone(),
                vec![
                    Value::Int(0),
                    Value::Int(2),
                    Value::Int(253_952),
                    Value::Int(offset),
                    Value::Int(seq),
                    Value::Int(status),
                    Value::Int(64),
                    Value::Int(lsn),
                ],
            )
        };
        let rows = vec![
            vlf(8192, 34, 0, 0),
            vlf(262_144, 35, 0, 0),
            vlf(516_096, 36, 2, 34_000_000_012_800_001),
            vlf(770_048, 0, 0, 35_000_000_006_400_001),
        ];
        assert_eq!(
            from_loginfo(&rows).unwrap(),
            VlfCount {
                total: 4,
                active: 1
            }
        );
    }

    #[test]
    fn queries() {
        insta::assert_snapshot!(format!("{LOG_INFO_SQL}\n{LOGINFO_SQL}"));
    }
}
