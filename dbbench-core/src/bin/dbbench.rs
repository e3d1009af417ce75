//! `dbbench`: work with results without rerunning benchmarks (`report`, `compare`, `snapshot`);
//! the same command line as a suite binary, which adds `run` and `list` for its benchmarks.
//! `dbbench --help` lists the commands.

fn main() -> std::process::ExitCode {
    dbbench_core::cli::main(&[])
}
