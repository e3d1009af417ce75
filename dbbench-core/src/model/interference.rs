//! Interference: how busy this machine was with work other than the benchmark's while one
//! measured window was open, and whether that makes the window's timing untrustworthy
//! ("disturbed").
//!
//! The signals are cumulative kernel counters read when the window opens and when it closes, so
//! each figure is an exact average over the window, however short a burst was:
//!
//! * **other processes' CPU**, in cores: the machine's busy CPU time (`/proc/stat`) minus that of
//!   dbbench's own process and its descendants (a managed PostgreSQL cluster, pgbench) and that
//!   of the kernel's threads, and that of the database server's processes when the server runs on
//!   this machine ([`ServerOnHost`]), per second of window. The one signal that names the
//!   neighbours, so the one the verdict rests on.
//! * **kernel threads' CPU**, in cores: writeback, block-layer, file-system journal, loop-device
//!   and disk-encryption workers (`kworker`, `jbd2`, `kcryptd`, …). Recorded, not judged: they
//!   mostly do the benchmark's own I/O, and on a loop device that alone passes the threshold (up
//!   to 0.5 cores a window on a loop-mounted ext4).
//! * **the server's CPU**, in cores: a database server on this machine (SQL Server, Babelfish, a
//!   PostgreSQL reached with `DBBENCH_POSTGRES`) and its child processes. Recorded, not judged:
//!   the server's work is the workload. (A managed PostgreSQL cluster is in dbbench's own process
//!   tree and counts as its own.)
//! * **steal**: the share of the machine's CPU time the hypervisor gave to other guests.
//! * **CPU and I/O pressure** (Linux PSI, `/proc/pressure/*`, "some" line): the share of the
//!   window in which at least one task waited for a CPU or for I/O. Recorded, not judged: a
//!   benchmark's own fsyncs and its own concurrent workers raise them too.
//! * **load average** (1 minute) at the window's end, for the reader.
//!
//! A window is **disturbed** when other processes used at least [`Thresholds::other_cpu_cores`]
//! of a core on average, or steal reached [`Thresholds::steal`]. Windows shorter than
//! [`Thresholds::shortest_judged_s`] are recorded but not judged: the kernel counts CPU time in
//! 10 ms ticks, so one tick would dominate. The thresholds and the measurements behind them are in
//! `docs/busy-machine.md`.
//!
//! A window on a server also carries what the server did for others ([`ServerActivity`], read by
//! the engine); past [`ServerThresholds`] the window is disturbed too, and its reason starts with
//! [`SERVER_BUSY`].

use serde::{Deserialize, Serialize};

mod server;

pub use server::{ServerActivity, ServerThresholds};

/// How a reason for a disturbed window starts when the server, not this machine, was busy.
pub const SERVER_BUSY: &str = "the server was busy: ";

/// What the machine did besides the benchmark during one window.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default)]
pub struct Interference {
    /// How long the window was open.
    pub window_s: f64,
    /// CPU used by processes other than dbbench's own, in cores (CPU seconds per second); the
    /// kernel's threads are not counted here (next field).
    pub other_cpu_cores: Option<f64>,
    /// CPU used by the kernel's threads (writeback, block I/O, journal, loop and encryption
    /// workers), in cores; absent where they cannot be told apart (no `kthreadd` in view, as in a
    /// container) and in recordings made before dbbench told them apart.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kernel_cpu_cores: Option<f64>,
    /// CPU used by the database server's processes on this machine, in cores; absent when the
    /// server is elsewhere (or is dbbench's own managed cluster, counted as dbbench's), and in
    /// recordings made before dbbench told a local server apart.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_cpu_cores: Option<f64>,
    /// Share of the machine's CPU time stolen by the hypervisor (0 to 1).
    pub steal: Option<f64>,
    /// Share of the window in which some task waited for a CPU (PSI, 0 to 1).
    pub cpu_pressure: Option<f64>,
    /// Share of the window in which some task waited for I/O (PSI, 0 to 1).
    pub io_pressure: Option<f64>,
    /// The 1-minute load average when the window closed.
    pub load_1m: Option<f64>,
    /// Whether the window was long enough to judge.
    pub judged: bool,
    /// Why the window counts as disturbed; empty when it does not.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub disturbed_by: Vec<String>,
    /// What the database server did outside dbbench's own sessions while the window was open;
    /// absent on the embedded engine, on a managed server (nothing else runs there) and in
    /// recordings made before dbbench read it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server: Option<ServerActivity>,
}

/// A database server running on this machine, whose processes' CPU is the workload's rather than
/// a neighbour's: the root of its process tree (SQL Server's `sqlservr`, PostgreSQL's
/// postmaster) and how dbbench found it. Every process under the root counts as the server's,
/// also those started after it was found.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq, Default)]
pub struct ServerOnHost {
    /// The root's process name (`postgres`, `sqlservr`).
    pub name: String,
    /// The root's pid.
    pub pid: u32,
    /// Its descendants when dbbench found it.
    pub children: u32,
    /// How the root was found (`the parent of this session's backend, pg_backend_pid() 4242`).
    pub found_by: String,
}

