//! Ctrl-C and SIGTERM: the first stops the run in flight the way a timeout does (every live
//! [`Cancel`](crate::util::cancel::Cancel) is fired, so the body's statements stop and teardown
//! runs) and the runner starts nothing new; a second one exits at once with 130.
//!
//! The first signal also starts the interrupt's budget (`util::deadline`, 25 s by default):
//! every wait after it is cut to what is left, and when the budget is spent with the process
//! still running (a server that answers nothing, a body that ignores its cancel), the signal
//! thread ends what dbbench holds here (`util::leftover`: a managed server is killed and its
//! directories removed), names what it leaves on a server and how the next run removes it, and
//! exits with 130. So one Ctrl-C ends the run in bounded time whatever the server does.
//!
//! Why a self-pipe and a thread instead of a crate: a signal handler may only do
//! async-signal-safe work, so the handler counts the signal and writes one byte to a pipe; a
//! thread reads the pipe and does the rest (locks, closures, printing). `libc` is already a
//! dependency, so this costs no new crate. The handlers are installed once per process by
//! [`install`], which both front ends call before a run (under `cargo test`, nextest and the
//! suite binary alike).

use std::sync::atomic::{AtomicI32, AtomicUsize, Ordering};
use std::sync::{Once, OnceLock};
use std::time::Instant;

/// The signal that arrived first (0: none).
static FIRST: AtomicI32 = AtomicI32::new(0);
/// Signals received so far.
static COUNT: AtomicUsize = AtomicUsize::new(0);
/// The pipe's write end, for the handler.
static PIPE_WRITE: AtomicI32 = AtomicI32::new(-1);
/// When the signal thread saw the first signal.
static RECEIVED_AT: OnceLock<Instant> = OnceLock::new();

/// The exit status of a process stopped by a signal, as shells report Ctrl-C.
pub const EXIT_INTERRUPTED: i32 = 130;

extern "C" fn on_signal(signal: libc::c_int) {
    let _ = FIRST.compare_exchange(0, signal, Ordering::SeqCst, Ordering::SeqCst);
    if COUNT.fetch_add(1, Ordering::SeqCst) >= 1 {
        // The second signal: the user wants out now. `_exit` is async-signal-safe.
        const MSG: &[u8] = b"\ndbbench: second signal, exiting at once (teardown skipped)\n";
        unsafe {
            libc::write(2, MSG.as_ptr().cast(), MSG.len());
            libc::_exit(EXIT_INTERRUPTED);
        }
    }
    let fd = PIPE_WRITE.load(Ordering::SeqCst);
    if fd >= 0 {
        let byte = 1u8;
        unsafe {
            libc::write(fd, (&byte as *const u8).cast(), 1);
        }
    }
}

/// Installs the SIGINT and SIGTERM handlers (once per process).
pub fn install() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        let mut fds = [0 as libc::c_int; 2];
        // SAFETY: plain POSIX calls on a local array and static handler.
        if unsafe { libc::pipe(fds.as_mut_ptr()) } != 0 {
            return;
        }
        let (read, write) = (fds[0], fds[1]);
        PIPE_WRITE.store(write, Ordering::SeqCst);
        let spawned = std::thread::Builder::new()
            .name("dbbench-signals".into())
            .spawn(move || watch(read));
        if spawned.is_err() {
            return;
        }
        for signal in [libc::SIGINT, libc::SIGTERM] {
            unsafe {
                let mut action: libc::sigaction = std::mem::zeroed();
                action.sa_sigaction = on_signal as extern "C" fn(libc::c_int) as usize;
                action.sa_flags = libc::SA_RESTART;
                libc::sigemptyset(&mut action.sa_mask);
                libc::sigaction(signal, &action, std::ptr::null_mut());
            }
        }
    });
}

/// The signal thread: waits for the handler's byte, then stops every live database's run.
fn watch(read: libc::c_int) {
    let mut byte = 0u8;
    loop {
        let n = unsafe { libc::read(read, (&mut byte as *mut u8).cast(), 1) };
        if n == 1 {
            if let Some(signal) = received() {
                let _ = RECEIVED_AT.set(Instant::now());
                let budget = crate::util::deadline::Deadline::Interrupt
                    .configured()
                    .unwrap_or(crate::util::deadline::Deadline::Interrupt.default_limit());
                crate::util::console::say(&format!(
                    "\ndbbench › {signal}: stopping the repetition in flight and tearing it \
                     down within {} (a second signal exits at once)",
                    crate::util::deadline::spoken(budget)
                ));
                let _ = std::thread::Builder::new()
                    .name("dbbench-interrupt-deadline".into())
                    .spawn(move || {
                        std::thread::sleep(budget);
                        forced_exit(signal, budget);
                    });
                crate::util::cancel::fire_all(crate::util::cancel::Stop::Signal(signal));
            }
        } else if n == 0 {
            return;
        }
    }
}

/// The interrupt's budget is spent and the process still runs: end what dbbench holds here, say
/// what is left and how the next run removes it, exit with 130.
fn forced_exit(signal: &str, budget: std::time::Duration) -> ! {
    let lines = crate::util::leftover::end_all();
    let mut message = format!(
        "dbbench › {signal}: the run did not end within {} (a server that does not answer); \
         exiting",
        crate::util::deadline::spoken(budget)
    );
    if lines.is_empty() {
        message.push_str(" (nothing dbbench created was left)");
    }
    for line in lines {
        message.push_str("\n  ");
        message.push_str(&line);
    }
    crate::util::console::say(&message);
    // `_exit`, not `exit`: the runner's thread may hold locks that exit handlers would wait on.
    unsafe { libc::_exit(EXIT_INTERRUPTED) }
}

/// When the first signal arrived (as the signal thread saw it), if one did.
pub fn received_at() -> Option<Instant> {
    RECEIVED_AT.get().copied()
}

/// The first signal received, by name, if one was.
pub fn received() -> Option<&'static str> {
    match FIRST.load(Ordering::SeqCst) {
        0 => None,
        libc::SIGINT => Some("SIGINT"),
        libc::SIGTERM => Some("SIGTERM"),
        _ => Some("a signal"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names() {
        // Nothing was sent to this test process.
        assert_eq!(received(), None);
        install();
        install();
        assert!(PIPE_WRITE.load(Ordering::SeqCst) >= 0);
    }
}
