//! The instance-level behaviour of the scripted server: the IFI state as each source reports it,
//! global trace flags, the error log (the IFI startup line and the `Zeroing` lines that trace
//! flags 3004 + 3605 write), tempdb's files with their startup and current sizes, and whether the
//! login may `KILL`. Each answer is the real product's, with where it comes from:
//!
//! - `sys.dm_server_services.instant_file_initialization_enabled` (2016 SP1+,
//!   https://learn.microsoft.com/sql/relational-databases/system-dynamic-management-views/sys-dm-server-services-transact-sql)
//!   is documented for Windows services. On SQL Server on Linux the view does return a row for
//!   the engine, with the fake service account "LocalSystem" (sp_Blitz issue #3702,
//!   https://github.com/BrentOzarULTD/SQL-Server-First-Responder-Kit/issues/3702); what its IFI
//!   column says there is undocumented, so the Linux model answers `N` whatever IFI does: only
//!   the error log may be believed there.
//! - The error log's startup line `Database Instant File Initialization: enabled|disabled …`
//!   (docs: "Database instant file initialization"), read with `xp_readerrorlog`.
//! - `DBCC TRACESTATUS(n, -1)` answers a row for any number (Status/Global/Session 0 when off):
//!   it proves nothing about what the flag does. Which flag turns IFI off is undocumented (1806
//!   per community sources, 1805 per Bob Dorr for Linux), so a model names the flags that work on
//!   its build ([`InstanceModel::disabling_flags`]) and only zeroing shows it.
//! - `xp_readerrorlog <log>, <type>, <search1>, <search2>, <start>, <end>` returns only lines
//!   containing both search strings and, when a start time is given, logged at or after it
//!   (community documentation of the undocumented procedure, e.g. MSSQLTips "Reading the SQL
//!   Server log files using TSQL"). The model's clock starts at 2026-12-01 10:00:00 and moves one
//!   second per `GETDATE()` read and per logged line, so "before" and "after" are well defined.
//! - With 3004 and 3605 on, every zero-filled file of `CREATE DATABASE` gets a line
//!   `Zeroing <path> from page 0 to <n> (0x0 to 0x…)` in the error log; log files are always
//!   zeroed, data files only without IFI.
//! - `ALTER DATABASE … MODIFY FILE (SIZE = …)` fails with error 5039 "MODIFY FILE failed.
//!   Specified size is less than or equal to current size." when the size is not above the
//!   *current* size (ALTER DATABASE File and Filegroup Options); tempdb's current size is in
//!   `tempdb.sys.database_files`, its startup size in `sys.master_files`.
//! - SQL Server setup (2016+) creates one tempdb data file per logical core, up to 8 (Bob Dorr,
//!   "SQL 2016 – It Just Runs Faster: Automatic TEMPDB Configuration").
//! - `KILL` without `ALTER ANY CONNECTION` fails with error 6102 "User does not have permission to
//!   use the KILL statement." (KILL docs, Permissions).
//! - `@@SERVERNAME` (https://learn.microsoft.com/sql/t-sql/functions/servername-transact-sql),
//!   `SERVERPROPERTY('MachineName')` and `SERVERPROPERTY('ProductMajorVersion')`
//!   (https://learn.microsoft.com/sql/t-sql/functions/serverproperty-transact-sql) answer the
//!   server's own names and major version, whatever the client called it.
//! - Extended properties of master (class 0): `sp_addextendedproperty` adds one, failing with
//!   error 15233 "Property cannot be added. Property '…' already exists" for a name in use;
//!   `sp_dropextendedproperty` drops one, failing with 15217 "Property cannot be updated or
//!   deleted. Property '…' does not exist" (sp_addextendedproperty / sp_dropextendedproperty
//!   docs, Database Engine errors); `sys.extended_properties` lists them.
//! - `sys.dm_tran_active_snapshot_database_transactions` has one row per active snapshot
//!   transaction (its docs page); the model's count is set by a test.
//! - msdb's backup history: `BACKUP DATABASE` adds a database's rows, and
//!   `msdb.dbo.sp_delete_database_backuphistory @database_name` deletes them, for sysadmin only
//!   (sp_delete_database_backuphistory docs: "Requires membership in the sysadmin fixed server
//!   role"); `IS_SRVROLEMEMBER(N'sysadmin')` answers the model's `sysadmin`.

use super::{literal_after, Reply};
use crate::model::value::Value;
use std::collections::BTreeSet;

