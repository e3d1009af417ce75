//! The preflight a DBA runs before the first benchmark: it connects with `DBBENCH_MSSQL`, creates
//! nothing, and reports what this server and login allow (product and version, IFI, trace flags,
//! Extended Events, the permissions behind each metric, default paths, tempdb changes) and, for
//! the cells the caller passes, which can run and why not. [`Preflight::render`] is plain text,
//! one line per check, readable when piped to a file.
//!
//! The decisions ([`evaluate`]) are a pure function of recorded server answers, so they are
//! tested without a server; [`run`] only gathers the answers.

use super::floors::Floors;
use super::identity::Product;
use super::ifi::IfiState;
use super::provision::{self, ServerDirs};
use super::{ConnectSettings, ServerFacts};
use crate::model::config::StorageSpec;
use crate::model::error::Result;
use crate::model::value::Row;

/// The login's permissions, each `NULL` where the server cannot answer (Babelfish, Azure).
pub const PERMISSIONS_SQL: &str = "SELECT \
     CAST(IS_SRVROLEMEMBER('sysadmin') AS int) AS sysadmin, \
     CAST(HAS_PERMS_BY_NAME(NULL, NULL, 'ALTER SETTINGS') AS int) AS alter_settings, \
     CAST(HAS_PERMS_BY_NAME(NULL, NULL, 'ALTER ANY EVENT SESSION') AS int) AS alter_any_event_session, \
     CAST(HAS_PERMS_BY_NAME(NULL, NULL, 'VIEW SERVER STATE') AS int) AS view_server_state, \
     CAST(HAS_PERMS_BY_NAME(N'master', N'DATABASE', 'VIEW DATABASE STATE') AS int) AS view_database_state, \
     CAST(HAS_PERMS_BY_NAME(NULL, NULL, 'ALTER ANY DATABASE') AS int) AS alter_any_database, \
     CAST(HAS_PERMS_BY_NAME(NULL, NULL, 'CREATE ANY DATABASE') AS int) AS create_any_database;";

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
    /// The login's permissions.
    pub permissions: Permissions,
    /// Default directories, or what to set.
    pub dirs: std::result::Result<ServerDirs, String>,
    /// Minimum sizes.
    pub floors: Floors,
    /// `DBBENCH_MSSQL_ALLOW_INSTANCE_CHANGES=1`.
    pub allow_instance_changes: bool,
}

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
    /// Plain text, one line per check and per cell.
    pub fn render(&self) -> String {
        let mut out = format!(
            "dbbench preflight: SQL Server at {} (nothing was created)\n",
            self.server
        );
        for c in &self.checks {
            out.push_str(&format!("{} {}: {}\n", mark(c.ok), c.what, c.detail));
        }
        out.push_str(&format!("cells ({}):\n", self.cells.len()));
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
                out.push_str(&format!("{head}: cannot run: {}", v.blockers.join("; ")));
            }
            if !v.notes.is_empty() {
                out.push_str(&format!(" (note: {})", v.notes.join("; ")));
            }
            out.push('\n');
        }
        out
    }
}

/// The checks and per-cell decisions for `answers`.
pub fn evaluate(answers: &Answers, cells: &[(&str, &str, StorageSpec)]) -> Preflight {
    let p = &answers.permissions;
    let can_create = p
        .create_any_database
        .or(p.alter_any_database)
        .or(p.sysadmin);
    let trace_flags = p.sysadmin;
    let xe = if answers.product.has_server_event_sessions() {
        p.alter_any_event_session.or(p.sysadmin)
    } else {
        Some(false)
    };
    let tempdb =
        Some(answers.allow_instance_changes && p.alter_any_database.or(p.sysadmin) == Some(true));
    let ifi_readable = !matches!(answers.ifi, IfiState::Unknown(_));
    let checks = vec![
        Check { what: "server".into(), ok: Some(answers.product == Product::SqlServer), detail: format!(
            "{} on {}{}",
            answers.version,
            format!("{:?}", answers.platform).to_lowercase(),
            if answers.product == Product::SqlServer {
                String::new()
            } else {
                "; not Microsoft SQL Server: options it cannot honour are refused per cell".into()
            }
        ) },
        Check { what: "IFI state readable".into(), ok: Some(ifi_readable), detail: answers.ifi.describe() },
        Check { what: "trace flags (DBCC TRACEON … -1, needs sysadmin)".into(), ok: trace_flags, detail: format!("sysadmin {}; ALTER SETTINGS {} (not enough for DBCC TRACEON)", yes(p.sysadmin), yes(p.alter_settings)) },
        Check { what: "server-scoped Extended Events (ALTER ANY EVENT SESSION)".into(), ok: xe, detail: if answers.product.has_server_event_sessions() { yes(p.alter_any_event_session.or(p.sysadmin)).into() } else { format!("{} has no server-scoped event sessions; growth events will be unavailable", answers.product.name()) } },
        Check { what: "VIEW SERVER STATE".into(), ok: p.view_server_state.or(p.sysadmin), detail: format!("{}; waits, counters, file I/O and IFI state need it", yes(p.view_server_state.or(p.sysadmin))) },
        Check { what: "VIEW DATABASE STATE".into(), ok: if p.view_database_state == Some(true) || can_create == Some(true) {
                Some(true)
            } else {
                p.view_database_state
            }, detail: "sys.dm_db_log_info (VLF counts) needs it; the login owns the databases it creates, which includes it".into() },
        Check { what: "create databases (CREATE ANY DATABASE / ALTER ANY DATABASE)".into(), ok: can_create, detail: format!("CREATE ANY DATABASE {}, ALTER ANY DATABASE {}", yes(p.create_any_database), yes(p.alter_any_database)) },
        Check { what: "default paths".into(), ok: Some(answers.dirs.is_ok()), detail: match &answers.dirs { Ok(d) => format!("data {}, log {}", d.data, d.log), Err(why) => why.clone() } },
        Check { what: "tempdb changes".into(), ok: tempdb, detail: format!("{}=1 {}; ALTER ANY DATABASE {}", super::instance::ALLOW_ENV, if answers.allow_instance_changes { "set" } else { "not set" }, yes(p.alter_any_database.or(p.sysadmin))) },
        Check { what: "size floors".into(), ok: Some(true), detail: answers.floors.describe() },
    ];
    let cells = cells
        .iter()
        .map(|(bench, cell, spec)| {
            decide(
                answers,
                bench,
                cell,
                spec,
                can_create,
                trace_flags,
                tempdb,
                xe,
            )
        })
        .collect();
    Preflight {
        server: answers.server.clone(),
        checks,
        cells,
    }
}

