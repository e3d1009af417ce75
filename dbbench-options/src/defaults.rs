//! The value of every option the attribute leaves unset, where dbbench itself chooses one (the
//! storage options left unset are the backend's own defaults, so they have none here).

/// `data_files` when not given.
pub const DATA_FILES: u32 = 1;
/// `repeat` when not given.
pub const REPEAT: u32 = 1;
/// `warmup` when not given.
pub const WARMUP: u32 = 0;
/// `smoke_divisor` when not given: `DBBENCH_SCALE=smoke` is 1/512 of the articles' sizes.
pub const SMOKE_DIVISOR: u32 = 512;
/// `default_divisor` when not given: the default scale is 1/16 of the articles' sizes.
pub const DEFAULT_DIVISOR: u32 = 16;
/// `scale_storage` when not given.
pub const SCALE_STORAGE: bool = false;
/// `fixture` when not given.
pub const FIXTURE: &str = crate::keyword::FIXTURE_NONE;
/// `order` when not given.
pub const ORDER: &str = crate::keyword::INTERLEAVED;

/// The backend used when `DBBENCH_BACKEND` is unset; cells that cannot run on it are generated as
/// ignored tests, so test runners show them as skipped rather than passed.
pub const BACKEND: &str = crate::keyword::EMBEDDED;

/// The largest `smoke_divisor` or `default_divisor`: 1 MiB of article becomes one byte.
pub const MAX_DIVISOR: u32 = 1 << 20;
