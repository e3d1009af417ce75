//! The short human summary printed after a benchmark.

use crate::results::{BenchmarkResult, CellStatus};
use std::fmt::Write;

/// A plain-text table: one line per cell with its status, mean elapsed time and growth events.
pub fn render(result: &BenchmarkResult) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "dbbench › {} on {} ({}), scale {}",
        result.benchmark, result.backend.kind, result.backend.version, result.scale
    );
    for cell in &result.cells {
        let runs: Vec<f64> = cell.measured().map(|r| r.elapsed_s).collect();
        let line = match &cell.status {
            CellStatus::Ok if !runs.is_empty() => {
                let mean = runs.iter().sum::<f64>() / runs.len() as f64;
                let growths: u64 = cell
                    .measured()
                    .next()
                    .map(|r| r.files.iter().map(|f| f.growth_events).sum())
                    .unwrap_or(0);
                format!(
                    "{mean:>10.3} s  (n={}, growth events {growths})",
                    runs.len()
                )
            }
            CellStatus::Ok => "no measured run".to_string(),
            CellStatus::Failed(e) => format!("FAILED: {e}"),
            CellStatus::Skipped(why) => format!("skipped: {why}"),
        };
        let _ = writeln!(out, "  {:<32} {line}", cell.name);
    }
    out
}
