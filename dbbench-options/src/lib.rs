//! The options of dbbench's `#[db_bench]` attribute, in one place for the macro that parses them
//! and the runtime that applies them (as serde_derive_internals serves serde_derive): option
//! names and their groups ([`Key`]), value keywords ([`keyword`]), the text forms of sizes,
//! growths and durations ([`size`]) and the defaults dbbench chooses ([`defaults`]).
//!
//! `docs/options.md` documents exactly these options; a test of dbbench-core checks it.

pub mod defaults;
pub mod key;
pub mod keyword;
pub mod size;

pub use key::Key;
