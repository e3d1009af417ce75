//! Who created a database or directory: host, PID, the process's start time, the boot and the
//! PID namespace it ran in, written into every ownership marker so that a later dbbench process
//! can tell its own leftovers (owner gone) from what a live run is using.
//!
//! Why the start time: PIDs are reused, so "is PID 5353 running?" alone can mistake a new process
//! for the owner and leave a leftover forever (or, the other way round, nothing tells a reused PID
//! apart). The start time is field 22 of `/proc/<pid>/stat` (clock ticks since boot), which stays
//! the same for the life of the process and differs for a new process with the same PID.
//!
//! Why the PID namespace: two containers can share a host name (`--uts=host`, or the same
//! `--hostname`) and a work dir, but not see each other's processes. From another PID namespace
//! "no process 5353 runs" proves nothing, so such an owner is [`Liveness::Elsewhere`] and its
//! leftovers are never removed from here. Why the boot: a marker from an earlier boot of this
//! machine names a process that cannot still run, whatever PID now has its number.

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
    /// The boot it ran in (`/proc/sys/kernel/random/boot_id`), when known.
    pub boot: Option<String>,
    /// Its PID namespace (the inode of `/proc/self/ns/pid`), when known.
    pub pid_ns: Option<u64>,
}

/// Whether an owner still runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Liveness {
    /// It runs (or may: a PID with no start time to compare is taken as alive).
    Alive,
    /// No process of that PID and start time runs on this host.
    Gone,
    /// It ran on another host, or in another PID namespace of this one; this process cannot tell,
    /// so it is never touched.
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
            boot: boot_id(),
            pid_ns: pid_namespace(),
        }
    }

    /// The marker lines: `owner_host=…`, `owner_pid=…`, `owner_start=…`.
    pub fn lines(&self) -> String {
        let mut text = format!("owner_host={}\nowner_pid={}\n", self.host, self.pid);
        if let Some(start) = self.start {
            text.push_str(&format!("owner_start={start}\n"));
        }
        if let Some(boot) = &self.boot {
            text.push_str(&format!("owner_boot={boot}\n"));
        }
        if let Some(ns) = self.pid_ns {
            text.push_str(&format!("owner_pidns={ns}\n"));
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
            boot: field("owner_boot=").map(str::to_string),
            pid_ns: field("owner_pidns=").and_then(|s| s.parse().ok()),
        })
    }

    /// Whether the owner still runs, seen from this host.
    pub fn liveness(&self) -> Liveness {
        if self.host != hostname() {
            return Liveness::Elsewhere;
        }
        // Known on both sides only: markers of older versions name neither.
        let differs = |theirs: Option<&str>, ours: Option<&str>| matches!((theirs, ours), (Some(a), Some(b)) if a != b);
        if differs(self.boot.as_deref(), boot_id().as_deref()) {
            return Liveness::Gone;
        }
        let ns = |n: Option<u64>| n.map(|n| n.to_string());
        if differs(ns(self.pid_ns).as_deref(), ns(pid_namespace()).as_deref()) {
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

/// This machine's boot id, when the kernel says.
pub fn boot_id() -> Option<String> {
    std::fs::read_to_string("/proc/sys/kernel/random/boot_id")
        .ok()
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
}

/// This process's PID namespace: the inode in `/proc/self/ns/pid`'s link (`pid:[4026531836]`).
pub fn pid_namespace() -> Option<u64> {
    let link = std::fs::read_link("/proc/self/ns/pid").ok()?;
    let text = link.to_string_lossy();
    text.strip_prefix("pid:[")?.strip_suffix(']')?.parse().ok()
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
    fn another_pid_namespace_is_never_ours_an_earlier_boot_is_gone() {
        let me = Owner::this();
        assert!(me.boot.is_some() && me.pid_ns.is_some(), "{me:?}");
        assert!(me.lines().contains("owner_pidns="));
        // A live PID, but seen from another namespace: the same number says nothing.
        let other_ns = Owner {
            pid_ns: me.pid_ns.map(|n| n + 1),
            ..me.clone()
        };
        assert_eq!(other_ns.liveness(), Liveness::Elsewhere);
        let gone_elsewhere = Owner {
            pid: u32::MAX - 1,
            ..other_ns
        };
        assert_eq!(gone_elsewhere.liveness(), Liveness::Elsewhere);
        let earlier_boot = Owner {
            boot: Some("00000000-0000-0000-0000-000000000000".into()),
            ..me.clone()
        };
        assert_eq!(earlier_boot.liveness(), Liveness::Gone);
        let parsed = Owner::parse(&me.lines()).unwrap();
        assert_eq!(parsed, me);
    }

    #[test]
    fn older_markers_name_only_the_pid() {
        let owner = Owner::parse("created by dbbench, pid 4242\n").unwrap();
        assert_eq!((owner.pid, owner.start), (4242, None));
        assert_eq!(Owner::parse("something else"), None);
    }
}
