//! Who created a database or directory: host, PID and the process's start time, written into
//! every ownership marker so that a later dbbench process can tell its own leftovers (owner gone)
//! from what a live run is using.
//!
//! Why the start time: PIDs are reused, so "is PID 5353 running?" alone can mistake a new process
//! for the owner and leave a leftover forever (or, the other way round, nothing tells a reused PID
//! apart). The start time is field 22 of `/proc/<pid>/stat` (clock ticks since boot), which stays
//! the same for the life of the process and differs for a new process with the same PID.

use crate::model::host::hostname;

/// The owner of something dbbench created.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Owner {
    /// The host it ran on.
    pub host: String,
    /// Its process id.
    pub pid: u32,
    /// Its start time in clock ticks since boot, when known (markers of older dbbench versions
    /// have none).
    pub start: Option<u64>,
}

/// Whether an owner still runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Liveness {
    /// It runs (or may: a PID with no start time to compare is taken as alive).
    Alive,
    /// No process of that PID and start time runs on this host.
    Gone,
    /// It ran on another host; this host cannot tell, so it is never touched.
    Elsewhere,
}

impl Owner {
    /// This process.
    pub fn this() -> Owner {
        let pid = std::process::id();
        Owner {
            host: hostname(),
            pid,
            start: process_start(pid),
        }
    }

    /// The marker lines: `owner_host=…`, `owner_pid=…`, `owner_start=…`.
    pub fn lines(&self) -> String {
        let mut text = format!("owner_host={}\nowner_pid={}\n", self.host, self.pid);
        if let Some(start) = self.start {
            text.push_str(&format!("owner_start={start}\n"));
        }
        text
    }

    /// The owner a marker's text names, also in the older form `created by dbbench, pid N`
    /// (no host: taken as this one; no start time).
    pub fn parse(text: &str) -> Option<Owner> {
        let field = |key: &str| text.lines().find_map(|l| l.trim().strip_prefix(key));
        let pid = field("owner_pid=")
            .and_then(|p| p.parse().ok())
            .or_else(|| {
                let at = text.find("pid ")? + 4;
                let digits: String = text[at..]
                    .chars()
                    .take_while(char::is_ascii_digit)
                    .collect();
                digits.parse().ok()
            })?;
        Some(Owner {
            host: field("owner_host=").map_or_else(hostname, str::to_string),
            pid,
            start: field("owner_start=").and_then(|s| s.parse().ok()),
        })
    }

    /// Whether the owner still runs, seen from this host.
    pub fn liveness(&self) -> Liveness {
        if self.host != hostname() {
            return Liveness::Elsewhere;
        }
        match (process_start(self.pid), self.start) {
            (None, _) => Liveness::Gone,
            (Some(now), Some(then)) if now != then => Liveness::Gone,
            _ => Liveness::Alive,
        }
    }

    /// `pid 5353 on host, started at tick 123`, for messages.
    pub fn describe(&self) -> String {
        match self.start {
            Some(start) => format!("pid {} on {}, started at tick {start}", self.pid, self.host),
            None => format!("pid {} on {}", self.pid, self.host),
        }
    }
}

/// The start time of process `pid` (field 22 of `/proc/<pid>/stat`), or `None` when no such
/// process runs.
pub fn process_start(pid: u32) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name (field 2) is in parentheses and may itself contain spaces or ')'.
    let after = &stat[stat.rfind(')')? + 1..];
    // `after` starts at field 3 (state); field 22 is the 20th from there.
    after.split_whitespace().nth(19)?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn this_process_is_alive_and_round_trips() {
        let me = Owner::this();
        assert!(me.start.is_some());
        assert_eq!(
            Owner::parse(&format!("created by dbbench\n{}", me.lines())),
            Some(me.clone())
        );
        assert_eq!(me.liveness(), Liveness::Alive);
    }

    #[test]
    fn a_reused_pid_or_a_gone_one_is_gone_another_host_is_not_ours() {
        let me = Owner::this();
        let reused = Owner {
            start: me.start.map(|s| s + 1),
            ..me.clone()
        };
        assert_eq!(reused.liveness(), Liveness::Gone);
        let gone = Owner {
            pid: u32::MAX - 1,
            ..me.clone()
        };
        assert_eq!(gone.liveness(), Liveness::Gone);
        let elsewhere = Owner {
            host: format!("{}-other", me.host),
            pid: u32::MAX - 1,
            ..me
        };
        assert_eq!(elsewhere.liveness(), Liveness::Elsewhere);
    }

    #[test]
    fn older_markers_name_only_the_pid() {
        let owner = Owner::parse("created by dbbench, pid 4242\n").unwrap();
        assert_eq!((owner.pid, owner.start), (4242, None));
        assert_eq!(Owner::parse("something else"), None);
    }
}
