//! The preflight a DBA runs before the first benchmark: it connects with `DBBENCH_MSSQL`, creates
//! nothing, and reports what this server and login allow (product and version, IFI, trace flags,
//! Extended Events, the permissions behind each metric, `KILL`, default paths, tempdb's files and
//! changes) and, for
//! the cells the caller passes, which can run and why not. [`Preflight::render`] is plain text,
//! one line per check, readable when piped to a file.
//!
//! The decisions ([`evaluate`]) are a pure function of recorded server answers, so they are
//! tested without a server; [`run`] only gathers the answers.

use super::floors::Floors;
use super::identity::Product;
use super::ifi::IfiState;
use super::instance::{self, TempdbFile};
use super::provision::{self, ServerDirs};
use crate::engine::plugin::PreflightCell;
use crate::model::config::StorageSpec;
use crate::model::start::CacheState;
use crate::model::value::Row;

mod checks;
mod gathering;
use checks::{
    access_checks, limit_checks, probe_check, server_checks, shared_server_check, tempdb_checks,
};
pub use gathering::run;

/// The login's permissions, each `NULL` where the server cannot answer (Babelfish, Azure).
pub const PERMISSIONS_SQL: &str = "SELECT \
     CAST(IS_SRVROLEMEMBER('sysadmin') AS int) AS sysadmin, \
     CAST(HAS_PERMS_BY_NAME(NULL, NULL, 'ALTER SETTINGS') AS int) AS alter_settings, \
     CAST(HAS_PERMS_BY_NAME(NULL, NULL, 'ALTER ANY EVENT SESSION') AS int) AS alter_any_event_session, \
     CAST(HAS_PERMS_BY_NAME(NULL, NULL, 'VIEW SERVER STATE') AS int) AS view_server_state, \
     CAST(HAS_PERMS_BY_NAME(N'master', N'DATABASE', 'VIEW DATABASE STATE') AS int) AS view_database_state, \
     CAST(HAS_PERMS_BY_NAME(NULL, NULL, 'ALTER ANY DATABASE') AS int) AS alter_any_database, \
     CAST(HAS_PERMS_BY_NAME(NULL, NULL, 'CREATE ANY DATABASE') AS int) AS create_any_database, \
     CAST(HAS_PERMS_BY_NAME(N'master', N'DATABASE', 'CREATE DATABASE') AS int) AS create_database_in_master, \
     CAST(HAS_PERMS_BY_NAME(NULL, NULL, 'ALTER ANY CONNECTION') AS int) AS alter_any_connection;";

/// What the login may do: `None` where the server could not say.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Permissions {
    /// Member of sysadmin (needed for `DBCC TRACEON … -1`).
    pub sysadmin: Option<bool>,
    /// `ALTER SETTINGS` (serveradmin; not enough for DBCC TRACEON, which needs sysadmin).
    pub alter_settings: Option<bool>,
    /// `ALTER ANY EVENT SESSION` (server-scoped Extended Events).
    pub alter_any_event_session: Option<bool>,
    /// `VIEW SERVER STATE` (waits, counters, file I/O, IFI state).
    pub view_server_state: Option<bool>,
    /// `VIEW DATABASE STATE` in master (the login owns the databases it creates, which covers it
    /// there).
    pub view_database_state: Option<bool>,
    /// `ALTER ANY DATABASE` (tempdb changes).
    pub alter_any_database: Option<bool>,
    /// `CREATE ANY DATABASE`.
    pub create_any_database: Option<bool>,
    /// `CREATE DATABASE` granted in master (enough for `CREATE DATABASE`: its docs).
    pub create_database_in_master: Option<bool>,
    /// `ALTER ANY CONNECTION` (`KILL`, which stops a runaway statement).
    pub alter_any_connection: Option<bool>,
}

impl Permissions {
    /// From the row of [`PERMISSIONS_SQL`]; an error leaves every answer unknown.
    pub fn from_rows(rows: &[Row]) -> Permissions {
        let Some(row) = rows.first() else {
            return Permissions::default();
        };
        let get = |name: &str| {
            row.get_named::<Option<i64>>(name)
                .ok()
                .flatten()
                .map(|v| v == 1)
        };
        Permissions {
            sysadmin: get("sysadmin"),
            alter_settings: get("alter_settings"),
            alter_any_event_session: get("alter_any_event_session"),
            view_server_state: get("view_server_state"),
            view_database_state: get("view_database_state"),
            alter_any_database: get("alter_any_database"),
            create_any_database: get("create_any_database"),
            create_database_in_master: get("create_database_in_master"),
            alter_any_connection: get("alter_any_connection"),
        }
    }
}

