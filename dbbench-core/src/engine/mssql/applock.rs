//! The server-wide lock on instance state: an application lock `dbbench:instance` taken with
//! `sp_getapplock` at session scope on a connection of its own, before the first read of
//! instance state (trace flags, tempdb's files) by a repetition whose result depends on it, and
//! held until its last undo is verified: exclusive for a repetition that changes the instance,
//! shared for one that only relies on it (`ifi = true`).
//!
//! Why (findings B4 of the third review, N1 and N3 of the fourth): trace flags and tempdb belong
//! to the whole instance, and two dbbench processes on one server (nextest runs tests as
//! processes; two people can share a lab server) would otherwise plan from the other's transient
//! state (see the other's IFI-off flags on and set none, record the other's raised tempdb size as
//! the one to restore), turn off the flags the other measures under, or run an `ifi = true`
//! window while the other has IFI off for the instance. Readers share the lock, a changer holds it
//! alone, so no repetition reads, plans or measures while another changes the instance. A
//! session-scope lock is released by the server when the session ends (sp_getapplock docs:
//! "Locks associated with the current session are released when the session logs out"), so a
//! killed dbbench cannot leave it held; for the same reason a lost lock connection frees it, which
//! [`ServerLock::still_held`] notices (`APPLOCK_MODE`, finding N9).
//!
//! sp_getapplock, https://learn.microsoft.com/sql/relational-databases/system-stored-procedures/sp-getapplock-transact-sql:
//! `@LockMode` `Shared` or `Exclusive` (among others); return value 0 granted, 1 granted after
//! waiting, -1 timed out, -2 cancelled, -3 deadlock victim, -999 parameter or call error;
//! permission: membership in the public role. APPLOCK_MODE,
//! https://learn.microsoft.com/sql/t-sql/functions/applock-mode-transact-sql: the lock mode the
//! caller's session holds on the resource, `NoLock` when none.

use super::{ConnectSettings, MssqlConnection};
use crate::model::error::{Error, Result};
use crate::util::deadline::Deadline;
use std::time::{Duration, Instant};

/// The lock's resource name.
pub const RESOURCE: &str = "dbbench:instance";

/// How a repetition holds the lock.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Mode {
    /// It only relies on instance state: any number of readers at once, no changer.
    Shared,
    /// It changes the instance: nobody else.
    #[default]
    Exclusive,
}

impl Mode {
    fn sql(self) -> &'static str {
        match self {
            Mode::Shared => "Shared",
            Mode::Exclusive => "Exclusive",
        }
    }
}

/// Asks for the lock in `mode`, waiting at most `wait_ms` on the server.
pub fn get_sql(mode: Mode, wait_ms: u64) -> String {
    format!(
        "DECLARE @r int; EXEC @r = sp_getapplock @Resource = N'{RESOURCE}', \
         @LockMode = N'{}', @LockOwner = N'Session', @LockTimeout = {wait_ms}, \
         @DbPrincipal = N'public'; SELECT @r AS result;",
        mode.sql()
    )
}

/// Gives the lock back (the end of the session does too).
pub const RELEASE_SQL: &str = "EXEC sp_releaseapplock @Resource = N'dbbench:instance', \
     @LockOwner = N'Session', @DbPrincipal = N'public';";

/// The mode the lock's own session holds now (`NoLock` once the session lost it).
pub const MODE_SQL: &str =
    "SELECT APPLOCK_MODE(N'public', N'dbbench:instance', N'Session') AS mode;";

/// The server's own name for itself, read once the lock is granted: the key of the user's
/// ledger ([`super::owed`]), the same whatever the connection string calls the server.
pub const IDENTITY_SQL: &str = "SELECT CAST(@@SERVERNAME AS nvarchar(128)) AS server_name, \
     CAST(SERVERPROPERTY('MachineName') AS nvarchar(128)) AS machine_name, \
     CAST(SERVERPROPERTY('ProductMajorVersion') AS int) AS major;";

/// The sessions that hold the lock now, but the asking one: session id, login, host, program
/// and mode (finding N12). An application lock is a row of `sys.dm_tran_locks` with
/// `resource_type` `APPLICATION` in the database it was taken in (master) and a
/// `resource_description` of the form `<principal id>:<resource>:(<hash>)` (sys.dm_tran_locks
/// docs); seeing other sessions' rows needs VIEW SERVER STATE, as `sys.dm_exec_sessions` does.
pub const HOLDERS_SQL: &str = "SELECT CAST(l.request_session_id AS int) AS spid, \
     s.login_name, s.host_name, s.program_name, l.request_mode \
     FROM sys.dm_tran_locks AS l JOIN sys.dm_exec_sessions AS s \
     ON s.session_id = l.request_session_id \
     WHERE l.resource_type = N'APPLICATION' AND l.resource_database_id = DB_ID(N'master') \
     AND l.request_status = N'GRANT' AND l.request_session_id <> @@SPID \
     AND l.resource_description LIKE N'%:dbbench:instance:%' ORDER BY spid;";