/// One tempdb data file of the model.
#[derive(Debug, Clone, PartialEq)]
pub struct TempdbFileModel {
    /// Logical name.
    pub name: String,
    /// Path on the server.
    pub physical: String,
    /// Size tempdb is recreated with at startup (`sys.master_files`), in 8 KiB pages.
    pub startup_pages: u64,
    /// Size now (`tempdb.sys.database_files`), in pages: above the startup size once autogrown.
    pub current_pages: u64,
    /// Growth in pages, or percent.
    pub growth: u64,
    /// Whether `growth` is a percent.
    pub is_percent: bool,
}

/// How one SQL Server instance behaves, and its state as statements change it.
#[derive(Debug, Clone)]
pub struct InstanceModel {
    /// What this model stands for (product, version, platform), for failure messages.
    pub recorded_as: &'static str,
    /// `Some("Y"/"N")`: `sys.dm_server_services` reports the engine's IFI; `None`: no row.
    pub service_row: Option<&'static str>,
    /// `Some(true/false)`: the startup line of the current error log; `None`: cycled away.
    pub errorlog_ifi: Option<bool>,
    /// Whether the service may skip zeroing data files (SE_MANAGE_VOLUME_NAME, or fallocate on
    /// Linux).
    pub ifi_effective: bool,
    /// The trace flags that really turn IFI off on this build.
    pub disabling_flags: Vec<u32>,
    /// tempdb's data files.
    pub tempdb: Vec<TempdbFileModel>,
    /// Whether the login holds `ALTER ANY CONNECTION`.
    pub may_kill: bool,
    /// Trace flags on globally.
    pub flags_on: BTreeSet<u32>,
    /// Error-log lines written since start (newest last).
    pub errorlog: Vec<String>,
    /// When each line of `errorlog` was written, in the model's seconds after 10:00:00.
    pub errorlog_at: Vec<u64>,
    /// The model's clock, in seconds after 2026-12-01 10:00:00.
    pub clock: u64,
    /// `@@SERVERNAME`.
    pub server_name: String,
    /// `SERVERPROPERTY('ProductMajorVersion')`.
    pub major: u32,
    /// Extended properties of master: name → value.
    pub master_properties: std::collections::BTreeMap<String, String>,
    /// Active snapshot transactions.
    pub snapshot_transactions: i64,
    /// The databases msdb holds backup history of.
    pub backup_history: BTreeSet<String>,
    /// The login is a member of sysadmin.
    pub sysadmin: bool,
}

impl InstanceModel {
    /// SQL Server 2022 on Linux with IFI in effect, modelled from documents (not recorded):
    /// `sys.dm_server_services` returns a row whose IFI column is undocumented there (`N`
    /// here), the error log says `enabled` (mssql-docker issue #776 shows the line on a 2022
    /// Linux container); TF 1805 turns fallocate off (Bob Dorr), 1806 is not known to; tempdb
    /// as setup makes it on an 8-core machine (8 files of 8 MB growing by 64 MB).
    pub fn sql_server_2022_linux() -> InstanceModel {
        InstanceModel {
            recorded_as: "SQL Server 2022 on Linux (modelled from documents)",
            service_row: Some("N"),
            errorlog_ifi: Some(true),
            ifi_effective: true,
            disabling_flags: vec![1805],
            tempdb: setup_tempdb(8, "/var/opt/mssql/data/", '/'),
            may_kill: true,
            flags_on: BTreeSet::new(),
            errorlog: Vec::new(),
            errorlog_at: Vec::new(),
            clock: 0,
            server_name: "sql2022lx".into(),
            major: 16,
            master_properties: Default::default(),
            snapshot_transactions: 0,
            backup_history: BTreeSet::new(),
            sysadmin: true,
        }
    }

    /// SQL Server 2019 on Windows with IFI granted, modelled from documents (not recorded): the
    /// service view answers `Y`; which flag turns IFI off is the model's `disabling_flags`.
    pub fn sql_server_2019_windows() -> InstanceModel {
        InstanceModel {
            recorded_as: "SQL Server 2019 on Windows (modelled from documents)",
            service_row: Some("Y"),
            errorlog_ifi: Some(true),
            ifi_effective: true,
            disabling_flags: vec![1806],
            tempdb: setup_tempdb(8, "D:\\SQLData\\", '\\'),
            may_kill: true,
            flags_on: BTreeSet::new(),
            errorlog: Vec::new(),
            errorlog_at: Vec::new(),
            clock: 0,
            server_name: "SQL2019WIN".into(),
            major: 15,
            master_properties: Default::default(),
            snapshot_transactions: 0,
            backup_history: BTreeSet::new(),
            sysadmin: true,
        }
    }

