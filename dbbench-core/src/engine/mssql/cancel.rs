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
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// `conn` registered with `cancel`: firing it ends the connection's session from a second
/// connection (on a thread with a runtime of its own: the fire may come from outside any).
///
/// Only a session that is provably this connection's is ever ended (finding B1 of the third
/// review): the `KILL` is guarded by session id, login time, program name and host process id
/// as read when the connection opened ([`guarded_kill_sql`]), and once the connection has
/// closed its registration sends nothing at all, because the server hands a released id to the
/// next connection at once (KILL docs). A server that does not name the session
/// (`sys.dm_exec_sessions` unreadable) gets no KILL: the switch still refuses the body's next
/// statement.
pub(super) async fn register(
    mut conn: MssqlConnection,
    settings: &ConnectSettings,
    cancel: &Arc<Cancel>,
) -> Result<MssqlConnection> {
    let open = Arc::new(AtomicBool::new(true));
    match identify(&mut conn).await {
        Some(session) => {
            let settings = settings.clone();
            let still_open = open.clone();
            // One KILL per session, however often the switch fires (the watchdog and the async
            // timer may both fire at the limit, a signal may follow).
            let killed = AtomicBool::new(false);
            cancel.register(move || {
                if !still_open.load(Ordering::SeqCst) || killed.swap(true, Ordering::SeqCst) {
                    return;
                }
                let settings = settings.clone();
                let session = session.clone();
                let _ = std::thread::Builder::new()
                    .name("dbbench-mssql-kill".into())
                    .spawn(move || {
                        if let Ok(rt) = tokio::runtime::Builder::new_current_thread()
                            .enable_all()
                            .build()
                        {
                            // Bounded: a server that does not answer would keep this
                            // thread and its login forever; the repetition abandons the
                            // body after the same grace.
                            let grace = crate::util::deadline::Deadline::Cancel
                                .limit()
                                .unwrap_or(crate::util::deadline::Deadline::Cancel.default_limit());
                            // The timer is made inside the runtime (it needs its clock).
                            let _ = rt.block_on(async {
                                tokio::time::timeout(grace, kill(&settings, &session)).await
                            });
                        }
                    });
            });
        }
        None => crate::util::console::say(
            "dbbench › mssql: the server does not name this connection's session \
             (sys.dm_exec_sessions), so a timeout or Ctrl-C cannot end its running statement \
             with KILL; the body is refused at its next statement instead",
        ),
    }
    conn.open = Some(open);
    conn.cancel = Some(cancel.clone());
    Ok(conn)
}

/// Ends `session` from a connection of its own to master (the login's default database may be
/// offline, 4062), with the guarded `KILL`. A failure is said on the console as well as returned
/// (the switch fires from a thread nobody waits on): without `ALTER ANY CONNECTION` (error 6102)
/// the runaway statement runs to its end, and without VIEW SERVER STATE the guard cannot see the
/// session, so no `KILL` is sent at all (finding N10): that is said too, not taken for success.
pub(super) async fn kill(settings: &ConnectSettings, session: &SessionId) -> Result<()> {
    let outcome = match settings.connect(Some("master")).await {
        // Every set of the batch: whether KILL's own message makes an empty set before the
        // outcome's is the driver's business.
        Ok(mut admin) => admin
            .query_all(&guarded_kill_sql(session))
            .await
            .and_then(|sets| kill_outcome(&sets.concat(), session)),
        Err(e) => Err(e),
    };
    outcome.map_err(|e| {
        let e = crate::model::error::Error::msg(format!(
            "could not stop session {} with KILL ({e}); KILL needs ALTER ANY CONNECTION, and its \
             guard VIEW SERVER STATE: the running statement goes on to its end, and the body is \
             refused at its next statement",
            session.spid
        ));
        crate::util::console::say(&format!("dbbench › mssql: {e}"));
        e
    })
}

/// What the guarded `KILL`'s batch answered: `sent`, `gone` (the session had ended already) or
/// `not visible` (the login sees no session but its own, so the guard sent nothing).
fn kill_outcome(rows: &[crate::model::value::Row], session: &SessionId) -> Result<()> {
    let outcome = rows
        .first()
        .and_then(|r| r.get_named::<Option<String>>("outcome").ok().flatten());
    match outcome.as_deref() {
        Some("sent") | Some("gone") => Ok(()),
        Some("not visible") => Err(crate::model::error::Error::msg(format!(
            "KILL was not sent: this login sees only its own session in sys.dm_exec_sessions \
             (it lacks VIEW SERVER STATE, or VIEW SERVER PERFORMANCE STATE from SQL Server \
             2022), so the guard could not find session {}",
            session.spid
        ))),
        other => Err(crate::model::error::Error::msg(format!(
            "the guarded KILL gave no outcome ({other:?}); KILL needs ALTER ANY CONNECTION"
        ))),
    }
}

