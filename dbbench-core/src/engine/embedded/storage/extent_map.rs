//! The logical → physical extent map and the allocator that fills it.
//!
//! SQLite sees one database file. The layer cuts it into 64 KiB extents (eight 8 KiB pages, as SQL
//! Server) and places each extent, when it is first needed, in one of the data files. The map is
//! read on every I/O, so lookups take no lock: it is a two-level table of atomics whose chunks are
//! allocated once and never moved. Allocation, which is rare (once per 64 KiB), takes the
//! allocator's mutex.
//!
//! New extents go to the files in proportion to their free space, as SQL Server's proportional
//! fill does: a smooth weighted round robin whose weights are the files' free extents, so equal
//! files are filled round robin and a file with twice the free space gets twice the extents.

use std::sync::atomic::{AtomicPtr, AtomicU64, Ordering};

/// Entries per chunk of the table (a chunk maps 512 MiB).
const CHUNK: usize = 8192;
/// Chunks in the table: the largest database is `TOP * CHUNK` extents (16 TiB).
const TOP: usize = 32768;

/// Where a logical extent is: a data file and an extent index within it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Location {
    /// Index of the data file (0-based).
    pub file: usize,
    /// Extent index within the file.
    pub extent: u64,
}

impl Location {
    const EXTENT_BITS: u32 = 40;

    /// The entry that stores this location; never 0 (0 means "not mapped").
    pub fn encode(self) -> u64 {
        ((self.file as u64 + 1) << Self::EXTENT_BITS) | self.extent
    }

    /// The location an entry stores, `None` for 0.
    pub fn decode(entry: u64) -> Option<Location> {
        (entry != 0).then(|| Location {
            file: (entry >> Self::EXTENT_BITS) as usize - 1,
            extent: entry & ((1 << Self::EXTENT_BITS) - 1),
        })
    }
}

type Chunk = [AtomicU64; CHUNK];

/// The logical → physical table.
pub struct ExtentMap {
    chunks: Box<[AtomicPtr<Chunk>]>,
}

impl std::fmt::Debug for ExtentMap {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ExtentMap").finish_non_exhaustive()
    }
}

impl Default for ExtentMap {
    fn default() -> Self {
        ExtentMap {
            chunks: (0..TOP)
                .map(|_| AtomicPtr::new(std::ptr::null_mut()))
                .collect(),
        }
    }
}

impl ExtentMap {
    /// The largest number of logical extents the table holds.
    pub const CAPACITY: u64 = (TOP * CHUNK) as u64;

    /// Where logical extent `extent` is, if it has been placed.
    #[inline]
    pub fn get(&self, extent: u64) -> Option<Location> {
        let (top, slot) = (
            (extent / CHUNK as u64) as usize,
            (extent % CHUNK as u64) as usize,
        );
        let chunk = self.chunks.get(top)?.load(Ordering::Acquire);
        if chunk.is_null() {
            return None;
        }
        // SAFETY: a published chunk stays allocated and in place until the map is dropped.
        let entry = unsafe { (*chunk)[slot].load(Ordering::Acquire) };
        Location::decode(entry)
    }

    /// Places logical extent `extent` at `at`. Callers serialise calls (the allocator's mutex);
    /// readers may run concurrently. Returns false when `extent` is beyond [`Self::CAPACITY`].
    pub fn set(&self, extent: u64, at: Location) -> bool {
        let (top, slot) = (
            (extent / CHUNK as u64) as usize,
            (extent % CHUNK as u64) as usize,
        );
        let Some(cell) = self.chunks.get(top) else {
            return false;
        };
        let mut chunk = cell.load(Ordering::Acquire);
        if chunk.is_null() {
            let fresh: Box<[AtomicU64]> = (0..CHUNK).map(|_| AtomicU64::new(0)).collect();
            let fresh: Box<Chunk> = fresh.try_into().expect("CHUNK entries");
            chunk = Box::into_raw(fresh);
            cell.store(chunk, Ordering::Release);
        }
        // SAFETY: as in `get`.
        unsafe { (*chunk)[slot].store(at.encode(), Ordering::Release) };
        true
    }
}

impl Drop for ExtentMap {
    fn drop(&mut self) {
        for cell in self.chunks.iter() {
            let chunk = cell.swap(std::ptr::null_mut(), Ordering::AcqRel);
            if !chunk.is_null() {
                // SAFETY: allocated by `Box::into_raw` in `set`, freed once here.
                drop(unsafe { Box::from_raw(chunk) });
            }
        }
    }
}