impl ServerOnHost {
    /// "postgres (pid 7778) and its 7 children, counted as the workload, not as neighbours (the
    /// parent of this session's backend, @@SPID 16773)".
    pub fn describe(&self) -> String {
        let children = match self.children {
            0 => String::new(),
            1 => " and its 1 child".into(),
            n => format!(" and its {n} children"),
        };
        format!(
            "{} (pid {}){children}, counted as the workload, not as neighbours ({})",
            self.name, self.pid, self.found_by
        )
    }
}

/// When a window counts as disturbed.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Thresholds {
    /// Other processes' average CPU, in cores, from which a window is disturbed.
    pub other_cpu_cores: f64,
    /// Steal share from which a window is disturbed.
    pub steal: f64,
    /// Windows shorter than this are not judged.
    pub shortest_judged_s: f64,
    /// When the server's activity for others disturbs a window.
    pub server: ServerThresholds,
}

impl Thresholds {
    /// The documented thresholds (see `docs/busy-machine.md` for the measurements behind them).
    pub const DEFAULT: Thresholds = Thresholds {
        other_cpu_cores: 0.25,
        steal: 0.10,
        shortest_judged_s: 0.25,
        server: ServerThresholds::DEFAULT,
    };
}

impl Interference {
    /// Whether the window was disturbed.
    pub fn disturbed(&self) -> bool {
        !self.disturbed_by.is_empty()
    }

    /// Whether the window was disturbed because the server was busy with others' work.
    pub fn server_busy(&self) -> bool {
        self.disturbed_by
            .iter()
            .any(|why| why.starts_with(SERVER_BUSY))
    }

    /// Judges the window against `limits`, filling [`Interference::judged`] and
    /// [`Interference::disturbed_by`].
    pub fn judge(mut self, limits: &Thresholds) -> Interference {
        self.disturbed_by.clear();
        self.judged = self.window_s >= limits.shortest_judged_s;
        if !self.judged {
            return self;
        }
        if let Some(cores) = self
            .other_cpu_cores
            .filter(|c| *c >= limits.other_cpu_cores)
        {
            self.disturbed_by.push(format!(
                "other processes used {cores:.2} cores (threshold {:.2})",
                limits.other_cpu_cores
            ));
        }
        if let Some(steal) = self.steal.filter(|s| *s >= limits.steal) {
            self.disturbed_by.push(format!(
                "the hypervisor stole {:.0}% of the CPU time (threshold {:.0}%)",
                100.0 * steal,
                100.0 * limits.steal
            ));
        }
        if let Some(server) = &self.server {
            let why = server.busy(self.window_s, &limits.server);
            if !why.is_empty() {
                self.disturbed_by
                    .push(format!("{SERVER_BUSY}{}", why.join("; ")));
            }
        }
        self
    }
}

/// How many of some runs were measured while the machine was busy.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Busy {
    /// Runs marked disturbed.
    pub disturbed: u32,
    /// Runs counted.
    pub runs: u32,
}

impl Busy {
    /// Counts the disturbed runs among `runs`.
    pub fn of<'a>(runs: impl IntoIterator<Item = &'a super::results::RunResult>) -> Busy {
        runs.into_iter().fold(Busy::default(), |busy, run| Busy {
            disturbed: busy.disturbed
                + u32::from(run.interference.as_ref().is_some_and(|i| i.disturbed())),
            runs: busy.runs + 1,
        })
    }

    /// Both counts added.
    pub fn plus(self, other: Busy) -> Busy {
        Busy {
            disturbed: self.disturbed + other.disturbed,
            runs: self.runs + other.runs,
        }
    }

    /// Whether any run was disturbed.
    pub fn any(&self) -> bool {
        self.disturbed > 0
    }

    /// "inconclusive: the machine was busy in 3 of 5 runs".
    pub fn inconclusive(&self) -> String {
        format!(
            "inconclusive: the machine was busy in {} of {} runs",
            self.disturbed, self.runs
        )
    }
}

/// The worst of what disturbed some windows, for the one-line warning: the most other processes'
/// CPU among windows they disturbed, and the most steal among windows it disturbed.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Busiest {
    /// Other processes' cores, in windows they disturbed.
    pub other_cpu_cores: Option<f64>,
    /// Steal share, in windows it disturbed.
    pub steal: Option<f64>,
}

impl Busiest {
    /// Takes `window` into account (a window that was not disturbed changes nothing).
    pub fn note(&mut self, window: &Interference) {
        let limits = Thresholds::DEFAULT;
        if !window.disturbed() {
            return;
        }
        let max = |a: Option<f64>, b: f64| Some(a.map_or(b, |a| a.max(b)));
        if let Some(cores) = window
            .other_cpu_cores
            .filter(|c| *c >= limits.other_cpu_cores)
        {
            self.other_cpu_cores = max(self.other_cpu_cores, cores);
        }
        if let Some(steal) = window.steal.filter(|s| *s >= limits.steal) {
            self.steal = max(self.steal, steal);
        }
    }

