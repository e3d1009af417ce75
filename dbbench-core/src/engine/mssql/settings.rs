//! SQL Server's settings in force at the close of a measured window, for the confounder check
//! (`model::setting`): the bench database's options (`database.*`, `sys.databases`),
//! its scoped configurations (`scoped.*`, `sys.database_scoped_configurations`), the server's
//! options that bear on a storage benchmark (`server.*`, `sys.configurations.value_in_use`) and
//! the trace flags on globally (`traceflag.NNNN`, `DBCC TRACESTATUS(-1)`).
//!
//! One batch reads all four through the window's connection (the bench database: scoped
//! configurations are per database). When the batch fails, each query runs alone, and a query
//! that fails leaves one entry `settings.<scope>` in the window's `unavailable` with the reason:
//! a missing permission or a product without the view costs the check that scope, never the run.
//! A database inherits `model`'s options and a DBA may have changed a server option last week:
//! both are read, not assumed.

use crate::model::setting::{Setting, Settings};
use crate::model::value::{Row, Value};
use std::collections::BTreeMap;

/// The server options read (`sys.configurations`): those that change how a load, a checkpoint
/// or a growth runs, plus the memory and parallelism limits every plan depends on.
pub const SERVER_OPTIONS: &[&str] = &[
    "max degree of parallelism",
    "cost threshold for parallelism",
    "max server memory (MB)",
    "min server memory (MB)",
    "recovery interval (min)",
    "backup compression default",
    "backup checksum default",
    "optimize for ad hoc workloads",
    "max worker threads",
    "affinity mask",
    "affinity I/O mask",
    "lightweight pooling",
    "priority boost",
    "fill factor (%)",
    "network packet size (B)",
    "query governor cost limit",
    "blocked process threshold (s)",
];

/// One scope of the read-back: its name in `settings.<scope>` and its query.
struct Scope {
    name: &'static str,
    sql: String,
}

/// The bench database's options, one row.
pub fn database_sql(name: &str) -> String {
    format!(
        "SELECT CAST(recovery_model_desc AS nvarchar(60)) AS recovery_model, \
         CAST(page_verify_option_desc AS nvarchar(60)) AS page_verify, \
         CAST(is_auto_create_stats_on AS int) AS auto_create_stats, \
         CAST(is_auto_update_stats_on AS int) AS auto_update_stats, \
         CAST(is_auto_update_stats_async_on AS int) AS auto_update_stats_async, \
         CAST(is_auto_close_on AS int) AS auto_close, \
         CAST(is_auto_shrink_on AS int) AS auto_shrink, \
         CAST(delayed_durability_desc AS nvarchar(60)) AS delayed_durability, \
         CAST(is_read_committed_snapshot_on AS int) AS is_read_committed_snapshot_on, \
         CAST(snapshot_isolation_state_desc AS nvarchar(60)) AS snapshot_isolation, \
         CAST(is_parameterization_forced AS int) AS forced_parameterization, \
         CAST(target_recovery_time_in_seconds AS int) AS target_recovery_time, \
         CAST(compatibility_level AS int) AS compatibility_level \
         FROM sys.databases WHERE name = {};",
        super::tsql::literal(name)
    )
}

/// The current database's scoped configurations (SQL Server 2016+).
pub const SCOPED_SQL: &str = "SELECT CAST(name AS nvarchar(128)) AS name, \
     CAST(value AS nvarchar(4000)) AS value \
     FROM sys.database_scoped_configurations ORDER BY name;";

/// The server options of [`SERVER_OPTIONS`] in use.
pub fn server_sql() -> String {
    let names: Vec<String> = SERVER_OPTIONS
        .iter()
        .map(|n| super::tsql::literal(n))
        .collect();
    format!(
        "SELECT CAST(name AS nvarchar(128)) AS name, CAST(value_in_use AS nvarchar(100)) AS value \
         FROM sys.configurations WHERE name IN ({}) ORDER BY name;",
        names.join(", ")
    )
}

/// The trace flags on globally: one row per flag (`TraceFlag`, `Status`, `Global`, `Session`).
pub const TRACE_SQL: &str = "DBCC TRACESTATUS(-1) WITH NO_INFOMSGS;";

/// The declared option that sets a setting, where dbbench sets it from one: the recovery model
/// from `recovery`, per-database MAXDOP from `maxdop` (dbbench sets it as a scoped
/// configuration, never the server option), the IFI and zeroing trace flags from `ifi`.
fn set_by(name: &str) -> Option<&'static str> {
    match name {
        "database.recovery_model" => Some("recovery"),
        "scoped.MAXDOP" => Some("maxdop"),
        _ => {
            let flag: u32 = name.strip_prefix("traceflag.")?.parse().ok()?;
            super::ifi::TF_NO_IFI
                .iter()
                .chain(super::ifi::TF_LOG_ZEROING.iter())
                .any(|f| *f == flag)
                .then_some("ifi")
        }
    }
}

