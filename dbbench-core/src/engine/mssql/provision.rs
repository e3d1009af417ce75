//! The T-SQL that creates a benchmark database in the configuration a cell declares. Everything
//! here is a pure function of the storage spec, the resolved directories and the server's
//! platform, so every statement is reviewed as an insta snapshot before it runs on anyone's server.
//!
//! The database gets `data_files` equal data files of `data_size / data_files` each (rounded up to
//! whole 64 KiB extents) with the same growth, so proportional fill spreads writes evenly; the log
//! gets `log_size` and `log_growth`. With `log_pregrow`, the log is created at one step and grown
//! by `MODIFY FILE` in equal steps up to `log_size`, as the VLF article pre-grows in 4000 MB steps,
//! so its VLF count follows the step size rather than the final size.

use super::floors::Floors;
use super::tsql::{filegrowth, ident, kb, literal};
use crate::model::config::{Growth, Recovery, StorageSpec};
use crate::model::error::{Error, Result};
use crate::model::evidence::FileKind;
use crate::model::units::EXTENT;
use crate::model::volume::Volumes;

pub use super::marker::OWNER_PROPERTY;

/// The operating system SQL Server runs on, which decides path syntax and the null device.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Platform {
    /// Windows: `D:\data\x.mdf`.
    Windows,
    /// Linux (including containers): `/var/opt/mssql/data/x.mdf`.
    Linux,
}

impl Platform {
    /// From `sys.dm_os_host_info.host_platform` when the server has it, else from the shape of a
    /// server path.
    pub fn detect(host_platform: Option<&str>, sample_path: &str) -> Platform {
        match host_platform.map(str::trim) {
            Some(p) if p.eq_ignore_ascii_case("linux") => Platform::Linux,
            Some(p) if p.eq_ignore_ascii_case("windows") => Platform::Windows,
            _ if sample_path.starts_with('/') => Platform::Linux,
            _ => Platform::Windows,
        }
    }

    /// The path separator.
    pub fn separator(&self) -> char {
        match self {
            Platform::Windows => '\\',
            Platform::Linux => '/',
        }
    }

    /// Where a backup that only starts the log chain is written: `NUL` on both platforms. SQL
    /// Server on Linux maps `NUL` to its null device, while `/dev/null` is reported to fail
    /// there (Msg 3634, OS error 31, 'DiskChangeFileSize'; olahallengren/
    /// sql-server-maintenance-solution#409).
    pub fn null_device(&self) -> &'static str {
        "NUL"
    }
}

/// The server's default directories for new data and log files.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerDirs {
    /// `InstanceDefaultDataPath`.
    pub data: String,
    /// `InstanceDefaultLogPath`.
    pub log: String,
}

/// One file of the database as it will be created.
#[derive(Debug, Clone, PartialEq)]
pub struct PlannedFile {
    /// Logical name (`data_1`, `log`).
    pub logical: String,
    /// Path on the server.
    pub physical: String,
    /// Data or log.
    pub kind: FileKind,
    /// The volume name it was placed on, if any.
    pub volume: Option<String>,
    /// The size it must have once configured (the log's after pre-growth), if declared.
    pub size: Option<u64>,
    /// Its declared growth, if any.
    pub growth: Option<Growth>,
}

/// Every statement that creates and configures one database, in execution order.
#[derive(Debug, Clone, PartialEq)]
pub struct Provision {
    /// The files, data files first; empty until read back when the server placed them.
    pub files: Vec<PlannedFile>,
    /// The cell declares nothing about its files: `CREATE DATABASE` names none and the server
    /// places them ([`server_places`]).
    pub server_placed: bool,
    /// `CREATE DATABASE` (the ownership marker follows it: [`marker`](super::marker)).
    pub create: Vec<String>,
    /// Log pre-growth, recovery model and MAXDOP, run right after creation.
    pub configure: Vec<String>,
    /// Run after the fixture is loaded and before the window opens: the full backup that makes
    /// FULL recovery real (until the first full backup the log truncates as in SIMPLE).
    pub before_window: Vec<String>,
    /// Run after `before_window`: the query whose `last_log_backup_lsn` must not be NULL, proof
    /// that the log chain started (FULL and BULK_LOGGED only).
    pub chain_check: Option<String>,
}

/// What [`plan`] needs besides the storage spec.
#[derive(Debug, Clone)]
pub struct Target<'a> {
    /// The database name.
    pub name: &'a str,
    /// Named volumes (`DBBENCH_VOLUMES`), bound to directories on the server.
    pub volumes: &'a Volumes,
    /// The server's default directories, or the sentence saying what to set.
    pub defaults: std::result::Result<&'a ServerDirs, &'a str>,
    /// The server's platform.
    pub platform: Platform,
    /// The server's minimum file sizes, applied before anything else.
    pub floors: &'a Floors,
}

