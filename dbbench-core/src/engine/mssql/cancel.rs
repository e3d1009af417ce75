//! Stopping a SQL Server statement from outside the body: the session id (`@@SPID`) is read when
//! a body's connection opens, and firing the database's stop switch opens a second connection
//! and ends that session with `KILL`, which rolls back its transaction and closes the body's
//! connection; the body's next statement is refused by the switch itself.
//!
//! Why not TDS attention: tiberius gives no handle to send one while another task owns the
//! client, and the fire comes from the watchdog or signal thread. `KILL` needs `ALTER ANY
//! CONNECTION`; the login that creates and drops databases usually has it, and when it does
//! not, the switch still refuses every later statement, so the body stops at its next one.
//!
//! The same goes for a creation statement that ran into `Command Timeout`
//! ([`end_statement`]): tiberius 0.13 has `Client::cancel_query` (an Attention), but it refuses a
//! connection a command timeout left out of sync, which is exactly the one whose statement still
//! runs. So that session is ended with a `KILL` from another connection, guarded by the
//! session's login time (a session id is given to a new connection once the old one ends: KILL
//! docs), and dbbench waits until the session is gone before it cleans up.

use super::{ConnectSettings, MssqlConnection};
use crate::model::error::Result;
use crate::util::cancel::Cancel;
use std::sync::Arc;

/// The session id of `conn`, if the server says.
async fn spid(conn: &mut MssqlConnection) -> Result<Option<i64>> {
    let rows = conn.query("SELECT @@SPID AS spid", &[]).await?;
    rows.first()
        .map(|r| r.get::<Option<i64>>(0))
        .transpose()
        .map(Option::flatten)
}

/// `conn` registered with `cancel`: firing it kills the connection's session from a second
/// connection (on a thread with a runtime of its own: the fire may come from outside any).
pub(super) async fn register(
    mut conn: MssqlConnection,
    settings: &ConnectSettings,
    cancel: &Arc<Cancel>,
) -> Result<MssqlConnection> {
    if let Some(spid) = spid(&mut conn).await? {
        let settings = settings.clone();
        // One KILL per session, however often the switch fires (the watchdog and the async timer
        // may both fire at the limit, a signal may follow): once killed, the session id is free
        // for the server to give to another login, whose session a second KILL would end.
        let killed = std::sync::atomic::AtomicBool::new(false);
        cancel.register(move || {
            if killed.swap(true, std::sync::atomic::Ordering::SeqCst) {
                return;
            }
            let settings = settings.clone();
            let _ = std::thread::Builder::new()
                .name("dbbench-mssql-kill".into())
                .spawn(move || {
                    if let Ok(rt) = tokio::runtime::Builder::new_current_thread()
                        .enable_all()
                        .build()
                    {
                        let _ = rt.block_on(kill(&settings, spid));
                    }
                });
        });
    }
    conn.cancel = Some(cancel.clone());
    Ok(conn)
}

/// Ends session `spid` from a connection of its own. A failure is said on the console as well
/// as returned (the switch fires from a thread nobody waits on): without `ALTER ANY CONNECTION`
/// (error 6102) the runaway statement runs to its end.
pub(super) async fn kill(settings: &ConnectSettings, spid: i64) -> Result<()> {
    let outcome = match settings.connect(None).await {
        Ok(mut admin) => admin.batch(&kill_sql(spid)).await,
        Err(e) => Err(e),
    };
    outcome.map_err(|e| {
        let e = crate::model::error::Error::msg(format!(
            "could not stop session {spid} with KILL ({e}); KILL needs ALTER ANY CONNECTION: \
             the running statement goes on to its end, and the body is refused at its next \
             statement"
        ));
        crate::util::console::say(&format!("dbbench › mssql: {e}"));
        e
    })
}

/// The statement that ends session `spid`.
pub(super) fn kill_sql(spid: i64) -> String {
    format!("KILL {spid}")
}

/// A session as the server knows it: its id and its login time, which together name it for good
/// (the id alone is reused once the session ends).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct SessionId {
    /// `@@SPID`.
    pub spid: i64,
    /// `sys.dm_exec_sessions.login_time`, as `CONVERT(nvarchar(30), …, 126)` gives it.
    pub login_time: String,
}

/// This connection's session id and login time.
pub(super) const SESSION_SQL: &str = "SELECT CAST(session_id AS int) AS spid, \
     CONVERT(nvarchar(30), login_time, 126) AS login_time \
     FROM sys.dm_exec_sessions WHERE session_id = @@SPID;";

/// The session of `conn`, if the server says (every login sees its own row of
/// `sys.dm_exec_sessions`; a server without the view gives none).
pub(super) async fn identify(conn: &mut MssqlConnection) -> Option<SessionId> {
    let rows = conn.query(SESSION_SQL, &[]).await.ok()?;
    let row = rows.first()?;
    Some(SessionId {
        spid: row.get_named::<Option<i64>>("spid").ok()??,
        login_time: row.get_named::<Option<String>>("login_time").ok()??,
    })
}

/// The `WHERE` that names exactly `session` in `sys.dm_exec_sessions`.
fn same_session(session: &SessionId) -> String {
    format!(
        "session_id = {} AND login_time = CONVERT(datetime, {}, 126)",
        session.spid,
        super::tsql::literal(&session.login_time)
    )
}

