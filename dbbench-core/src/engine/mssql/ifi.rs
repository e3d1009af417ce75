//! Instant file initialization (IFI): reading the server's actual state, turning it off for a run
//! with the platform's trace flag when a cell asks for `ifi = false` (1806 on Windows, 1805 on
//! Linux, where SQL Server uses fallocate), and checking that the flag worked.
//!
//! Neither flag is in Microsoft's trace-flag documentation, so dbbench does not trust them: while it creates the database it also sets TF 3004 and 3605, which
//! write a `"Zeroing <file>"` line to the error log for every file SQL Server zero-fills, and then
//! looks for those lines. No line for a data file means IFI is still on, and the cell fails rather
//! than running in the wrong configuration. A requested state that cannot be reached (IFI on while
//! the service account lacks the privilege) is an error as well.

use super::instance::Change;
use super::tsql::literal;
use crate::model::error::{Error, Result};
use crate::model::value::Row;

/// The `SELECT` of the IFI state of the database engine service (2012 SP4, 2016 SP1 and later).
pub const STATE_SQL: &str =
    "SELECT CAST(instant_file_initialization_enabled AS nvarchar(1)) AS ifi \
     FROM sys.dm_server_services WHERE servicename LIKE N'SQL Server (%';";

/// The trace flag that disables IFI on Windows (community sources; not in Microsoft's
/// trace-flag documentation, hence the zeroing check).
pub const TF_NO_IFI_WINDOWS: u32 = 1806;

/// The trace flag that disables IFI (fallocate) on Linux, named by Bob Dorr (Microsoft, "SQL
/// Server on Linux: SetFileValidData vs fallocate").
pub const TF_NO_IFI_LINUX: u32 = 1805;

/// The trace flag that turns IFI off on `platform`.
pub fn no_ifi_flag(platform: super::provision::Platform) -> u32 {
    match platform {
        super::provision::Platform::Windows => TF_NO_IFI_WINDOWS,
        super::provision::Platform::Linux => TF_NO_IFI_LINUX,
    }
}

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
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IfiAction {
    /// The server is already in the requested state (or none was requested).
    Nothing,
    /// Turn IFI off with the platform's trace flag and verify it.
    DisableWithTraceFlag,
}

/// Decides how to reach `requested` from the server's `state`; `flag_on` says whether the
/// platform's IFI-off trace flag is already on globally. A state dbbench cannot reach is an error that says why.
pub fn decide(requested: Option<bool>, state: &IfiState, flag_on: bool) -> Result<IfiAction> {
    let unreachable = |reason: String| Error::Unsupported {
        option: "ifi",
        backend: "mssql",
        reason,
    };
    match (requested, state) {
        (None, _) => Ok(IfiAction::Nothing),
        (Some(true), _) if flag_on => Err(unreachable(
            "ifi = true was requested, but the IFI-off trace flag (1806/1805) is on globally; \
             dbbench does not clear flags it did not set: turn it off (DBCC TRACEOFF(<flag>, -1)) first"
                .into(),
        )),
        (Some(true), IfiState::Enabled) => Ok(IfiAction::Nothing),
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
        (Some(false), _) if flag_on => Ok(IfiAction::Nothing),
        (Some(false), IfiState::Disabled) => Ok(IfiAction::Nothing),
        // Unknown: the trace flag plus the zeroing check either reaches the state or proves it cannot.
        (Some(false), IfiState::Enabled | IfiState::Unknown(_)) => {
            Ok(IfiAction::DisableWithTraceFlag)
        }
    }
}

/// Turning trace flags on globally, undone by turning them off.
pub fn trace_flags_change(flags: &[u32], why: &str) -> Change {
    let list: Vec<String> = flags.iter().map(u32::to_string).collect();
    Change {
        what: format!("trace flag {} on globally ({why})", list.join(", ")),
        apply: format!("DBCC TRACEON({}, -1) WITH NO_INFOMSGS;", list.join(", ")),
        undo: vec![format!(
            "DBCC TRACEOFF({}, -1) WITH NO_INFOMSGS;",
            list.join(", ")
        )],
    }
}

/// The error-log lines about zeroing files of database `name`, newest log only.
pub fn zeroing_log_sql(name: &str) -> String {
    format!(
        "EXEC sys.xp_readerrorlog 0, 1, {}, {};",
        literal("Zeroing"),
        literal(name)
    )
}

