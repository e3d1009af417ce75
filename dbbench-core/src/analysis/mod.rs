//! Layer 5, **analysis**: what the numbers mean. Summary statistics and intervals, the ratio of
//! two cells with its verdict, the results table model, the comparison with a baseline, the confounder check (settings that
//! differ where nothing declared says they should), and the check of the cells' positions in their
//! rounds (`position`).
//!
//! May import: `model`, `util`, `engine` (for an engine's profile, such as what its log segments
//! are called), `run`.

pub mod between;
pub mod compare;
pub mod components;
pub mod confounder;
pub mod control;
pub mod drift;
pub mod label;
pub mod metrics;
pub mod notation;
pub mod position;
pub mod precision;
pub mod ratio;
#[cfg(test)]
mod simulation;
pub mod stats;
pub mod table;