/// Who holds the lock, in words, read through `conn` (the waiting session's own connection);
/// says what could not be read instead when the login cannot see it.
pub async fn holders(conn: &mut MssqlConnection) -> String {
    let rows = match conn.query(HOLDERS_SQL, &[]).await {
        Ok(rows) => rows,
        Err(e) => return format!("who holds it could not be read ({e})"),
    };
    let text = |row: &crate::model::value::Row, name: &str| {
        row.get_named::<Option<String>>(name)
            .ok()
            .flatten()
            .map_or_else(|| "?".to_string(), |t| t.trim().to_string())
    };
    let held: Vec<String> = rows
        .iter()
        .map(|row| {
            format!(
                "session {} (login {}, host {}, program {}, {})",
                row.get_named::<Option<i64>>("spid")
                    .ok()
                    .flatten()
                    .map_or_else(|| "?".to_string(), |n| n.to_string()),
                text(row, "login_name"),
                text(row, "host_name"),
                text(row, "program_name"),
                text(row, "request_mode")
            )
        })
        .collect();
    if held.is_empty() {
        "who holds it is not visible to this login (sys.dm_tran_locks shows other sessions' \
         locks only with VIEW SERVER STATE), or it was just released"
            .to_string()
    } else {
        format!("held by {}", held.join(", "))
    }
}

/// How long a repetition waits for another process's instance changes to be undone: two thirds
/// of the setup deadline that bounds the whole creation, so a waiting process fails with the
/// lock's own message rather than a generic setup timeout (finding N12).
pub fn patience() -> Duration {
    Deadline::Setup
        .configured()
        .unwrap_or_else(|_| Deadline::Setup.default_limit())
        * 2
        / 3
}

/// The lock, held while this value lives (its connection's session owns it).
pub struct ServerLock {
    conn: MssqlConnection,
    mode: Mode,
    /// `@@SERVERNAME/MachineName`, when the server named itself.
    identity: Option<String>,
    /// `ProductMajorVersion`, 0 when unknown.
    major: u32,
}

impl std::fmt::Debug for ServerLock {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "ServerLock({RESOURCE}, {:?})", self.mode)
    }
}

impl ServerLock {
    /// Takes the lock in `mode` on a new connection to master, waiting (one line on the console
    /// when it has to) up to `patience` for the processes that hold it, then reads the server's
    /// identity.
    pub async fn acquire(
        settings: &ConnectSettings,
        mode: Mode,
        patience: Duration,
    ) -> Result<ServerLock> {
        let mut conn = settings.connect(Some("master")).await?;
        let started = Instant::now();
        let mut said = false;
        loop {
            let rows = conn.query(&get_sql(mode, 1000), &[]).await?;
            // A server that answers no row (the scripted server without a session model)
            // grants: a real one always returns the procedure's value.
            let result = match rows.first() {
                Some(row) => row.get_named::<Option<i64>>("result")?.unwrap_or(-999),
                None => 0,
            };
            match result {
                0 | 1 => break,
                -1 if started.elapsed() < patience => {
                    if !said {
                        said = true;
                        let who = holders(&mut conn).await;
                        crate::util::console::say(&format!(
                            "dbbench › mssql: another dbbench process {} on {} (application lock \
                             {RESOURCE}, {who}); waiting until it is done, at most {} s",
                            match mode {
                                Mode::Shared => "is changing the instance",
                                Mode::Exclusive => "relies on or changes instance state",
                            },
                            settings.server(),
                            patience.as_secs()
                        ));
                    }
                    tokio::time::sleep(Duration::from_millis(200)).await;
                }
                other => {
                    return Err(Error::msg(format!(
                        "could not take the application lock {RESOURCE} ({}) on {} \
                         (sp_getapplock returned {other}{}); dbbench reads no instance state a \
                         cell depends on and makes no instance change without it",
                        mode.sql(),
                        settings.server(),
                        if other == -1 {
                            format!(
                                ": another dbbench process held it for {} s, {}",
                                patience.as_secs(),
                                holders(&mut conn).await
                            )
                        } else {
                            String::new()
                        }
                    )))
                }
            }
        }
        let rows = conn.query(IDENTITY_SQL, &[]).await?;
        let text = |name: &str| {
            rows.first()
                .and_then(|r| r.get_named::<Option<String>>(name).ok().flatten())
                .map(|t| t.trim().to_string())
                .filter(|t| !t.is_empty())
        };
        let identity = match (text("server_name"), text("machine_name")) {
            (Some(s), Some(m)) => Some(format!("{s}/{m}")),
            (Some(one), None) | (None, Some(one)) => Some(one),
            (None, None) => None,
        };
        let major = rows
            .first()
            .and_then(|r| r.get_named::<Option<i64>>("major").ok().flatten())
            .unwrap_or(0) as u32;
        Ok(ServerLock {
            conn,
            mode,
            identity,
            major,
        })
    }

