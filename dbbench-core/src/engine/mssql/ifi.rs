//! Instant file initialization (IFI): reading the server's actual state, turning it off for a run
//! when a cell asks for `ifi = false`, and proving that data files really were zero-filled.
//!
//! The state comes from `sys.dm_server_services` (2016 SP1+), and where that view has no row for
//! the engine (SQL Server on Linux) or cannot be read, from the error log's startup line
//! `Database Instant File Initialization: enabled|disabled` (docs: "Database instant file
//! initialization"). The flag that turns IFI off at runtime is undocumented: community sources
//! name 1806, Microsoft's Bob Dorr names 1805 (Linux, "SetFileValidData vs fallocate"). dbbench
//! turns on both (those not already on) and trusts neither: for every `ifi = false` cell, also
//! where the server already reports IFI off, it sets TF 3004 and 3605 while it creates the
//! database, which write a `"Zeroing <file>"` line to the error log for every file SQL Server
//! zero-fills, and then looks for those lines. No line for a data file means IFI is still on, and
//! the cell fails rather than running in the wrong configuration. A requested state that cannot
//! be reached (IFI on while the service account lacks the privilege) is an error as well.

use super::instance::Change;
use super::tsql::literal;
use crate::model::error::{Error, Result};
use crate::model::value::Row;

/// The `SELECT` of the IFI state of the database engine service (2012 SP4, 2016 SP1 and later).
pub const STATE_SQL: &str =
    "SELECT CAST(instant_file_initialization_enabled AS nvarchar(1)) AS ifi \
     FROM sys.dm_server_services WHERE servicename LIKE N'SQL Server (%';";

/// The error log's startup line about IFI in log `log` (0 = current, 1.. = archives).
pub fn errorlog_state_sql(log: u32) -> String {
    format!("EXEC sys.xp_readerrorlog {log}, 1, N'Database Instant File Initialization';")
}

/// How many error logs are searched for the startup line: the current one and SQL Server's
/// default six archives (a DBA who cycles the log nightly still has it in an archive).
pub const ERRORLOGS_SEARCHED: u32 = 7;

/// The trace flags that may turn IFI off at runtime, both set for `ifi = false`: 1805 (Bob
/// Dorr, Microsoft: disables fallocate on Linux) and 1806 (community sources, Windows). Neither
/// is in Microsoft's trace-flag documentation, hence the zeroing check.
pub const TF_NO_IFI: [u32; 2] = [1805, 1806];

/// The trace flags that log file zeroing to the error log.
pub const TF_LOG_ZEROING: [u32; 2] = [3004, 3605];

/// What the server says about IFI.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum IfiState {
    /// The service account may skip zeroing data files.
    Enabled,
    /// Data files are zero-filled.
    Disabled,
    /// The server could not tell (older version, Azure, permission); the reason.
    Unknown(String),
}

impl IfiState {
    /// The state from the rows of [`STATE_SQL`].
    pub fn from_rows(rows: &[Row]) -> IfiState {
        match rows.first().map(|r| r.get::<Option<String>>(0)) {
            Some(Ok(Some(v))) if v.trim().eq_ignore_ascii_case("Y") => IfiState::Enabled,
            Some(Ok(Some(v))) if v.trim().eq_ignore_ascii_case("N") => IfiState::Disabled,
            Some(Ok(other)) => IfiState::Unknown(format!(
                "sys.dm_server_services reports {other:?} for instant_file_initialization_enabled"
            )),
            Some(Err(e)) => IfiState::Unknown(e.to_string()),
            None => {
                IfiState::Unknown("sys.dm_server_services has no SQL Server service row".into())
            }
        }
    }

    /// The state from the rows of [`errorlog_state_sql`], `None` when no startup line is there.
    pub fn from_errorlog(rows: &[Row]) -> Option<IfiState> {
        rows.iter().rev().find_map(|r| {
            let text = r.get_named::<String>("Text").ok()?.to_lowercase();
            const LINE: &str = "database instant file initialization:";
            let rest = &text[text.find(LINE)? + LINE.len()..];
            match rest.trim_start() {
                t if t.starts_with("enabled") => Some(IfiState::Enabled),
                t if t.starts_with("disabled") => Some(IfiState::Disabled),
                _ => None,
            }
        })
    }

