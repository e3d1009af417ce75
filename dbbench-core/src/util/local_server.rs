//! Whether the database server runs on this machine, and which of its processes are the server:
//! the busy-machine guard counts their CPU as the workload's, not as a neighbour's.
//!
//! The server says which process it is (SQL Server's `SERVERPROPERTY('ProcessID')`) or which
//! process serves this session (PostgreSQL's `pg_backend_pid()`). Each backend describes that
//! process as a [`ServerProcess`] (its name, and whether it is the server or serves one session
//! for it); this module knows no product. A pid is taken as the server's only when all three hold:
//!
//! * the server was reached on this machine: a Unix socket, a loopback address, or an address of
//!   one of this machine's interfaces;
//! * the pid exists here;
//! * its process looks like the server: it has the name the backend gave, and, for a process
//!   that serves one session, its parent has that name too and is no child of another.
//!
//! Otherwise nothing is taken (a remote server, or one in a container whose pids are not this
//! machine's), and every process but dbbench's own and the kernel's stays a neighbour.

use crate::model::interference::ServerOnHost;
use crate::util::procfs::ProcFs;

/// The process a server reported, as its backend describes it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ServerProcess {
    /// Its pid.
    pub pid: u32,
    /// The name (`comm`) of the server's processes: `sqlservr`, `postgres`.
    pub name: &'static str,
    /// Where the server's process tree starts.
    pub root: Root,
}

/// Where a server's process tree starts, from the process it reported.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Root {
    /// The reported process is the server's own (SQL Server's); a parent of the same name is a
    /// watchdog whose tree holds it (SQL Server on Linux runs as two `sqlservr` processes).
    Itself {
        /// What the process is, for the console ("SQL Server's process").
        own: &'static str,
        /// What its watchdog parent is ("the parent of SQL Server's process").
        watchdog: &'static str,
    },
    /// The reported process serves one session (a PostgreSQL backend); its parent, of the same
    /// name and no child of another, is the server (the postmaster).
    Parent {
        /// What the parent is ("the postmaster, parent of this session's backend").
        label: &'static str,
    },
}

/// Whether `host` (a name or an address, as a connection string gives it) is this machine:
/// `localhost`, SQL Server's `.` and `(local)`, a loopback address, or a name or address that
/// resolves to an address of one of this machine's interfaces (one a socket can be bound to).
pub fn is_local_host(host: &str) -> bool {
    let host = host.trim().trim_start_matches('[').trim_end_matches(']');
    if host.is_empty() {
        return false;
    }
    if matches!(
        host.to_ascii_lowercase().as_str(),
        "localhost" | "." | "(local)"
    ) {
        return true;
    }
    let Ok(addrs) = std::net::ToSocketAddrs::to_socket_addrs(&(host, 0)) else {
        return false;
    };
    addrs
        .into_iter()
        .any(|addr| addr.ip().is_loopback() || std::net::UdpSocket::bind((addr.ip(), 0)).is_ok())
}

/// The server's processes on this machine, from the process it `reported`; `found` says how the
/// server reported it (`pg_backend_pid() 4242`). `None` when the process is not here or does not
/// look like the server. The caller has checked that the server was reached on this machine.
pub fn identify(proc: &ProcFs, reported: ServerProcess, found: &str) -> Option<ServerOnHost> {
    let ServerProcess { pid, name, root } = reported;
    let stat = proc.stat(pid).filter(|s| s.comm == name)?;
    let (root, found_by) = match root {
        Root::Itself { own, watchdog } => match proc.stat(stat.ppid).filter(|p| p.comm == name) {
            Some(_) => (stat.ppid, format!("{watchdog}, {found}")),
            None => (pid, format!("{own}, {found}")),
        },
        Root::Parent { label } => {
            // The parent is the server, and no child of another process of its name.
            let parent = proc.stat(stat.ppid).filter(|p| p.comm == name)?;
            if proc.stat(parent.ppid).is_some_and(|p| p.comm == name) {
                return None;
            }
            (stat.ppid, format!("{label}, {found}"))
        }
    };
    let name = proc.stat(root)?.comm;
    Some(ServerOnHost {
        name,
        pid: root,
        children: proc.descendants(root).len() as u32,
        found_by,
    })
}

