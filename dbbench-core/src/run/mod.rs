//! Layer 4, **run**: running benchmarks. The static description the macro emits (`spec`), the
//! settings of one invocation (`context`), the runner that prepares a benchmark (`calibration`,
//! each cell's `plan` and `admission`), the pure `schedule` of its repetitions (in forks, `cost` of a round and a fork, each round in a `williams` order) and the `executor`
//! that carries it out, one repetition's lifecycle (create, load, measure, tear down), the session
//! a body gets, the concurrent load driver, the precision target's stopping rule (`target`) and what it can still reach after its pilot
//! (`outlook`), and
//! the test filter of a `cargo test` command line. The runner returns results; it writes nothing.
//!
//! May import: `model`, `util`, `engine`.

mod admission;
mod calibration;
pub mod context;
mod cost;
pub mod driver;
mod executor;
pub(crate) mod outlook;
pub mod plan;
pub mod recorder;
pub mod repetition;
pub mod runner;
pub(crate) mod schedule;
pub mod selection;
pub mod session;
pub mod spec;
pub mod target;
pub(crate) mod williams;
pub mod workload;