    /// The state as recorded in the results: `on`, `off` or `unknown (why)`.
    pub fn describe(&self) -> String {
        match self {
            IfiState::Enabled => "on".into(),
            IfiState::Disabled => "off".into(),
            IfiState::Unknown(why) => format!("unknown ({why})"),
        }
    }
}

/// `DBCC TRACESTATUS` of `flag`, globally.
pub fn trace_status_sql(flag: u32) -> String {
    format!("DBCC TRACESTATUS({flag}, -1) WITH NO_INFOMSGS;")
}

/// Whether the rows of [`trace_status_sql`] say the flag is on globally.
pub fn is_on_globally(rows: &[Row]) -> Result<bool> {
    match rows.first() {
        None => Ok(false),
        Some(row) => Ok(row.get_named::<i64>("Global")? == 1),
    }
}

/// What to do for a cell's `ifi` option.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct IfiPlan {
    /// The IFI-off trace flags to turn on globally for the repetition (those not already on).
    pub set: Vec<u32>,
    /// Prove with the zeroing lines that every data file is zero-filled (every `ifi = false`
    /// cell).
    pub verify: bool,
}

/// Decides how to reach `requested` from the server's `state`; `flags_on` are the IFI-off trace
/// flags already on globally. A state dbbench cannot reach is an error that says why.
pub fn decide(requested: Option<bool>, state: &IfiState, flags_on: &[u32]) -> Result<IfiPlan> {
    let unreachable = |reason: String| Error::Unsupported {
        option: "ifi",
        backend: "mssql",
        reason,
    };
    match (requested, state) {
        (None, _) => Ok(IfiPlan::default()),
        (Some(true), _) if !flags_on.is_empty() => Err(unreachable(format!(
            "ifi = true was requested, but trace flag {} (which may turn IFI off) is on \
             globally; dbbench does not clear flags it did not set: turn it off \
             (DBCC TRACEOFF(<flag>, -1)) first",
            join(flags_on)
        ))),
        (Some(true), IfiState::Enabled) => Ok(IfiPlan::default()),
        (Some(true), IfiState::Disabled) => Err(unreachable(
            "ifi = true was requested, but the SQL Server service account lacks the \"Perform \
             volume maintenance tasks\" right (SE_MANAGE_VOLUME_NAME); grant it and restart the \
             service"
                .into(),
        )),
        (Some(true), IfiState::Unknown(why)) => Err(unreachable(format!(
            "ifi = true was requested, but this server cannot report its IFI state ({why}), so \
             the run could silently zero-fill its data files"
        ))),
        // Whatever the state reported (on Linux the service view's answer is undocumented, and
        // a reported "off" may be wrong): both flags (those not on yet), proven by the zeroing
        // check (finding A2).
        (Some(false), _) => Ok(IfiPlan {
            set: TF_NO_IFI
                .iter()
                .copied()
                .filter(|f| !flags_on.contains(f))
                .collect(),
            verify: true,
        }),
    }
}

fn join(flags: &[u32]) -> String {
    flags
        .iter()
        .map(u32::to_string)
        .collect::<Vec<_>>()
        .join(" and ")
}

/// The startup line of the current error log or one of its archives: the state, the log's
/// number, or why there is none.
async fn errorlog_state(
    conn: &mut super::MssqlConnection,
) -> std::result::Result<(IfiState, u32), String> {
    let mut why = String::from("no startup line in the error logs searched");
    for log in 0..ERRORLOGS_SEARCHED {
        match conn.query(&errorlog_state_sql(log), &[]).await {
            Ok(rows) => {
                if let Some(state) = IfiState::from_errorlog(&rows) {
                    return Ok((state, log));
                }
            }
            // No such archive, or no permission to read the log: stop here.
            Err(e) => {
                if log == 0 {
                    why = format!("xp_readerrorlog: {e}");
                }
                break;
            }
        }
    }
    Err(why)
}

