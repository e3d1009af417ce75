//! Layer 2, **util**: helpers with no knowledge of engines or runs: the console (lines past the
//! test harness's capture, and the progress line), every path dbbench writes under its work dir,
//! files written with their directory, text grids, calendar dates, deterministic random numbers,
//! catching a panic inside a future, stopping
//! statements from outside them (`cancel`: timeouts and signals), the signal handlers, the limit
//! of every wait on a server (`deadline`), what dbbench holds now for a forced exit to end or
//! name (`leftover`), and who owns
//! what dbbench created (`owner`: host, PID, start time), the marked directories of a server
//! dbbench manages (their marker's text) and their removal without the server's help
//! (`owned_dir`), free space before
//! work (`space`),
//! the one way a place of dbbench's own outside the work dir is made and files in it opened
//! (`private_dir`: 0700, exclusive or verified, never through a link),
//! the busy-machine guard's sampler (`monitor`) with this machine's processes (`procfs`) and a
//! database server among them (`local_server`), the calibration probes (`probe`), the
//! flush and wait that give every window the same starting state (`settle`), a database name
//! within a server's identifier limit (`short_name`), the process of a server dbbench spawned
//! itself (`server_process`: its PID for the signal thread, how it ended, said once) and its stop
//! (`shutdown`: its signal, SIGKILL after the deadline, the reap).
//!
//! May import: `model`.

pub mod calendar;
pub mod cancel;
pub mod console;
pub mod deadline;
pub mod fs;
pub mod grid;
// A directory held by its descriptor (`held_dir`), for the removal of a managed server's marked
// directories: a build with no backend that spawns its own server uses none of it.
#[allow(dead_code)]
pub mod held_dir;
pub mod leftover;
pub mod local_server;
pub mod machine_lock;
pub mod monitor;
// A managed server's marked directories (`owned_dir`): a build with no backend that spawns its
// own server uses none of it.
#[allow(dead_code)]
pub mod owned_dir;
pub mod owner;
pub mod paths;
pub mod private_dir;
pub mod probe;
pub mod procfs;
pub mod progress;
pub mod rng;
pub mod secret;
pub mod settle;
// A managed server's process (`server_process`): a build with no backend that spawns its own
// server uses none of it.
#[allow(dead_code)]
pub mod server_process;
// A database name within a server's identifier limit (`short_name`): a build with only the
// embedded engine (its databases are files) uses none of it.
#[allow(dead_code)]
pub mod short_name;
// A managed server's stop (`shutdown`): a build with no backend that spawns its own server uses
// none of it.
#[allow(dead_code)]
pub mod shutdown;
pub mod signals;
// What the space check needs of this machine's file systems, for a backend whose files are on
// this machine; a build of only backends whose server keeps its own files uses none of it.
#[allow(dead_code)]
pub mod space;
pub mod stem_lock;
pub mod unwind;
