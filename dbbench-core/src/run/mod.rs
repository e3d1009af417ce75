//! Layer 4, **run**: running benchmarks. The static description the macro emits (`spec`), the
//! settings of one invocation (`context`), the runner over cells and repetitions, one repetition's
//! lifecycle (create, load, measure, tear down), the session a body gets, the concurrent load
//! driver, the precision target's stopping rule (`target`), and the test filter of a `cargo test` command line. The runner returns results; it
//! writes nothing.
//!
//! May import: `model`, `util`, `engine`.

pub mod context;
pub mod driver;
pub mod recorder;
pub mod repetition;
pub mod runner;
pub mod selection;
pub mod session;
pub mod spec;
pub mod target;
pub mod workload;