/// The IFI state through `conn`, with where it came from. On Windows `sys.dm_server_services`
/// first, else the startup line of the current error log or one of its archives. On Linux the
/// view does return a row for the engine, but what its IFI column means there is undocumented
/// (its service account is a fake "LocalSystem": sp_Blitz #3702), so the startup line, which SQL
/// Server on Linux writes too (mssql-docker #776), decides there, and the view only where the log
/// has no line (finding A2 of the third review).
pub async fn read_state(
    conn: &mut super::MssqlConnection,
    platform: super::provision::Platform,
) -> (IfiState, String) {
    let view = match conn.query(STATE_SQL, &[]).await {
        Ok(rows) => IfiState::from_rows(&rows),
        Err(e) => IfiState::Unknown(e.to_string()),
    };
    let linux = platform == super::provision::Platform::Linux;
    if !linux && !matches!(view, IfiState::Unknown(_)) {
        return (view, "sys.dm_server_services".into());
    }
    let view_said = match &view {
        IfiState::Unknown(why) => why.clone(),
        known if linux => format!(
            "it says {} (undocumented on Linux, not used)",
            known.describe()
        ),
        known => known.describe(),
    };
    match errorlog_state(conn).await {
        Ok((state, log)) => (
            state,
            format!(
                "the error log's startup line (xp_readerrorlog {log}); sys.dm_server_services: \
                 {view_said}"
            ),
        ),
        Err(log_why) => match view {
            IfiState::Unknown(view_why) => (
                IfiState::Unknown(format!("{view_why}; error log: {log_why}")),
                "none".into(),
            ),
            known => (
                known,
                format!(
                    "sys.dm_server_services (undocumented on Linux: the error log has no \
                     startup line: {log_why})"
                ),
            ),
        },
    }
}

/// Which of [`TF_NO_IFI`] are on globally through `conn`; a flag whose status cannot be read
/// counts as off.
pub async fn flags_on(conn: &mut super::MssqlConnection) -> Result<Vec<u32>> {
    let mut on = Vec::new();
    for flag in TF_NO_IFI {
        if let Ok(rows) = conn.query(&trace_status_sql(flag), &[]).await {
            if is_on_globally(&rows)? {
                on.push(flag);
            }
        }
    }
    Ok(on)
}

/// How to reach the cell's IFI state, read fresh through `conn` (a restart hook may have
/// changed it).
pub async fn plan(
    conn: &mut super::MssqlConnection,
    requested: Option<bool>,
    platform: super::provision::Platform,
) -> Result<IfiPlan> {
    if requested.is_none() {
        return Ok(IfiPlan::default());
    }
    let (state, _) = read_state(conn, platform).await;
    let on = flags_on(conn).await?;
    decide(requested, &state, &on)
}

/// What the zeroing lines prove.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Zeroing {
    /// Every data file was zero-filled: IFI really is off.
    Verified,
    /// These data files were not: IFI is still on; the sentence that fails the cell.
    NotZeroed(String),
    /// It could not be checked; why (recorded as `unavailable.ifi_verification`).
    Unverified(String),
}

/// Judges the outcome of [`zeroing_log_sql`] for `data_files`, with `flags_set` the IFI-off flags
/// dbbench turned on for this repetition (empty: the server already reported IFI off, or they
/// were on before).
pub fn judge_zeroing(log: Result<Vec<Row>>, data_files: &[String], flags_set: &[u32]) -> Zeroing {
    let how = if flags_set.is_empty() {
        "the server reports IFI off (or its IFI-off trace flags were already on)".to_string()
    } else {
        format!("trace flag {} is on", join(flags_set))
    };
    if data_files.is_empty() {
        return Zeroing::Unverified(format!(
            "{how}, but the data files' paths are unknown (the server placed them and did not \
             list them), so the error log proves nothing"
        ));
    }
    match log.and_then(|rows| unzeroed_files(&rows, data_files)) {
        Ok(unzeroed) if unzeroed.is_empty() => Zeroing::Verified,
        Ok(unzeroed) => Zeroing::NotZeroed(format!(
            "{how}, yet SQL Server did not zero-fill {}: IFI cannot be turned off at runtime \
             on this build; remove the service account's \"Perform volume maintenance tasks\" \
             right and restart the service",
            unzeroed.join(", ")
        )),
        // Reading the error log needs sysadmin (sp_readerrorlog docs) or EXECUTE granted on
        // xp_readerrorlog; the run goes on, marked unverified.
        Err(e) => Zeroing::Unverified(format!("{how}, but zeroing was not verified: {e}")),
    }
}