/// `KILL` of `session`, sent only while that very session (id, login time, dbbench's program
/// name) still exists: never a later session that was given the same id.
pub(super) fn guarded_kill_sql(session: &SessionId) -> String {
    format!(
        "IF EXISTS (SELECT 1 FROM sys.dm_exec_sessions WHERE {} AND program_name = N'dbbench') \
         KILL {};",
        same_session(session),
        session.spid
    )
}

/// Whether `session` still exists, and whether this login may see other sessions at all
/// (without VIEW SERVER STATE, `sys.dm_exec_sessions` shows only the login's own session).
pub(super) fn still_there_sql(session: &SessionId) -> String {
    format!(
        "SELECT CAST(COUNT(*) AS int) AS sessions, \
         CAST(HAS_PERMS_BY_NAME(NULL, NULL, 'VIEW SERVER STATE') AS int) AS can_see \
         FROM sys.dm_exec_sessions WHERE {};",
        same_session(session)
    )
}

/// How long to wait for a killed statement to end.
#[derive(Debug, Clone, Copy)]
pub(super) struct Patience {
    /// Between two looks.
    pub every: std::time::Duration,
    /// At most.
    pub limit: std::time::Duration,
}

impl Patience {
    /// A KILL rolls the statement back, which can take as long as the work did (KILL docs); a
    /// `CREATE DATABASE` without IFI zero-fills its files. Ten minutes, looking twice a second.
    pub const CREATION: Patience = Patience {
        every: std::time::Duration::from_millis(500),
        limit: std::time::Duration::from_secs(600),
    };
}

/// Ends the statement that `session` may still be running after its connection timed out: a
/// guarded `KILL` from `conn` (another connection), then a wait until the session is gone, so
/// that the cleanup that follows sees what the statement left. `Err` says why dbbench could not
/// make sure the statement ended.
pub(super) async fn end_statement(
    conn: &mut MssqlConnection,
    session: &SessionId,
    patience: Patience,
) -> std::result::Result<(), String> {
    let killed = conn.batch(&guarded_kill_sql(session)).await;
    let started = std::time::Instant::now();
    loop {
        let rows = conn
            .query(&still_there_sql(session), &[])
            .await
            .map_err(|e| format!("could not tell whether session {} ended: {e}", session.spid))?;
        let number = |name: &str| {
            rows.first()
                .and_then(|r| r.get_named::<Option<i64>>(name).ok().flatten())
        };
        if number("can_see") == Some(0) {
            return Err(format!(
                "the login cannot see other sessions (it lacks VIEW SERVER STATE), so dbbench \
                 cannot tell whether session {} ended",
                session.spid
            ));
        }
        if number("sessions").unwrap_or(0) == 0 {
            return Ok(());
        }
        if started.elapsed() >= patience.limit {
            let why = match &killed {
                Err(e) => format!("KILL failed ({e}; it needs ALTER ANY CONNECTION)"),
                Ok(()) => "it was killed and is still rolling back".to_string(),
            };
            return Err(format!(
                "session {} still runs after {} s: {why}",
                session.spid,
                patience.limit.as_secs()
            ));
        }
        tokio::time::sleep(patience.every).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::mssql::double::{Api, Reply, ScriptedServer};
    use crate::model::value::Value;

    #[tokio::test]
    async fn firing_kills_the_session_from_a_second_connection() {
        let server = ScriptedServer::new();
        server.on("@@SPID", Reply::rows(&["spid"], vec![vec![Value::Int(57)]]));
        let settings =
            ConnectSettings::scripted("Server=tcp:h,1433;User Id=u;Password=p", &server).unwrap();
        let cancel = Cancel::new();
        let conn = settings.connect(Some("dbbench_x")).await.unwrap();
        let mut conn = register(conn, &settings, &cancel).await.unwrap();
        cancel.fire(crate::util::cancel::Stop::Timeout(
            std::time::Duration::from_millis(500),
        ));
        // The watchdog and the timer both fire at the limit; a signal may follow.
        cancel.fire(crate::util::cancel::Stop::Signal("SIGINT"));
        // The kill goes from its own thread; wait for it to be recorded.
        let started = std::time::Instant::now();
        while server.calls_with("KILL").is_empty() && started.elapsed().as_secs() < 5 {
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
        assert_eq!(server.calls_with("KILL").len(), 1, "one KILL per session");
        let calls = server.calls();
        let kill_at = calls
            .iter()
            .position(|c| c.sql == "KILL 57")
            .expect("KILL sent");
        assert_eq!(calls[kill_at].api, Api::Batch);
        assert_eq!(
            calls[kill_at - 1].api,
            Api::Login,
            "from a connection of its own"
        );
        // The body's next statement is refused by the switch the connection carries (what
        // `Connection` asks before every statement).
        let conn = std::mem::replace(&mut conn, settings.connect(None).await.unwrap());
        let err = conn
            .cancel
            .as_ref()
            .expect("registered with the switch")
            .check("INSERT INTO t DEFAULT VALUES")
            .unwrap_err();
        assert!(
            matches!(err, crate::model::error::Error::Cancelled { .. }),
            "{err}"
        );
    }
}