    /// `2026-12-01 10:MM:SS.000` for the model's second `t` (the form `CONVERT(…, 121)` gives).
    fn stamp(t: u64) -> String {
        format!(
            "2026-12-01 {:02}:{:02}:{:02}.000",
            10 + t / 3600,
            t / 60 % 60,
            t % 60
        )
    }

    /// Writes `text` to the error log now (a line an earlier run left, in a test).
    pub fn log_line(&mut self, text: &str) {
        self.clock += 1;
        self.errorlog.push(text.to_string());
        self.errorlog_at.push(self.clock);
    }

    fn zeroes_data(&self) -> bool {
        !self.ifi_effective
            || self
                .disabling_flags
                .iter()
                .any(|f| self.flags_on.contains(f))
    }

    /// The answer to `sql`, or `None` when the instance has nothing to say about it. A
    /// `CREATE DATABASE` is only observed (its zeroing logged); the catalog answers it.
    pub(super) fn answer(&mut self, sql: &str) -> Option<Reply> {
        if let Some(rest) = sql.strip_prefix("BACKUP DATABASE [") {
            // Recorded, then answered as the catalog answers a backup.
            if let Some(name) = rest.split(']').next() {
                self.backup_history.insert(name.to_string());
            }
            return None;
        }
        if sql.contains("msdb.dbo.sp_delete_database_backuphistory") {
            let outcome = if self.sysadmin {
                if let Some(name) = literal_after(sql, "@database_name =") {
                    self.backup_history.remove(&name);
                }
                "deleted"
            } else {
                "not sysadmin"
            };
            return Some(Reply::rows(
                &["outcome"],
                vec![vec![Value::Text(outcome.into())]],
            ));
        }
        if sql.contains("sys.dm_server_services") {
            return Some(Reply::rows(
                &["ifi"],
                self.service_row
                    .iter()
                    .map(|v| vec![Value::Text(v.to_string())])
                    .collect(),
            ));
        }
        if sql.contains("xp_readerrorlog") {
            return Some(self.read_errorlog(sql));
        }
        if sql.contains("@@SERVERNAME") && sql.contains("ProductMajorVersion") {
            return Some(Reply::rows(
                &["server_name", "machine_name", "major"],
                vec![vec![
                    Value::Text(self.server_name.clone()),
                    Value::Text(self.server_name.clone()),
                    Value::Int(i64::from(self.major)),
                ]],
            ));
        }
        if let Some(reply) = self.master_property(sql) {
            return Some(reply);
        }
        if sql.contains("sys.dm_tran_active_snapshot_database_transactions") {
            return Some(Reply::rows(
                &["active"],
                vec![vec![Value::Int(self.snapshot_transactions)]],
            ));
        }
        if sql.contains("GETDATE()") && sql.contains("AS now") {
            self.clock += 1;
            return Some(Reply::rows(
                &["now"],
                vec![vec![Value::Text(Self::stamp(self.clock))]],
            ));
        }
        if let Some(rest) = after(sql, "DBCC TRACEON(") {
            self.flags_on.extend(flags(rest));
            return Some(Reply::Sets(Vec::new()));
        }
        if let Some(rest) = after(sql, "DBCC TRACEOFF(") {
            for f in flags(rest) {
                self.flags_on.remove(&f);
            }
            return Some(Reply::Sets(Vec::new()));
        }
        if let Some(rest) = after(sql, "DBCC TRACESTATUS(") {
            let f = flags(rest).into_iter().next().unwrap_or(0);
            let on = i64::from(self.flags_on.contains(&f));
            return Some(Reply::rows(
                &["TraceFlag", "Status", "Global", "Session"],
                vec![vec![
                    Value::Int(i64::from(f)),
                    Value::Int(on),
                    Value::Int(on),
                    Value::Int(0),
                ]],
            ));
        }
        if sql.starts_with("CREATE DATABASE") {
            self.log_zeroing(sql);
            return None;
        }
        if sql.contains("sys.master_files") && sql.contains("database_id = 2") {
            return Some(self.tempdb_rows(sql.contains("tempdb.sys.database_files")));
        }
        if sql.contains("ALTER DATABASE tempdb") || sql.contains("USE tempdb") {
            return Some(self.change_tempdb(sql));
        }
        let kills =
            sql.starts_with("KILL ") || (sql.starts_with("IF EXISTS (") && sql.contains(" KILL "));
        if kills && !self.may_kill {
            return Some(Reply::error(
                6102,
                "User does not have permission to use the KILL statement.",
            ));
        }
        None
    }

