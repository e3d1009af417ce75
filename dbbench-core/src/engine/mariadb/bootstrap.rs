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

/// What `file`, a server's log, says of why it stopped: its first error lines, or its last lines
/// when it has none. A server that aborts ends its log with a dump of its limits and stack, so
/// the last lines alone would hide the cause ("InnoDB: … No space left on device").
pub(super) fn tail(file: &Path) -> String {
    excerpt(&std::fs::read_to_string(file).unwrap_or_default())
}

fn excerpt(text: &str) -> String {
    let lines: Vec<&str> = text.lines().collect();
    // Each error once (InnoDB repeats a failing write's line for every retry), the first four
    // and the last, which is the abort's own where there is one.
    let mut errors: Vec<&str> = Vec::new();
    for line in &lines {
        let Some(at) = line
            .find("[ERROR]")
            .or_else(|| line.find("Assertion failure"))
        else {
            continue;
        };
        if !errors.iter().any(|e| e.ends_with(&line[at..])) {
            errors.push(line);
        }
    }
    if errors.len() > 5 {
        errors.drain(4..errors.len() - 1);
    }
    if errors.is_empty() {
        lines[lines.len().saturating_sub(8)..].join(" | ")
    } else {
        errors.join(" | ")
    }
}

#[cfg(test)]
mod tests {
    use super::excerpt;

    #[test]
    fn the_cause_is_taken_before_an_aborted_servers_dump() {
        let log = "2026-12-05 0 [Note] ready for connections.\n\
                   2026-12-05 5 [ERROR] InnoDB: Write to file ./ibdata1 failed at offset 1. \
                   No space left on device\n\
                   2026-12-05 0 [ERROR] mariadbd got signal 6 ;\n\
                   Max pending signals 96367\nCore pattern: core\n";
        let said = excerpt(log);
        assert!(said.contains("No space left on device"), "{said}");
        assert!(said.contains("got signal 6"), "{said}");
        assert!(!said.contains("Core pattern"), "{said}");
        // A repeated error is said once.
        let repeated =
            "1 [ERROR] InnoDB: failed with error 28\n2 [ERROR] InnoDB: failed with error 28";
        assert_eq!(excerpt(repeated), "1 [ERROR] InnoDB: failed with error 28");
        // Without an error line, the last lines.
        assert_eq!(excerpt("a\nb\nc"), "a | b | c");
    }
}
