//! The main job: runs every suite on the configured backend (the embedded engine by default) at
//! the default scale, prints the tables and writes results and the HTML report under
//! `target/dbbench/`. `--help` lists the commands.

fn main() -> std::process::ExitCode {
    dbbench_core::cli::main_with_references(&dbbench_suites::all(), dbbench_suites::references())
}
