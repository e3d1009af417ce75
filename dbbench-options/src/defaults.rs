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

/// `cache` when not given.
pub const CACHE: &str = crate::keyword::WARM;
/// `min_repeat` when `precision` is given without it: the pilot forks whose spread the two-stage
/// interval uses. Five give t(0.975, 4) = 2.78; three would give 4.30, and so need about 2.4 times
/// as many forks for the same width (the seed suites' VLF benchmark asks for seven).
pub const MIN_REPEAT: u32 = 5;
/// `fork_rounds` when `precision` is given without it: two rounds in each pilot fork, so that
/// every pilot fork measures its own round-to-round spread, which the allocation of the later
/// forks' rounds weighs (`docs/statistics.md`, "Rounds per fork").
pub const FORK_ROUNDS: u32 = 2;
/// The most `fork_rounds`: the most rounds the allocation gives a later fork.
pub const MAX_FORK_ROUNDS: u32 = 4;
/// `max_repeat` when `precision` is given without it.
pub const MAX_REPEAT: u32 = 20;
/// `budget` when `precision` is given without it, in milliseconds: five minutes.
pub const BUDGET_MS: u64 = 5 * 60 * 1000;
/// The largest `precision`, in percent: a wider target would accept any interval.
pub const MAX_PRECISION_PERCENT: f64 = 50.0;

/// The backend used when `DBBENCH_BACKEND` is unset; cells that cannot run on it are generated as
/// ignored tests, so test runners show them as skipped rather than passed.
pub const BACKEND: &str = crate::keyword::EMBEDDED;

/// The largest `smoke_divisor` or `default_divisor`: 1 MiB of article becomes one byte.
pub const MAX_DIVISOR: u32 = 1 << 20;
