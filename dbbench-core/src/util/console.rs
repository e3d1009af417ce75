//! Lines for the person running the benchmarks, written straight to stderr past the test
//! harness's capture, so they show under `cargo test` as well as in the suite binary.

use std::io::Write;

/// Writes `text` (through the scrubber, `util::secret`) and a newline to stderr at once (one `write` of the locked handle, so lines of
/// concurrent tests do not interleave).
pub fn say(text: &str) {
    let text = crate::util::secret::scrub(text);
    let _ = writeln!(std::io::stderr().lock(), "{text}");
}
