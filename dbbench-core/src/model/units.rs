//! Allocation units shared by every backend, chosen to match SQL Server's.

/// A page: 8 KiB, as in SQL Server (the embedded engine uses `PRAGMA page_size = 8192`).
pub const PAGE: u64 = 8 * 1024;

/// An extent: eight pages, the unit in which data files are allocated.
pub const EXTENT: u64 = 8 * PAGE;

/// One mebibyte.
pub const MIB: u64 = 1024 * 1024;