#[allow(clippy::too_many_arguments)]
fn decide(
    answers: &Answers,
    bench: &str,
    cell: &str,
    spec: &StorageSpec,
    can_create: Option<bool>,
    trace_flags: Option<bool>,
    tempdb: Option<bool>,
    xe: Option<bool>,
) -> CellVerdict {
    let mut blockers: Vec<String> = answers
        .product
        .refusals(spec)
        .into_iter()
        .map(|(o, r)| format!("`{o}`: {r}"))
        .collect();
    if let Err(e) = provision::validate(spec) {
        blockers.push(e.to_string());
    }
    if can_create == Some(false) {
        blockers.push("the login may not create databases (grant CREATE ANY DATABASE)".into());
    }
    if answers.dirs.is_err() && (spec.data_on.is_empty() || spec.log_on.is_none()) {
        blockers.push("no default data/log directory is known; set DBBENCH_VOLUMES".into());
    }
    if spec.maxdop.is_some() && answers.major != 0 && answers.major < 13 {
        blockers.push("`maxdop` per database needs SQL Server 2016 or later".into());
    }
    match (spec.ifi, &answers.ifi) {
        (Some(true), IfiState::Disabled) => blockers.push("`ifi = true`: the service account lacks \"Perform volume maintenance tasks\"".into()),
        (Some(true), IfiState::Unknown(why)) => blockers.push(format!("`ifi = true`: the IFI state is unreadable ({why})")),
        (Some(false), IfiState::Enabled | IfiState::Unknown(_)) if trace_flags != Some(true) => blockers.push(format!(
            "`ifi = false`: IFI is on (or unknown) and turning it off needs trace flag {} (sysadmin)",
            super::ifi::no_ifi_flag(answers.platform)
        )),
        _ => {}
    }
    let touches_tempdb =
        spec.tempdb_files.is_some() || spec.tempdb_size.is_some() || spec.tempdb_growth.is_some();
    if touches_tempdb && tempdb != Some(true) {
        blockers.push(format!(
            "tempdb options need {}=1 and ALTER ANY DATABASE",
            super::instance::ALLOW_ENV
        ));
    }
    let mut notes = answers.floors.raised(spec);
    if answers
        .permissions
        .view_server_state
        .or(answers.permissions.sysadmin)
        != Some(true)
    {
        notes.push("waits, counters and file I/O will be unavailable (VIEW SERVER STATE)".into());
    }
    if xe != Some(true) {
        notes.push("growth events will be unavailable (server-scoped Extended Events)".into());
    }
    CellVerdict {
        benchmark: bench.to_string(),
        cell: cell.to_string(),
        blockers,
        notes,
    }
}

/// Connects with `settings`, gathers the answers (creating nothing) and evaluates `cells`.
pub async fn run(
    settings: &ConnectSettings,
    cells: &[(&str, &str, StorageSpec)],
    allow_instance_changes: bool,
) -> Result<Preflight> {
    let mut conn = settings.connect(Some("master")).await?;
    let facts = ServerFacts::read(&mut conn, &crate::model::volume::Volumes::from_env()?).await?;
    let permissions = match conn.query(PERMISSIONS_SQL, &[]).await {
        Ok(rows) => Permissions::from_rows(&rows),
        Err(_) => Permissions::default(),
    };
    let answers = Answers {
        server: settings.server().to_string(),
        product: facts.product.clone(),
        version: facts.version.clone(),
        major: facts.major,
        platform: facts.platform,
        ifi: facts.ifi.clone(),
        permissions,
        dirs: facts.dirs.clone(),
        floors: facts.floors.clone(),
        allow_instance_changes,
    };
    Ok(evaluate(&answers, cells))
}
