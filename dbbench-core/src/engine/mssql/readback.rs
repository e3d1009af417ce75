//! After provisioning, the files are read back from the new database's `sys.database_files` and
//! compared with the plan: a server that silently ignored a file specification (Babelfish's
//! escape hatch), rounded a size, or dropped a growth setting would otherwise be measured as the
//! configuration the cell declares. A difference fails the cell; a server that lists no files at
//! all is recorded as unavailable with the reason, never silently.

use super::provision::PlannedFile;
use crate::model::config::Growth;
use crate::model::error::Result;
use crate::model::evidence::FileKind;
use crate::model::units::PAGE;
use crate::model::value::Row;

/// The files of the current database as the server created them, read through a connection to
/// the new database (not with a three-part name: Azure SQL Database and Babelfish answer
/// catalog views of the current database only).
pub const FILES_SQL: &str =
    "SELECT CAST(name AS nvarchar(128)) AS name, CAST(type AS int) AS type, \
     CAST(physical_name AS nvarchar(4000)) AS physical_name, \
     CAST(size AS bigint) AS size_pages, CAST(growth AS bigint) AS growth, \
     CAST(is_percent_growth AS int) AS is_percent_growth \
     FROM sys.database_files ORDER BY file_id;";

/// The recovery model of database `name` as the server holds it (inherited from `model` when the
/// cell declares none).
pub fn recovery_model_sql(name: &str) -> String {
    format!(
        "SELECT CAST(recovery_model_desc AS nvarchar(60)) AS recovery \
         FROM sys.databases WHERE database_id = DB_ID({});",
        super::tsql::literal(name)
    )
}

/// The recovery behaviour in effect, in words: the model, and for FULL or BULK_LOGGED whether
/// the log chain has started (`chain_started`: `sys.database_recovery_status.last_log_backup_lsn`
/// is not NULL). Until the first full backup such a database truncates its log at checkpoints as
/// SIMPLE does (sys.database_recovery_status docs: a NULL `last_log_backup_lsn` means no log
/// backup can be taken; Paul Randal and Kalen Delaney call it pseudo-simple).
pub fn describe_recovery(model: &str, chain_started: bool) -> String {
    let model = model.trim().to_ascii_uppercase();
    match model.as_str() {
        "FULL" | "BULK_LOGGED" if !chain_started => format!(
            "{model} (pseudo-simple: no full backup yet, so the log truncates at checkpoints as \
             in SIMPLE)"
        ),
        _ => model,
    }
}

/// The files the server placed itself (the cell declared none, [`provision::server_places`]):
/// their logical names and paths from the rows of [`FILES_SQL`], nothing declared to compare.
/// `Err` says why none could be read (no rows: the server does not list its files).
///
/// [`provision::server_places`]: super::provision::server_places
pub fn located(rows: &[Row]) -> std::result::Result<Vec<PlannedFile>, String> {
    let mut files = Vec::new();
    for row in rows {
        let kind = match row.get_named::<i64>("type").map_err(|e| e.to_string())? {
            0 => FileKind::Data,
            1 => FileKind::Log,
            // FILESTREAM and full-text catalogs are no concern of a storage benchmark's plan.
            _ => continue,
        };
        let text = |name: &str| -> std::result::Result<String, String> {
            Ok(row
                .get_named::<Option<String>>(name)
                .map_err(|e| e.to_string())?
                .unwrap_or_default()
                .trim()
                .to_string())
        };
        files.push(PlannedFile {
            logical: text("name")?,
            physical: text("physical_name")?,
            kind,
            volume: None,
            size: None,
            growth: None,
        });
    }
    let has = |kind| files.iter().any(|f| f.kind == kind);
    if !has(FileKind::Data) || !has(FileKind::Log) {
        return Err(format!(
            "sys.database_files of the new database listed {} data and {} log files, so where \
             the server placed them is unknown",
            files.iter().filter(|f| f.kind == FileKind::Data).count(),
            files.iter().filter(|f| f.kind == FileKind::Log).count()
        ));
    }
    Ok(files)
}