/// Everything the decisions depend on, as recorded from a server.
#[derive(Debug, Clone)]
pub struct Answers {
    /// `host,port`.
    pub server: String,
    /// The product.
    pub product: Product,
    /// The version line.
    pub version: String,
    /// Major version (13 = 2016).
    pub major: u32,
    /// Windows or Linux.
    pub platform: provision::Platform,
    /// IFI of the service.
    pub ifi: IfiState,
    /// Where the IFI state came from (`sys.dm_server_services`, the error log's startup line).
    pub ifi_from: String,
    /// tempdb's data files, or why they could not be listed.
    pub tempdb_files: std::result::Result<Vec<TempdbFile>, String>,
    /// The login's permissions.
    pub permissions: Permissions,
    /// Default directories, or what to set.
    pub dirs: std::result::Result<ServerDirs, String>,
    /// Minimum sizes.
    pub floors: Floors,
    /// `DBBENCH_MSSQL_ALLOW_INSTANCE_CHANGES=1`.
    pub allow_instance_changes: bool,
    /// What `DBCC TRACESTATUS` answered: `Err` with the server's words where it failed.
    pub trace_status: std::result::Result<(), String>,
    /// Whether an IFI-off trace flag (1805, 1806) is on globally now: the run refuses
    /// `ifi = true` cells then (finding A4).
    pub ifi_off_flag_on: bool,
    /// `DBBENCH_MSSQL_COLD_CACHE=1`: every cell empties the buffer pool before its window.
    pub cold_cache: bool,
    /// `DBBENCH_MSSQL_RESTART` is set: the whole instance restarts before every repetition.
    pub restart_hook: bool,
    /// Each evidence source read once (a `SELECT` that creates nothing), with its outcome.
    pub probes: Vec<Probe>,
}

/// One evidence source tried against the server: the metric, the view it comes from, and
/// whether the server answered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Probe {
    /// The metric (`waits`).
    pub metric: &'static str,
    /// Where it comes from (`sys.dm_os_wait_stats`).
    pub source: &'static str,
    /// `Err` with the server's words when the query failed.
    pub outcome: std::result::Result<(), String>,
}

/// The evidence sources the preflight reads, each with its query (all `SELECT`s or DBCC
/// reads in master; none creates anything).
pub const PROBES: [(&str, &str, &str); 4] = [
    (
        "waits",
        "sys.dm_os_wait_stats",
        "SELECT TOP (1) CAST(wait_type AS nvarchar(60)) AS wait_type FROM sys.dm_os_wait_stats;",
    ),
    (
        "file I/O",
        "sys.dm_io_virtual_file_stats",
        "SELECT TOP (1) CAST(file_id AS int) AS file_id FROM sys.dm_io_virtual_file_stats(DB_ID(), NULL);",
    ),
    (
        "performance counters",
        "sys.dm_os_performance_counters",
        "SELECT TOP (1) CAST(counter_name AS nvarchar(128)) AS counter_name FROM sys.dm_os_performance_counters;",
    ),
    (
        "files",
        "sys.database_files",
        "SELECT TOP (1) CAST(name AS nvarchar(128)) AS name FROM sys.database_files;",
    ),
];

/// One line of the report: `Some(true)` ok, `Some(false)` no, `None` unknown.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Check {
    /// What was checked.
    pub what: String,
    /// The outcome.
    pub ok: Option<bool>,
    /// Details.
    pub detail: String,
}

/// Whether one cell can run, and why not.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CellVerdict {
    /// `module::function`.
    pub benchmark: String,
    /// The cell.
    pub cell: String,
    /// Reasons it cannot run (empty: it can).
    pub blockers: Vec<String>,
    /// Metrics it will record as unavailable, and sizes that will be raised.
    pub notes: Vec<String>,
}

/// The preflight's findings.
#[derive(Debug, Clone)]
pub struct Preflight {
    /// The product's name (`Babelfish for PostgreSQL`).
    pub product: String,
    /// `host,port`.
    pub server: String,
    /// Server and login checks.
    pub checks: Vec<Check>,
    /// Per-cell decisions.
    pub cells: Vec<CellVerdict>,
}

fn mark(ok: Option<bool>) -> &'static str {
    match ok {
        Some(true) => "[ok]",
        Some(false) => "[no]",
        None => "[??]",
    }
}

