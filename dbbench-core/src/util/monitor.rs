//! The busy-machine guard's sampler: reads the kernel's cumulative counters when a measured window
//! opens and when it closes, and turns their differences into an [`Interference`]
//! (`model::interference` says what each figure means and when a window is disturbed).
//!
//! Two reads per window, of `/proc/stat`, `/proc/pressure/{cpu,io}`, `/proc/loadavg` and the
//! `stat` files of dbbench's process and its descendants, of a local database server's process
//! tree (when the engine found one, [`ServerOnHost`](crate::model::interference::ServerOnHost))
//! and of the kernel's threads: counters
//! that only grow make two reads an exact average over the window, with nothing running in
//! between. Where a file is missing (no PSI in the kernel, not Linux) its figures are `None`.
//! The runner opens the monitor before it starts the window's clock and closes it after it
//! stops it, so neither read is inside the measured time.

use crate::model::interference::{Interference, Thresholds};
use crate::util::procfs::ProcFs;
use std::collections::HashSet;
use std::time::Instant;

/// Counters read when the window opened.
#[derive(Debug)]
pub struct Monitor {
    opened: Instant,
    /// The roots of a local server's process trees, counted apart from other processes.
    server: Vec<u32>,
    counters: Counters,
}

#[derive(Debug, Clone, Default)]
struct Counters {
    /// Busy and total CPU ticks of the machine, and steal ticks.
    cpu: Option<CpuTicks>,
    /// CPU ticks of this process and its descendants, reaped ones included.
    own_ticks: Option<u64>,
    /// CPU ticks of the server's process trees (not counting any process of dbbench's own);
    /// `None` without a server or once it is gone.
    server_ticks: Option<u64>,
    /// CPU ticks of each kernel thread, by pid (sorted); `None` where they cannot be found.
    kernel: Option<Vec<(u32, u64)>>,
    /// PSI "some" totals, microseconds.
    cpu_pressure_us: Option<u64>,
    io_pressure_us: Option<u64>,
}

#[derive(Debug, Clone, Copy, Default)]
struct CpuTicks {
    busy: u64,
    total: u64,
    steal: u64,
}

impl Monitor {
    /// Reads the counters as the window opens; every process not dbbench's own or the kernel's
    /// counts as a neighbour.
    pub fn open() -> Monitor {
        Monitor::open_with(&[])
    }

    /// Reads the counters as the window opens, counting the process trees under `server` (a
    /// database server on this machine) apart from the neighbours.
    pub fn open_with(server: &[u32]) -> Monitor {
        Monitor {
            opened: Instant::now(),
            server: server.to_vec(),
            counters: Counters::read(server),
        }
    }

    /// Reads them again as the window closes and judges the window by the default thresholds.
    pub fn close(self) -> Interference {
        let window_s = self.opened.elapsed().as_secs_f64();
        let now = Counters::read(&self.server);
        let then = self.counters;
        let ticks_per_s = ticks_per_second();
        let kernel = match (&then.kernel, &now.kernel) {
            (Some(a), Some(b)) => Some(kernel_delta(a, b)),
            _ => None,
        };
        // A server that ended or restarted in the window is not told apart (the cautious side:
        // a new server's processes count as neighbours).
        let server = match (then.server_ticks, now.server_ticks) {
            (Some(a), Some(b)) => Some(b.saturating_sub(a)),
            _ => None,
        };
        let other_cpu_cores = match (then.cpu, now.cpu, then.own_ticks, now.own_ticks) {
            (Some(a), Some(b), Some(own_a), Some(own_b)) if window_s > 0.0 => {
                let busy = b.busy.saturating_sub(a.busy) as f64;
                let own = own_b.saturating_sub(own_a) as f64;
                let kernel = kernel.unwrap_or(0) as f64;
                let server = server.unwrap_or(0) as f64;
                // Process times are finer than the machine's tick counts; never below zero.
                Some(((busy - own - kernel - server) / ticks_per_s / window_s).max(0.0))
            }
            _ => None,
        };
        let cores = |ticks: Option<u64>| {
            ticks
                .filter(|_| window_s > 0.0)
                .map(|t| t as f64 / ticks_per_s / window_s)
        };
        let kernel_cpu_cores = cores(kernel);
        let server_cpu_cores = cores(server);
        let steal = match (then.cpu, now.cpu) {
            (Some(a), Some(b)) if b.total > a.total => {
                Some(b.steal.saturating_sub(a.steal) as f64 / (b.total - a.total) as f64)
            }
            (Some(_), Some(_)) => Some(0.0),
            _ => None,
        };
        let share = |a: Option<u64>, b: Option<u64>| match (a, b) {
            (Some(a), Some(b)) if window_s > 0.0 => {
                Some((b.saturating_sub(a) as f64 / 1e6 / window_s).min(1.0))
            }
            _ => None,
        };
        Interference {
            window_s,
            other_cpu_cores,
            kernel_cpu_cores,
            server_cpu_cores,
            steal,
            cpu_pressure: share(then.cpu_pressure_us, now.cpu_pressure_us),
            io_pressure: share(then.io_pressure_us, now.io_pressure_us),
            load_1m: load_average(),
            judged: false,
            disturbed_by: Vec::new(),
            // The engine adds the server's activity when it closes the window.
            server: None,
        }
        .judge(&Thresholds::DEFAULT)
    }
}