    /// How it is held.
    pub fn mode(&self) -> Mode {
        self.mode
    }

    /// The server's own name for itself (`@@SERVERNAME/MachineName`), when it gave one.
    pub fn identity(&self) -> Option<&str> {
        self.identity.as_deref()
    }

    /// The server's major version (16 is SQL Server 2022), 0 when unknown.
    pub fn major(&self) -> u32 {
        self.major
    }

    /// The lock's own connection, in master: the replay of owed undo runs on it.
    pub(super) fn conn(&mut self) -> &mut MssqlConnection {
        &mut self.conn
    }

    /// `Ok` while the lock's session still holds it; `Err` says how it was lost (the session was
    /// ended by a KILL or a reset connection, which frees a session-scope lock).
    pub async fn still_held(&mut self) -> std::result::Result<(), String> {
        let rows = tokio::time::timeout(Duration::from_secs(10), self.conn.query(MODE_SQL, &[]))
            .await
            .map_err(|_| "the lock's session did not answer within 10 s".to_string())?
            .map_err(|e| format!("the lock's session is gone ({e})"))?;
        let mode = rows
            .first()
            .and_then(|r| r.get_named::<Option<String>>("mode").ok().flatten());
        match mode.as_deref().map(str::trim) {
            Some("NoLock") => Err("the lock's session no longer holds it".into()),
            _ => Ok(()),
        }
    }

    /// Gives the lock back and closes its connection.
    pub async fn release(mut self) {
        let _ = self.conn.batch(RELEASE_SQL).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::mssql::double::{InstanceModel, ScriptedServer};
    use crate::engine::mssql::ifi::trace_flags_change;
    use crate::engine::mssql::instance::InstanceChanges;

    fn position(server: &ScriptedServer, needle: &str) -> usize {
        server
            .calls()
            .iter()
            .position(|c| c.sql.contains(needle))
            .unwrap_or_else(|| panic!("no `{needle}` sent"))
    }

    /// Finding N12: a process that waits for the lock past its patience fails with the lock's
    /// own message, naming who holds it (session id, login, host, program, mode).
    #[tokio::test]
    async fn a_lock_held_past_patience_names_its_holder() {
        let server = ScriptedServer::new().with_sessions();
        let settings =
            ConnectSettings::scripted("Server=tcp:h,1433;User Id=u;Password=p", &server).unwrap();
        let _first = ServerLock::acquire(&settings, Mode::Exclusive, Duration::from_secs(1))
            .await
            .unwrap();
        let err = ServerLock::acquire(&settings, Mode::Shared, Duration::from_millis(300))
            .await
            .unwrap_err()
            .to_string();
        assert!(
            err.contains(
                "held by session 51 (login dbbench_login, host client, program dbbench, X)"
            ),
            "{err}"
        );
    }

    /// Finding B4 of the third review: two dbbench processes on one server. While the first has
    /// instance changes (IFI off for the instance), the second's changes wait for the lock, and
    /// are applied only after the first's undo was verified.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_second_process_waits_until_the_first_has_undone_its_changes() {
        let server = ScriptedServer::new()
            .with_sessions()
            .with_instance(InstanceModel::sql_server_2022_linux());
        let settings =
            ConnectSettings::scripted("Server=tcp:h,1433;User Id=u;Password=p", &server).unwrap();
        let mut first_conn = settings.connect(Some("master")).await.unwrap();
        let mut first = InstanceChanges::new(settings.clone());
        first
            .apply(&mut first_conn, &trace_flags_change(&[1805, 1806], "first"))
            .await
            .unwrap();
        let holder = server
            .lock_holder(RESOURCE)
            .expect("the first holds the lock");

        let second_settings = settings.clone();
        let second = tokio::spawn(async move {
            let mut conn = second_settings.connect(Some("master")).await.unwrap();
            let mut second = InstanceChanges::new(second_settings);
            second
                .apply(&mut conn, &trace_flags_change(&[3004, 3605], "second"))
                .await
                .unwrap();
            second.restore(&mut conn).await.unwrap();
        });
        tokio::time::sleep(Duration::from_millis(600)).await;
        assert!(
            server.calls_with("DBCC TRACEON(3004").is_empty(),
            "the second changed the instance while the first held the lock"
        );
        assert!(server.calls_with("sp_getapplock").len() >= 2, "it asked");

        first.restore(&mut first_conn).await.unwrap();
        assert!(!server.session_alive(&holder), "the lock's session ended");
        second.await.unwrap();
        assert!(
            position(&server, "DBCC TRACESTATUS(1806") < position(&server, "DBCC TRACEON(3004"),
            "the first's undo was verified before the second's change"
        );
        assert!(server.lock_holder(RESOURCE).is_none(), "given back");
        assert!(server.instance().unwrap().flags_on.is_empty());
    }
}
