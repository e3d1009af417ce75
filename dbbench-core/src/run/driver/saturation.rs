//! The saturation check: is the client, not the database, what limits the load?
//!
//! Two signs are measured. When workers are asynchronous tasks sharing one thread (a network
//! engine), that thread's CPU time against wall time shows whether the client was busy all the
//! time, and the process's CPU time against all cores whether the machine was. In every mode the
//! time workers spent in the driver's own code between transactions shows what the driver took
//! from the work it measures. CPU times come from `getrusage`; where it is missing (not Unix)
//! they are `None` and only the driver's share is checked.

use super::crew::Execution;
use crate::model::load::SaturationStats;
use std::time::Duration;

/// A CPU clock is saturated above this share of its capacity.
const CPU_BOUND: f64 = 0.9;
/// The driver may take this share of the workers' time before it distorts the throughput.
const DRIVER_BOUND: f64 = 0.03;
/// Shorter loads are not judged: one preemption would dominate their shares.
const SHORTEST_JUDGED: Duration = Duration::from_millis(500);

/// CPU time (user + system) of the whole process.
pub(crate) fn process_cpu() -> Option<Duration> {
    #[cfg(unix)]
    {
        rusage(libc::RUSAGE_SELF)
    }
    #[cfg(not(unix))]
    {
        None
    }
}

/// CPU time (user + system) of the calling thread.
pub(crate) fn thread_cpu() -> Option<Duration> {
    #[cfg(target_os = "linux")]
    {
        rusage(libc::RUSAGE_THREAD)
    }
    #[cfg(not(target_os = "linux"))]
    {
        None
    }
}

#[cfg(unix)]
fn rusage(who: libc::c_int) -> Option<Duration> {
    let mut usage = std::mem::MaybeUninit::<libc::rusage>::zeroed();
    // SAFETY: `usage` is a valid, writable rusage; getrusage only writes into it.
    let rc = unsafe { libc::getrusage(who, usage.as_mut_ptr()) };
    if rc != 0 {
        return None;
    }
    // SAFETY: getrusage succeeded, so the struct is initialised (it was zeroed besides).
    let usage = unsafe { usage.assume_init() };
    let time = |t: libc::timeval| {
        Duration::from_secs(t.tv_sec as u64) + Duration::from_micros(t.tv_usec as u64)
    };
    Some(time(usage.ru_utime) + time(usage.ru_stime))
}

/// CPU cores available to this process.
pub(crate) fn cores() -> u32 {
    std::thread::available_parallelism()
        .map(|n| n.get() as u32)
        .unwrap_or(1)
}

/// What the check looks at.
#[derive(Debug, Clone)]
pub(crate) struct Usage {
    /// How the workers ran.
    pub execution: Execution,
    /// Workers in the load.
    pub workers: u32,
    /// Wall-clock time of the load.
    pub wall: Duration,
    /// Cores available.
    pub cores: u32,
    /// Process CPU time during the load.
    pub process_cpu: Option<Duration>,
    /// CPU time of the thread that drove the tasks (task execution only).
    pub driving_thread_cpu: Option<Duration>,
    /// Time all workers spent in driver code between transactions.
    pub driver: Duration,
}