impl Counters {
    fn read(server: &[u32]) -> Counters {
        let (own_ticks, server_ticks) = process_ticks(server);
        Counters {
            cpu: machine_ticks(),
            own_ticks,
            server_ticks,
            kernel: kernel_ticks(),
            cpu_pressure_us: pressure_total("/proc/pressure/cpu"),
            io_pressure_us: pressure_total("/proc/pressure/io"),
        }
    }
}

/// Clock ticks per second of `/proc` CPU times (`USER_HZ`).
fn ticks_per_second() -> f64 {
    #[cfg(unix)]
    {
        // SAFETY: sysconf has no preconditions.
        let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
        if hz > 0 {
            return hz as f64;
        }
    }
    100.0
}

/// The first line of `/proc/stat`: user nice system idle iowait irq softirq steal guest guest_nice.
fn machine_ticks() -> Option<CpuTicks> {
    let text = std::fs::read_to_string("/proc/stat").ok()?;
    parse_cpu_line(text.lines().next()?)
}

fn parse_cpu_line(line: &str) -> Option<CpuTicks> {
    let mut fields = line.split_whitespace();
    if fields.next()? != "cpu" {
        return None;
    }
    let f: Vec<u64> = fields.filter_map(|v| v.parse().ok()).collect();
    if f.len() < 8 {
        return None;
    }
    // Guest time is already counted in user time; idle and iowait are not work; steal is the
    // hypervisor's, not a process's.
    let busy = f[0] + f[1] + f[2] + f[5] + f[6];
    Some(CpuTicks {
        busy,
        total: f[..8].iter().sum(),
        steal: f[7],
    })
}

/// The "some … total=" microseconds of a PSI file.
fn pressure_total(path: &str) -> Option<u64> {
    let text = std::fs::read_to_string(path).ok()?;
    parse_pressure(&text)
}

fn parse_pressure(text: &str) -> Option<u64> {
    text.lines()
        .find(|l| l.starts_with("some "))?
        .split_whitespace()
        .find_map(|f| f.strip_prefix("total="))?
        .parse()
        .ok()
}

fn load_average() -> Option<f64> {
    std::fs::read_to_string("/proc/loadavg")
        .ok()?
        .split_whitespace()
        .next()?
        .parse()
        .ok()
}

/// The kernel's threads' CPU ticks between two reads. A thread that started in between counts
/// from zero; one that ended in between is missing from the second read, and its ticks stay with
/// the machine's busy time, so they count as other processes' (the cautious side).
fn kernel_delta(then: &[(u32, u64)], now: &[(u32, u64)]) -> u64 {
    now.iter()
        .map(|&(pid, ticks)| {
            let before = then
                .binary_search_by_key(&pid, |&(p, _)| p)
                .map_or(0, |i| then[i].1);
            // A reused pid (an ended thread's number given to a new one) cannot go below zero.
            ticks.saturating_sub(before)
        })
        .sum()
}

/// `PF_KTHREAD` in the `flags` field of `/proc/<pid>/stat`.
const PF_KTHREAD: u64 = 0x0020_0000;

/// CPU ticks of every kernel thread: `kthreadd` (pid 2) and its children, each checked for
/// `PF_KTHREAD`, so a process that happens to have pid 2 (in a container's pid namespace) is
/// never taken for the kernel. `None` when no `kthreadd` is in view.
fn kernel_ticks() -> Option<Vec<(u32, u64)>> {
    let stat = |pid: u32| {
        std::fs::read_to_string(format!("/proc/{pid}/stat"))
            .ok()
            .as_deref()
            .and_then(kernel_stat)
    };
    let kthreadd = stat(2)?;
    let children = std::fs::read_to_string("/proc/2/task/2/children").ok()?;
    let mut ticks = vec![(2, kthreadd)];
    ticks.extend(
        children
            .split_whitespace()
            .filter_map(|c| c.parse::<u32>().ok())
            .filter_map(|pid| stat(pid).map(|t| (pid, t))),
    );
    ticks.sort_unstable();
    Some(ticks)
}

/// A kernel thread's CPU ticks (user + system); `None` for a process that is not one.
fn kernel_stat(text: &str) -> Option<u64> {
    let rest = &text[text.rfind(')')? + 1..];
    let f: Vec<&str> = rest.split_whitespace().collect();
    let flags: u64 = f.get(6)?.parse().ok()?;
    if flags & PF_KTHREAD == 0 {
        return None;
    }
    f.get(11..13)?
        .iter()
        .map(|v| v.parse::<u64>().ok())
        .sum::<Option<u64>>()
}

/// CPU ticks of this process and every live descendant, each with its reaped children's, and
/// of the trees under `server` without any process already counted as dbbench's (a server
/// dbbench started itself is its own work either way).
///
/// The descendants are found through each thread's `children` file, which costs a read per
/// thread and per descendant instead of one per process of the machine.
fn process_ticks(server: &[u32]) -> (Option<u64>, Option<u64>) {
    let proc = ProcFs::system();
    let mut seen = HashSet::new();
    let own = proc.tree_ticks(&[std::process::id()], &mut seen);
    let server = match server {
        [] => None,
        roots => proc.tree_ticks(roots, &mut seen),
    };
    (own, server)
}

#[cfg(test)]
mod tests;
