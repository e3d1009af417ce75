//! Tests of the `#[db_bench]` attribute of dbbench; the library itself is empty.
//!
//! - `tests/ui.rs` compiles every file under `tests/ui/` with trybuild: each topic folder holds
//!   attributes that must be rejected, with the exact messages in the `.stderr` beside them, and
//!   `tests/ui/pass/` holds expansions that must compile and run.
//! - `tests/expansion.rs` declares benchmarks in nested modules and inspects the `BENCHMARK`
//!   statics the macro generates, without running the runtime.
