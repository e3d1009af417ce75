//! Stopping a SQL Server statement from outside the body: the session id (`@@SPID`) is read when
//! a body's connection opens, and firing the database's stop switch opens a second connection
//! and ends that session with `KILL`, which rolls back its transaction and closes the body's
//! connection; the body's next statement is refused by the switch itself.
//!
//! Why not TDS attention: tiberius gives no handle to send one while another task owns the
//! client, and the fire comes from the watchdog or signal thread. `KILL` needs `ALTER ANY
//! CONNECTION`; the login that creates and drops databases usually has it, and when it does
//! not, the switch still refuses every later statement, so the body stops at its next one.

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
        let mut conn = crate::engine::connection::Connection::Mssql(Box::new(std::mem::replace(
            &mut conn,
            settings.connect(None).await.unwrap(),
        )));
        let err = conn
            .execute("INSERT INTO t DEFAULT VALUES")
            .await
            .unwrap_err();
        assert!(
            matches!(err, crate::model::error::Error::Cancelled { .. }),
            "{err}"
        );
    }
}
