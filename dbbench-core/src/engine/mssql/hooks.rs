//! Optional steps around each repetition: a restart hook for users who restart the service
//! before every run, as the VLF article does (`DBBENCH_MSSQL_RESTART="docker restart mssql"`),
//! followed by waiting until the server accepts logins again; and a cold buffer cache
//! (`DBBENCH_MSSQL_COLD_CACHE=1`).

use super::connect::ConnectSettings;
use crate::model::error::{Error, Result};
use std::time::{Duration, Instant};

/// The restart hook's environment variable: a shell command.
pub const RESTART_ENV: &str = "DBBENCH_MSSQL_RESTART";

/// What the restart hook does to everyone else on the server, as the preflight's shared-server
/// warning and the run's refusal say it.
pub const RESTART_WARNING: &str = "DBBENCH_MSSQL_RESTART restarts the whole instance before \
     every repetition of every cell: every session on it ends, other people's included";

/// Seconds to wait for logins after the restart hook (default 120).
pub const RESTART_TIMEOUT_ENV: &str = "DBBENCH_MSSQL_RESTART_TIMEOUT_S";

/// The cold-cache switch.
pub const COLD_CACHE_ENV: &str = "DBBENCH_MSSQL_COLD_CACHE";

/// Writes dirty pages and empties the buffer pool, run in the benchmark database just before
/// the window opens. DROPCLEANBUFFERS needs sysadmin.
pub const COLD_CACHE_SQL: &str = "CHECKPOINT; DBCC DROPCLEANBUFFERS WITH NO_INFOMSGS;";

/// Per-repetition options read from the environment.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Hooks {
    /// The restart command, if any.
    pub restart: Option<String>,
    /// How long to wait for logins after it.
    pub restart_timeout: Duration,
    /// Whether to empty the buffer pool before each window.
    pub cold_cache: bool,
}

impl Hooks {
    /// The hooks from the environment.
    pub fn from_env() -> Result<Hooks> {
        let restart = std::env::var(RESTART_ENV)
            .ok()
            .filter(|c| !c.trim().is_empty());
        let restart_timeout = match std::env::var(RESTART_TIMEOUT_ENV) {
            Ok(v) if !v.trim().is_empty() => v.trim().parse::<u64>().map_err(|_| {
                Error::Config(format!(
                    "{RESTART_TIMEOUT_ENV} must be whole seconds; found `{v}`"
                ))
            })?,
            _ => 120,
        };
        Ok(Hooks {
            restart,
            restart_timeout: Duration::from_secs(restart_timeout),
            cold_cache: std::env::var(COLD_CACHE_ENV).is_ok_and(|v| v.trim() == "1"),
        })
    }

    /// Runs the restart command (if set) and waits until a login to master succeeds.
    pub async fn restart(&self, settings: &ConnectSettings) -> Result<()> {
        let Some(command) = self.restart.clone() else {
            return Ok(());
        };
        let output = tokio::task::spawn_blocking(move || shell(&command).output())
            .await
            .map_err(|e| Error::msg(format!("the restart hook's thread failed: {e}")))?
            .map_err(|e| Error::Config(format!("{RESTART_ENV}: cannot run the command: {e}")))?;
        if !output.status.success() {
            return Err(Error::Config(settings.scrub(&format!(
                "{RESTART_ENV} failed ({}): {}",
                output.status,
                String::from_utf8_lossy(&output.stderr).trim()
            ))));
        }
        wait_for_login(settings, self.restart_timeout).await
    }
}

fn shell(command: &str) -> std::process::Command {
    let mut cmd = if cfg!(windows) {
        let mut c = std::process::Command::new("cmd");
        c.arg("/C");
        c
    } else {
        let mut c = std::process::Command::new("sh");
        c.arg("-c");
        c
    };
    cmd.arg(command);
    cmd
}

/// How many of `model` and `tempdb` are online: CREATE DATABASE copies `model`, and tempdb is
/// rebuilt at startup, so a server that accepts logins may not yet be able to create a database.
pub const SYSTEM_DATABASES_ONLINE_SQL: &str = "SELECT CAST(COUNT(*) AS int) AS online \
     FROM sys.databases WHERE name IN (N'model', N'tempdb') AND state = 0;";

/// Tries once a second until a login to master succeeds and `model` and `tempdb` are online
/// (`sys.databases.state = 0`), or `limit` has passed; the last error is returned then.
pub async fn wait_for_login(settings: &ConnectSettings, limit: Duration) -> Result<()> {
    let started = Instant::now();
    loop {
        let error = match settings.connect(Some("master")).await {
            Ok(mut conn) => match conn.query(SYSTEM_DATABASES_ONLINE_SQL, &[]).await {
                Ok(rows) => match rows.first().map(|r| r.get::<i64>(0)) {
                    Some(Ok(2)) => return Ok(()),
                    Some(Ok(n)) => Error::msg(format!(
                        "logins work, but only {n} of model and tempdb are online (state = 0)"
                    )),
                    Some(Err(e)) => e,
                    None => Error::msg("sys.databases returned no row"),
                },
                Err(e) => e,
            },
            Err(e) => e,
        };
        if started.elapsed() >= limit {
            return Err(Error::msg(format!(
                "SQL Server did not accept logins within {} s after {RESTART_ENV}: {error}",
                limit.as_secs()
            )));
        }
        tokio::time::sleep(Duration::from_secs(1)).await;
    }
}

