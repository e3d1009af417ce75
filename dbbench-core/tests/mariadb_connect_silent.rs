//! An existing MariaDB server (`DBBENCH_MARIADB`) that accepts the TCP connection and never
//! sends its handshake, as a stopped server behind a live listener or a wrong port's service
//! would: the driver has no connect timeout of its own, so without dbbench's bound the backend's
//! open would wait forever (security finding 12). Here it gives up within the connect deadline
//! (`DBBENCH_DEADLINE_CONNECT`, set to 2 s for this binary alone) with a sentence that names the
//! address and the variable, and not the password. Needs no MariaDB programs: the "server" is a
//! `TcpListener` that accepts and says nothing.

use dbbench_core::__internals::mariadb::MariaDbBackend;
use std::net::TcpListener;
use std::sync::mpsc;
use std::time::{Duration, Instant};

const PASSWORD: &str = "Zq9-never-shown";

/// Accepts every connection on a loopback port and keeps it open without a byte, for a minute
/// at most; returns the port.
fn silent_listener() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        let mut held = Vec::new();
        let started = Instant::now();
        listener.set_nonblocking(true).unwrap();
        while started.elapsed() < Duration::from_secs(60) {
            match listener.accept() {
                Ok((socket, _)) => held.push(socket),
                Err(_) => std::thread::sleep(Duration::from_millis(20)),
            }
        }
    });
    port
}

#[test]
fn a_server_that_never_sends_its_handshake_is_given_up_within_the_connect_deadline() {
    // Before anything reads it; this binary holds this one test.
    std::env::set_var("DBBENCH_DEADLINE_CONNECT", "2s");
    let port = silent_listener();
    let url = format!("mysql://bench:{PASSWORD}@127.0.0.1:{port}/");
    let (tx, rx) = mpsc::channel();
    let started = Instant::now();
    // On a thread of its own: a connect that never ends fails this test by its own deadline
    // below instead of hanging it.
    std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let opened = rt.block_on(MariaDbBackend::existing(&url));
        let _ = tx.send(opened.map(|_| ()).map_err(|e| e.to_string()));
    });
    let outcome = rx
        .recv_timeout(Duration::from_secs(20))
        .expect("the connect to a silent server was still waiting after 20 s");
    let elapsed = started.elapsed();
    let err = outcome.expect_err("a server that never answers cannot be opened");
    eprintln!("gave up after {elapsed:?}: {err}");
    assert!(
        elapsed >= Duration::from_secs(2) && elapsed < Duration::from_secs(6),
        "{elapsed:?}"
    );
    assert!(err.contains("no reply within 2 s"), "{err}");
    assert!(err.contains(&format!("127.0.0.1:{port}")), "{err}");
    assert!(err.contains("DBBENCH_DEADLINE_CONNECT"), "{err}");
    assert!(!err.contains(PASSWORD), "{err}");
}
