//! Bringing the machine to a controlled state before a measured window opens: flush what earlier
//! work wrote and wait, bounded, until the kernel's writeback has drained; optionally drop the
//! page cache. [`crate::model::start`] says why and what is recorded.
//!
//! `sync(2)` rather than `syncfs` per volume: it covers every file system a cell's volumes are
//! on, and also what other processes left dirty, which the kernel would otherwise write back
//! during the window. It waits for the writeback it starts, so the polling that follows only
//! sees pages dirtied since (by other processes, or by the kernel's own delayed work).

use crate::model::error::{Error, Result};
use crate::model::start::{CacheState, WindowStart};
use std::time::{Duration, Instant};

/// Dirty plus writeback pages at or below which the machine counts as settled: a few megabytes
/// are always in flight on a live system (journals, logs), and they cost a window nothing.
pub const SETTLED_BYTES: u64 = 8 * 1024 * 1024;

/// The longest a window waits for writeback to drain: a machine whose other processes keep
/// writing never settles, and the run records that instead of waiting for ever.
pub const SETTLE_LIMIT: Duration = Duration::from_secs(5);

/// Where the page cache is dropped.
const DROP_CACHES: &str = "/proc/sys/vm/drop_caches";

/// Flushes, waits for writeback to drain (at most [`SETTLE_LIMIT`]) and, for a cold cache, drops
/// the page cache. Errors only when a cold cache was asked for and cannot be had.
pub fn settle(cache: CacheState) -> Result<WindowStart> {
    let started = Instant::now();
    let (dirty_before, writeback_before) = meminfo();
    let mut settled = false;
    loop {
        // SAFETY: sync(2) takes no arguments and cannot fail.
        unsafe { libc::sync() };
        let (dirty, writeback) = meminfo();
        if dirty
            .zip(writeback)
            .is_none_or(|(d, w)| d + w <= SETTLED_BYTES)
        {
            settled = true;
            break;
        }
        if started.elapsed() >= SETTLE_LIMIT {
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    if cache == CacheState::Cold {
        drop_page_cache()?;
    }
    let (dirty, writeback) = meminfo();
    Ok(WindowStart {
        dirty_before_bytes: dirty_before,
        writeback_before_bytes: writeback_before,
        dirty_bytes: dirty,
        writeback_bytes: writeback,
        settle_s: started.elapsed().as_secs_f64(),
        settled,
        preparation: None,
        cache,
    })
}

/// Why a cold cache cannot be had on this machine, before anything is created; `None` when it
/// can (root on Linux).
pub fn cold_cache_refusal() -> Option<String> {
    // SAFETY: geteuid has no preconditions.
    let root = unsafe { libc::geteuid() } == 0;
    if !std::path::Path::new(DROP_CACHES).exists() {
        return Some(format!(
            "`cache = \"cold\"` drops the page cache through {DROP_CACHES}, which this system \
             does not have (Linux only); remove the option"
        ));
    }
    (!root).then(|| {
        format!(
            "`cache = \"cold\"` drops the page cache through {DROP_CACHES}, which only root may \
             write; run as root, or remove the option to measure with a warm cache"
        )
    })
}

fn drop_page_cache() -> Result<()> {
    // 3: the page cache and the dentry and inode caches, as benchmarking guides do.
    std::fs::write(DROP_CACHES, "3")
        .map_err(|e| Error::io("cannot drop the page cache", DROP_CACHES, e))
}

/// `Dirty` and `Writeback` of `/proc/meminfo`, in bytes; `None` where the file is missing.
fn meminfo() -> (Option<u64>, Option<u64>) {
    match std::fs::read_to_string("/proc/meminfo") {
        Ok(text) => parse_meminfo(&text),
        Err(_) => (None, None),
    }
}

fn parse_meminfo(text: &str) -> (Option<u64>, Option<u64>) {
    let field = |name: &str| {
        text.lines()
            .find_map(|l| l.strip_prefix(name)?.strip_prefix(':'))
            .and_then(|rest| rest.split_whitespace().next()?.parse::<u64>().ok())
            .map(|kb| kb * 1024)
    };
    (field("Dirty"), field("Writeback"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_dirty_and_writeback() {
        let text = "MemTotal:       24576000 kB\nDirty:              1536 kB\nWriteback:  \
                    0 kB\nWritebackTmp:       12 kB\n";
        assert_eq!(parse_meminfo(text), (Some(1536 * 1024), Some(0)));
        assert_eq!(parse_meminfo("MemTotal: 1 kB\n"), (None, None));
    }

    #[test]
    fn a_warm_settle_flushes_and_records() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("f"), vec![7u8; 4 << 20]).unwrap();
        let start = settle(CacheState::Warm).unwrap();
        assert_eq!(start.cache, CacheState::Warm);
        // Bounded: the limit, plus one last sync of what others wrote meanwhile.
        assert!(
            start.settle_s < SETTLE_LIMIT.as_secs_f64() + 10.0,
            "{start:?}"
        );
        if cfg!(target_os = "linux") {
            assert!(start.dirty_before_bytes.is_some() && start.dirty_bytes.is_some());
        }
    }
}
