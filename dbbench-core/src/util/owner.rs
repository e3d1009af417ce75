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
//! leftovers are never removed from here. Why the boot and the machine id: a marker from an
//! earlier boot of *this machine* (`/etc/machine-id` the same) names a process that cannot still
//! run, whatever PID now has its number; but another machine of the same host name (cloned VM
//! images named `ubuntu`, compose `hostname:`) has another boot id too, so a boot that differs
//! means gone only when both machine ids are known and equal, and elsewhere otherwise.
//!
//! Why `kill(pid, 0)`: `/proc/<pid>` may be unreadable for a live process (`hidepid=2`, another
//! user's), so only the kernel's "no such process" (`ESRCH`) makes an owner gone; a start time
//! read and different makes a reused PID gone. This is the one judgement for every marker:
//! sweeps and claims on every backend ask [`Owner::liveness`], and a marker of an older version
//! with no host names no owner this host can judge.

use crate::model::host::hostname;

/// The owner of something dbbench created.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Owner {
    /// The host it ran on (empty when the marker did not say: never this host's to judge).
    pub host: String,
    /// `/etc/machine-id` of its machine, when known.
    pub machine: Option<String>,
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
    /// It ran on another host (or a machine of the same name), or in another PID namespace of
    /// this one; this process cannot tell, so it is never touched.
    Elsewhere,
}

impl Owner {
    /// This process.
    pub fn this() -> Owner {
        let pid = std::process::id();
        Owner {
            host: hostname(),
            machine: machine_id(),
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
        if let Some(machine) = &self.machine {
            text.push_str(&format!("owner_machine={machine}\n"));
        }
        if let Some(ns) = self.pid_ns {
            text.push_str(&format!("owner_pidns={ns}\n"));
        }
        text
    }

    /// The owner a marker's text names, also in the older form `created by dbbench, pid N` (no
    /// host: unknown, so [`Liveness::Elsewhere`]; no start time).
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
            host: field("owner_host=").unwrap_or_default().to_string(),
            machine: field("owner_machine=").map(str::to_string),
            pid,
            start: field("owner_start=").and_then(|s| s.parse().ok()),
            boot: field("owner_boot=").map(str::to_string),
            pid_ns: field("owner_pidns=").and_then(|s| s.parse().ok()),
        })
    }

    /// Whether the owner still runs, seen from this process.
    pub fn liveness(&self) -> Liveness {
        self.liveness_from(&Owner::this())
    }

    /// Whether the owner still runs, seen from `here` (normally [`Owner::this`]).
    pub fn liveness_from(&self, here: &Owner) -> Liveness {
        if self.host.is_empty() || self.host != here.host {
            return Liveness::Elsewhere;
        }
        // Known on both sides only: markers of older versions name none of these.
        let differ =
            |a: &Option<String>, b: &Option<String>| matches!((a, b), (Some(a), Some(b)) if a != b);
        if differ(&self.machine, &here.machine) {
            return Liveness::Elsewhere;
        }
        if differ(&self.boot, &here.boot) {
            // An earlier boot of this machine: every process of it is gone. Another machine of
            // the same name (no machine id to tell): not this host's to judge.
            return match (&self.machine, &here.machine) {
                (Some(a), Some(b)) if a == b => Liveness::Gone,
                _ => Liveness::Elsewhere,
            };
        }
        if matches!((self.pid_ns, here.pid_ns), (Some(a), Some(b)) if a != b) {
            return Liveness::Elsewhere;
        }
        if !process_exists(self.pid) {
            return Liveness::Gone;
        }
        match (process_start(self.pid), self.start) {
            (Some(now), Some(then)) if now != then => Liveness::Gone,
            // Its start unreadable (`hidepid`), or not recorded: a process of that PID runs.
            _ => Liveness::Alive,
        }
    }

    /// Whether this is the owner of this very process (host, PID and start time).
    pub fn is_this_process(&self) -> bool {
        let me = Owner::this();
        self.host == me.host && self.pid == me.pid && self.start == me.start
    }

    /// Refuses to take over `what` (a database or directory of the name this process wants)
    /// unless its owner is this process or gone: PIDs repeat across containers and hosts, so
    /// the same name may be another run's, in use.
    pub fn may_take(&self, what: &str) -> std::result::Result<(), String> {
        if self.is_this_process() || self.liveness() == Liveness::Gone {
            return Ok(());
        }
        Err(format!(
            "{what} already exists and belongs to {}, which may still be running; dbbench \
             leaves it alone (remove it once that run has ended)",
            self.describe()
        ))
    }

    /// `pid 5353 on host, started at tick 123`, for messages.
    pub fn describe(&self) -> String {
        match self.start {
            Some(start) => format!("pid {} on {}, started at tick {start}", self.pid, self.host),
            None => format!("pid {} on {}", self.pid, self.host),
        }
    }
}