/// Judges the outcome of [`zeroing_log_sql`] for an `ifi = true` cell: `Verified` when no data
/// file has a `Zeroing` line (IFI in effect), `NotZeroed` with the sentence that fails the cell
/// when one has (the reported state was wrong), `Unverified` when it could not be read.
pub fn judge_instant(log: Result<Vec<Row>>, data_files: &[String]) -> Zeroing {
    if data_files.is_empty() {
        return Zeroing::Unverified(
            "ifi = true, but the data files' paths are unknown (the server placed them and did \
             not list them), so the error log proves nothing"
                .into(),
        );
    }
    match log.and_then(|rows| unzeroed_files(&rows, data_files)) {
        Ok(unzeroed) if unzeroed.len() == data_files.len() => Zeroing::Verified,
        Ok(unzeroed) => {
            let zeroed: Vec<&String> = data_files
                .iter()
                .filter(|f| !unzeroed.contains(f))
                .collect();
            Zeroing::NotZeroed(format!(
                "ifi = true, and the server reports IFI on, yet SQL Server zero-filled {}: \
                 instant file initialization is not in effect (the service account lacks \
                 \"Perform volume maintenance tasks\", TDE is on, or an IFI-off trace flag is set)",
                zeroed
                    .iter()
                    .map(|s| s.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            ))
        }
        Err(e) => Zeroing::Unverified(format!("ifi = true, but it was not verified: {e}")),
    }
}

/// Turning trace flags on globally, undone by turning them off.
pub fn trace_flags_change(flags: &[u32], why: &str) -> Change {
    let list: Vec<String> = flags.iter().map(u32::to_string).collect();
    Change {
        what: format!("trace flag {} on globally ({why})", list.join(", ")),
        apply: format!("DBCC TRACEON({}, -1) WITH NO_INFOMSGS;", list.join(", ")),
        undo: vec![super::undo::Undo::TraceOff {
            flags: flags.to_vec(),
        }],
    }
}

/// The server's clock now, as `xp_readerrorlog`'s start-time argument takes it: read just before
/// the instance changes of a creation, it bounds the zeroing proof to this run.
pub const NOW_SQL: &str = "SELECT CONVERT(nvarchar(23), GETDATE(), 121) AS now;";

/// The error-log lines about zeroing files of database `name` written at or after `since` (the
/// server's [`NOW_SQL`] before the creation), newest log only. Without the bound a line of an
/// earlier run's database of the same name would prove a zero-fill that never happened (finding
/// C1 of the third review); `since` empty (a server that gave no time) leaves it unbounded.
pub fn zeroing_log_sql(name: &str, since: &str) -> String {
    if since.is_empty() {
        return format!(
            "EXEC sys.xp_readerrorlog 0, 1, {}, {};",
            literal("Zeroing"),
            literal(name)
        );
    }
    format!(
        "EXEC sys.xp_readerrorlog 0, 1, {}, {}, {}, {};",
        literal("Zeroing"),
        literal(name),
        literal(since),
        literal("9999-12-31 23:59:59.997")
    )
}

/// The data files (physical paths) that have no "Zeroing" line in `rows` of [`zeroing_log_sql`]:
/// empty when every data file was zero-filled, that is when IFI really was off. A line is matched
/// on the file's name, not its whole path: early SQL Server on Linux builds logged Windows-style
/// paths (mssql-docker #52), and the name (`<db>_data_1.mdf`) is this run's alone (finding A7).
pub fn unzeroed_files(rows: &[Row], data_files: &[String]) -> Result<Vec<String>> {
    let mut texts = Vec::with_capacity(rows.len());
    for row in rows {
        texts.push(row.get_named::<String>("Text")?.to_lowercase());
    }
    Ok(data_files
        .iter()
        .filter(|path| {
            let path = path.to_lowercase();
            let name = path.rsplit(['/', '\\']).next().unwrap_or(&path).to_string();
            !texts.iter().any(|t| {
                t.contains("zeroing") && t.split(['/', '\\', ' ']).any(|part| part == name)
            })
        })
        .cloned()
        .collect())
}

#[cfg(test)]
mod tests;
