//! What dbbench learns about the server once per process: version, edition, platform, default
//! directories, IFI and trace-flag state. These become the results' preconditions, and decide how
//! files are named and which statements apply.
//!
//! `SERVERPROPERTY` returns `sql_variant`, which tiberius does not decode everywhere: every such
//! column is cast to a plain type in the query.

use super::ifi::{self, IfiState};
use super::provision::{Platform, ServerDirs};
use super::MssqlConnection;
use crate::model::error::{Error, Result};
use std::collections::BTreeMap;

/// The properties query; every `sql_variant` is cast.
pub const PROPERTIES_SQL: &str = "SELECT \
     CAST(SERVERPROPERTY('ProductVersion') AS nvarchar(128)) AS product_version, \
     CAST(SERVERPROPERTY('ProductLevel') AS nvarchar(128)) AS product_level, \
     CAST(SERVERPROPERTY('ProductUpdateLevel') AS nvarchar(128)) AS product_update_level, \
     CAST(SERVERPROPERTY('Edition') AS nvarchar(128)) AS edition, \
     CAST(SERVERPROPERTY('EngineEdition') AS int) AS engine_edition, \
     CAST(SERVERPROPERTY('InstanceDefaultDataPath') AS nvarchar(4000)) AS default_data_path, \
     CAST(SERVERPROPERTY('InstanceDefaultLogPath') AS nvarchar(4000)) AS default_log_path, \
     CAST(SERVERPROPERTY('MachineName') AS nvarchar(128)) AS machine_name, \
     CAST(IS_SRVROLEMEMBER('sysadmin') AS int) AS is_sysadmin, \
     CAST(@@VERSION AS nvarchar(4000)) AS version_text;";

/// The host platform (SQL Server 2017 and later).
pub const HOST_SQL: &str =
    "SELECT CAST(host_platform AS nvarchar(256)) AS host_platform FROM sys.dm_os_host_info;";

/// The directory of master's data file, for servers without `InstanceDefaultDataPath`.
pub const MASTER_PATH_SQL: &str = "SELECT CAST(physical_name AS nvarchar(4000)) AS physical_name \
     FROM sys.master_files WHERE database_id = 1 AND file_id = 1;";

/// The recovery model new databases inherit.
pub const MODEL_RECOVERY_SQL: &str =
    "SELECT CAST(recovery_model_desc AS nvarchar(60)) AS recovery \
     FROM sys.databases WHERE name = N'model';";

/// Facts about the server.
#[derive(Debug, Clone)]
pub struct ServerFacts {
    /// `ProductVersion` (`16.0.4135.4`).
    pub product_version: String,
    /// The major version (16 for SQL Server 2022).
    pub major: u32,
    /// `Edition` (`Developer Edition (64-bit)`).
    pub edition: String,
    /// `EngineEdition`: 5 is Azure SQL Database, 8 Azure SQL Managed Instance.
    pub engine_edition: i64,
    /// Windows or Linux.
    pub platform: Platform,
    /// Default directories for new files.
    pub dirs: ServerDirs,
    /// IFI state of the service.
    pub ifi: IfiState,
    /// Whether trace flag 1806 was on globally when dbbench started.
    pub tf1806: std::result::Result<bool, String>,
    /// Everything recorded as preconditions.
    pub preconditions: BTreeMap<String, String>,
    /// The version line for the results.
    pub version: String,
}

