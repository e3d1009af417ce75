//! The sessions of the scripted server: each login opens one, closing the connection ends it,
//! and `KILL` ends one, so a test can give a foreign session (another program, another login)
//! a session id that an earlier dbbench connection had, as SQL Server does.
//!
//! Where each modelled answer comes from:
//! - KILL (Transact-SQL), https://learn.microsoft.com/sql/t-sql/language-elements/kill-transact-sql:
//!   "When the connection ends, the integer value is released and can be reassigned to a new
//!   connection"; `KILL <id>` ends whichever session has that id now. The model hands out the
//!   lowest free id at or above 51 (user sessions start above the system ones; the exact number
//!   does not matter, only that ids are reused at once).
//! - sys.dm_exec_sessions, https://learn.microsoft.com/sql/relational-databases/system-dynamic-management-views/sys-dm-exec-sessions-transact-sql:
//!   `session_id`, `login_time`, `program_name` (the client's application name; dbbench sets
//!   "dbbench") and `host_process_id` (the client's process id as the login packet gives it;
//!   tiberius 0.13 always sends 0: `client_pid` is never set in its `src/tds/codec/login.rs`).
//!   Without VIEW SERVER STATE a login sees only its own row; the model's login has it unless a
//!   test takes it away ([`SessionTable::deny_view_server_state`], then `HAS_PERMS_BY_NAME(NULL,
//!   NULL, 'VIEW SERVER STATE')` answers 0). `cpu_time` ("CPU time, in milliseconds, used by
//!   this session"), `reads` and `writes` ("number of reads/writes performed, by requests in
//!   this session, during this session") grow as a test makes a session work
//!   ([`SessionTable::worked`]); `database_id` is "the ID of the current database for each
//!   session": the model puts dbbench's sessions (program "dbbench") in the cell's database and
//!   every other program's in another. The model has no request running between statements, so
//!   `sys.dm_exec_requests` adds nothing.
//! - sp_getapplock / sp_releaseapplock, https://learn.microsoft.com/sql/relational-databases/system-stored-procedures/sp-getapplock-transact-sql:
//!   a lock at session scope is held until released or until the session ends; `Shared` is
//!   compatible with `Shared`, `Exclusive` with nothing (the lock-mode compatibility table on that
//!   page); a request that cannot be granted within `@LockTimeout` returns -1. The model grants
//!   at once or answers -1 (it does not wait).
//! - APPLOCK_MODE, https://learn.microsoft.com/sql/t-sql/functions/applock-mode-transact-sql:
//!   the mode the caller's session holds on the resource, `NoLock` when it holds none.

use super::Reply;
use crate::model::value::Value;

/// One session the server knows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionRow {
    /// `session_id`.
    pub spid: i64,
    /// `login_time` as `CONVERT(nvarchar(30), login_time, 126)` gives it.
    pub login_time: String,
    /// `program_name`.
    pub program: String,
    /// `login_name`.
    pub login: String,
    /// `host_process_id`.
    pub host_pid: i64,
}

/// The server's sessions now.
#[derive(Debug, Clone, Default)]
pub struct SessionTable {
    logins: u64,
    sessions: Vec<SessionRow>,
    /// Application locks at session scope: resource → holders and how each holds it.
    locks: std::collections::BTreeMap<String, Vec<(SessionRow, String)>>,
    /// Work done per session (id, login time): CPU ms, reads, writes.
    work: std::collections::BTreeMap<(i64, String), [i64; 3]>,
    /// The login lacks VIEW SERVER STATE.
    denied: bool,
}

impl SessionTable {
    /// A new session of `program` for `login`: the lowest free id, a login time later than
    /// every earlier one.
    pub fn open(&mut self, program: &str, login: &str) -> SessionRow {
        let spid = (51..)
            .find(|id| self.sessions.iter().all(|s| s.spid != *id))
            .expect("a free id");
        self.logins += 1;
        let row = SessionRow {
            spid,
            login_time: format!(
                "2026-12-01T10:{:02}:{:02}.{:03}",
                self.logins / 3600 % 60,
                self.logins / 60 % 60,
                self.logins % 60 * 10
            ),
            program: program.to_string(),
            login: login.to_string(),
            host_pid: 0,
        };
        self.sessions.push(row.clone());
        row
    }

    /// Ends the session `spid` opened at `login_time`, if it is still there.
    pub fn close(&mut self, spid: i64, login_time: &str) {
        self.sessions
            .retain(|s| !(s.spid == spid && s.login_time == login_time));
        for holders in self.locks.values_mut() {
            holders.retain(|(s, _)| !(s.spid == spid && s.login_time == login_time));
        }
        self.locks.retain(|_, holders| !holders.is_empty());
    }

    /// `session` did work: `cpu_ms` of CPU, `reads` and `writes` pages.
    pub fn worked(&mut self, session: &SessionRow, cpu_ms: i64, reads: i64, writes: i64) {
        let work = self
            .work
            .entry((session.spid, session.login_time.clone()))
            .or_default();
        for (sum, add) in work.iter_mut().zip([cpu_ms, reads, writes]) {
            *sum += add;
        }
    }