/// Refuses specs that cannot be provisioned on any SQL Server.
pub fn validate(spec: &StorageSpec) -> Result<()> {
    if spec.data_files == 0 {
        return Err(Error::Config("data_files must be at least 1".into()));
    }
    if spec.log_pregrow.is_some() && spec.log_size.is_none() {
        return Err(Error::Config(
            "log_pregrow needs log_size: the log is grown in log_pregrow steps up to log_size"
                .into(),
        ));
    }
    if spec.log_pregrow.is_some_and(|s| s.bytes == 0) {
        return Err(Error::Config("log_pregrow must be larger than 0".into()));
    }
    Ok(())
}

/// Whether `spec` declares nothing about the database's files (one data file, no size, growth,
/// pre-growth or placement). Then `CREATE DATABASE [db];` lets the server place and size them as
/// it always does (its default directories, `model`'s sizes) and dbbench reads back where they
/// went: no directory has to be known, and a server that places files itself (Babelfish, Azure
/// SQL) runs such cells too. SQL Server's file specification requires `FILENAME`, so any declared
/// size or growth needs the directories.
pub fn server_places(spec: &StorageSpec) -> bool {
    spec.data_files == 1
        && spec.data_size.is_none()
        && spec.growth.is_none()
        && spec.log_size.is_none()
        && spec.log_growth.is_none()
        && spec.log_pregrow.is_none()
        && spec.data_on.is_empty()
        && spec.log_on.is_none()
}

/// The statements that create `target.name` in the configuration `spec`.
pub fn plan(spec: &StorageSpec, target: &Target<'_>) -> Result<Provision> {
    validate(spec)?;
    // Idempotent: a spec the runner already floored is unchanged.
    let floored = target.floors.apply(spec);
    let spec = &floored;
    let db = ident(target.name);
    if server_places(spec) {
        let (configure, before_window, chain_check) = configure(spec, target);
        return Ok(Provision {
            // Known once the server has created them (`readback::located`).
            files: Vec::new(),
            server_placed: true,
            create: vec![format!("CREATE DATABASE {db};")],
            configure,
            before_window,
            chain_check,
        });
    }
    let mut files = place_files(spec, target)?;
    let per_file = spec
        .data_size
        .map(|s| (s.bytes / spec.data_files as u64).div_ceil(EXTENT).max(1) * EXTENT);
    let log_steps = log_sizes(spec);
    for file in &mut files {
        (file.size, file.growth) = match file.kind {
            FileKind::Data => (per_file, spec.growth),
            FileKind::Log => (log_steps.last().copied(), spec.log_growth),
        };
    }

    let spec_of = |file: &PlannedFile, size: Option<u64>, growth: Option<Growth>| {
        let mut parts = vec![
            format!("NAME = {}", literal(&file.logical)),
            format!("FILENAME = {}", literal(&file.physical)),
        ];
        if let Some(size) = size {
            parts.push(format!("SIZE = {}", kb(size)));
        }
        if let Some(growth) = growth {
            parts.push(format!("FILEGROWTH = {}", filegrowth(&growth)));
        }
        format!("({})", parts.join(", "))
    };
    let data: Vec<String> = files
        .iter()
        .filter(|f| f.kind == FileKind::Data)
        .map(|f| format!("    {}", spec_of(f, per_file, spec.growth)))
        .collect();
    let log_file = files
        .iter()
        .find(|f| f.kind == FileKind::Log)
        .expect("place_files always plans a log");
    let create_db = format!(
        "CREATE DATABASE {db}\nON PRIMARY\n{}\nLOG ON\n    {};",
        data.join(",\n"),
        spec_of(log_file, log_steps.first().copied(), spec.log_growth)
    );
    let mut pregrow: Vec<String> = log_steps
        .iter()
        .skip(1)
        .map(|size| {
            format!(
                "ALTER DATABASE {db} MODIFY FILE (NAME = {}, SIZE = {});",
                literal(&log_file.logical),
                kb(*size)
            )
        })
        .collect();
    let (configure, before_window, chain_check) = configure(spec, target);
    pregrow.extend(configure);
    Ok(Provision {
        files,
        server_placed: false,
        create: vec![create_db],
        configure: pregrow,
        before_window,
        chain_check,
    })
}