/// 1 when this login may see every session in `sys.dm_exec_sessions`: VIEW SERVER STATE, or from
/// SQL Server 2022 the granular VIEW SERVER PERFORMANCE STATE that it covers (DMVS: "For SQL
/// Server 2022 and later, VIEW SERVER PERFORMANCE STATE"). An unknown permission name gives NULL
/// (HAS_PERMS_BY_NAME docs), so older versions answer from the first name alone.
pub(super) const CAN_SEE_SQL: &str =
    "CASE WHEN HAS_PERMS_BY_NAME(NULL, NULL, 'VIEW SERVER STATE') = 1 \
     OR HAS_PERMS_BY_NAME(NULL, NULL, 'VIEW SERVER PERFORMANCE STATE') = 1 THEN 1 ELSE 0 END";

/// A session as the server knows it: its id and its login time, which together name it for good
/// (the id alone is reused once the session ends), and the client's process id as the server
/// recorded it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct SessionId {
    /// `@@SPID`.
    pub spid: i64,
    /// `sys.dm_exec_sessions.login_time`, as `CONVERT(nvarchar(30), …, 126)` gives it.
    pub login_time: String,
    /// `sys.dm_exec_sessions.host_process_id` as read back, not this process's id: tiberius
    /// 0.13 sends 0 in the login packet (`client_pid` is never set), so comparing with
    /// `std::process::id()` would never match. `None` when the server gave no value.
    pub host_process_id: Option<i64>,
}

/// This connection's session id, login time and host process id.
pub(super) const SESSION_SQL: &str = "SELECT CAST(session_id AS int) AS spid, \
     CONVERT(nvarchar(30), login_time, 126) AS login_time, \
     CAST(host_process_id AS int) AS host_process_id \
     FROM sys.dm_exec_sessions WHERE session_id = @@SPID;";

/// The session of `conn`, if the server says (every login sees its own row of
/// `sys.dm_exec_sessions`; a server without the view gives none).
pub(super) async fn identify(conn: &mut MssqlConnection) -> Option<SessionId> {
    let rows = conn.query(SESSION_SQL, &[]).await.ok()?;
    let row = rows.first()?;
    Some(SessionId {
        spid: row.get_named::<Option<i64>>("spid").ok()??,
        login_time: row.get_named::<Option<String>>("login_time").ok()??,
        host_process_id: row
            .get_named::<Option<i64>>("host_process_id")
            .ok()
            .flatten(),
    })
}

/// The `WHERE` that names exactly `session` in `sys.dm_exec_sessions`. The login time is compared
/// in the text form it was read in (`CONVERT(nvarchar(30), login_time, 126)` on both sides), not
/// converted back to a datetime: the same conversion gives the same text, and Babelfish cannot
/// convert its own style-126 text back (it refuses it: "Conversion failed when converting date
/// and time from character string", seen on Babelfish 4.2).
fn same_session(session: &SessionId) -> String {
    format!(
        "session_id = {} AND CONVERT(nvarchar(30), login_time, 126) = {}",
        session.spid,
        super::tsql::literal(&session.login_time)
    )
}

/// `KILL` of `session`, sent only while that very session (id, login time, dbbench's program
/// name, the host process id it logged in with) still exists: never a later session that was
/// given the same id. Its one row says what happened (`outcome`: `sent`, `gone`, or `not
/// visible` when this login cannot see other sessions, finding N10).
pub(super) fn guarded_kill_sql(session: &SessionId) -> String {
    let host = match session.host_process_id {
        Some(pid) => format!("host_process_id = {pid}"),
        None => "host_process_id IS NULL".to_string(),
    };
    format!(
        "IF EXISTS (SELECT 1 FROM sys.dm_exec_sessions WHERE {} AND program_name = N'dbbench' \
         AND {host}) BEGIN KILL {}; SELECT N'sent' AS outcome; END \
         ELSE SELECT CASE WHEN {CAN_SEE_SQL} = 1 THEN N'gone' ELSE N'not visible' END AS outcome;",
        same_session(session),
        session.spid
    )
}

