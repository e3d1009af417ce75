//! Per-file counters: the embedded counterpart of `sys.dm_io_virtual_file_stats` plus autogrowth
//! events, kept with relaxed atomics so that counting costs no lock on the I/O path.
//!
//! Counters only ever increase; the measured window is the difference of two snapshots. The
//! longest growth is the exception (a maximum cannot be subtracted), so it is reset when the
//! window opens.

use crate::model::evidence::{FileKind, FileStats};
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// One growth of a file: what it added and what it cost.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct GrowthEvent {
    /// Bytes added to the file.
    pub bytes: u64,
    /// Bytes of zeros written to initialise them (0 with instant file initialization).
    pub zero_fill_bytes: u64,
    /// Write calls the zero fill made.
    pub zero_fill_writes: u64,
    /// Wall-clock time of the growth, zero fill and flush included.
    pub duration: Duration,
}

/// Live counters of one physical file.
#[derive(Debug, Default)]
pub struct FileCounters {
    reads: AtomicU64,
    writes: AtomicU64,
    bytes_read: AtomicU64,
    bytes_written: AtomicU64,
    read_stall_ns: AtomicU64,
    write_stall_ns: AtomicU64,
    flushes: AtomicU64,
    flush_ns: AtomicU64,
    growth_events: AtomicU64,
    growth_bytes: AtomicU64,
    zero_fill_bytes: AtomicU64,
    growth_ns: AtomicU64,
    growth_max_ns: AtomicU64,
    /// Every growth: when it started, what it did, the file's size after it.
    growths: Mutex<Vec<(Instant, GrowthEvent, u64)>>,
}

fn nanos(d: Duration) -> u64 {
    u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)
}

impl FileCounters {
    /// Counts one read of `bytes` that took `took`.
    #[inline]
    pub fn read(&self, bytes: u64, took: Duration) {
        self.reads.fetch_add(1, Relaxed);
        self.bytes_read.fetch_add(bytes, Relaxed);
        self.read_stall_ns.fetch_add(nanos(took), Relaxed);
    }

    /// Counts one write of `bytes` that took `took`.
    #[inline]
    pub fn write(&self, bytes: u64, took: Duration) {
        self.writes.fetch_add(1, Relaxed);
        self.bytes_written.fetch_add(bytes, Relaxed);
        self.write_stall_ns.fetch_add(nanos(took), Relaxed);
    }

    /// Counts one flush (fdatasync) that took `took`.
    pub fn flush(&self, took: Duration) {
        self.flushes.fetch_add(1, Relaxed);
        self.flush_ns.fetch_add(nanos(took), Relaxed);
    }

    /// Counts a growth that left the file `size_after` bytes long. Its zero fill counts as writes
    /// (SQL Server's file stats include the initialisation writes too) and its final flush as a
    /// flush.
    pub fn growth(&self, event: &GrowthEvent, size_after: u64) {
        let started = Instant::now()
            .checked_sub(event.duration)
            .unwrap_or_else(Instant::now);
        self.growths
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push((started, *event, size_after));
        let ns = nanos(event.duration);
        self.growth_events.fetch_add(1, Relaxed);
        self.growth_bytes.fetch_add(event.bytes, Relaxed);
        self.growth_ns.fetch_add(ns, Relaxed);
        self.growth_max_ns.fetch_max(ns, Relaxed);
        if event.zero_fill_bytes > 0 {
            self.zero_fill_bytes
                .fetch_add(event.zero_fill_bytes, Relaxed);
            self.writes.fetch_add(event.zero_fill_writes, Relaxed);
            self.bytes_written.fetch_add(event.zero_fill_bytes, Relaxed);
            self.write_stall_ns.fetch_add(ns, Relaxed);
            self.flushes.fetch_add(1, Relaxed);
        }
    }

    /// The growths that started at or after `since`, as `(start, event, size after)`.
    pub fn growths_since(&self, since: Instant) -> Vec<(Instant, GrowthEvent, u64)> {
        let growths = self.growths.lock().unwrap_or_else(|p| p.into_inner());
        growths.iter().filter(|g| g.0 >= since).copied().collect()
    }

    /// Starts a measured window: forgets the longest growth seen so far.
    pub fn reset_window_max(&self) {
        self.growth_max_ns.store(0, Relaxed);
    }

    /// The counters' current values.
    pub fn snapshot(&self) -> CounterSnapshot {
        CounterSnapshot {
            reads: self.reads.load(Relaxed),
            writes: self.writes.load(Relaxed),
            bytes_read: self.bytes_read.load(Relaxed),
            bytes_written: self.bytes_written.load(Relaxed),
            read_stall_ns: self.read_stall_ns.load(Relaxed),
            write_stall_ns: self.write_stall_ns.load(Relaxed),
            flushes: self.flushes.load(Relaxed),
            flush_ns: self.flush_ns.load(Relaxed),
            growth_events: self.growth_events.load(Relaxed),
            growth_bytes: self.growth_bytes.load(Relaxed),
            zero_fill_bytes: self.zero_fill_bytes.load(Relaxed),
            growth_ns: self.growth_ns.load(Relaxed),
            growth_max_ns: self.growth_max_ns.load(Relaxed),
        }
    }
}