impl ServerFacts {
    /// Reads the facts through `conn` (connected to master). Only the properties query must
    /// succeed; every other fact records why it is unknown.
    pub async fn read(conn: &mut MssqlConnection) -> Result<ServerFacts> {
        let rows = conn.query(PROPERTIES_SQL, &[]).await?;
        let row = rows
            .first()
            .ok_or_else(|| Error::msg("SERVERPROPERTY returned no row"))?;
        let text = |name: &str| -> String {
            row.get_named::<Option<String>>(name)
                .ok()
                .flatten()
                .unwrap_or_default()
                .trim()
                .to_string()
        };
        let product_version = text("product_version");
        let major = product_version
            .split('.')
            .next()
            .and_then(|m| m.parse().ok())
            .unwrap_or(0);
        let engine_edition = row
            .get_named::<Option<i64>>("engine_edition")
            .ok()
            .flatten()
            .unwrap_or(0);
        let mut pre = BTreeMap::new();
        let mut note = |k: &str, v: String| {
            pre.insert(k.to_string(), v);
        };

        let host = match conn.query(HOST_SQL, &[]).await {
            Ok(r) => r
                .first()
                .and_then(|r| r.get::<Option<String>>(0).ok().flatten()),
            Err(_) => None,
        };
        let mut data_dir = text("default_data_path");
        let mut log_dir = text("default_log_path");
        if data_dir.is_empty() || log_dir.is_empty() {
            let master = conn.query(MASTER_PATH_SQL, &[]).await?;
            let path: String = master
                .first()
                .ok_or_else(|| Error::msg("sys.master_files has no row for master"))?
                .get(0)?;
            let dir = path[..path.rfind(['\\', '/']).unwrap_or(0)].to_string();
            if data_dir.is_empty() {
                data_dir = dir.clone();
            }
            if log_dir.is_empty() {
                log_dir = dir;
            }
        }
        let platform = Platform::detect(host.as_deref(), &data_dir);

        let ifi = match conn.query(ifi::STATE_SQL, &[]).await {
            Ok(rows) => IfiState::from_rows(&rows),
            Err(e) => IfiState::Unknown(e.to_string()),
        };
        let tf1806 = match conn
            .query(&ifi::trace_status_sql(ifi::TF_NO_IFI), &[])
            .await
        {
            Ok(rows) => ifi::is_on_globally(&rows).map_err(|e| e.to_string()),
            Err(e) => Err(e.to_string()),
        };
        let model_recovery = match conn.query(MODEL_RECOVERY_SQL, &[]).await {
            Ok(r) => r
                .first()
                .and_then(|r| r.get::<String>(0).ok())
                .unwrap_or_default(),
            Err(e) => format!("unknown ({e})"),
        };

        let level = [text("product_level"), text("product_update_level")]
            .into_iter()
            .filter(|s| !s.is_empty())
            .collect::<Vec<_>>()
            .join(" ");
        let edition = text("edition");
        note("product_version", product_version.clone());
        note("product_level", level.clone());
        note("edition", edition.clone());
        note("engine_edition", engine_edition.to_string());
        note("host_platform", format!("{platform:?}").to_lowercase());
        note("machine_name", text("machine_name"));
        note("default_data_path", data_dir.clone());
        note("default_log_path", log_dir.clone());
        note("model_recovery", model_recovery);
        note("ifi", ifi.describe());
        note(
            "trace_flag_1806_global",
            match &tf1806 {
                Ok(true) => "on".into(),
                Ok(false) => "off".into(),
                Err(e) => format!("unknown ({e})"),
            },
        );
        note(
            "login_is_sysadmin",
            match row.get_named::<Option<i64>>("is_sysadmin").ok().flatten() {
                Some(1) => "yes".into(),
                Some(_) => "no".into(),
                None => "unknown".into(),
            },
        );
        let version = format!(
            "Microsoft SQL Server {product_version}{} {edition}",
            if level.is_empty() {
                String::new()
            } else {
                format!(" ({level})")
            }
        );
        Ok(ServerFacts {
            product_version,
            major,
            edition,
            engine_edition,
            platform,
            dirs: ServerDirs {
                data: data_dir,
                log: log_dir,
            },
            ifi,
            tf1806,
            preconditions: pre,
            version,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_server_property_is_cast() {
        // tiberius cannot always decode sql_variant: no SERVERPROPERTY may be returned bare.
        assert_eq!(
            PROPERTIES_SQL.matches("SERVERPROPERTY(").count(),
            PROPERTIES_SQL.matches("CAST(SERVERPROPERTY(").count()
        );
        insta::assert_snapshot!(format!(
            "{PROPERTIES_SQL}\n{HOST_SQL}\n{MASTER_PATH_SQL}\n{MODEL_RECOVERY_SQL}"
        ));
    }
}