/// The data files (physical paths) that have no "Zeroing" line in `rows` of [`zeroing_log_sql`]:
/// empty when every data file was zero-filled, that is when IFI really was off.
pub fn unzeroed_files(rows: &[Row], data_files: &[String]) -> Result<Vec<String>> {
    let mut texts = Vec::with_capacity(rows.len());
    for row in rows {
        texts.push(row.get_named::<String>("Text")?.to_lowercase());
    }
    Ok(data_files
        .iter()
        .filter(|path| {
            let path = path.to_lowercase();
            !texts
                .iter()
                .any(|t| t.contains("zeroing") && t.contains(&path))
        })
        .cloned()
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::value::Value;
    use std::sync::Arc;

    fn rows(columns: &[&str], values: Vec<Vec<Value>>) -> Vec<Row> {
        let columns: Arc<[String]> = columns.iter().map(|c| c.to_string()).collect();
        values
            .into_iter()
            .map(|v| Row::new(columns.clone(), v))
            .collect()
    }

    #[test]
    fn reads_the_service_state() {
        let y = rows(&["ifi"], vec![vec![Value::Text("Y".into())]]);
        assert_eq!(IfiState::from_rows(&y), IfiState::Enabled);
        let n = rows(&["ifi"], vec![vec![Value::Text("N".into())]]);
        assert_eq!(IfiState::from_rows(&n), IfiState::Disabled);
        assert!(matches!(IfiState::from_rows(&[]), IfiState::Unknown(_)));
        let null = rows(&["ifi"], vec![vec![Value::Null]]);
        assert!(matches!(IfiState::from_rows(&null), IfiState::Unknown(_)));
    }

    #[test]
    fn decides_or_refuses() {
        use IfiAction::*;
        assert_eq!(decide(None, &IfiState::Disabled, false).unwrap(), Nothing);
        assert_eq!(
            decide(Some(false), &IfiState::Enabled, false).unwrap(),
            DisableWithTraceFlag
        );
        assert_eq!(
            decide(Some(false), &IfiState::Enabled, true).unwrap(),
            Nothing
        );
        assert_eq!(
            decide(Some(false), &IfiState::Disabled, false).unwrap(),
            Nothing
        );
        assert_eq!(
            decide(Some(false), &IfiState::Unknown("x".into()), false).unwrap(),
            DisableWithTraceFlag
        );
        assert_eq!(
            decide(Some(true), &IfiState::Enabled, false).unwrap(),
            Nothing
        );
        let err = decide(Some(true), &IfiState::Disabled, false)
            .unwrap_err()
            .to_string();
        assert!(err.contains("Perform volume maintenance tasks"), "{err}");
        assert!(decide(Some(true), &IfiState::Enabled, true).is_err());
        assert!(decide(Some(true), &IfiState::Unknown("no view".into()), false).is_err());
    }

    #[test]
    fn reads_trace_status() {
        let on = rows(
            &["TraceFlag", "Status", "Global", "Session"],
            vec![vec![
                Value::Int(1806),
                Value::Int(1),
                Value::Int(1),
                Value::Int(0),
            ]],
        );
        assert!(is_on_globally(&on).unwrap());
        let off = rows(
            &["TraceFlag", "Status", "Global", "Session"],
            vec![vec![
                Value::Int(1806),
                Value::Int(0),
                Value::Int(0),
                Value::Int(0),
            ]],
        );
        assert!(!is_on_globally(&off).unwrap());
    }

    #[test]
    fn finds_zeroing_lines_for_each_data_file() {
        let log = rows(
            &["LogDate", "ProcessInfo", "Text"],
            vec![
                vec![
                    Value::Text("2024-05-01 10:00:00.000".into()),
                    Value::Text("spid52".into()),
                    Value::Text("Zeroing C:\\SQLData\\dbbench_x_data_1.mdf from page 0 to 128000 (0x0 to 0x3e800000)".into()),
                ],
                vec![
                    Value::Text("2024-05-01 10:00:01.000".into()),
                    Value::Text("spid52".into()),
                    Value::Text("Zeroing L:\\Logs\\dbbench_x_log.ldf from page 0 to 51200 (0x0 to 0x19000000)".into()),
                ],
            ],
        );
        let files = vec![
            "C:\\SQLData\\dbbench_x_data_1.mdf".to_string(),
            "C:\\SQLData\\dbbench_x_data_2.ndf".to_string(),
        ];
        assert_eq!(
            unzeroed_files(&log, &files).unwrap(),
            vec!["C:\\SQLData\\dbbench_x_data_2.ndf".to_string()]
        );
        assert!(unzeroed_files(&log, &files[..1]).unwrap().is_empty());
    }

    #[test]
    fn each_platform_gets_its_documented_flag() {
        use super::super::provision::Platform;
        assert_eq!(no_ifi_flag(Platform::Windows), 1806);
        assert_eq!(no_ifi_flag(Platform::Linux), 1805);
    }

    #[test]
    fn trace_flag_statements() {
        insta::assert_snapshot!(format!(
            "{}\n{}\n{}\n{}\n{}",
            STATE_SQL,
            trace_status_sql(TF_NO_IFI_WINDOWS),
            super::super::instance::render(&[
                trace_flags_change(&[TF_NO_IFI_WINDOWS], "ifi = false"),
                trace_flags_change(&TF_LOG_ZEROING, "verify that data files are zero-filled"),
            ]),
            zeroing_log_sql("dbbench_x"),
            ""
        ));
    }
}