fn yes(p: Option<bool>) -> &'static str {
    match p {
        Some(true) => "granted",
        Some(false) => "not granted",
        None => "unknown (the server could not say)",
    }
}

impl Preflight {
    /// Plain text, one line per check and per cell; a reason shared by several cells is written
    /// once, under `reasons`, and the cells name its number.
    pub fn render(&self) -> String {
        let mut out = format!(
            "dbbench preflight: {} at {} (nothing was created)\n",
            self.product, self.server
        );
        for c in &self.checks {
            out.push_str(&format!("{} {}: {}\n", mark(c.ok), c.what, c.detail));
        }
        out.push_str(&format!("cells ({}):\n", self.cells.len()));
        let mut legend: Vec<String> = Vec::new();
        for v in &self.cells {
            let head = format!(
                "{} {} {}",
                mark(Some(v.blockers.is_empty())),
                v.benchmark,
                v.cell
            );
            if v.blockers.is_empty() {
                out.push_str(&format!("{head}: can run"));
            } else {
                let named: Vec<String> = v
                    .blockers
                    .iter()
                    .map(|b| {
                        // "`a`, `b`: reason" names its options before the shared reason.
                        let (options, reason) = match b.split_once("`: ") {
                            Some((o, r)) if b.starts_with('`') => (format!("{o}` "), r),
                            _ => (String::new(), b.as_str()),
                        };
                        let n = match legend.iter().position(|l| l == reason) {
                            Some(i) => i + 1,
                            None => {
                                legend.push(reason.to_string());
                                legend.len()
                            }
                        };
                        format!("{options}[{n}]")
                    })
                    .collect();
                out.push_str(&format!("{head}: cannot run: {}", named.join("; ")));
            }
            if !v.notes.is_empty() {
                out.push_str(&format!(" (note: {})", v.notes.join("; ")));
            }
            out.push('\n');
        }
        if !legend.is_empty() {
            out.push_str("reasons:\n");
            for (i, reason) in legend.iter().enumerate() {
                out.push_str(&format!("[{}] {reason}\n", i + 1));
            }
        }
        out
    }
}

