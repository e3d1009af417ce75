//! The state a measured window started from, and what dbbench did to bring it there.
//!
//! Measurements of one cell varied by a third from round to round (`docs/statistics.md`): the
//! previous repetitions' gigabytes were still being written back by the OS while the next window
//! was open. So before every window dbbench flushes what earlier work wrote (`sync(2)`, every
//! file system, so every volume a cell uses) and waits, bounded, until the kernel's dirty and
//! writeback pages have drained; with `cache = "cold"` it then drops the page cache. What it
//! found and did is kept with each repetition, so a reader can see that a window started clean.

use serde::{Deserialize, Serialize};

/// How much of the page cache a window starts with.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum CacheState {
    /// Whatever earlier work left cached (the default): the fixture just loaded is in memory.
    #[default]
    Warm,
    /// The OS page cache was dropped after the flush (`/proc/sys/vm/drop_caches`, root only).
    Cold,
}

impl CacheState {
    /// The attribute's keyword.
    pub fn keyword(self) -> &'static str {
        match self {
            CacheState::Warm => "warm",
            CacheState::Cold => "cold",
        }
    }

    /// The state named by `keyword`.
    pub fn from_keyword(keyword: &str) -> Option<CacheState> {
        match keyword {
            "warm" => Some(CacheState::Warm),
            "cold" => Some(CacheState::Cold),
            _ => None,
        }
    }
}

/// What the kernel held unwritten, and what dbbench did, as one window opened.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct WindowStart {
    /// `Dirty` of `/proc/meminfo` before the flush, in bytes.
    pub dirty_before_bytes: Option<u64>,
    /// `Writeback` of `/proc/meminfo` before the flush, in bytes.
    pub writeback_before_bytes: Option<u64>,
    /// `Dirty` as the window opened.
    pub dirty_bytes: Option<u64>,
    /// `Writeback` as the window opened.
    pub writeback_bytes: Option<u64>,
    /// Seconds spent flushing and waiting for writeback to drain.
    pub settle_s: f64,
    /// Whether dirty and writeback pages fell below the settled level within the bound; when
    /// not, other processes kept writing (the figures above say how much).
    pub settled: bool,
    /// The page cache the window started with.
    pub cache: CacheState,
    /// How the database was made ready for the window and what each step cost (absent in
    /// results written before it was recorded).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub preparation: Option<Preparation>,
}

/// The steps outside the window of one repetition, timed, and what the engine reused instead of
/// making anew. The windows' share of a run's wall time is what is left after these
/// (`dbbench share`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct Preparation {
    /// Seconds creating the database: its files (a pre-grown log zero-filled, or a kept one
    /// taken), or `CREATE DATABASE` on a server.
    pub create_s: f64,
    /// Seconds loading the fixture.
    pub fixture_s: f64,
    /// Seconds the engine's part of the controlled start took (its checkpoint), before the flush
    /// and wait of `settle_s`.
    pub checkpoint_s: f64,
    /// Seconds closing the window's connection after the window (on SQLite, the checkpoint of
    /// what the window left in the WAL, as the last connection closes).
    #[serde(default)]
    pub close_s: f64,
    /// Seconds dropping the database after the window (re-zeroing a log that is kept included).
    pub teardown_s: f64,
    /// Seconds waited, before the database was created, for another dbbench process's
    /// measurement on this machine to finish (`util::machine_lock`).
    #[serde(default)]
    pub lock_wait_s: f64,
    /// What the engine reused instead of making anew, one phrase each ("log file kept from an
    /// earlier repetition, re-zeroed where it was written"); empty when everything was made for
    /// this repetition.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub reused: Vec<String>,
}

impl WindowStart {
    /// One line for the reader: "flushed 1.5 GiB dirty in 0.82 s, settled; warm cache".
    pub fn line(&self) -> String {
        let mib = |b: Option<u64>| {
            b.map_or("?".to_string(), |b| {
                format!("{:.1} MiB", b as f64 / (1024.0 * 1024.0))
            })
        };
        format!(
            "{} dirty and {} writeback before, {} and {} at the start, after {:.2} s ({}); {} cache",
            mib(self.dirty_before_bytes),
            mib(self.writeback_before_bytes),
            mib(self.dirty_bytes),
            mib(self.writeback_bytes),
            self.settle_s,
            if self.settled {
                "settled"
            } else {
                "not settled within the bound"
            },
            self.cache.keyword()
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keywords_round_trip_and_the_line_reads() {
        for c in [CacheState::Warm, CacheState::Cold] {
            assert_eq!(CacheState::from_keyword(c.keyword()), Some(c));
        }
        assert_eq!(CacheState::from_keyword("hot"), None);
        let start = WindowStart {
            dirty_before_bytes: Some(1536 * 1024 * 1024),
            writeback_before_bytes: Some(0),
            dirty_bytes: Some(1024 * 1024),
            writeback_bytes: Some(0),
            settle_s: 0.82,
            settled: true,
            cache: CacheState::Cold,
            preparation: None,
        };
        assert_eq!(
            start.line(),
            "1536.0 MiB dirty and 0.0 MiB writeback before, 1.0 MiB and 0.0 MiB at the start, \
             after 0.82 s (settled); cold cache"
        );
    }
}
