//! Ctrl-C and SIGTERM: the first stops the run in flight the way a timeout does (every live
//! [`Cancel`](crate::util::cancel::Cancel) is fired, so the body's statements stop and teardown
//! runs) and the runner starts nothing new; a second one exits at once with 130.
//!
//! Why a self-pipe and a thread instead of a crate: a signal handler may only do
//! async-signal-safe work, so the handler counts the signal and writes one byte to a pipe; a
//! thread reads the pipe and does the rest (locks, closures, printing). `libc` is already a
//! dependency, so this costs no new crate. The handlers are installed once per process by
//! [`install`], which both front ends call before a run (under `cargo test`, nextest and the
//! suite binary alike).

use std::sync::atomic::{AtomicI32, AtomicUsize, Ordering};
use std::sync::Once;

/// The signal that arrived first (0: none).
static FIRST: AtomicI32 = AtomicI32::new(0);
/// Signals received so far.
static COUNT: AtomicUsize = AtomicUsize::new(0);
/// The pipe's write end, for the handler.
static PIPE_WRITE: AtomicI32 = AtomicI32::new(-1);

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
                crate::util::console::say(&format!(
                    "\ndbbench › {signal}: stopping the repetition in flight and tearing it \
                     down (a second signal exits at once)"
                ));
                crate::util::cancel::fire_all(crate::util::cancel::Stop::Signal(signal));
            }
        } else if n == 0 {
            return;
        }
    }
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