/// This process's tag in the names of what it creates: its PID and four random letters drawn
/// once, so that a run of another container or host with the same PID (containers start at the
/// same low PIDs) asks for other names instead of another run's live database.
pub fn process_tag() -> &'static str {
    static TAG: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    TAG.get_or_init(|| {
        let letters: String = (0..4).map(|_| fastrand::lowercase()).collect();
        format!("{}{letters}", std::process::id())
    })
}

/// Whether a process of PID `pid` exists: the kernel's answer to `kill(pid, 0)`, which is
/// `ESRCH` only when there is none (`EPERM` is another user's live process). A PID no process
/// can have (0, or beyond `i32::MAX`, which `kill` would read as a process group) exists not.
pub fn process_exists(pid: u32) -> bool {
    let Ok(pid) = i32::try_from(pid) else {
        return false;
    };
    if pid <= 0 {
        return false;
    }
    // SAFETY: signal 0 sends nothing; kill only checks that the process exists.
    let rc = unsafe { libc::kill(pid, 0) };
    rc == 0 || std::io::Error::last_os_error().raw_os_error() != Some(libc::ESRCH)
}

/// This machine's id (`/etc/machine-id`), when readable.
pub fn machine_id() -> Option<String> {
    std::fs::read_to_string("/etc/machine-id")
        .ok()
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
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
    fn older_markers_name_only_the_pid_and_no_host_to_judge() {
        let owner = Owner::parse("created by dbbench, pid 4242\n").unwrap();
        assert_eq!((owner.pid, owner.start), (4242, None));
        assert_eq!(owner.liveness(), Liveness::Elsewhere);
        let gone = Owner::parse(&format!("owner_pid={}\n", u32::MAX - 1)).unwrap();
        assert_eq!(gone.liveness(), Liveness::Elsewhere);
        assert_eq!(Owner::parse("something else"), None);
    }

    #[test]
    fn another_machine_of_the_same_name_is_elsewhere_an_earlier_boot_here_is_gone() {
        let here = Owner {
            machine: Some("m-here".into()),
            boot: Some("b-now".into()),
            ..Owner::this()
        };
        let other_boot = Owner {
            pid: u32::MAX - 1,
            boot: Some("b-other".into()),
            ..here.clone()
        };
        assert_eq!(other_boot.liveness_from(&here), Liveness::Gone);
        // Another machine of the same host name, or one that did not say which: its boot id
        // differs too, and says nothing about its processes.
        for machine in [Some("m-other".to_string()), None] {
            let twin = Owner {
                machine,
                ..other_boot.clone()
            };
            assert_eq!(twin.liveness_from(&here), Liveness::Elsewhere);
        }
    }

    #[test]
    fn the_process_tag_is_the_pid_and_a_nonce_drawn_once() {
        let tag = process_tag();
        let pid = std::process::id().to_string();
        let nonce = tag.strip_prefix(&pid).unwrap();
        assert_eq!(nonce.len(), 4, "{tag}");
        assert!(nonce.chars().all(|c| c.is_ascii_lowercase()), "{tag}");
        assert_eq!(process_tag(), tag);
    }

    #[test]
    fn only_the_kernel_says_gone_an_unreadable_start_is_alive() {
        // PID 1 runs and may be another user's (`EPERM` from kill); its start time may be
        // unreadable under `hidepid`: an owner without a start to compare is alive.
        let init = Owner {
            pid: 1,
            start: None,
            ..Owner::this()
        };
        assert_eq!(init.liveness(), Liveness::Alive);
        assert!(process_exists(1) && process_exists(std::process::id()));
        assert!(!process_exists(0) && !process_exists(u32::MAX - 1));
    }
}
