//! An existing server on this machine (`DBBENCH_POSTGRES`): the postmaster of this session's
//! backend, so that the busy-machine guard counts the server's CPU as the workload's
//! ([`crate::util::local_server`] decides which local processes that is). A managed cluster
//! needs none of this: it runs in dbbench's own process tree.

use super::PostgresConnection;
use crate::model::interference::ServerOnHost;
use crate::util::local_server::{identify, is_local_host, Root, ServerProcess};
use crate::util::procfs::ProcFs;

/// This session's backend and the server address it was reached on (NULL on a Unix socket).
pub const PROCESS_SQL: &str = "SELECT pg_backend_pid()::bigint, host(inet_server_addr())";

/// The server's processes on this machine, read through `conn` while it is open (its backend is
/// the way to the postmaster); `None` for a server elsewhere.
pub async fn server_on_host(conn: &mut PostgresConnection) -> Option<ServerOnHost> {
    let rows = conn.query(PROCESS_SQL, &[]).await.ok()?;
    let row = rows.first()?;
    let pid = u32::try_from(row.get::<i64>(0).ok()?).ok()?;
    let address = row.get::<Option<String>>(1).ok()?;
    if !reached_here(address.as_deref()) {
        return None;
    }
    identify(
        &ProcFs::system(),
        backend(pid),
        &format!("pg_backend_pid() {pid}"),
    )
}

/// The PostgreSQL backend `pid` serving a session, a child of the postmaster: the server.
pub fn backend(pid: u32) -> ServerProcess {
    ServerProcess {
        pid,
        name: "postgres",
        root: Root::Parent {
            label: "the postmaster, parent of this session's backend",
        },
    }
}

/// Whether the server's end of the connection is on this machine: a Unix socket (no address),
/// or an address of this machine's.
fn reached_here(server_address: Option<&str>) -> bool {
    server_address.is_none_or(is_local_host)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sockets_and_local_addresses_are_here() {
        assert!(reached_here(None));
        assert!(reached_here(Some("127.0.0.1")));
        assert!(reached_here(Some("::1")));
        assert!(!reached_here(Some("192.0.2.7")));
    }
}
