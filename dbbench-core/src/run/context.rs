//! The settings of one invocation, read from the environment once, and the process-wide lock
//! that keeps two benchmarks of one process from measuring each other.

use crate::model::error::Result;
use crate::model::scale::Scale;
use crate::model::volume::Volumes;
use std::path::PathBuf;
use std::sync::Mutex;

/// Benchmarks never run at the same time in one process, though cargo test runs tests in parallel.
static RUN_LOCK: Mutex<()> = Mutex::new(());

/// Takes the process-wide benchmark lock; a panic in another benchmark does not poison it.
pub fn exclusive() -> std::sync::MutexGuard<'static, ()> {
    RUN_LOCK
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// Settings of one invocation, read from the environment once.
#[derive(Debug, Clone)]
pub struct RunContext {
    /// The data scale.
    pub scale: Scale,
    /// Named volumes.
    pub volumes: Volumes,
    /// dbbench's working directory.
    pub work_dir: PathBuf,
}

impl RunContext {
    /// The context for benchmarks of the crate at `manifest_dir`; `fallback_scale` applies when
    /// `DBBENCH_SCALE` is unset.
    pub fn from_env(manifest_dir: &str, fallback_scale: Scale) -> Result<RunContext> {
        Ok(RunContext {
            scale: Scale::from_env(fallback_scale)?,
            volumes: Volumes::from_env()?,
            work_dir: crate::util::paths::work_dir(std::path::Path::new(manifest_dir)),
        })
    }
}

/// `DBBENCH_FORKS=N`, for a dimensioning experiment (`dbbench components`): a benchmark with a
/// precision target runs exactly `N` forks of its pilot's rounds, whatever its widths say (the
/// target's budget still applies); `None` when unset. A benchmark with a fixed `repeat` already
/// runs each round as a fork of its own, so it is not changed.
pub fn forks_from_env() -> Result<Option<u32>> {
    match std::env::var("DBBENCH_FORKS") {
        Err(_) => Ok(None),
        Ok(v) => match v.trim().parse::<u32>() {
            Ok(n) if n >= 2 => Ok(Some(n)),
            _ => Err(crate::model::error::Error::msg(format!(
                "DBBENCH_FORKS={v:?}: give a whole number of forks, 2 or more (a dimensioning \
                 experiment runs that many forks of two rounds)"
            ))),
        },
    }
}