/// A connection to the Unix socket `path` made without blocking: it succeeds at once or fails
/// (`WouldBlock` while the server's listen backlog is full), so a caller polling a server under
/// a deadline (a managed server's start, the peer of a socket) is never held past it. The
/// stream returned is blocking again.
pub fn connect_now(path: &std::path::Path) -> std::io::Result<std::os::unix::net::UnixStream> {
    use std::os::fd::{FromRawFd, OwnedFd};
    use std::os::unix::ffi::OsStrExt;
    let bytes = path.as_os_str().as_bytes();
    // SAFETY: sockaddr_un is plain data, zeroed is a valid value.
    let mut addr: libc::sockaddr_un = unsafe { std::mem::zeroed() };
    if bytes.len() >= addr.sun_path.len() {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            "socket path too long",
        ));
    }
    addr.sun_family = libc::AF_UNIX as libc::sa_family_t;
    for (to, from) in addr.sun_path.iter_mut().zip(bytes) {
        *to = *from as libc::c_char;
    }
    // SAFETY: socket has no memory preconditions; the descriptor is owned right after.
    let fd = unsafe {
        libc::socket(
            libc::AF_UNIX,
            libc::SOCK_STREAM | libc::SOCK_NONBLOCK | libc::SOCK_CLOEXEC,
            0,
        )
    };
    if fd < 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: fd is a new descriptor of this function's, owned from here on.
    let owned = unsafe { OwnedFd::from_raw_fd(fd) };
    // SAFETY: addr is a sockaddr_un of the size passed.
    let rc = unsafe {
        libc::connect(
            fd,
            (&addr as *const libc::sockaddr_un).cast(),
            std::mem::size_of::<libc::sockaddr_un>() as libc::socklen_t,
        )
    };
    if rc != 0 {
        return Err(std::io::Error::last_os_error());
    }
    let stream = std::os::unix::net::UnixStream::from(owned);
    stream.set_nonblocking(false)?;
    Ok(stream)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::util::procfs::fake;

    // Descriptions as the backends give them (`engine/*/local.rs`); this module knows none.
    fn backend(pid: u32) -> ServerProcess {
        ServerProcess {
            pid,
            name: "postgres",
            root: Root::Parent {
                label: "the postmaster, parent of this session's backend",
            },
        }
    }

    fn engine(pid: u32) -> ServerProcess {
        ServerProcess {
            pid,
            name: "sqlservr",
            root: Root::Itself {
                own: "SQL Server's process",
                watchdog: "the parent of SQL Server's process",
            },
        }
    }

    #[test]
    fn the_postmaster_of_a_backend_is_the_server() {
        let dir = tempfile::tempdir().unwrap();
        let proc = fake(
            dir.path(),
            &[
                (1, 0, "systemd", 0),
                (7778, 1, "postgres", 10),
                (7779, 7778, "postgres", 1),
                (7782, 7778, "postgres", 2),
                (16773, 7778, "postgres", 3),
                (900, 1, "bash", 0),
                (901, 900, "sleep", 0),
            ],
        );
        let server = identify(&proc, backend(16773), "pg_backend_pid() 16773").unwrap();
        assert_eq!(
            (server.name.as_str(), server.pid, server.children),
            ("postgres", 7778, 3)
        );
        assert_eq!(
            server.found_by,
            "the postmaster, parent of this session's backend, pg_backend_pid() 16773"
        );
        // A pid that is not here, or not a postgres backend: a server elsewhere.
        assert_eq!(identify(&proc, backend(4242), ""), None);
        assert_eq!(identify(&proc, backend(901), ""), None);
        // The postmaster itself reported as a backend: its parent is no postgres.
        assert_eq!(identify(&proc, backend(7778), ""), None);
        // A postgres backend's pid is never taken for SQL Server's.
        assert_eq!(identify(&proc, engine(16773), ""), None);
    }

    #[test]
    fn sql_servers_watchdog_holds_its_engine() {
        let dir = tempfile::tempdir().unwrap();
        let proc = fake(
            dir.path(),
            &[
                (1, 0, "systemd", 0),
                (500, 1, "sqlservr", 1),
                (512, 500, "sqlservr", 900),
                (600, 1, "sqlservr", 5),
            ],
        );
        let linux = identify(&proc, engine(512), "SERVERPROPERTY('ProcessID') 512").unwrap();
        assert_eq!((linux.pid, linux.children), (500, 1));
        assert!(linux
            .found_by
            .starts_with("the parent of SQL Server's process"));
        let alone = identify(&proc, engine(600), "").unwrap();
        assert_eq!((alone.pid, alone.children), (600, 0));
        assert_eq!(identify(&proc, backend(512), ""), None);
    }

    #[test]
    fn local_hosts_are_told_from_others() {
        for host in [
            "localhost",
            "LocalHost",
            ".",
            "(local)",
            "127.0.0.1",
            "::1",
            "[::1]",
        ] {
            assert!(is_local_host(host), "{host}");
        }
        // TEST-NET addresses are no interface's here; an empty host names nothing.
        for host in ["192.0.2.1", "2001:db8::1", ""] {
            assert!(!is_local_host(host), "{host}");
        }
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn this_machines_own_process_tree_is_no_server() {
        // A real process that is neither sqlservr nor a postgres backend.
        let proc = ProcFs::system();
        let me = std::process::id();
        assert_eq!(identify(&proc, engine(me), ""), None);
        assert_eq!(identify(&proc, backend(me), ""), None);
    }
}
