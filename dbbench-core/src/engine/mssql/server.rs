//! What dbbench learns about the server once per process: version, edition, platform, default
//! directories, IFI and trace-flag state. These become the results' preconditions, and decide how
//! files are named and which statements apply.
//!
//! `SERVERPROPERTY` returns `sql_variant`, which tiberius does not decode everywhere: every such
//! column is cast to a plain type in the query.

use super::floors::{Floors, MODEL_SIZE_SQL};
use super::identity::Product;
use super::ifi::{self, IfiState};
use super::provision::{Platform, ServerDirs};
use super::MssqlConnection;
use crate::model::error::{Error, Result};
use crate::model::value::Row;
use crate::model::volume::Volumes;
use std::collections::BTreeMap;

/// The properties query; every `sql_variant` is cast (tiberius panics on a bare one).
pub const PROPERTIES_SQL: &str = "SELECT \
     CAST(SERVERPROPERTY('ProductVersion') AS nvarchar(128)) AS product_version, \
     CAST(SERVERPROPERTY('ProductLevel') AS nvarchar(128)) AS product_level, \
     CAST(SERVERPROPERTY('ProductUpdateLevel') AS nvarchar(128)) AS product_update_level, \
     CAST(SERVERPROPERTY('Edition') AS nvarchar(128)) AS edition, \
     CAST(SERVERPROPERTY('EngineEdition') AS int) AS engine_edition, \
     CAST(SERVERPROPERTY('Babelfish') AS nvarchar(128)) AS babelfish, \
     CAST(SERVERPROPERTY('InstanceDefaultDataPath') AS nvarchar(4000)) AS default_data_path, \
     CAST(SERVERPROPERTY('InstanceDefaultLogPath') AS nvarchar(4000)) AS default_log_path, \
     CAST(SERVERPROPERTY('MachineName') AS nvarchar(128)) AS machine_name, \
     CAST(IS_SRVROLEMEMBER('sysadmin') AS int) AS is_sysadmin, \
     CAST(@@VERSION AS nvarchar(4000)) AS version_text;";

/// The host platform (SQL Server 2017 and later).
pub const HOST_SQL: &str =
    "SELECT CAST(host_platform AS nvarchar(256)) AS host_platform FROM sys.dm_os_host_info;";

/// master's data and log files, for servers without `InstanceDefaultDataPath`/`LogPath`.
pub const MASTER_PATH_SQL: &str = "SELECT CAST(type AS int) AS type, \
     CAST(physical_name AS nvarchar(4000)) AS physical_name \
     FROM sys.master_files WHERE database_id = 1 ORDER BY file_id;";

/// The recovery model new databases inherit.
pub const MODEL_RECOVERY_SQL: &str =
    "SELECT CAST(recovery_model_desc AS nvarchar(60)) AS recovery \
     FROM sys.databases WHERE name = N'model';";

/// `model`'s recovery model as a precondition: what a cell that declares no `recovery` inherits.
/// A new FULL or BULK_LOGGED database has had no full backup, so its log truncates at checkpoints
/// as in SIMPLE until one is taken (pseudo-simple); each run records the behaviour in effect
/// (`facts.recovery`).
pub fn describe_model_recovery(model: &str) -> String {
    let model = model.trim();
    if model.eq_ignore_ascii_case("FULL") || model.eq_ignore_ascii_case("BULK_LOGGED") {
        format!(
            "{model} (inherited by cells that declare no recovery; without a full backup such a \
             database is pseudo-simple, each run's facts.recovery says which applied)"
        )
    } else {
        model.to_string()
    }
}

/// Facts about the server.
#[derive(Debug, Clone)]
pub struct ServerFacts {
    /// `ProductVersion` (`16.0.4135.4`).
    pub product_version: String,
    /// The major version (16 for SQL Server 2022).
    pub major: u32,
    /// `Edition` (`Developer Edition (64-bit)`).
    pub edition: String,
    /// `EngineEdition`: 5 is Azure SQL Database, 8 Azure SQL Managed Instance, 9 Azure SQL Edge.
    pub engine_edition: i64,
    /// The product answering on the port.
    pub product: Product,
    /// Windows or Linux.
    pub platform: Platform,
    /// Default directories for new files, or the sentence saying what to set.
    pub dirs: std::result::Result<ServerDirs, String>,
    /// Minimum file sizes, from `model`.
    pub floors: Floors,
    /// IFI state of the service.
    pub ifi: IfiState,
    /// Whether an IFI-off trace flag ([`ifi::TF_NO_IFI`]) was on globally when dbbench started.
    pub tf_no_ifi: std::result::Result<bool, String>,
    /// Everything recorded as preconditions.
    pub preconditions: BTreeMap<String, String>,
    /// The version line for the results.
    pub version: String,
}