/// The settings read back through `conn`, and the scopes that could not be read with why.
pub async fn read(
    conn: &mut super::MssqlConnection,
    database: &str,
    product: &super::identity::Product,
) -> (Settings, BTreeMap<String, String>) {
    let mut scopes = vec![
        Scope {
            name: "database",
            sql: database_sql(database),
        },
        Scope {
            name: "server",
            sql: server_sql(),
        },
    ];
    let mut unavailable = BTreeMap::new();
    if *product == super::identity::Product::Babelfish {
        // Babelfish has neither view: its database settings are PostgreSQL's own.
        unavailable.insert(
            "settings.scoped".into(),
            "Babelfish has no sys.database_scoped_configurations".into(),
        );
        unavailable.insert(
            "settings.traceflags".into(),
            "Babelfish has no trace flags (DBCC TRACESTATUS)".into(),
        );
    } else {
        scopes.push(Scope {
            name: "scoped",
            sql: SCOPED_SQL.into(),
        });
        scopes.push(Scope {
            name: "traceflags",
            sql: TRACE_SQL.into(),
        });
    }
    let batch: String = scopes
        .iter()
        .map(|s| s.sql.as_str())
        .collect::<Vec<_>>()
        .join("\n");
    let answers: Vec<std::result::Result<Vec<Row>, String>> = match conn.query_all(&batch).await {
        Ok(sets) if sets.len() == scopes.len() => sets.into_iter().map(Ok).collect(),
        // A failed batch (or one whose DBCC sent no result set) is read again query by query,
        // so that one refused view costs its scope only.
        _ => {
            let mut answers = Vec::new();
            for scope in &scopes {
                answers.push(
                    conn.query_all(&scope.sql)
                        .await
                        .map(|sets| sets.into_iter().next().unwrap_or_default())
                        .map_err(|e| e.to_string()),
                );
            }
            answers
        }
    };
    let mut settings = Settings::new();
    for (scope, answer) in scopes.iter().zip(answers) {
        let parsed = answer.and_then(|rows| parse(scope.name, &rows));
        match parsed {
            Ok(found) => settings.extend(found),
            Err(why) => {
                unavailable.insert(format!("settings.{}", scope.name), why);
            }
        }
    }
    (settings, unavailable)
}

/// The settings of one scope's rows; `Err` when the rows say nothing (no database row, no
/// server option listed) or are not what the query asks for.
fn parse(scope: &str, rows: &[Row]) -> std::result::Result<Settings, String> {
    let mut out = Settings::new();
    let mut put = |name: String, value: String, source: &str| {
        let setting = Setting::plain(value).from_source(source);
        let setting = match set_by(&name) {
            Some(option) => setting.set_by(option),
            None => setting,
        };
        out.insert(name, setting);
    };
    match scope {
        "database" => {
            let row = rows
                .first()
                .ok_or("sys.databases has no row for the bench database")?;
            for (column, value) in row.columns().iter().zip(row.values()) {
                put(format!("database.{column}"), text(value), "sys.databases");
            }
        }
        "scoped" | "server" => {
            if rows.is_empty() && scope == "server" {
                return Err("sys.configurations lists none of the server options".into());
            }
            let (prefix, source) = match scope {
                "scoped" => ("scoped", "sys.database_scoped_configurations"),
                _ => ("server", "sys.configurations"),
            };
            for row in rows {
                let name: String = row.get_named("name").map_err(|e| e.to_string())?;
                let value: Option<String> = row.get_named("value").map_err(|e| e.to_string())?;
                put(
                    format!("{prefix}.{}", name.trim()),
                    value.unwrap_or_else(|| "(null)".into()).trim().to_string(),
                    source,
                );
            }
        }
        _ => {
            for row in rows {
                let flag: i64 = row.get_named("TraceFlag").map_err(|e| e.to_string())?;
                let global: i64 = row.get_named("Global").map_err(|e| e.to_string())?;
                if global == 1 {
                    put(format!("traceflag.{flag}"), "on".into(), "DBCC TRACESTATUS");
                }
            }
        }
    }
    Ok(out)
}

/// A value as text: numbers as written, NULL as `(null)`.
fn text(value: &Value) -> String {
    match value {
        Value::Null => "(null)".into(),
        Value::Int(i) => i.to_string(),
        Value::Float(f) => f.to_string(),
        Value::Text(t) => t.trim().to_string(),
        other => format!("{other:?}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::mssql::double::rows;

    #[test]
    fn declared_settings_name_their_option_and_others_none() {
        assert_eq!(set_by("database.recovery_model"), Some("recovery"));
        assert_eq!(set_by("scoped.MAXDOP"), Some("maxdop"));
        assert_eq!(set_by("traceflag.1806"), Some("ifi"));
        assert_eq!(set_by("traceflag.1117"), None);
        assert_eq!(set_by("server.max degree of parallelism"), None);
    }

    #[test]
    fn rows_become_scoped_names() {
        let server = rows(
            &["name", "value"],
            vec![vec![
                Value::Text("cost threshold for parallelism".into()),
                Value::Text("5".into()),
            ]],
        );
        let s = parse("server", &server).unwrap();
        assert_eq!(s["server.cost threshold for parallelism"].value, "5");
        assert!(parse("server", &[])
            .unwrap_err()
            .contains("none of the server options"));
        let flags = rows(
            &["TraceFlag", "Status", "Global", "Session"],
            vec![
                vec![
                    Value::Int(1806),
                    Value::Int(1),
                    Value::Int(1),
                    Value::Int(0),
                ],
                vec![
                    Value::Int(4199),
                    Value::Int(1),
                    Value::Int(0),
                    Value::Int(1),
                ],
            ],
        );
        let s = parse("traceflags", &flags).unwrap();
        assert_eq!(s.keys().collect::<Vec<_>>(), vec!["traceflag.1806"]);
        assert_eq!(s["traceflag.1806"].set_by.as_deref(), Some("ifi"));
        assert!(parse("database", &[]).is_err());
    }

    #[test]
    fn every_server_option_is_a_literal_in_the_query() {
        let sql = server_sql();
        for name in SERVER_OPTIONS {
            assert!(sql.contains(&format!("N'{name}'")), "{name}");
        }
        assert_eq!(SERVER_OPTIONS.len(), 17);
    }
}
