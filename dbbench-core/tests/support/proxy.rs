//! A TCP proxy that stops forwarding on command: a server that falls silent without closing its
//! connections (a network partition, a frozen VM), for the tests of the remote paths.
//!
//! It listens on a loopback port and forwards each connection to its upstream (a TCP address, or
//! the Unix socket of a managed PostgreSQL cluster, so a local server can stand for a remote one).
//! After [`silence`], nothing more is forwarded in either direction, connections stay open, and a
//! new connection is accepted and never answered: the client sees a server that says nothing.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::os::unix::net::UnixStream;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

/// Where the proxy forwards to.
#[derive(Debug, Clone)]
pub enum Upstream {
    /// `host:port`.
    Tcp(String),
    /// A Unix socket file.
    Unix(PathBuf),
}

/// Whether every proxy of this process has gone silent.
static SILENT: AtomicBool = AtomicBool::new(false);

/// Stops every proxy of this process forwarding (from a body, a test, any thread).
pub fn silence() {
    SILENT.store(true, Ordering::SeqCst);
}

/// One end of a forwarded connection.
trait Socket: Read + Write + Send + 'static {
    fn twin(&self) -> std::io::Result<Box<dyn Socket>>;
    fn patient(&self, wait: Duration) -> std::io::Result<()>;
    fn close(&self);
}

impl Socket for TcpStream {
    fn twin(&self) -> std::io::Result<Box<dyn Socket>> {
        Ok(Box::new(self.try_clone()?))
    }
    fn patient(&self, wait: Duration) -> std::io::Result<()> {
        self.set_read_timeout(Some(wait))
    }
    fn close(&self) {
        let _ = self.shutdown(std::net::Shutdown::Both);
    }
}

impl Socket for UnixStream {
    fn twin(&self) -> std::io::Result<Box<dyn Socket>> {
        Ok(Box::new(self.try_clone()?))
    }
    fn patient(&self, wait: Duration) -> std::io::Result<()> {
        self.set_read_timeout(Some(wait))
    }
    fn close(&self) {
        let _ = self.shutdown(std::net::Shutdown::Both);
    }
}

/// Starts a proxy to `upstream` on threads of its own (they live as long as the process);
/// returns its loopback port.
pub fn start(upstream: Upstream) -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::Builder::new()
        .name("test-proxy".into())
        .spawn(move || {
            for client in listener.incoming().flatten() {
                if SILENT.load(Ordering::SeqCst) {
                    // Accepted, never answered: held open for the process's life.
                    std::mem::forget(client);
                    continue;
                }
                let server: Box<dyn Socket> = match &upstream {
                    Upstream::Tcp(addr) => match TcpStream::connect(addr) {
                        Ok(s) => Box::new(s),
                        Err(_) => continue,
                    },
                    Upstream::Unix(path) => match UnixStream::connect(path) {
                        Ok(s) => Box::new(s),
                        Err(_) => continue,
                    },
                };
                let client: Box<dyn Socket> = Box::new(client);
                let (Ok(client_2), Ok(server_2)) = (client.twin(), server.twin()) else {
                    continue;
                };
                std::thread::spawn(move || forward(client, server_2));
                std::thread::spawn(move || forward(server, client_2));
            }
        })
        .unwrap();
    port
}

/// Copies `from` to `to` until either closes or the proxy goes silent; then holds both open,
/// saying nothing, for the process's life.
fn forward(mut from: Box<dyn Socket>, mut to: Box<dyn Socket>) {
    // Short reads, so a silence is noticed while a side is idle.
    if from.patient(Duration::from_millis(50)).is_err() {
        return;
    }
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        if SILENT.load(Ordering::SeqCst) {
            std::mem::forget((from, to));
            return;
        }
        let n = match from.read(&mut buf) {
            Ok(0) => {
                // One side closed: so does the other.
                to.close();
                return;
            }
            Ok(n) => n,
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                ) =>
            {
                continue
            }
            Err(_) => {
                to.close();
                return;
            }
        };
        if SILENT.load(Ordering::SeqCst) {
            std::mem::forget((from, to));
            return;
        }
        if to.write_all(&buf[..n]).is_err() {
            return;
        }
    }
}