    /// The extended properties of master: added, dropped and listed.
    fn master_property(&mut self, sql: &str) -> Option<Reply> {
        if sql.contains("master.sys.sp_addextendedproperty") {
            let name = literal_after(sql, "@name =").filter(|n| n.starts_with("dbbench_owed:"))?;
            let value = literal_after(sql, "@value =").unwrap_or_default();
            if self.master_properties.contains_key(&name) {
                return Some(Reply::error(
                    15233,
                    &format!("Property cannot be added. Property '{name}' already exists for 'object specified'."),
                ));
            }
            self.master_properties.insert(name, value);
            return Some(Reply::Sets(Vec::new()));
        }
        if sql.contains("master.sys.sp_dropextendedproperty") {
            let name = literal_after(sql, "@name =").filter(|n| n.starts_with("dbbench_owed:"))?;
            if self.master_properties.remove(&name).is_none() {
                return Some(Reply::error(
                    15217,
                    &format!("Property cannot be updated or deleted. Property '{name}' does not exist for 'object specified'."),
                ));
            }
            return Some(Reply::Sets(Vec::new()));
        }
        if sql.contains("master.sys.extended_properties") && sql.contains("dbbench[_]owed") {
            let rows = self
                .master_properties
                .iter()
                .rev()
                .filter(|(name, _)| name.starts_with("dbbench_owed:"))
                .map(|(n, v)| vec![Value::Text(n.clone()), Value::Text(v.clone())])
                .collect();
            return Some(Reply::rows(&["name", "value"], rows));
        }
        None
    }

    fn read_errorlog(&self, sql: &str) -> Reply {
        let columns = ["LogDate", "ProcessInfo", "Text"];
        let line = |(at, text): (String, String)| {
            vec![
                Value::Text(at),
                Value::Text("Server".into()),
                Value::Text(text),
            ]
        };
        let args: Vec<&str> = after(sql, "xp_readerrorlog ")
            .unwrap_or_default()
            .trim_end_matches(';')
            .split(", ")
            .collect();
        let log_number = args
            .first()
            .and_then(|n| n.trim().parse::<u32>().ok())
            .unwrap_or(0);
        if log_number > 6 {
            return Reply::error(
                22004,
                "xp_readerrorlog() returned error 2, 'The system cannot find the file specified.'",
            );
        }
        let literal = |i: usize| args.get(i).map(|a| literals(a).concat());
        let searches: Vec<String> = [literal(2), literal(3)].into_iter().flatten().collect();
        let since = literal(4);
        let mut lines: Vec<(String, String)> = Vec::new();
        if log_number == 0 {
            if let Some(on) = self.errorlog_ifi {
                lines.push((
                    "2026-12-01 09:00:00.000".into(),
                    format!(
                        "Database Instant File Initialization: {}. For security and performance \
                         considerations see the topic 'Database Instant File Initialization' in \
                         SQL Server Books Online. This is an informational message only. No user \
                         action is required.",
                        if on { "enabled" } else { "disabled" }
                    ),
                ));
            }
            for (i, text) in self.errorlog.iter().enumerate() {
                let at = self.errorlog_at.get(i).copied().unwrap_or(0);
                lines.push((Self::stamp(at), text.clone()));
            }
        }
        let rows = lines
            .into_iter()
            .filter(|(_, l)| searches.iter().all(|s| l.contains(s.as_str())))
            .filter(|(at, _)| since.as_ref().is_none_or(|s| at.as_str() >= s.as_str()))
            .map(line)
            .collect();
        Reply::rows(&columns, rows)
    }

    /// Writes the `Zeroing` lines of a `CREATE DATABASE` when 3004 and 3605 are on.
    fn log_zeroing(&mut self, sql: &str) {
        if !(self.flags_on.contains(&3004) && self.flags_on.contains(&3605)) {
            return;
        }
        let log_at = sql.find("LOG ON").unwrap_or(sql.len());
        let mut at = 0;
        while let Some(pos) = sql[at..].find("FILENAME = ") {
            let start = at + pos;
            let Some(path) = literal_after(&sql[start..], "FILENAME =") else {
                break;
            };
            if start > log_at || self.zeroes_data() {
                self.log_line(&format!(
                    "Zeroing {path} from page 0 to 1024 (0x0 to 0x800000)"
                ));
            }
            at = start + "FILENAME = ".len();
        }
    }

