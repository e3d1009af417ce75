//! The progress line for the running cell, written straight to the terminal's stderr so that it
//! shows under `cargo test` (which captures `print!`), and silent when stderr is not a terminal.

use crate::spec::BenchmarkSpec;
use std::io::{IsTerminal, Write};

/// Reports that repetition `rep` of cell `cell` (`index` of `cells`) starts.
pub fn repetition_started(
    bench: &BenchmarkSpec,
    cell: &str,
    index: usize,
    cells: usize,
    rep: u32,
    reps: u32,
) {
    let stderr = std::io::stderr();
    if !stderr.is_terminal() {
        return;
    }
    let mut out = stderr.lock();
    let _ = write!(
        out,
        "\r\x1b[2K{} › {cell} (cell {} of {cells}, repetition {} of {reps})",
        bench.test_path(),
        index + 1,
        rep + 1
    );
    let _ = out.flush();
}

/// Clears the progress line.
pub fn finished() {
    let stderr = std::io::stderr();
    if stderr.is_terminal() {
        let _ = write!(stderr.lock(), "\r\x1b[2K");
    }
}
