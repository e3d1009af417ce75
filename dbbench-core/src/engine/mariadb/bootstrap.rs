//! The bootstrap of a managed instance's data directory: `mariadb-install-db`, waited for under
//! [`Deadline::ServerStart`] and killed when it takes longer, and the last lines of a log for
//! the message when it (or the server after it) fails.

use crate::model::error::{Error, Result};
use crate::util::deadline::{spoken, Deadline};
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

/// Runs `command` (`program`, the installer) to its end; an error when it fails or outlives the
/// start deadline.
pub(super) fn run(mut command: Command, program: &Path) -> Result<()> {
    let mut child = command
        .spawn()
        .map_err(|e| Error::io("cannot run", program, e))?;
    let limit = Deadline::ServerStart.limit()?;
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child
            .try_wait()
            .map_err(|e| Error::io("waiting for", program, e))?
        {
            break status;
        }
        if started.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            return Err(Error::msg(format!(
                "mariadb-install-db did not finish within {} ({} sets this limit)",
                spoken(limit),
                Deadline::ServerStart.env()
            )));
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    if !status.success() {
        return Err(Error::msg(format!("mariadb-install-db failed ({status})")));
    }
    Ok(())
}

/// The last lines of `file`.
pub(super) fn tail(file: &Path) -> String {
    let text = std::fs::read_to_string(file).unwrap_or_default();
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(8)..].join(" | ")
}

