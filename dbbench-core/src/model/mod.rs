//! Layer 1, **model**: the data dbbench works with and its serde, and nothing else. The declared
//! configuration (storage and run options), values, units, scale, volumes, the SQL dialect, the
//! evidence an engine measures, load statistics, host facts, the machine's calibration and how
//! busy it was during a window, what an engine is asked to create (`plan`), the engine settings in force during a window (`setting`), how a backend's results are shown (`presentation`), the state a window started from (`start`), the results, and the error type every
//! layer returns.
//!
//! May import: nothing of dbbench's.

pub mod calibration;
pub mod config;
pub mod design;
pub mod dialect;
pub mod earlier;
pub mod error;
pub mod evidence;
pub mod host;
pub mod interference;
pub mod load;
pub mod plan;
pub mod presentation;
pub mod reference;
pub mod results;
#[cfg(test)]
pub mod sample;
pub mod scale;
pub mod setting;
pub mod sizing;
pub mod start;
pub mod units;
pub mod value;
pub mod volume;