/// The directories new files go to: the server's defaults, else master's directories, else the
/// volumes `data` and `log` of `DBBENCH_VOLUMES`; otherwise a sentence saying what to set.
pub fn default_dirs(
    properties: (&str, &str),
    master_files: std::result::Result<&[Row], String>,
    volumes: &Volumes,
) -> (std::result::Result<ServerDirs, String>, String) {
    let dir_of = |path: &str| path[..path.rfind(['\\', '/']).unwrap_or(0)].to_string();
    let (mut data, mut log) = (properties.0.to_string(), properties.1.to_string());
    let mut source = "SERVERPROPERTY('InstanceDefaultDataPath'/'InstanceDefaultLogPath')";
    let mut master_note = String::new();
    if data.is_empty() || log.is_empty() {
        match &master_files {
            Ok(rows) => {
                let path = |kind: i64| {
                    rows.iter()
                        .find(|r| r.get_named::<i64>("type").ok() == Some(kind))
                        .and_then(|r| r.get_named::<String>("physical_name").ok())
                        .map(|p| dir_of(p.trim()))
                        .filter(|d| !d.is_empty())
                };
                if let Some(d) = path(0) {
                    source = "the directories of master's files (sys.master_files)";
                    if data.is_empty() {
                        data = d.clone();
                    }
                    if log.is_empty() {
                        log = path(1).unwrap_or(d);
                    }
                } else {
                    master_note = "sys.master_files has no row for master".into();
                }
            }
            Err(e) => master_note = format!("sys.master_files: {e}"),
        }
    }
    if data.is_empty() || log.is_empty() {
        let bound = |name: &str| {
            volumes
                .resolve(name)
                .ok()
                .map(|p| p.to_string_lossy().into_owned())
        };
        if let Some(d) = bound("data") {
            source = "the volumes `data` and `log` of DBBENCH_VOLUMES";
            if data.is_empty() {
                data = d.clone();
            }
            if log.is_empty() {
                log = bound("log").unwrap_or(d);
            }
        }
    }
    if data.is_empty() || log.is_empty() {
        return (
            Err(format!(
                "the server reports no default data or log directory \
                 (SERVERPROPERTY('InstanceDefaultDataPath') is NULL; {master_note}): set \
                 DBBENCH_VOLUMES=\"data=<directory on the server>,log=<directory on the server>\" \
                 or declare data_on/log_on for every cell"
            )),
            "none".into(),
        );
    }
    (Ok(ServerDirs { data, log }), source.to_string())
}

impl ServerFacts {
    /// Whether this is Microsoft SQL Server older than 2016, which has no per-database MAXDOP.
    /// Other products report versions of their own (Babelfish says 12.0) and decide MAXDOP by
    /// product ([`Product::refusals`]).
    pub fn maxdop_too_old(&self) -> bool {
        self.product == Product::SqlServer && self.major != 0 && self.major < 13
    }

    /// Reads the facts through `conn` (connected to master). Only the properties query must
    /// succeed; every other fact records why it is unknown.
    pub async fn read(conn: &mut MssqlConnection, volumes: &Volumes) -> Result<ServerFacts> {
        let rows = conn.query(PROPERTIES_SQL, &[]).await?;
        let row = rows
            .first()
            .ok_or_else(|| Error::msg("SERVERPROPERTY returned no row"))?;
        let props = Properties::from_row(row);
        let (dirs, dirs_source, platform) = placement(conn, &props, volumes).await;
        let (ifi, ifi_source) = ifi::read_state(conn, platform).await;
        let tf_status = trace_flag_status(conn).await;
        // Either IFI-off flag on counts as on; the first failure to read says why.
        let tf_no_ifi = tf_status
            .iter()
            .try_fold(false, |any, (_, on)| on.clone().map(|on| any || on));
        let model_recovery = match conn.query(MODEL_RECOVERY_SQL, &[]).await {
            Ok(r) => describe_model_recovery(
                &r.first()
                    .and_then(|r| r.get::<String>(0).ok())
                    .unwrap_or_default(),
            ),
            Err(e) => format!("unknown ({e})"),
        };
        let model = conn
            .query(MODEL_SIZE_SQL, &[])
            .await
            .map_err(|e| e.to_string());
        let floors = Floors::from_model(model.as_deref().map_err(Clone::clone));
        let version = format!(
            "{} {}{} {}",
            props.product.name(),
            props.product_version,
            if props.level.is_empty() {
                String::new()
            } else {
                format!(" ({})", props.level)
            },
            props.edition
        );
        let mut facts = ServerFacts {
            product_version: props.product_version.clone(),
            major: props.major,
            edition: props.edition.clone(),
            engine_edition: props.engine_edition,
            product: props.product.clone(),
            platform,
            dirs,
            floors,
            ifi,
            tf_no_ifi,
            preconditions: BTreeMap::new(),
            version: version.trim_end().to_string(),
        };
        facts.preconditions = preconditions(
            &facts,
            &props,
            dirs_source,
            model_recovery,
            ifi_source,
            &tf_status,
        );
        Ok(facts)
    }
}