    /// "other processes used up to 1.15 cores; the hypervisor stole up to 18% of the CPU time".
    pub fn describe(&self) -> String {
        let mut parts = Vec::new();
        if let Some(cores) = self.other_cpu_cores {
            parts.push(format!("other processes used up to {cores:.2} cores"));
        }
        if let Some(steal) = self.steal {
            parts.push(format!(
                "the hypervisor stole up to {:.0}% of the CPU time",
                100.0 * steal
            ));
        }
        if parts.is_empty() {
            parts.push("past the thresholds".into());
        }
        parts.join("; ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn window(s: f64, cores: f64, steal: f64) -> Interference {
        Interference {
            window_s: s,
            other_cpu_cores: Some(cores),
            steal: Some(steal),
            ..Interference::default()
        }
        .judge(&Thresholds::DEFAULT)
    }

    #[test]
    fn neighbours_or_steal_past_the_threshold_disturb_a_window() {
        assert!(!window(2.0, 0.05, 0.0).disturbed());
        let busy = window(2.0, 1.6, 0.0);
        assert!(busy.disturbed());
        assert_eq!(
            busy.disturbed_by,
            ["other processes used 1.60 cores (threshold 0.25)"]
        );
        assert!(window(2.0, 0.0, 0.2).disturbed_by[0].contains("stole 20%"));
    }

    #[test]
    fn the_warning_names_what_disturbed_the_windows() {
        let mut busiest = Busiest::default();
        // A quiet window's figures are not the busiest, however close to the thresholds.
        busiest.note(&window(2.0, 0.2, 0.05));
        assert_eq!(busiest, Busiest::default());
        busiest.note(&window(2.0, 0.02, 0.18));
        assert_eq!(
            busiest.describe(),
            "the hypervisor stole up to 18% of the CPU time"
        );
        busiest.note(&window(2.0, 1.15, 0.01));
        busiest.note(&window(2.0, 0.4, 0.12));
        assert_eq!(
            busiest.describe(),
            "other processes used up to 1.15 cores; the hypervisor stole up to 18% of the CPU time"
        );
    }

    #[test]
    fn a_server_on_the_host_is_described_and_read_from_old_files() {
        let server = ServerOnHost {
            name: "postgres".into(),
            pid: 7778,
            children: 7,
            found_by: "the parent of this session's backend, @@SPID 16773".into(),
        };
        assert_eq!(
            server.describe(),
            "postgres (pid 7778) and its 7 children, counted as the workload, not as neighbours \
             (the parent of this session's backend, @@SPID 16773)"
        );
        // A window recorded before the server was told apart reads without the figure, and one
        // without it writes none.
        let old: Interference = serde_json::from_str(
            r#"{"window_s": 1.0, "other_cpu_cores": 1.13, "steal": 0.0, "cpu_pressure": null,
                "io_pressure": null, "load_1m": null, "judged": true}"#,
        )
        .unwrap();
        assert_eq!(old.server_cpu_cores, None);
        assert!(!serde_json::to_string(&old)
            .unwrap()
            .contains("server_cpu_cores"));
    }

    #[test]
    fn a_busy_server_disturbs_a_window_and_says_so() {
        let mut busy = window(2.0, 0.05, 0.0);
        busy.server = Some(ServerActivity {
            source: "pg_stat_database".into(),
            other_transactions: Some(900),
            ..ServerActivity::default()
        });
        let busy = busy.judge(&Thresholds::DEFAULT);
        assert!(busy.disturbed() && busy.server_busy());
        assert_eq!(
            busy.disturbed_by,
            [
                "the server was busy: other databases committed 900 transactions (450/s, \
              threshold 20/s)"
            ]
        );
        // A busy client alone is not a busy server; a window without server figures reads as
        // before.
        let client = window(2.0, 1.2, 0.0);
        assert!(client.disturbed() && !client.server_busy());
        let old: Interference = serde_json::from_str(
            r#"{"window_s": 1.0, "other_cpu_cores": 0.0, "steal": 0.0,
                "cpu_pressure": null, "io_pressure": null, "load_1m": null, "judged": true}"#,
        )
        .unwrap();
        assert_eq!(old.server, None);
        assert!(!serde_json::to_string(&old).unwrap().contains("server"));
    }

    #[test]
    fn short_windows_are_not_judged() {
        let short = window(0.01, 1.9, 0.5);
        assert!(!short.judged);
        assert!(!short.disturbed());
    }

    #[test]
    fn busy_counts_disturbed_runs() {
        let mut runs = vec![super::super::results::RunResult::default(); 5];
        for run in runs.iter_mut().take(3) {
            run.interference = Some(window(1.0, 1.0, 0.0));
        }
        let busy = Busy::of(&runs);
        assert_eq!(
            busy,
            Busy {
                disturbed: 3,
                runs: 5
            }
        );
        assert_eq!(
            busy.inconclusive(),
            "inconclusive: the machine was busy in 3 of 5 runs"
        );
    }
}