/// The checks and per-cell decisions for `answers`. Every `[ok]` stands on an answer of this
/// server: a permission the server reported, a view that answered a query, a statement the
/// product has.
pub fn evaluate(answers: &Answers, cells: &[PreflightCell<'_>]) -> Preflight {
    let p = &answers.permissions;
    let product = &answers.product;
    let can_create = super::permissions::may_create(p);
    let trace_flags = match (&answers.trace_status, product.has_trace_flags()) {
        (Ok(()), true) => p.sysadmin,
        _ => Some(false),
    };
    let tempdb = Some(
        answers.allow_instance_changes
            && product.refusals(&TEMPDB).is_empty()
            && p.alter_any_database.or(p.sysadmin) == Some(true),
    );
    let mut checks = server_checks(answers, trace_flags);
    checks.extend(answers.probes.iter().map(probe_check));
    checks.extend(access_checks(answers, can_create));
    checks.extend(tempdb_checks(answers, tempdb));
    checks.extend(limit_checks(answers));
    checks.push(shared_server_check(answers, cells));
    let cells = cells
        .iter()
        .map(|(bench, cell, spec, cache)| {
            let cold = answers.cold_cache || *cache == CacheState::Cold;
            decide(
                answers,
                (bench, cell),
                spec,
                cold,
                can_create,
                trace_flags,
                tempdb,
            )
        })
        .collect();
    Preflight {
        product: product.name().to_string(),
        server: answers.server.clone(),
        checks,
        cells,
    }
}

const TEMPDB: StorageSpec = StorageSpec {
    tempdb_files: Some(1),
    ..StorageSpec::DEFAULT
};

/// The verdict on one cell, `(benchmark, cell)`, whose windows start with a cold cache when
/// `cold` (its benchmark's `cache = "cold"`, or `DBBENCH_MSSQL_COLD_CACHE=1`).
fn decide(
    answers: &Answers,
    (bench, cell): (&str, &str),
    spec: &StorageSpec,
    cold: bool,
    can_create: Option<bool>,
    trace_flags: Option<bool>,
    tempdb: Option<bool>,
) -> CellVerdict {
    let refusals = answers.product.refusals(spec);
    // Server-wide facts (metrics that will be unavailable) are said once, in the checks.
    let mut notes = answers.floors.raised(spec);
    // What the product cannot do decides alone: anything else would repeat it in other words.
    let mut blockers: Vec<String> = Product::grouped(&refusals)
        .into_iter()
        .map(|(options, reason)| {
            let named: Vec<String> = options.iter().map(|o| format!("`{o}`")).collect();
            format!("{}: {reason}", named.join(", "))
        })
        .collect();
    if let Err(e) = provision::validate(spec) {
        blockers.push(e.to_string());
    }
    let _ = can_create;
    // Every statement the cell makes the run send, with the permission its docs name: the same
    // table the run's admission uses (findings A1, A3, A5, B5).
    blockers.extend(super::permissions::blockers(
        spec,
        cold,
        &answers.permissions,
    ));
    let changes = super::permissions::instance_changes(spec, cold);
    if let (false, true, false) = (
        changes.is_empty(),
        refusals.is_empty(),
        answers.allow_instance_changes,
    ) {
        let options: Vec<&str> = changes.iter().map(|c| c.option).collect();
        blockers.push(format!(
            "{}: the change is to the whole instance, which other sessions share; set {}=1 to \
             allow it",
            options.join(", "),
            super::instance::ALLOW_ENV
        ));
    }
    // The run's admission refuses every cell under a restart hook without the opt-in.
    if answers.restart_hook && !answers.allow_instance_changes {
        blockers.push(format!(
            "{}; set {}=1 to allow it",
            super::hooks::RESTART_WARNING,
            super::instance::ALLOW_ENV
        ));
    }
    if refusals.is_empty() {
        for change in changes {
            notes.push(format!("instance-wide: {}", change.short));
        }
    }
    if refusals.is_empty() {
        let placed = !spec.data_on.is_empty() && spec.log_on.is_some();
        if answers.dirs.is_err() && !placed && !provision::server_places(spec) {
            blockers.push(
                "its files need directories, and the server reports no default data/log \
                 directory: set DBBENCH_VOLUMES"
                    .into(),
            );
        }
        if spec.maxdop.is_some()
            && answers.product == Product::SqlServer
            && answers.major != 0
            && answers.major < 13
        {
            blockers.push("`maxdop`: per database it needs SQL Server 2016 or later".into());
        }
        match (spec.ifi, &answers.ifi) {
            (Some(true), IfiState::Disabled) => blockers.push(
                "`ifi`: `ifi = true`, but the service account lacks \"Perform volume \
                 maintenance tasks\""
                    .into(),
            ),
            (Some(true), IfiState::Unknown(why)) => blockers.push(format!(
                "`ifi`: `ifi = true`, but the IFI state is unreadable ({why})"
            )),
            (Some(true), _) if answers.ifi_off_flag_on => blockers.push(format!(
                "`ifi`: `ifi = true`, but trace flag {} is on globally and turns IFI off for \
                 every database; a flag a killed dbbench run left is in the server's record and \
                 undone by the next dbbench run that takes the server lock, anyone else's is \
                 theirs to turn off",
                super::ifi::TF_NO_IFI.map(|f| f.to_string()).join(" or ")
            )),
            // Every `ifi = false` cell sets trace flags: 1805/1806 and, to prove the zeroing,
            // 3004/3605 (finding A1). A login known not to be sysadmin is refused by the table.
            (Some(false), _)
                if trace_flags != Some(true) && answers.permissions.sysadmin != Some(false) =>
            {
                blockers.push(format!(
                    "`ifi`: `ifi = false` needs trace flags {} and {} (DBCC TRACEON, sysadmin), \
                     and this server could not confirm them",
                    super::ifi::TF_NO_IFI.map(|f| f.to_string()).join(" and "),
                    super::ifi::TF_LOG_ZEROING
                        .map(|f| f.to_string())
                        .join(" and ")
                ))
            }
            _ => {}
        }
        let touches_tempdb = spec.tempdb_files.is_some()
            || spec.tempdb_size.is_some()
            || spec.tempdb_growth.is_some();
        // The opt-in and ALTER on tempdb are said above (instance-wide changes, the table); a
        // product without tempdb changes is refused by its refusals.
        let _ = tempdb;
        // What the run will meet in tempdb: more files than declared, files already larger.
        if let (true, Ok(files)) = (touches_tempdb, &answers.tempdb_files) {
            match instance::tempdb_plan(&answers.floors.apply(spec), files, answers.platform) {
                Ok(plan) => notes.extend(plan.notes),
                Err(e) => blockers.push(format!("tempdb: {e}")),
            }
        }
    }
    CellVerdict {
        benchmark: bench.to_string(),
        cell: cell.to_string(),
        blockers,
        notes,
    }
}