    /// Takes VIEW SERVER STATE from the model's login.
    pub fn deny_view_server_state(&mut self) {
        self.denied = true;
    }

    /// The sessions `sys.dm_exec_sessions` shows the login: all of them with VIEW SERVER STATE,
    /// else only the asking session's own (SESSIONS: "Everyone can see their own session
    /// information").
    fn visible<'a>(&'a self, own: Option<&'a SessionRow>) -> impl Iterator<Item = &'a SessionRow> {
        self.sessions
            .iter()
            .filter(move |s| !self.denied || Some(*s) == own)
    }

    /// Other databases' sessions with their work, as `evidence::others` asks for them: only
    /// with VIEW SERVER STATE, never the asking session's own.
    fn others_work(&self, own: Option<&SessionRow>) -> Reply {
        let rows = self
            .sessions
            .iter()
            .filter(|s| !self.denied && s.program != "dbbench" && Some(*s) != own)
            .map(|s| {
                let work = self
                    .work
                    .get(&(s.spid, s.login_time.clone()))
                    .copied()
                    .unwrap_or_default();
                vec![
                    Value::Int(s.spid),
                    Value::Text(s.login_time.clone()),
                    Value::Int(work[0]),
                    Value::Int(work[1]),
                    Value::Int(work[2]),
                ]
            })
            .collect();
        Reply::rows(
            &["session_id", "login_time", "cpu_ms", "reads", "writes"],
            rows,
        )
    }

    /// A session holding application lock `resource`, if any.
    pub fn lock_holder(&self, resource: &str) -> Option<&SessionRow> {
        self.locks.get(resource)?.first().map(|(s, _)| s)
    }

    /// Every session holding application lock `resource`, with its mode.
    pub fn lock_holders(&self, resource: &str) -> Vec<(SessionRow, String)> {
        self.locks.get(resource).cloned().unwrap_or_default()
    }

    /// `sp_getapplock` (session scope) from `own`: 0 granted, -1 held by another in a mode that
    /// conflicts (`Shared` admits `Shared`, `Exclusive` nothing).
    fn get_lock(&mut self, sql: &str, own: &SessionRow) -> Reply {
        let resource = resource(sql);
        let mode = sql
            .split("@LockMode = N'")
            .nth(1)
            .and_then(|r| r.split('\'').next())
            .unwrap_or("Exclusive")
            .to_string();
        let holders = self.locks.entry(resource).or_default();
        let others = holders.iter().filter(|(s, _)| s != own);
        let conflicts = others
            .map(|(_, m)| m)
            .any(|m| m == "Exclusive" || mode == "Exclusive");
        let result = if conflicts {
            -1
        } else {
            holders.retain(|(s, _)| s != own);
            holders.push((own.clone(), mode));
            0
        };
        self.locks.retain(|_, holders| !holders.is_empty());
        Reply::rows(&["result"], vec![vec![Value::Int(result)]])
    }

    /// The session that has id `spid` now.
    pub fn by_id(&self, spid: i64) -> Option<&SessionRow> {
        self.sessions.iter().find(|s| s.spid == spid)
    }

    /// Whether exactly this session (id and login time) still exists.
    pub fn alive(&self, session: &SessionRow) -> bool {
        self.sessions
            .iter()
            .any(|s| s.spid == session.spid && s.login_time == session.login_time)
    }