/// The values of a file's counters at one moment.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CounterSnapshot {
    /// Read calls.
    pub reads: u64,
    /// Write calls, zero fill included.
    pub writes: u64,
    /// Bytes read.
    pub bytes_read: u64,
    /// Bytes written, zero fill included.
    pub bytes_written: u64,
    /// Nanoseconds spent reading.
    pub read_stall_ns: u64,
    /// Nanoseconds spent writing, zero fill included.
    pub write_stall_ns: u64,
    /// Flushes.
    pub flushes: u64,
    /// Nanoseconds spent flushing (not part of the write stall).
    pub flush_ns: u64,
    /// Growths.
    pub growth_events: u64,
    /// Bytes added by growths.
    pub growth_bytes: u64,
    /// Bytes of zeros written by growths.
    pub zero_fill_bytes: u64,
    /// Nanoseconds spent growing.
    pub growth_ns: u64,
    /// The longest growth since the window opened.
    pub growth_max_ns: u64,
}

impl CounterSnapshot {
    /// What happened between `before` and `self` (the longest growth is taken as it is).
    pub fn since(&self, before: &CounterSnapshot) -> CounterSnapshot {
        CounterSnapshot {
            reads: self.reads - before.reads,
            writes: self.writes - before.writes,
            bytes_read: self.bytes_read - before.bytes_read,
            bytes_written: self.bytes_written - before.bytes_written,
            read_stall_ns: self.read_stall_ns - before.read_stall_ns,
            write_stall_ns: self.write_stall_ns - before.write_stall_ns,
            flushes: self.flushes - before.flushes,
            flush_ns: self.flush_ns - before.flush_ns,
            growth_events: self.growth_events - before.growth_events,
            growth_bytes: self.growth_bytes - before.growth_bytes,
            zero_fill_bytes: self.zero_fill_bytes - before.zero_fill_bytes,
            growth_ns: self.growth_ns - before.growth_ns,
            growth_max_ns: self.growth_max_ns,
        }
    }

    /// The results entry for the file `name`, sized `size_before` and `size_after` bytes.
    pub fn file_stats(
        &self,
        name: &str,
        kind: FileKind,
        volume: Option<String>,
        size_before: u64,
        size_after: u64,
    ) -> FileStats {
        let ms = |ns: u64| ns as f64 / 1e6;
        FileStats {
            name: name.to_string(),
            kind,
            volume,
            size_before_bytes: size_before,
            size_after_bytes: size_after,
            reads: self.reads,
            writes: self.writes,
            bytes_read: self.bytes_read,
            bytes_written: self.bytes_written,
            read_stall_ms: ms(self.read_stall_ns),
            write_stall_ms: ms(self.write_stall_ns),
            flushes: self.flushes,
            growth_events: self.growth_events,
            growth_bytes: self.growth_bytes,
            zero_fill_bytes: self.zero_fill_bytes,
            growth_total_ms: ms(self.growth_ns),
            growth_max_ms: ms(self.growth_max_ns),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_window_is_the_difference_of_two_snapshots() {
        let c = FileCounters::default();
        c.write(8192, Duration::from_micros(10));
        c.growth(
            &GrowthEvent {
                bytes: 1 << 20,
                zero_fill_bytes: 1 << 20,
                zero_fill_writes: 1,
                duration: Duration::from_millis(9),
            },
            2 << 20,
        );
        let before = c.snapshot();
        let opened = Instant::now();
        c.reset_window_max();
        c.read(4096, Duration::from_micros(3));
        std::thread::sleep(Duration::from_millis(3));
        c.growth(
            &GrowthEvent {
                bytes: 2 << 20,
                zero_fill_bytes: 0,
                zero_fill_writes: 0,
                duration: Duration::from_millis(2),
            },
            4 << 20,
        );
        c.flush(Duration::from_millis(1));
        let w = c.snapshot().since(&before);
        assert_eq!((w.reads, w.bytes_read, w.writes), (1, 4096, 0));
        assert_eq!(
            (w.growth_events, w.growth_bytes, w.zero_fill_bytes),
            (1, 2 << 20, 0)
        );
        assert_eq!(
            w.growth_max_ns, 2_000_000,
            "the older, longer growth is outside"
        );
        assert_eq!((w.flushes, w.flush_ns), (1, 1_000_000));
        let stats = w.file_stats(
            "data_1",
            FileKind::Data,
            None,
            64 << 10,
            (2 << 20) + (64 << 10),
        );
        assert_eq!(stats.growth_max_ms, 2.0);
        let growths = c.growths_since(opened);
        assert_eq!(
            growths.len(),
            1,
            "the growth before the window is not listed"
        );
        assert_eq!((growths[0].1.bytes, growths[0].2), (2 << 20, 4 << 20));
    }

    #[test]
    fn zero_fill_counts_as_writes_and_a_flush() {
        let c = FileCounters::default();
        c.growth(
            &GrowthEvent {
                bytes: 3 << 20,
                zero_fill_bytes: 3 << 20,
                zero_fill_writes: 3,
                duration: Duration::from_millis(5),
            },
            3 << 20,
        );
        let s = c.snapshot();
        assert_eq!((s.writes, s.bytes_written, s.flushes), (3, 3 << 20, 1));
    }
}