/// The answers of [`PROPERTIES_SQL`], trimmed, that the facts are made from.
struct Properties {
    product_version: String,
    /// The first part of the product version (13 = 2016), 0 when it is not a number.
    major: u32,
    engine_edition: i64,
    version_text: String,
    product: Product,
    /// The product level and update level (`RTM CU12`), those the server gives.
    level: String,
    edition: String,
    machine_name: String,
    is_sysadmin: Option<i64>,
    default_data_path: String,
    default_log_path: String,
}

impl Properties {
    fn from_row(row: &Row) -> Properties {
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
        let version_text = text("version_text");
        let babelfish = text("babelfish");
        let product = Product::detect(&version_text, engine_edition, Some(&babelfish));
        let level = [text("product_level"), text("product_update_level")]
            .into_iter()
            .filter(|s| !s.is_empty())
            .collect::<Vec<_>>()
            .join(" ");
        Properties {
            product_version,
            major,
            engine_edition,
            version_text,
            product,
            level,
            edition: text("edition"),
            machine_name: text("machine_name"),
            is_sysadmin: row.get_named::<Option<i64>>("is_sysadmin").ok().flatten(),
            default_data_path: text("default_data_path"),
            default_log_path: text("default_log_path"),
        }
    }
}

/// The default directories (with where they came from) and the platform, which the directories'
/// form tells when the host query cannot.
async fn placement(
    conn: &mut MssqlConnection,
    props: &Properties,
    volumes: &Volumes,
) -> (std::result::Result<ServerDirs, String>, String, Platform) {
    let host = match conn.query(HOST_SQL, &[]).await {
        Ok(r) => r
            .first()
            .and_then(|r| r.get::<Option<String>>(0).ok().flatten()),
        Err(_) => None,
    };
    let (data_prop, log_prop) = (&props.default_data_path, &props.default_log_path);
    let master = if data_prop.is_empty() || log_prop.is_empty() {
        conn.query(MASTER_PATH_SQL, &[])
            .await
            .map_err(|e| e.to_string())
    } else {
        Ok(Vec::new())
    };
    let (dirs, dirs_source) = default_dirs(
        (data_prop.as_str(), log_prop.as_str()),
        master.as_deref().map_err(Clone::clone),
        volumes,
    );
    let sample = dirs.as_ref().map(|d| d.data.clone()).unwrap_or_default();
    let platform = Platform::detect(host.as_deref(), &sample);
    (dirs, dirs_source, platform)
}

/// Whether each IFI-off trace flag is on globally, or why that could not be read.
async fn trace_flag_status(
    conn: &mut MssqlConnection,
) -> Vec<(u32, std::result::Result<bool, String>)> {
    let mut tf_status = Vec::new();
    for tf in ifi::TF_NO_IFI {
        let on = match conn.query(&ifi::trace_status_sql(tf), &[]).await {
            Ok(rows) => ifi::is_on_globally(&rows).map_err(|e| e.to_string()),
            Err(e) => Err(e.to_string()),
        };
        tf_status.push((tf, on));
    }
    tf_status
}

/// The facts as the results' preconditions, by name.
fn preconditions(
    facts: &ServerFacts,
    props: &Properties,
    dirs_source: String,
    model_recovery: String,
    ifi_source: String,
    tf_status: &[(u32, std::result::Result<bool, String>)],
) -> BTreeMap<String, String> {
    let mut pre = BTreeMap::new();
    let mut note = |k: &str, v: String| {
        pre.insert(k.to_string(), v);
    };
    note("product", facts.product.name().to_string());
    note(
        "version_text",
        props
            .version_text
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" "),
    );
    note("product_version", facts.product_version.clone());
    note("product_level", props.level.clone());
    note("edition", facts.edition.clone());
    note("engine_edition", facts.engine_edition.to_string());
    note(
        "host_platform",
        format!("{:?}", facts.platform).to_lowercase(),
    );
    note("machine_name", props.machine_name.clone());
    match &facts.dirs {
        Ok(d) => {
            note("default_data_path", d.data.clone());
            note("default_log_path", d.log.clone());
        }
        Err(why) => note("default_data_path", format!("unknown: {why}")),
    }
    note("default_paths_from", dirs_source);
    note("model_recovery", model_recovery);
    note("size floors", facts.floors.describe());
    note("ifi", facts.ifi.describe());
    note("ifi_from", ifi_source);
    if facts.major >= 16 {
        note(
            "ifi_log_2022",
            "SQL Server 2022 gives log growths up to 64 MB IFI whatever the service's \
             privilege; larger log growths are zeroed"
                .into(),
        );
    }
    for (tf, on) in tf_status {
        note(
            &format!("trace_flag_{tf}_global"),
            match on {
                Ok(true) => "on".into(),
                Ok(false) => "off".into(),
                Err(e) => format!("unknown ({e})"),
            },
        );
    }
    note(
        "login_is_sysadmin",
        match props.is_sysadmin {
            Some(1) => "yes".into(),
            Some(_) => "no".into(),
            None => "unknown".into(),
        },
    );
    pre
}

#[cfg(test)]
mod tests;