    fn tempdb_rows(&self, with_current: bool) -> Reply {
        let mut columns = vec!["name", "physical_name", "size_pages"];
        if with_current {
            columns.push("current_pages");
        }
        columns.extend(["growth", "is_percent_growth"]);
        let rows = self
            .tempdb
            .iter()
            .map(|f| {
                let mut row = vec![
                    Value::Text(f.name.clone()),
                    Value::Text(f.physical.clone()),
                    Value::Int(f.startup_pages as i64),
                ];
                if with_current {
                    row.push(Value::Int(f.current_pages as i64));
                }
                row.extend([
                    Value::Int(f.growth as i64),
                    Value::Int(i64::from(f.is_percent)),
                ]);
                row
            })
            .collect();
        Reply::rows(&columns, rows)
    }

    fn change_tempdb(&mut self, sql: &str) -> Reply {
        if let Some(name) = literal_after(sql, "MODIFY FILE (NAME =") {
            let Some(file) = self.tempdb.iter_mut().find(|f| f.name == name) else {
                return Reply::error(
                    5041,
                    &format!("MODIFY FILE failed. File '{name}' does not exist."),
                );
            };
            if let Some(kb) = after(sql, "SIZE = ").and_then(|r| r.split("KB").next()) {
                let pages = kb.trim().parse::<u64>().unwrap_or(0) / 8;
                if pages <= file.current_pages {
                    return Reply::error(
                        5039,
                        "MODIFY FILE failed. Specified size is less than or equal to current size.",
                    );
                }
                (file.current_pages, file.startup_pages) = (pages, pages);
            }
            return Reply::Sets(Vec::new());
        }
        if let Some(name) = literal_after(sql, "ADD FILE (NAME =") {
            let physical = literal_after(sql, "FILENAME =").unwrap_or_default();
            let pages = after(sql, "SIZE = ")
                .and_then(|r| r.split("KB").next())
                .and_then(|kb| kb.trim().parse::<u64>().ok())
                .unwrap_or(1024)
                / 8;
            self.tempdb.push(TempdbFileModel {
                name,
                physical,
                startup_pages: pages,
                current_pages: pages,
                growth: 8192,
                is_percent: false,
            });
            return Reply::Sets(Vec::new());
        }
        if let Some(name) = after(sql, "REMOVE FILE [").and_then(|r| r.split(']').next()) {
            self.tempdb.retain(|f| f.name != name);
            return Reply::Sets(Vec::new());
        }
        if let Some(name) = literal_after(sql, "DBCC SHRINKFILE (") {
            let target = after(sql, &format!("N'{name}', "))
                .and_then(|r| r.split(')').next())
                .and_then(|mb| mb.trim().parse::<u64>().ok());
            if let (Some(mb), Some(file)) =
                (target, self.tempdb.iter_mut().find(|f| f.name == name))
            {
                (file.current_pages, file.startup_pages) = (mb * 128, mb * 128);
            }
        }
        Reply::Sets(Vec::new())
    }
}

/// tempdb as SQL Server setup (2016+) makes it: `n` data files of 8 MB growing by 64 MB.
pub fn setup_tempdb(n: usize, dir: &str, separator: char) -> Vec<TempdbFileModel> {
    let dir = dir.trim_end_matches(separator);
    (1..=n)
        .map(|i| {
            let (name, file) = if i == 1 {
                ("tempdev".to_string(), "tempdb.mdf".to_string())
            } else {
                (format!("temp{i}"), format!("tempdb_mssql_{i}.ndf"))
            };
            TempdbFileModel {
                name,
                physical: format!("{dir}{separator}{file}"),
                startup_pages: 1024,
                current_pages: 1024,
                growth: 8192,
                is_percent: false,
            }
        })
        .collect()
}

/// Every `N'…'` literal of `sql`, unescaped.
fn literals(sql: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut chars = sql.chars().peekable();
    while let Some(c) = chars.next() {
        if c != 'N' || chars.peek() != Some(&'\'') {
            continue;
        }
        chars.next();
        let mut text = String::new();
        while let Some(c) = chars.next() {
            if c == '\'' {
                if chars.peek() == Some(&'\'') {
                    chars.next();
                } else {
                    break;
                }
            }
            text.push(c);
        }
        out.push(text);
    }
    out
}

fn after<'a>(sql: &'a str, marker: &str) -> Option<&'a str> {
    sql.find(marker).map(|p| &sql[p + marker.len()..])
}

/// The flag numbers of `DBCC TRACEON(1805, 1806, -1)`'s argument list (the `-1` left out).
fn flags(args: &str) -> Vec<u32> {
    args.split(')')
        .next()
        .unwrap_or_default()
        .split(',')
        .filter_map(|n| n.trim().parse::<u32>().ok())
        .collect()
}

#[cfg(test)]
mod tests;