/// The recovery model and MAXDOP statements, the backup that starts the log chain before the
/// window, and the check that it started.
fn configure(
    spec: &StorageSpec,
    target: &Target<'_>,
) -> (Vec<String>, Vec<String>, Option<String>) {
    let db = ident(target.name);
    let mut configure = Vec::new();
    let mut before_window = Vec::new();
    let mut chain_check = None;
    if let Some(recovery) = spec.recovery {
        let model = match recovery {
            Recovery::Simple => "SIMPLE",
            Recovery::Full => "FULL",
            Recovery::BulkLogged => "BULK_LOGGED",
        };
        // No WITH <termination>: ALTER DATABASE SET Options lists the termination clause as not
        // applicable to the recovery option.
        configure.push(format!("ALTER DATABASE {db} SET RECOVERY {model};"));
        if recovery != Recovery::Simple {
            before_window.push(format!(
                "BACKUP DATABASE {db} TO DISK = {};",
                literal(target.platform.null_device())
            ));
            chain_check = Some(chain_check_sql(target.name));
        }
    }
    if let Some(maxdop) = spec.maxdop {
        // sp_executesql of the database runs in its context, so the admin connection stays in
        // master and can drop the database later.
        let inner = format!("ALTER DATABASE SCOPED CONFIGURATION SET MAXDOP = {maxdop};");
        configure.push(format!("EXEC {db}.sys.sp_executesql {};", literal(&inner)));
    }
    (configure, before_window, chain_check)
}

/// The start of the log chain of `name`: `last_log_backup_lsn` is NULL until a full backup in
/// FULL or BULK_LOGGED recovery has been taken (until then the log truncates as in SIMPLE).
pub fn chain_check_sql(name: &str) -> String {
    format!(
        "SELECT CAST(last_log_backup_lsn AS nvarchar(40)) AS last_log_backup_lsn \
         FROM sys.database_recovery_status WHERE database_id = DB_ID({});",
        literal(name)
    )
}

/// The log's size at creation followed by each pre-growth target, in bytes; empty when the spec
/// leaves the log size to the server.
pub fn log_sizes(spec: &StorageSpec) -> Vec<u64> {
    let Some(total) = spec.log_size.map(|s| s.bytes) else {
        return Vec::new();
    };
    let Some(step) = spec
        .log_pregrow
        .map(|s| s.bytes)
        .filter(|s| *s > 0 && *s < total)
    else {
        return vec![total];
    };
    let mut sizes: Vec<u64> = (1..).map(|k| k * step).take_while(|s| *s < total).collect();
    sizes.push(total);
    sizes
}

/// Logical and physical names of every file: data files round robin over `data_on`, the log on
/// `log_on`, the server's default directories otherwise.
fn place_files(spec: &StorageSpec, target: &Target<'_>) -> Result<Vec<PlannedFile>> {
    let dir_of = |volume: Option<&str>, default: fn(&ServerDirs) -> &str| -> Result<String> {
        match (volume, target.defaults) {
            (Some(v), _) => Ok(target.volumes.resolve(v)?.to_string_lossy().into_owned()),
            (None, Ok(dirs)) => Ok(default(dirs).to_string()),
            (None, Err(why)) => Err(Error::Config(why.to_string())),
        }
    };
    let mut files = Vec::new();
    for i in 0..spec.data_files as usize {
        let volume = (!spec.data_on.is_empty()).then(|| spec.data_on[i % spec.data_on.len()]);
        let ext = if i == 0 { "mdf" } else { "ndf" };
        let file = format!("{}_data_{}.{ext}", target.name, i + 1);
        files.push(PlannedFile {
            logical: format!("data_{}", i + 1),
            physical: join(&dir_of(volume, |d| &d.data)?, &file, target.platform),
            kind: FileKind::Data,
            volume: volume.map(str::to_string),
            size: None,
            growth: None,
        });
    }
    files.push(PlannedFile {
        logical: "log".into(),
        physical: join(
            &dir_of(spec.log_on, |d| &d.log)?,
            &format!("{}_log.ldf", target.name),
            target.platform,
        ),
        kind: FileKind::Log,
        volume: spec.log_on.map(str::to_string),
        size: None,
        growth: None,
    });
    Ok(files)
}

/// `dir` and `file` joined with the server's separator.
pub fn join(dir: &str, file: &str, platform: Platform) -> String {
    if dir.ends_with('\\') || dir.ends_with('/') {
        format!("{dir}{file}")
    } else {
        format!("{dir}{}{file}", platform.separator())
    }
}

/// `SELECT` of the database's id, NULL when it does not exist.
pub fn exists_sql(name: &str) -> String {
    format!(
        "SELECT CAST(DB_ID({}) AS int) AS database_id;",
        literal(name)
    )
}

#[cfg(test)]
mod tests;