/// The shares and the warnings they call for.
pub(crate) fn assess(usage: &Usage) -> SaturationStats {
    let wall = usage.wall.as_secs_f64();
    let share = |part: f64, whole: f64| if whole > 0.0 { part / whole } else { 0.0 };
    let cores = usage.cores.max(1);
    let process_cpu_share = usage
        .process_cpu
        .map(|cpu| share(cpu.as_secs_f64(), wall * f64::from(cores)));
    let driving_thread_share = usage
        .driving_thread_cpu
        .map(|cpu| share(cpu.as_secs_f64(), wall));
    let driver = usage.driver.as_secs_f64();
    let driver_share = share(driver, wall * f64::from(usage.workers.max(1)));

    let mut warnings = Vec::new();
    let judged = usage.wall >= SHORTEST_JUDGED;
    if judged && usage.execution == Execution::Tasks {
        // The engine is another process, so this process's CPU is all client.
        if let Some(s) = driving_thread_share.filter(|&s| s >= CPU_BOUND) {
            warnings.push(format!(
                "client-bound: the thread driving the {} workers was on the CPU {:.0}% of the \
                 load's {wall:.2} s, so the client, not the database, limited the throughput; \
                 use fewer workers per process or a faster client",
                usage.workers,
                s * 100.0
            ));
        }
        if let Some(s) = process_cpu_share.filter(|&s| s >= CPU_BOUND) {
            warnings.push(format!(
                "client-bound: the client process used {:.0}% of {cores} cores during the load; \
                 the database may be waiting for the client",
                s * 100.0
            ));
        }
    }
    if judged && driver_share >= DRIVER_BOUND {
        warnings.push(format!(
            "the driver's own code took {:.1}% of the workers' time ({driver:.3} s of {} workers \
             × {wall:.2} s), more than the {:.0}% it is allowed; the throughput understates the \
             database",
            driver_share * 100.0,
            usage.workers,
            DRIVER_BOUND * 100.0
        ));
    }
    SaturationStats {
        wall_s: wall,
        process_cpu_s: usage.process_cpu.map(|d| d.as_secs_f64()),
        driving_thread_cpu_s: usage.driving_thread_cpu.map(|d| d.as_secs_f64()),
        cores,
        process_cpu_share,
        driving_thread_share,
        driver_s: driver,
        driver_share,
        warnings,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn usage(execution: Execution) -> Usage {
        Usage {
            execution,
            workers: 4,
            wall: Duration::from_secs(10),
            cores: 2,
            process_cpu: Some(Duration::from_secs(5)),
            driving_thread_cpu: None,
            driver: Duration::from_millis(400),
        }
    }

    #[test]
    fn shares_are_cpu_over_capacity() {
        let s = assess(&usage(Execution::Threads));
        assert_eq!(s.cores, 2);
        assert_eq!(s.process_cpu_share, Some(0.25));
        // 0.4 s of 4 workers × 10 s.
        assert!((s.driver_share - 0.01).abs() < 1e-12);
        assert!(s.warnings.is_empty(), "{:?}", s.warnings);
    }

    #[test]
    fn a_busy_driving_thread_is_a_client_bottleneck() {
        let mut u = usage(Execution::Tasks);
        u.driving_thread_cpu = Some(Duration::from_millis(9_500));
        let s = assess(&u);
        assert_eq!(s.driving_thread_share, Some(0.95));
        assert_eq!(s.warnings.len(), 1);
        assert!(s.warnings[0].contains("95%"), "{}", s.warnings[0]);
        // A saturated process with in-process engine threads is the engine's work, not a warning.
        let mut t = usage(Execution::Threads);
        t.process_cpu = Some(Duration::from_secs(19));
        assert!(assess(&t).warnings.is_empty());
        let mut p = usage(Execution::Tasks);
        p.process_cpu = Some(Duration::from_secs(19));
        assert!(assess(&p).warnings[0].contains("95% of 2 cores"));
    }

    #[test]
    fn a_heavy_driver_is_reported_in_any_mode() {
        let mut u = usage(Execution::Threads);
        u.driver = Duration::from_millis(1_600);
        let s = assess(&u);
        assert!((s.driver_share - 0.04).abs() < 1e-12);
        assert!(s.warnings[0].contains("4.0%"), "{}", s.warnings[0]);
    }

    #[test]
    fn a_load_too_short_to_judge_gets_no_warning() {
        let mut u = usage(Execution::Tasks);
        u.wall = Duration::from_millis(100);
        u.driving_thread_cpu = Some(Duration::from_millis(100));
        u.driver = Duration::from_millis(100);
        let s = assess(&u);
        assert_eq!(s.driving_thread_share, Some(1.0));
        assert!(s.warnings.is_empty(), "{:?}", s.warnings);
    }

    #[test]
    fn zero_wall_time_does_not_divide_by_zero() {
        let mut u = usage(Execution::Tasks);
        u.wall = Duration::ZERO;
        u.driving_thread_cpu = Some(Duration::ZERO);
        let s = assess(&u);
        assert_eq!(s.driver_share, 0.0);
        assert_eq!(s.driving_thread_share, Some(0.0));
    }

    #[test]
    #[cfg(target_os = "linux")]
    fn cpu_clocks_advance_with_work() {
        let (p0, t0) = (process_cpu().unwrap(), thread_cpu().unwrap());
        // Spin until this thread's clock shows 20 ms; on a busy machine that takes longer than
        // 20 ms of wall time, so the limit is generous and only a stuck clock reaches it.
        let give_up = std::time::Instant::now() + Duration::from_secs(20);
        let mut x = 0u64;
        while thread_cpu().unwrap() - t0 < Duration::from_millis(20) {
            assert!(
                std::time::Instant::now() < give_up,
                "the thread clock does not advance"
            );
            for _ in 0..10_000 {
                x = std::hint::black_box(x.wrapping_mul(6364136223846793005).wrapping_add(1));
            }
        }
        // The process clock includes this thread's time.
        assert!(process_cpu().unwrap() - p0 >= Duration::from_millis(20));
    }
}
