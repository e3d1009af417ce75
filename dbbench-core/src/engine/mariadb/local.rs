//! An existing server on this machine (`DBBENCH_MARIADB`): its `mariadbd` process, so that the
//! busy-machine guard counts the server's CPU as the workload's and not as a neighbour's
//! ([`crate::util::local_server`] decides whether a process is the server). A managed instance
//! needs none of this: it runs in dbbench's own process tree.
//!
//! MariaDB has no function that returns its process id. The server's pid file
//! (`@@pid_file`) names it when dbbench may read the file. On a Unix socket, the kernel also
//! names the process that accepted a connection to it (`SO_PEERCRED`), which needs no
//! permission. Over TCP, the server must be reached at an address of this machine. Whichever
//! way the pid was found, it is taken only when its process is a `mariadbd` (or `mysqld`, the
//! older name) of this machine.

use super::connection::MariaDbConnection;
use crate::model::interference::ServerOnHost;
use crate::util::local_server::{identify, is_local_host, Root, ServerProcess};
use crate::util::procfs::ProcFs;
use mysql_async::Opts;
use std::path::Path;

/// The names a MariaDB server's process has here.
const NAMES: [&str; 2] = ["mariadbd", "mysqld"];

/// The server's process on this machine, or `None` for a server elsewhere (or one whose process
/// cannot be told).
pub async fn server_on_host(server: &Opts, conn: &mut MariaDbConnection) -> Option<ServerOnHost> {
    if server.socket().is_none() && !is_local_host(server.ip_or_hostname()) {
        return None;
    }
    let proc = ProcFs::system();
    if let Some((file, pid)) = pid_file(conn).await {
        if let Some(found) = named(&proc, pid, &format!("its pid file {file}")) {
            return Some(found);
        }
    }
    let socket = server.socket()?;
    let pid = peer_pid(Path::new(socket))?;
    named(&proc, pid, &format!("the process that accepts on {socket}"))
}

/// The server process `pid`, under either of its names.
fn named(proc: &ProcFs, pid: u32, found: &str) -> Option<ServerOnHost> {
    NAMES
        .iter()
        .find_map(|name| identify(proc, process(pid, name), found))
}

/// MariaDB's one server process: `mariadbd` serves every session on a thread of its own.
pub fn process(pid: u32, name: &'static str) -> ServerProcess {
    ServerProcess {
        pid,
        name,
        root: Root::Itself {
            own: "MariaDB's server process",
            watchdog: "the parent of MariaDB's server process",
        },
    }
}

/// The pid file the server names, and the pid in it, when dbbench may read it.
async fn pid_file(conn: &mut MariaDbConnection) -> Option<(String, u32)> {
    let rows = conn.query("SELECT @@pid_file", &[]).await.ok()?;
    let file: String = rows.first()?.get(0).ok()?;
    let pid = read_pid(Path::new(&file))?;
    Some((file, pid))
}

/// The pid in the file `path` the server named: read only when it is a regular file, and only
/// its first 32 bytes (a FIFO would hold the read forever, `/dev/zero` would fill the memory;
/// opened without blocking, so opening a FIFO does not wait for a writer either).
fn read_pid(path: &Path) -> Option<u32> {
    use std::io::Read;
    use std::os::unix::fs::OpenOptionsExt;
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_CLOEXEC)
        .open(path)
        .ok()?;
    if !file.metadata().ok()?.is_file() {
        return None;
    }
    let mut text = String::new();
    file.take(32).read_to_string(&mut text).ok()?;
    text.trim().parse().ok()
}

/// The process that accepts connections on `socket`, from the kernel's credentials of a
/// connection made to it (closed again before any login: the server logs it as an "Aborted
/// connection … closed normally without authentication" warning, which is why the pid file is
/// asked first).
fn peer_pid(socket: &Path) -> Option<u32> {
    use std::os::fd::AsRawFd;
    let stream = crate::util::local_server::connect_now(socket).ok()?;
    let mut cred = libc::ucred {
        pid: 0,
        uid: 0,
        gid: 0,
    };
    let mut len = std::mem::size_of::<libc::ucred>() as libc::socklen_t;
    // SAFETY: getsockopt writes at most `len` bytes into `cred`, a `ucred` as SO_PEERCRED
    // expects, for a socket this function owns.
    let rc = unsafe {
        libc::getsockopt(
            stream.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_PEERCRED,
            (&mut cred as *mut libc::ucred).cast(),
            &mut len,
        )
    };
    (rc == 0 && cred.pid > 0).then_some(cred.pid as u32)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_process_that_accepts_on_a_socket_is_named_by_the_kernel() {
        let dir = std::env::temp_dir().join(format!("dbbench-peer-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("sock");
        let listener = std::os::unix::net::UnixListener::bind(&path).unwrap();
        // The listener is this process: the kernel names it as the peer.
        assert_eq!(peer_pid(&path), Some(std::process::id()));
        drop(listener);
        std::fs::remove_dir_all(&dir).unwrap();
        assert_eq!(peer_pid(&path), None, "no socket, no process");
    }

    #[test]
    fn a_pid_file_is_read_only_when_regular_and_only_its_start() {
        let dir = tempfile::tempdir().unwrap();
        let pid = dir.path().join("mariadbd.pid");
        std::fs::write(&pid, "4242\n").unwrap();
        assert_eq!(read_pid(&pid), Some(4242));
        let fifo = dir.path().join("fifo");
        let name = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        // SAFETY: mkfifo reads a NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(name.as_ptr(), 0o600) }, 0);
        let started = std::time::Instant::now();
        assert_eq!(read_pid(&fifo), None, "a FIFO is no pid file");
        assert_eq!(read_pid(Path::new("/dev/zero")), None);
        assert!(started.elapsed() < std::time::Duration::from_secs(2));
        std::fs::write(&pid, format!("{}4242", " ".repeat(30))).unwrap();
        assert_eq!(read_pid(&pid), Some(42), "only 32 bytes are read");
    }

    #[test]
    fn only_a_mariadb_process_is_the_server() {
        // This test's own process is no `mariadbd`: nothing is taken.
        let me = std::process::id();
        assert_eq!(named(&ProcFs::system(), me, "a test"), None);
    }
}