    /// The answer to `sql` sent from session `own`, or `None` when sessions have nothing to say.
    pub(super) fn answer(&mut self, sql: &str, own: Option<&SessionRow>) -> Option<Reply> {
        if sql.contains("sys.dm_exec_requests") && sql.contains("s.database_id <> DB_ID()") {
            return Some(self.others_work(own));
        }
        if let Some(rest) = sql.trim_start().strip_prefix("KILL ") {
            let spid = number(rest)?;
            return Some(self.kill(spid));
        }
        // The guarded KILL: the EXISTS sees only the sessions this login may see (SESSIONS), so
        // without VIEW SERVER STATE no KILL is sent and the batch says why.
        if sql.starts_with("IF EXISTS (SELECT 1 FROM sys.dm_exec_sessions WHERE ") {
            let spid = number(sql.split(" BEGIN KILL ").nth(1)?)?;
            let outcome =
                |text: &str| Reply::rows(&["outcome"], vec![vec![Value::Text(text.to_string())]]);
            if self.visible(own).any(|s| matches(s, sql)) {
                return Some(match self.kill(spid) {
                    Reply::Sets(_) => outcome("sent"),
                    error => error,
                });
            }
            return Some(outcome(if self.denied { "not visible" } else { "gone" }));
        }
        if sql.contains("AS can_see") && sql.contains("sys.dm_exec_sessions") {
            let count = self.visible(own).filter(|s| matches(s, sql)).count();
            return Some(Reply::rows(
                &["sessions", "can_see"],
                vec![vec![
                    Value::Int(count as i64),
                    Value::Int(i64::from(!self.denied)),
                ]],
            ));
        }
        if sql.contains("HAS_PERMS_BY_NAME(NULL, NULL, 'VIEW SERVER STATE')") {
            return Some(Reply::rows(
                &["granted"],
                vec![vec![Value::Int(i64::from(!self.denied))]],
            ));
        }
        // Who holds an application lock (sys.dm_tran_locks joined to sys.dm_exec_sessions):
        // other sessions' rows only with VIEW SERVER STATE; the model's clients all run on one
        // host, named "client".
        if sql.contains("FROM sys.dm_tran_locks") && sql.contains("N'APPLICATION'") {
            let rows = self
                .locks
                .iter()
                .filter(|(resource, _)| sql.contains(&format!(":{resource}:")))
                .flat_map(|(_, holders)| holders.iter())
                .filter(|(s, _)| !self.denied && Some(s) != own)
                .map(|(s, mode)| {
                    vec![
                        Value::Int(s.spid),
                        Value::Text(s.login.clone()),
                        Value::Text("client".into()),
                        Value::Text(s.program.clone()),
                        // The lock mode sp_getapplock's mode maps to (sys.dm_tran_locks docs).
                        Value::Text(if mode == "Shared" { "S" } else { "X" }.into()),
                    ]
                })
                .collect();
            return Some(Reply::rows(
                &[
                    "spid",
                    "login_name",
                    "host_name",
                    "program_name",
                    "request_mode",
                ],
                rows,
            ));
        }
        let own = own?;
        if sql.contains("sp_getapplock") {
            return Some(self.get_lock(sql, own));
        }
        if sql.contains("sp_releaseapplock") {
            let resource = resource(sql);
            if let Some(holders) = self.locks.get_mut(&resource) {
                holders.retain(|(s, _)| s != own);
            }
            self.locks.retain(|_, holders| !holders.is_empty());
            return Some(Reply::Sets(Vec::new()));
        }
        if sql.contains("APPLOCK_MODE(N'public', N'") {
            let resource = sql
                .split("APPLOCK_MODE(N'public', N'")
                .nth(1)
                .and_then(|r| r.split('\'').next())
                .unwrap_or_default();
            let mode = self
                .locks
                .get(resource)
                .and_then(|h| h.iter().find(|(s, _)| s == own))
                .map_or("NoLock".to_string(), |(_, m)| m.clone());
            return Some(Reply::rows(&["mode"], vec![vec![Value::Text(mode)]]));
        }
        if sql.contains("WHERE session_id = @@SPID") {
            return Some(Reply::rows(
                &["spid", "login_time", "program_name", "host_process_id"],
                vec![vec![
                    Value::Int(own.spid),
                    Value::Text(own.login_time.clone()),
                    Value::Text(own.program.clone()),
                    Value::Int(own.host_pid),
                ]],
            ));
        }
        if sql.contains("@@SPID") {
            return Some(Reply::rows(&["spid"], vec![vec![Value::Int(own.spid)]]));
        }
        None
    }

    fn kill(&mut self, spid: i64) -> Reply {
        match self.sessions.iter().position(|s| s.spid == spid) {
            Some(at) => {
                let gone = self.sessions.remove(at);
                for holders in self.locks.values_mut() {
                    holders.retain(|(s, _)| *s != gone);
                }
                self.locks.retain(|_, holders| !holders.is_empty());
                Reply::Sets(Vec::new())
            }
            None => Reply::error(
                6106,
                &format!("Process ID {spid} is not an active process ID."),
            ),
        }
    }
}

/// The `@Resource = N'…'` of an application-lock call.
fn resource(sql: &str) -> String {
    sql.split("@Resource = N'")
        .nth(1)
        .and_then(|r| r.split('\'').next())
        .unwrap_or_default()
        .to_string()
}

/// The number at the start of `text`.
fn number(text: &str) -> Option<i64> {
    let digits: String = text
        .trim_start()
        .chars()
        .take_while(char::is_ascii_digit)
        .collect();
    digits.parse().ok()
}

/// Whether `session` satisfies every condition of the `WHERE` dbbench writes for a session
/// (`session_id = n`, `CONVERT(nvarchar(30), login_time, 126) = N'…'`, `program_name = N'…'`,
/// `host_process_id = n`); a condition the statement leaves out does not restrict.
fn matches(session: &SessionRow, sql: &str) -> bool {
    let value = |key: &str| sql.find(key).map(|at| &sql[at + key.len()..]);
    let literal = |rest: &str| {
        rest.trim_start()
            .strip_prefix("N'")
            .and_then(|r| r.split('\'').next())
            .map(str::to_string)
    };
    value("session_id = ")
        .and_then(number)
        .is_none_or(|n| n == session.spid)
        && value("CONVERT(nvarchar(30), login_time, 126) = ")
            .and_then(literal)
            .is_none_or(|t| t == session.login_time)
        && value("program_name = ")
            .and_then(literal)
            .is_none_or(|p| p == session.program)
        && value("host_process_id = ")
            .and_then(number)
            .is_none_or(|p| p == session.host_pid)
}
