//! Another client of a server, for the server-busy tests: the switch a benchmark's body turns
//! on for the windows the other client should write in, and the check that exactly those
//! windows were marked `the server was busy: …`.

use dbbench_core::results::RunResult;
use std::sync::atomic::{AtomicU8, Ordering};
use std::time::{Duration, Instant};

/// Whether the other client should write: idle, writing, or asked to stop (then it reports
/// what it must and says it stopped).
pub struct Switch(AtomicU8);

const IDLE: u8 = 0;
const WRITE: u8 = 1;
const STOP: u8 = 2;

/// The test binary's one switch.
pub static WRITING: Switch = Switch(AtomicU8::new(IDLE));

impl Switch {
    /// The body: write from now.
    pub fn start(&self) {
        self.0.store(WRITE, Ordering::SeqCst);
    }

    /// The body: stop, and wait (up to 10 s) until the other client has.
    pub async fn stop(&self) {
        self.0.store(STOP, Ordering::SeqCst);
        let asked = Instant::now();
        while self.0.load(Ordering::SeqCst) != IDLE && asked.elapsed() < Duration::from_secs(10) {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    }

    /// The other client: whether to write now.
    pub fn wanted(&self) -> bool {
        self.0.load(Ordering::SeqCst) == WRITE
    }

    /// The other client: whether it is asked to stop.
    pub fn stopping(&self) -> bool {
        self.0.load(Ordering::SeqCst) == STOP
    }

    /// The other client: it has stopped.
    pub fn stopped(&self) {
        self.0.store(IDLE, Ordering::SeqCst);
    }
}

/// Every window read the server's activity from `source`; the windows the body ran while the
/// other client wrote (`neighbour_writing` 1) are marked server-busy, the others are not
/// (whatever this machine's guard says of them). Prints each window's figures.
pub fn check_windows(runs: &[RunResult], source: &str) {
    let (mut busy, mut quiet) = (0, 0);
    for (i, run) in runs.iter().enumerate() {
        let window = run.interference.as_ref().expect("the window was watched");
        let server = window
            .server
            .as_ref()
            .expect("the server's activity was read");
        let writing = run.counts["neighbour_writing"] == 1;
        eprintln!(
            "measured: window {i} ({:.2} s), other client {}: other sessions {:?}, transactions \
             {:?}, rows written {:?}, reads {:?}, unavailable {:?}; disturbed by {:?}",
            window.window_s,
            if writing { "writing" } else { "idle" },
            server.other_sessions,
            server.other_transactions,
            server.other_rows_written,
            server.other_reads,
            server.unavailable,
            window.disturbed_by,
        );
        assert!(server.source.contains(source), "{}", server.source);
        assert!(window.judged, "window {i} too short to judge");
        assert_eq!(
            window.server_busy(),
            writing,
            "window {i}: {:?}, {server:?}",
            window.disturbed_by
        );
        // This machine may be busy too (other builds): its reasons are the client guard's.
        if writing {
            busy += 1;
        } else {
            quiet += 1;
        }
    }
    assert!(
        busy >= 2 && quiet >= 3,
        "{busy} busy and {quiet} quiet windows"
    );
}