/// Sizes may differ from the request by the server's rounding (whole 8 KB pages, 64 KB extents,
/// the log rounded to its VLF layout). Below 100 MB one extent: a tolerance of 1 MB would pass a
/// smoke-scale log of 832 KB created at 512 KB (finding C7 of the third review); from 100 MB on,
/// 1 %.
fn close_enough(actual: u64, planned: u64) -> bool {
    const EXTENT: u64 = 64 << 10;
    let tolerance = if planned < 100 << 20 {
        EXTENT
    } else {
        planned / 100
    };
    actual.abs_diff(planned) <= tolerance
}

/// What the comparison found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// Every planned file exists with its size and growth.
    Matches,
    /// The server listed no files: the reason to record as unavailable.
    Unavailable(String),
    /// The differences, one phrase each.
    Differs(Vec<String>),
}

/// Compares the rows of [`FILES_SQL`] with `plan`.
pub fn compare(rows: &[Row], plan: &[PlannedFile]) -> Result<Verdict> {
    if rows.is_empty() {
        return Ok(Verdict::Unavailable(
            "sys.database_files of the new database returned no rows, so the created files \
             could not be checked against the plan"
                .into(),
        ));
    }
    let mut differences = Vec::new();
    let mut seen = Vec::new();
    for row in rows {
        let name = row.get_named::<String>("name")?.trim().to_string();
        let kind = if row.get_named::<i64>("type")? == 1 {
            FileKind::Log
        } else {
            FileKind::Data
        };
        let Some(planned) = plan.iter().find(|p| p.logical == name) else {
            differences.push(format!("file {name} was not planned"));
            continue;
        };
        seen.push(name.clone());
        if planned.kind != kind {
            differences.push(format!(
                "{name} is a {kind:?} file, planned {:?}",
                planned.kind
            ));
        }
        let size = row.get_named::<i64>("size_pages")?.max(0) as u64 * PAGE;
        if let Some(want) = planned.size.filter(|w| !close_enough(size, *w)) {
            differences.push(format!(
                "{name} is {} KB, planned {} KB",
                size / 1024,
                want / 1024
            ));
        }
        let growth = row.get_named::<i64>("growth")?.max(0) as u64;
        let percent = row.get_named::<i64>("is_percent_growth")? == 1;
        let growth_ok = match planned.growth {
            None => true,
            Some(Growth::None) => growth == 0,
            Some(Growth::Percent(p)) => percent && growth == u64::from(p),
            Some(Growth::Fixed(s)) => !percent && (growth * PAGE).abs_diff(s.bytes) < 64 * 1024,
        };
        if !growth_ok {
            let actual = if percent {
                format!("{growth}%")
            } else {
                format!("{} KB", growth * PAGE / 1024)
            };
            differences.push(format!(
                "{name} grows by {actual}, planned {}",
                planned.growth.map(|g| g.describe()).unwrap_or_default()
            ));
        }
    }
    for missing in plan.iter().filter(|p| !seen.contains(&p.logical)) {
        differences.push(format!("{} was not created", missing.logical));
    }
    Ok(if differences.is_empty() {
        Verdict::Matches
    } else {
        Verdict::Differs(differences)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::mssql::double::rows;
    use crate::model::config::Size;
    use crate::model::value::Value;

    fn planned(logical: &str, kind: FileKind, size_mb: u64, growth: Option<Growth>) -> PlannedFile {
        PlannedFile {
            logical: logical.into(),
            physical: format!("/var/opt/mssql/data/x_{logical}"),
            kind,
            volume: None,
            size: Some(size_mb << 20),
            growth,
        }
    }

    fn server(files: &[(&str, i64, i64, i64, i64)]) -> Vec<Row> {
        rows(
            &["name", "type", "size_pages", "growth", "is_percent_growth"],
            files
                .iter()
                .map(|(n, t, s, g, p)| {
                    vec![
                        Value::Text(format!("{n:<20}")),
                        Value::Int(*t),
                        Value::Int(*s),
                        Value::Int(*g),
                        Value::Int(*p),
                    ]
                })
                .collect(),
        )
    }

    fn plan() -> Vec<PlannedFile> {
        vec![
            planned(
                "data_1",
                FileKind::Data,
                8,
                Some(Growth::Fixed(Size::new(1 << 20, "1MB"))),
            ),
            planned("log", FileKind::Log, 1, Some(Growth::Percent(10))),
        ]
    }

    #[test]
    fn matching_files_pass() {
        // 8 MB = 1024 pages, 1 MB growth = 128 pages; the log 1 MB = 128 pages, 10 %.
        let rows = server(&[("data_1", 0, 1024, 128, 0), ("log", 1, 128, 10, 1)]);
        assert_eq!(compare(&rows, &plan()).unwrap(), Verdict::Matches);
    }

    #[test]
    fn differences_fail_and_empty_is_unavailable() {
        let rows = server(&[("data_1", 0, 4096, 1024, 0)]);
        let Verdict::Differs(d) = compare(&rows, &plan()).unwrap() else {
            panic!("expected differences")
        };
        assert_eq!(
            d,
            vec![
                "data_1 is 32768 KB, planned 8192 KB",
                "data_1 grows by 8192 KB, planned 1MB",
                "log was not created"
            ]
        );
        assert!(
            matches!(compare(&[], &plan()).unwrap(), Verdict::Unavailable(r) if r.contains("no rows"))
        );
    }

    /// Finding C7: a 512 KB log where 832 KB was planned differs; one extent of rounding does
    /// not; large files keep 1 %.
    #[test]
    fn small_files_are_compared_to_the_extent() {
        assert!(!close_enough(512 << 10, 832 << 10));
        assert!(close_enough(832 << 10, 832 << 10));
        assert!(close_enough(896 << 10, 832 << 10));
        assert!(!close_enough(8 << 20, 9 << 20));
        assert!(close_enough(1010 << 20, 1000 << 20));
    }

    #[test]
    fn readback_query() {
        insta::assert_snapshot!(FILES_SQL);
    }

    #[test]
    fn server_placed_files_are_located_or_unavailable() {
        let rows = crate::engine::mssql::double::rows(
            &["name", "type", "physical_name"],
            vec![
                vec![
                    Value::Text("dbbench_a".into()),
                    Value::Int(0),
                    Value::Text("/var/opt/mssql/data/dbbench_a.mdf".into()),
                ],
                vec![
                    Value::Text("dbbench_a_log".into()),
                    Value::Int(1),
                    Value::Text("/var/opt/mssql/data/dbbench_a_log.ldf".into()),
                ],
            ],
        );
        let files = located(&rows).unwrap();
        assert_eq!(files.len(), 2);
        assert_eq!(files[1].logical, "dbbench_a_log");
        assert_eq!(files[0].physical, "/var/opt/mssql/data/dbbench_a.mdf");
        // Babelfish lists no files of its databases.
        let why = located(&[]).unwrap_err();
        assert!(why.contains("0 data and 0 log files"), "{why}");
    }

    #[test]
    fn recovery_in_effect_says_pseudo_simple() {
        assert_eq!(
            describe_recovery("FULL", false),
            "FULL (pseudo-simple: no full backup yet, so the log truncates at checkpoints as in \
             SIMPLE)"
        );
        assert_eq!(describe_recovery("FULL", true), "FULL");
        assert!(describe_recovery("BULK_LOGGED", false).starts_with("BULK_LOGGED (pseudo-simple"));
        assert_eq!(describe_recovery("SIMPLE", false), "SIMPLE");
    }
}