/// Whether `session` still exists, and whether this login may see other sessions at all
/// (without VIEW SERVER STATE, `sys.dm_exec_sessions` shows only the login's own session).
pub(super) fn still_there_sql(session: &SessionId) -> String {
    format!(
        "SELECT CAST(COUNT(*) AS int) AS sessions, CAST({CAN_SEE_SQL} AS int) AS can_see \
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
                "the login cannot see other sessions (it lacks VIEW SERVER STATE, or VIEW SERVER \
                 PERFORMANCE STATE from SQL Server 2022), so dbbench cannot tell whether session \
                 {} ended",
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
    use crate::engine::mssql::double::{Api, ScriptedServer};
    use crate::util::cancel::Stop;

    fn scripted() -> (ScriptedServer, ConnectSettings) {
        let server = ScriptedServer::new().with_sessions();
        let settings =
            ConnectSettings::scripted("Server=tcp:h,1433;User Id=u;Password=p", &server).unwrap();
        (server, settings)
    }

    /// Waits until the server has seen `n` KILL statements (they go from a thread of their
    /// own), then a little longer for any that should not come.
    fn wait_for_kills(server: &ScriptedServer, n: usize) {
        let started = std::time::Instant::now();
        while server.calls_with("KILL").len() < n && started.elapsed().as_secs() < 5 {
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }

    #[tokio::test]
    async fn firing_kills_the_session_from_a_second_connection() {
        let (server, settings) = scripted();
        let cancel = Cancel::new();
        let conn = settings.connect(Some("dbbench_x")).await.unwrap();
        let mut conn = register(conn, &settings, &cancel).await.unwrap();
        let body = server.session_by_id(51).expect("the body's session");
        cancel.fire(Stop::Timeout(std::time::Duration::from_millis(500)));
        // The watchdog and the timer both fire at the limit; a signal may follow.
        cancel.fire(Stop::Signal("SIGINT"));
        wait_for_kills(&server, 1);
        assert_eq!(server.calls_with("KILL").len(), 1, "one KILL per session");
        assert!(!server.session_alive(&body), "the body's session is ended");
        let calls = server.calls();
        let kill_at = calls
            .iter()
            .position(|c| c.sql.contains("KILL 51"))
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

    /// Finding N10: without VIEW SERVER STATE the guard's EXISTS sees only the login's own
    /// session, so no KILL is sent; `kill` says so instead of reporting success, and the body's
    /// session is left running (as it is). With the permission the same call ends it.
    #[tokio::test]
    async fn a_kill_the_guard_could_not_see_to_send_is_said() {
        let (server, settings) = scripted();
        let mut conn = settings.connect(Some("dbbench_x")).await.unwrap();
        let session = identify(&mut conn).await.expect("the body's session id");
        let body = server.session_by_id(51).expect("the body's session");
        server.deny_view_server_state();
        let err = kill(&settings, &session).await.unwrap_err().to_string();
        assert!(
            err.contains("KILL was not sent") && err.contains("VIEW SERVER PERFORMANCE STATE"),
            "{err}"
        );
        assert!(server.session_alive(&body), "no KILL reached it");
        let (server, settings) = scripted();
        let mut conn = settings.connect(Some("dbbench_x")).await.unwrap();
        let session = identify(&mut conn).await.unwrap();
        kill(&settings, &session).await.unwrap();
        let killed = server.calls_with("KILL 51");
        assert_eq!(killed.len(), 1);
        assert!(
            server
                .calls()
                .iter()
                .any(|c| c.api == Api::Login && c.sql == "master"),
            "the KILL's connection goes to master"
        );
    }

    /// Finding B1 of the third review: a connection of the database (the fixture's, a load
    /// worker's) closes; another application logs in and is given the freed session id; then
    /// the body runs into its timeout, or Ctrl-C arrives. Only the body's session is ended;
    /// the foreign session lives.
    #[tokio::test]
    async fn a_timeout_or_ctrl_c_never_ends_a_session_that_reused_a_closed_ones_id() {
        for why in [
            Stop::Timeout(std::time::Duration::from_millis(500)),
            Stop::Signal("SIGINT"),
        ] {
            let (server, settings) = scripted();
            let cancel = Cancel::new();
            let fixture = settings.connect(Some("dbbench_x")).await.unwrap();
            let fixture = register(fixture, &settings, &cancel).await.unwrap();
            let body = settings.connect(Some("dbbench_x")).await.unwrap();
            let _body = register(body, &settings, &cancel).await.unwrap();
            let body = server.session_by_id(52).expect("the body's session");
            drop(fixture);
            let foreign = server
                .open_session("Microsoft SQL Server Management Studio", "alice")
                .unwrap();
            assert_eq!(foreign.spid, 51, "the freed id is handed out again");
            cancel.fire(why);
            wait_for_kills(&server, 1);
            assert!(
                server.session_alive(&foreign),
                "{why:?} ended a foreign session"
            );
            assert!(
                !server.session_alive(&body),
                "{why:?}: the body's session ends"
            );
            assert!(server.calls_with("KILL 51").is_empty(), "{why:?}");
        }
    }

    /// The same when the server ended the body's connection behind dbbench's back (a network
    /// drop, another DBA's KILL) and the freed id went to another dbbench process's session:
    /// the connection object still exists, so only the guard (login time, program name, host
    /// process id) keeps the KILL off the other session.
    #[tokio::test]
    async fn the_guard_spares_a_session_given_the_id_while_the_connection_object_lives() {
        let (server, settings) = scripted();
        let cancel = Cancel::new();
        let body = settings.connect(Some("dbbench_x")).await.unwrap();
        let _body = register(body, &settings, &cancel).await.unwrap();
        let ours = server.session_by_id(51).unwrap();
        server.close_session(&ours);
        let other = server.open_session("dbbench", "bob").unwrap();
        assert_eq!(other.spid, 51);
        cancel.fire(Stop::Signal("SIGINT"));
        wait_for_kills(&server, 1);
        let kills = server.calls_with("KILL 51");
        assert_eq!(kills.len(), 1);
        assert!(
            kills[0]
                .sql
                .contains("CONVERT(nvarchar(30), login_time, 126) = N'")
                && kills[0].sql.contains("program_name = N'dbbench'")
                && kills[0].sql.contains("host_process_id = 0"),
            "{}",
            kills[0].sql
        );
        assert!(server.session_alive(&other), "the guard spared it");
    }
}