/// Which data file gets the next extent, and which file grows when all are full.
#[derive(Debug, Clone)]
pub struct Allocator {
    /// Extents each file has room for.
    pub capacity: Vec<u64>,
    /// Extents placed in each file (the next free extent index).
    pub used: Vec<u64>,
    credit: Vec<i64>,
    next_growth: usize,
    /// Logical extents placed since the map was last persisted.
    pub pending: Vec<u64>,
}

impl Allocator {
    /// An allocator over files of these capacities and uses (in extents).
    pub fn new(capacity: Vec<u64>, used: Vec<u64>) -> Allocator {
        let n = capacity.len();
        Allocator {
            capacity,
            used,
            credit: vec![0; n],
            next_growth: 0,
            pending: Vec::new(),
        }
    }

    /// The file that receives the next extent, or `None` when every file is full.
    pub fn pick(&mut self) -> Option<usize> {
        let free = |f: usize, a: &Allocator| a.capacity[f].saturating_sub(a.used[f]) as i64;
        let total: i64 = (0..self.capacity.len()).map(|f| free(f, self)).sum();
        if total == 0 {
            return None;
        }
        let mut best = 0;
        for f in 0..self.capacity.len() {
            self.credit[f] += free(f, self);
            if free(f, self) > 0 && (free(best, self) == 0 || self.credit[f] > self.credit[best]) {
                best = f;
            }
        }
        self.credit[best] -= total;
        Some(best)
    }

    /// Takes the next free extent of file `file`.
    pub fn take(&mut self, file: usize) -> Location {
        let at = Location {
            file,
            extent: self.used[file],
        };
        self.used[file] += 1;
        at
    }

    /// The file that grows next when every file is full: round robin, as SQL Server grows one
    /// file of a full filegroup at a time (`AUTOGROW_SINGLE_FILE`).
    pub fn growth_target(&self) -> usize {
        self.next_growth
    }

    /// Records that `file` grew by `extents`.
    pub fn grew(&mut self, file: usize, extents: u64) {
        self.capacity[file] += extents;
        self.next_growth = (file + 1) % self.capacity.len();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn locations_round_trip_and_zero_is_unmapped() {
        let at = Location {
            file: 3,
            extent: 123_456_789,
        };
        assert_eq!(Location::decode(at.encode()), Some(at));
        assert_eq!(Location::decode(0), None);
        assert_ne!(Location { file: 0, extent: 0 }.encode(), 0);
    }

    #[test]
    fn map_lookups_see_placed_extents_only() {
        let map = ExtentMap::default();
        assert_eq!(map.get(5), None);
        let at = Location { file: 1, extent: 9 };
        assert!(map.set(5, at));
        assert!(map.set(CHUNK as u64 * 3 + 1, at));
        assert_eq!(map.get(5), Some(at));
        assert_eq!(map.get(CHUNK as u64 * 3 + 1), Some(at));
        assert_eq!(map.get(6), None);
        assert!(!map.set(ExtentMap::CAPACITY, at));
        assert_eq!(map.get(ExtentMap::CAPACITY), None);
    }

    #[test]
    fn equal_files_fill_round_robin_within_one_extent() {
        let mut a = Allocator::new(vec![100; 4], vec![0; 4]);
        for _ in 0..400 {
            let f = a.pick().unwrap();
            a.take(f);
            let (min, max) = (a.used.iter().min().unwrap(), a.used.iter().max().unwrap());
            assert!(max - min <= 1, "{:?}", a.used);
        }
        assert_eq!(a.pick(), None, "all full");
    }

    #[test]
    fn fill_is_proportional_to_free_space() {
        let mut a = Allocator::new(vec![200, 100], vec![0, 0]);
        let mut to_first = 0;
        for _ in 0..30 {
            let f = a.pick().unwrap();
            a.take(f);
            to_first += usize::from(f == 0);
        }
        assert!(
            (19..=21).contains(&to_first),
            "about 2:1, got {to_first} of 30"
        );
        for _ in 0..270 {
            let f = a.pick().unwrap();
            a.take(f);
        }
        assert_eq!(a.used, vec![200, 100], "both files fill up together");
    }

    #[test]
    fn growth_goes_round_robin() {
        let mut a = Allocator::new(vec![1, 1], vec![1, 1]);
        assert_eq!(a.pick(), None);
        assert_eq!(a.growth_target(), 0);
        a.grew(0, 16);
        assert_eq!(a.pick(), Some(0));
        assert_eq!(a.growth_target(), 1);
    }
}