/// Why a cold cache asked for by `asked` (`cache = "cold"`, or the environment's switch) cannot
/// run: `CHECKPOINT; DBCC DROPCLEANBUFFERS` before each window empties the whole instance's
/// buffer pool, so every other session's databases read from disk again; that needs the opt-in
/// ([`super::instance::ALLOW_ENV`]) and sysadmin (DBCC DROPCLEANBUFFERS docs), refused before anything
/// is created when either is known to be missing.
pub(crate) fn cold_cache_refusal(
    asked: &str,
    allowed: bool,
    permissions: &super::preflight::Permissions,
) -> Result<()> {
    let lacking = super::permissions::blockers(
        &crate::model::config::StorageSpec::DEFAULT,
        true,
        permissions,
    );
    let why = if !allowed {
        format!(
            "set {}=1: other sessions on the server lose their cache too",
            super::instance::ALLOW_ENV
        )
    } else if let Some(drop) = lacking.iter().find(|b| b.contains("DROPCLEANBUFFERS")) {
        format!("the login lacks its permission: {drop}")
    } else {
        return Ok(());
    };
    Err(Error::Unsupported {
        option: "cache",
        backend: "mssql",
        reason: format!(
            "{asked} runs `{}` before every window, and DBCC DROPCLEANBUFFERS empties the whole \
             instance's buffer pool, not only the benchmark database's pages; {why}",
            COLD_CACHE_SQL.trim()
        ),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Finding N8: a cold cache is refused before anything is created without the opt-in, and
    /// with it when the login is known not to be sysadmin; an unknown answer is left to the run.
    #[test]
    fn a_cold_cache_needs_the_opt_in_and_sysadmin() {
        use super::super::preflight::Permissions;
        let admin = Permissions {
            sysadmin: Some(true),
            ..Permissions::default()
        };
        let err = cold_cache_refusal("`cache = \"cold\"`", false, &admin)
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("DBBENCH_MSSQL_ALLOW_INSTANCE_CHANGES=1")
                && err.contains("CHECKPOINT; DBCC DROPCLEANBUFFERS"),
            "{err}"
        );
        cold_cache_refusal("`cache = \"cold\"`", true, &admin).unwrap();
        let dbcreator = Permissions {
            sysadmin: Some(false),
            ..Permissions::default()
        };
        let err = cold_cache_refusal("`cache = \"cold\"`", true, &dbcreator)
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("the login lacks its permission: `DBCC DROPCLEANBUFFERS` needs sysadmin"),
            "{err}"
        );
        cold_cache_refusal("`cache = \"cold\"`", true, &Permissions::default()).unwrap();
    }

    #[tokio::test]
    async fn a_failing_restart_hook_is_reported() {
        let hooks = Hooks {
            restart: Some("echo no docker here >&2; exit 3".into()),
            restart_timeout: Duration::from_secs(1),
            cold_cache: false,
        };
        let settings = ConnectSettings::parse("server=tcp:127.0.0.1,1;user=sa;password=p").unwrap();
        let err = hooks.restart(&settings).await.unwrap_err().to_string();
        assert!(
            err.contains("DBBENCH_MSSQL_RESTART failed") && err.contains("no docker here"),
            "{err}"
        );
    }

    #[tokio::test]
    async fn waiting_for_logins_gives_up_with_the_last_error() {
        let settings =
            ConnectSettings::parse("server=tcp:127.0.0.1,1;user=sa;password=p;Connect Timeout=1")
                .unwrap();
        let err = wait_for_login(&settings, Duration::from_millis(10))
            .await
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("did not accept logins") && err.contains("cannot reach"),
            "{err}"
        );
    }

    #[tokio::test]
    async fn waits_until_model_and_tempdb_are_online() {
        use crate::engine::mssql::double::{Reply, ScriptedServer};
        use crate::model::value::Value;
        let server = ScriptedServer::new();
        let settings =
            ConnectSettings::scripted("server=tcp:h,1433;user id=u;password=p", &server).unwrap();
        server.on(
            "state = 0",
            Reply::rows(&["online"], vec![vec![Value::Int(2)]]),
        );
        // Recorded start-up: logins refused, then tempdb still recovering, then both online.
        server.times(
            "state = 0",
            1,
            Reply::rows(&["online"], vec![vec![Value::Int(1)]]),
        );
        server.times(
            "master",
            1,
            Reply::error(18401, "Login failed: server is in script upgrade mode"),
        );
        wait_for_login(&settings, Duration::from_secs(10))
            .await
            .unwrap();
        assert_eq!(server.calls_with("state = 0").len(), 2);
        let never = ScriptedServer::new();
        never.on(
            "state = 0",
            Reply::rows(&["online"], vec![vec![Value::Int(1)]]),
        );
        let settings =
            ConnectSettings::scripted("server=tcp:h,1433;user id=u;password=p", &never).unwrap();
        let err = wait_for_login(&settings, Duration::from_millis(10))
            .await
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("only 1 of model and tempdb are online"),
            "{err}"
        );
    }

    #[test]
    fn no_hook_by_default() {
        let hooks = Hooks::default();
        assert!(hooks.restart.is_none() && !hooks.cold_cache);
    }
}
