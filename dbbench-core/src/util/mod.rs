//! Layer 2, **util**: helpers with no knowledge of engines or runs: the console (lines past the
//! test harness's capture, and the progress line), every path dbbench writes under its work dir,
//! files written with their directory, text grids, calendar dates, deterministic random numbers,
//! and catching a panic inside a future.
//!
//! May import: `model`.

pub mod calendar;
pub mod console;
pub mod fs;
pub mod grid;
pub mod machine_lock;
pub mod paths;
pub mod progress;
pub mod rng;
pub mod unwind;
