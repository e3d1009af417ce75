//! A server on this machine: which process is SQL Server's (`SERVERPROPERTY('ProcessID')`) or,
//! on Babelfish, which PostgreSQL backend serves this session (`@@SPID` is its pid there, and
//! `ProcessID` is 0), so that the busy-machine guard counts the server's CPU as the workload's
//! ([`crate::util::local_server`] decides which local processes that is).

use super::identity::Product;
use super::{ConnectSettings, MssqlConnection};
use crate::model::interference::ServerOnHost;
use crate::util::local_server::{identify, is_local_host, Root, ServerProcess};
use crate::util::procfs::ProcFs;

/// The server's process and this session's id; `sql_variant` cast, as tiberius panics on it.
pub const PROCESS_SQL: &str = "SELECT CAST(SERVERPROPERTY('ProcessID') AS int) AS process_id, \
     CAST(@@SPID AS int) AS session_id;";

/// The server's processes on this machine, when `settings` reach it here and the process it
/// reports through `conn` is here and looks like it; `None` for a server elsewhere (nothing is
/// asked of it then).
pub async fn server_on_host(
    conn: &mut MssqlConnection,
    settings: &ConnectSettings,
    product: &Product,
) -> Option<ServerOnHost> {
    let host = settings.host()?;
    if !is_local_host(&host) {
        return None;
    }
    let rows = conn.query(PROCESS_SQL, &[]).await.ok()?;
    let row = rows.first()?;
    let int = |name: &str| {
        row.get_named::<Option<i64>>(name)
            .ok()
            .flatten()
            .and_then(|v| u32::try_from(v).ok())
            .filter(|v| *v > 0)
    };
    let (reported, found) = reported(product, int("process_id"), int("session_id"))?;
    identify(&ProcFs::system(), reported, &found)
}

/// Which process to look for: Babelfish's `@@SPID` is its backend's pid; SQL Server's session
/// ids are no pids, and its `ProcessID` is its process.
fn reported(
    product: &Product,
    process_id: Option<u32>,
    session_id: Option<u32>,
) -> Option<(ServerProcess, String)> {
    match product {
        Product::Babelfish => {
            session_id.map(|pid| (babelfish_backend(pid), format!("@@SPID {pid} on Babelfish")))
        }
        _ => process_id.map(|pid| {
            (
                sql_server(pid),
                format!("SERVERPROPERTY('ProcessID') {pid}"),
            )
        }),
    }
}

/// SQL Server's own process `pid`; on Linux a watchdog `sqlservr` parent holds it.
fn sql_server(pid: u32) -> ServerProcess {
    ServerProcess {
        pid,
        name: "sqlservr",
        root: Root::Itself {
            own: "SQL Server's process",
            watchdog: "the parent of SQL Server's process",
        },
    }
}

/// The PostgreSQL backend `pid` that serves this session on Babelfish; its postmaster is the
/// server.
fn babelfish_backend(pid: u32) -> ServerProcess {
    ServerProcess {
        pid,
        name: "postgres",
        root: Root::Parent {
            label: "the postmaster, parent of this session's backend",
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn babelfish_reports_its_backend_and_sql_server_its_process() {
        // Recorded from Babelfish 4.2.0: ProcessID 0 (read as none), @@SPID the backend's pid.
        assert_eq!(
            reported(&Product::Babelfish, None, Some(16773)).map(|r| r.0),
            Some(babelfish_backend(16773))
        );
        assert_eq!(
            reported(&Product::SqlServer, Some(1234), Some(52)).map(|r| r.0),
            Some(sql_server(1234))
        );
        // A session id is never taken for SQL Server's pid.
        assert_eq!(reported(&Product::SqlServer, None, Some(52)), None);
        insta::assert_snapshot!(PROCESS_SQL);
    }

    #[tokio::test]
    async fn a_scripted_server_is_on_no_machine() {
        let server = super::super::double::ScriptedServer::new();
        let settings =
            ConnectSettings::scripted("server=tcp:localhost,1433;user id=sa;password=x", &server)
                .unwrap();
        let mut conn = settings.connect(Some("master")).await.unwrap();
        assert_eq!(
            server_on_host(&mut conn, &settings, &Product::SqlServer).await,
            None
        );
        // Nothing was asked of it.
        assert!(server.calls().iter().all(|c| !c.sql.contains("ProcessID")));
    }
}
