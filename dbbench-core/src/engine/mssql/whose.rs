//! Who made an instance change or a database, told apart well enough to decide whether that
//! process still runs: host name, machine id, boot id, PID namespace, PID and start time.
//!
//! Why more than `util::owner`'s host, PID and start time (finding B6 of the third review): two
//! containers that share the host's name (`--network host`, Kubernetes `hostNetwork`) but have
//! PID namespaces of their own cannot see each other's processes, so "no `/proc/<pid>`" there
//! says nothing about the other container's run. The PID namespace is the inode of
//! `/proc/self/ns/pid`; the boot id (`/proc/sys/kernel/random/boot_id`) changes at every boot,
//! so an owner of an earlier boot of the same machine (`/etc/machine-id`) is gone for sure.
//! Whatever cannot be compared is left alone: a wrong "gone" undoes a live run's changes.

use crate::util::owner::{Liveness, Owner};
use serde::{Deserialize, Serialize};

/// The owner of an instance change or a database.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Whose {
    /// Host name.
    pub host: String,
    /// `/etc/machine-id`, when readable.
    #[serde(default)]
    pub machine: Option<String>,
    /// `/proc/sys/kernel/random/boot_id`, when readable.
    #[serde(default)]
    pub boot: Option<String>,
    /// The inode of `/proc/self/ns/pid`, when readable.
    #[serde(default)]
    pub pid_ns: Option<u64>,
    /// Process id.
    pub pid: u32,
    /// Start time in clock ticks since boot (`/proc/<pid>/stat` field 22).
    #[serde(default)]
    pub start: Option<u64>,
}

fn read_trimmed(path: &str) -> Option<String> {
    std::fs::read_to_string(path)
        .ok()
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
}

/// This system's PID namespace: the inode `/proc/self/ns/pid` links to (`pid:[4026531836]`).
fn pid_namespace() -> Option<u64> {
    let link = std::fs::read_link("/proc/self/ns/pid").ok()?;
    let text = link.to_string_lossy();
    text.strip_prefix("pid:[")?.strip_suffix(']')?.parse().ok()
}

impl Whose {
    /// This process.
    pub fn this() -> Whose {
        let owner = Owner::this();
        Whose {
            host: owner.host,
            machine: read_trimmed("/etc/machine-id"),
            boot: read_trimmed("/proc/sys/kernel/random/boot_id"),
            pid_ns: pid_namespace(),
            pid: owner.pid,
            start: owner.start,
        }
    }

    /// The marker fields beyond `util::owner`'s: `owner_boot=… owner_pidns=…`.
    pub fn marker_fields(&self) -> String {
        let mut out = Vec::new();
        if let Some(boot) = &self.boot {
            out.push(format!("owner_boot={boot}"));
        }
        if let Some(machine) = &self.machine {
            out.push(format!("owner_machine={machine}"));
        }
        if let Some(ns) = self.pid_ns {
            out.push(format!("owner_pidns={ns}"));
        }
        out.join(" ")
    }

    /// `owner` with the fields [`marker_fields`](Self::marker_fields) wrote into `marker`.
    pub fn from_marker(owner: &Owner, marker: &str) -> Whose {
        let field = |key: &str| {
            marker
                .split_whitespace()
                .find_map(|w| w.strip_prefix(key))
                .map(str::to_string)
        };
        Whose {
            host: owner.host.clone(),
            machine: field("owner_machine="),
            boot: field("owner_boot="),
            pid_ns: field("owner_pidns=").and_then(|n| n.parse().ok()),
            pid: owner.pid,
            start: owner.start,
        }
    }

    /// Whether this owner still runs, as seen from `here` (normally [`Whose::this`]).
    pub fn liveness_from(&self, here: &Whose) -> Liveness {
        if self.host != here.host {
            return Liveness::Elsewhere;
        }
        let differ =
            |a: &Option<String>, b: &Option<String>| matches!((a, b), (Some(a), Some(b)) if a != b);
        if differ(&self.machine, &here.machine) {
            return Liveness::Elsewhere;
        }
        if differ(&self.boot, &here.boot) {
            // Same machine, earlier boot: every process of that boot is gone. Another machine
            // of the same name (no machine id to tell): not this host's to judge.
            return match (&self.machine, &here.machine) {
                (Some(a), Some(b)) if a == b => Liveness::Gone,
                _ => Liveness::Elsewhere,
            };
        }
        match (self.pid_ns, here.pid_ns) {
            (Some(a), Some(b)) if a != b => return Liveness::Elsewhere,
            // An owner that wrote no namespace may have been in another one.
            (None, Some(_)) if self.boot.is_some() => return Liveness::Elsewhere,
            _ => {}
        }
        Owner {
            host: self.host.clone(),
            machine: None,
            pid: self.pid,
            start: self.start,
            // Both checked above, by this type's own rules.
            boot: None,
            pid_ns: None,
        }
        .liveness()
    }

    /// Whether this owner still runs, seen from this process.
    pub fn liveness(&self) -> Liveness {
        self.liveness_from(&Whose::this())
    }

    /// `pid 5353 on host (pid namespace 4026531836), started at tick 123`, for messages.
    pub fn describe(&self) -> String {
        let mut text = format!("pid {} on {}", self.pid, self.host);
        if let Some(ns) = self.pid_ns {
            text.push_str(&format!(" (pid namespace {ns})"));
        }
        if let Some(start) = self.start {
            text.push_str(&format!(", started at tick {start}"));
        }
        text
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Finding B6: a process of another PID namespace on a host of the same name (a container
    /// with `--network host`) is never taken for gone, although this one sees no such PID.
    #[test]
    fn another_pid_namespace_of_the_same_host_name_is_elsewhere() {
        let me = Whose::this();
        assert_eq!(me.liveness(), Liveness::Alive);
        let neighbour = Whose {
            pid: u32::MAX - 1,
            pid_ns: Some(me.pid_ns.unwrap_or(1) + 1),
            ..me.clone()
        };
        assert_eq!(neighbour.liveness_from(&me), Liveness::Elsewhere);
        let same_ns = Whose {
            pid: u32::MAX - 1,
            ..me.clone()
        };
        assert_eq!(same_ns.liveness_from(&me), Liveness::Gone);
        let earlier_boot = Whose {
            boot: Some("an-earlier-boot".into()),
            machine: Some("m".into()),
            ..me.clone()
        };
        let here = Whose {
            machine: Some("m".into()),
            boot: Some("this-boot".into()),
            ..me.clone()
        };
        assert_eq!(earlier_boot.liveness_from(&here), Liveness::Gone);
        let round = Whose::from_marker(
            &Owner {
                host: me.host.clone(),
                machine: None,
                pid: me.pid,
                start: me.start,
                boot: None,
                pid_ns: None,
            },
            &format!("dbbench x {}", me.marker_fields()),
        );
        assert_eq!(round, me);
    }
}
