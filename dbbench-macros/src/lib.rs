//! The `#[db_bench]` attribute of dbbench.
//!
//! Use it through `dbbench_core`, which re-exports it together with the runtime types the
//! expansion refers to:
//!
//! ```ignore
//! use dbbench_core::{db_bench, Result, Session};
//!
//! /// Doubling the charge table.
//! #[db_bench(growth = "1MB", data_files = [1, 2, 4, 8], repeat = 3, fixture = "credit")]
//! #[case(name = "big_growth", growth = "1024MB")]
//! async fn double_charges(db: &mut Session) -> Result<()> {
//!     Ok(())
//! }
//! ```
//!
//! This file only forwards to the modules below, which work on `proc_macro2` tokens so that
//! they can be unit-tested outside the compiler:
//!
//! - `parse`: attribute syntax into raw options with spans;
//! - `options` and `value`: which options exist where, and what each value means;
//! - `setting`: the typed values of storage and run options;
//! - `size`: size, growth and duration literals;
//! - `case`: the `#[case]` and `#[cases]` helper attributes;
//! - `like`: cases that start from other cases;
//! - `not_on`: the `#[not_on]` helper attribute;
//! - `matrix`: cells from lists and cases, and their names;
//! - `check`: contradictions between options;
//! - `signature`: the shape of the annotated function;
//! - `bench`: the stages in order, collecting every error;
//! - `expand`: the generated code.

mod bench;
mod case;
mod check;
mod errors;
mod expand;
mod like;
mod matrix;
mod not_on;
mod options;
mod parse;
mod setting;
mod signature;
mod suggest;
mod symbol;
mod value;

use proc_macro::TokenStream;

/// Declares a database storage-configuration benchmark.
///
/// The function must be `async fn name(db: &mut Session) -> Result<()>`. Storage options
/// (`data_files`, `data_size`, `growth`, `log_size`, `log_growth`, `log_pregrow`, `ifi`,
/// `recovery`, `maxdop`, `tempdb_files`, `tempdb_size`, `tempdb_growth`, `data_on`, `log_on`)
/// may be lists, which make one cell per value; run options (`repeat`, `warmup`, `fixture`,
/// `backends`, `timeout`, `order`, `baseline`, `scale_storage`, `smoke_divisor`,
/// `default_divisor`) apply to every cell. Each `#[case(name = "...", ...)]` below the attribute
/// is a named cell with its own storage options, and may set its own `backends`; `like = "other"`
/// starts it from another case's options. `#[cases(like = ["a", "b"], prefix = "pg_", ...)]`
/// makes `pg_a` and `pg_b` from `a` and `b` with the same changes (`without = [...]` leaves options
/// unset). `postgres(budget = "5m")` in `#[db_bench]` gives one backend its own precision
/// bounds (`precision`, `min_repeat`, `max_repeat`, `budget`). One
/// `#[not_on(postgres = "why")]` names backends the benchmark's question does not apply to: there
/// it runs no cell and reports the sentence instead.
///
/// The function is kept as written, and a module of the same name is generated beside it
/// with a `BENCHMARK` static describing the benchmark and one `#[test]` per cell.
#[proc_macro_attribute]
pub fn db_bench(args: TokenStream, item: TokenStream) -> TokenStream {
    expand::db_bench(args.into(), item.into()).into()
}
