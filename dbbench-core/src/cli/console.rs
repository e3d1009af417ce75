//! Plain progress lines for logs: when stdout or stderr is not a terminal (CI, `> log`), the
//! live progress line is not in the log, so this recorder writes one line per finished repetition (cell, repetition,
//! elapsed, growths, and the load's throughput and p99 latency) and one per finished cell, as the
//! article's "Loop N done in X seconds". It wraps the recorder that keeps the results.

use crate::analysis::notation;
use crate::analysis::stats::Summary;
use crate::model::error::Result;
use crate::model::results::{
    BenchmarkResult, CellResult, CellStatus, FileKind, RunResult, WindowTimes,
};
use crate::run::recorder::Recorder;
use std::collections::BTreeMap;
use std::io::IsTerminal;

/// `println!` through the scrubber (`util::secret`): what the commands print to stdout (tables,
/// failures, comparisons) may quote a driver's message.
macro_rules! out {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let text = crate::util::secret::scrub(&format!($($arg)*));
        let _ = writeln!(std::io::stdout().lock(), "{text}");
    }};
}
pub(crate) use out;

/// Where the plain lines go.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Target {
    /// Nowhere: both streams are terminals, which show the live progress line.
    Off,
    /// stdout, redirected to a file (`> log`), beside the result tables.
    Stdout,
    /// stderr, when only it is redirected.
    Stderr,
}

/// Forwards everything to `inner` and, unless off, writes a line per repetition and per cell.
pub struct Echo<R> {
    inner: R,
    target: Target,
    benchmark: String,
    repetitions: u32,
    /// Measured elapsed times per cell so far.
    elapsed: BTreeMap<String, Vec<f64>>,
}

impl<R: Recorder> Echo<R> {
    /// Lines go to the first stream that is not a terminal, stdout first: on a terminal the
    /// progress line already shows it all.
    pub fn new(inner: R) -> Echo<R> {
        let target = if !std::io::stdout().is_terminal() {
            Target::Stdout
        } else if !std::io::stderr().is_terminal() {
            Target::Stderr
        } else {
            Target::Off
        };
        Echo::with(inner, target)
    }

    fn with(inner: R, target: Target) -> Echo<R> {
        Echo {
            inner,
            target,
            benchmark: String::new(),
            repetitions: 0,
            elapsed: BTreeMap::new(),
        }
    }
}

/// `vlf::doubling › test_1 · repetition 2 of 4 · 1.23 s · 12 data growths, 3 log growths`, with
/// `(fork 3)` where the runs are forked; a precision target leaves the count open (`repetitions`
/// 0), so there the line has no total.
pub fn repetition_line(benchmark: &str, cell: &str, run: &RunResult, repetitions: u32) -> String {
    let of = match repetitions {
        0 => String::new(),
        n => format!(" of {n}"),
    };
    let fork = run
        .fork
        .map_or(String::new(), |f| format!(" (fork {})", f + 1));
    let mut line = format!(
        "{benchmark} › {cell} · repetition {}{of}{fork}{} · {} s",
        run.index + 1,
        if run.warmup { " (warm-up)" } else { "" },
        seconds(run.elapsed_s)
    );
    let data: u64 = run
        .files
        .iter()
        .filter(|f| f.kind == FileKind::Data)
        .map(|f| f.growth_events)
        .sum();
    if !run.files.is_empty() {
        line.push_str(&format!(" · {data} data growths"));
    }
    if let Some(log) = &run.log {
        line.push_str(&format!(", {} log growths", log.growths));
    }
    for load in &run.loads {
        line.push_str(&format!(
            " · {}: {:.0} tx/s, p99 {:.2} ms",
            load.config.name, load.transactions_per_s, load.latency.p99_ms
        ));
    }
    if let Some(seen) = run.interference.as_ref().filter(|i| i.disturbed()) {
        line.push_str(&format!(" · disturbed: {}", seen.disturbed_by.join("; ")));
        if !run.warmup {
            line.push_str(match run.set_aside {
                Some(_) => " · set aside, measured again",
                None => " · kept: measured again as often as allowed",
            });
        }
    }
    line
}

/// Three significant digits down to milliseconds: a smoke repetition takes 0.04 s.
fn seconds(s: f64) -> String {
    match s {
        s if s < 1.0 => format!("{s:.3}"),
        s if s < 100.0 => format!("{s:.2}"),
        s => format!("{s:.0}"),
    }
}

/// `vlf::doubling › test_1 done · 3 measured · 10.7 ± 0.5 s`, or the failure.
pub fn cell_line(benchmark: &str, cell: &str, status: &CellStatus, elapsed: &[f64]) -> String {
    match status {
        CellStatus::Ok => match Summary::of(elapsed) {
            Some(s) => format!(
                "{benchmark} › {cell} done · {} measured · {}",
                s.n,
                notation::mean_pm(&s)
            ),
            None => format!("{benchmark} › {cell} done · no measured run"),
        },
        CellStatus::Failed(e) => format!("{benchmark} › {cell} failed: {e}"),
        CellStatus::Skipped(why) => format!("{benchmark} › {cell} skipped: {why}"),
    }
}

impl<R> Echo<R> {
    /// Writes `line` whole to the target. Straight to the handle, not `println!`: the test
    /// harness captures `print!`, and a CI log of `cargo test` should show progress too.
    fn say(&self, line: &str) {
        use std::io::Write;
        match self.target {
            Target::Stdout => {
                let line = crate::util::secret::scrub(line);
                let _ = writeln!(std::io::stdout().lock(), "{line}");
            }
            Target::Stderr => crate::util::console::say(line),
            Target::Off => {}
        }
    }
}

impl<R: Recorder> Recorder for Echo<R> {
    fn benchmark_started(
        &mut self,
        stem: &str,
        header: &BenchmarkResult,
        declared: &[&str],
    ) -> Result<()> {
        self.benchmark = header.benchmark.clone();
        // A precision target's forks and rounds per fork are decided as it runs.
        self.repetitions = match header.run.precision {
            Some(_) => 0,
            None => header.run.warmup + header.run.repeat,
        };
        self.inner.benchmark_started(stem, header, declared)
    }

    fn cell_started(&mut self, cell: &CellResult) -> Result<()> {
        self.inner.cell_started(cell)
    }

    fn repetition_finished(
        &mut self,
        cell: &str,
        run: &RunResult,
        window: WindowTimes,
    ) -> Result<()> {
        self.inner.repetition_finished(cell, run, window)?;
        if !run.warmup {
            self.elapsed
                .entry(cell.to_string())
                .or_default()
                .push(run.elapsed_s);
        }
        if self.target != Target::Off {
            self.say(&repetition_line(
                &self.benchmark,
                cell,
                run,
                self.repetitions,
            ));
        }
        Ok(())
    }

    fn cell_finished(&mut self, cell: &str, status: &CellStatus) -> Result<()> {
        self.inner.cell_finished(cell, status)?;
        if self.target != Target::Off {
            let elapsed = self.elapsed.get(cell).map_or(&[][..], |v| v.as_slice());
            self.say(&cell_line(&self.benchmark, cell, status, elapsed));
        }
        Ok(())
    }

    fn kept(&mut self, cell: &str) -> Result<Vec<RunResult>> {
        self.inner.kept(cell)
    }

    fn earlier(
        &mut self,
        probe: &BenchmarkResult,
    ) -> Result<Vec<crate::model::earlier::EarlierRun>> {
        self.inner.earlier(probe)
    }

    fn benchmark_finished(&mut self, stopping: &crate::model::results::Stopping) -> Result<()> {
        self.inner.benchmark_finished(stopping)
    }

    fn calibration(&mut self) -> Result<Option<crate::model::calibration::Calibration>> {
        self.inner.calibration()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_repetition_line_names_cell_repetition_elapsed_and_growths() {
        let result = crate::model::sample::vlf();
        let run = &result.cells[0].runs[1];
        let line = repetition_line("vlf::doubling", "test_1", run, 4);
        assert_eq!(
            line,
            "vlf::doubling › test_1 · repetition 2 of 4 · 10.74 s · 1200 data growths, 600 log growths"
        );
        let warm = repetition_line("vlf::doubling", "test_1", &result.cells[0].runs[0], 4);
        assert!(warm.contains("repetition 1 of 4 (warm-up)"), "{warm}");
    }

    #[test]
    fn a_load_line_has_throughput_and_p99() {
        let result = crate::model::sample::load(&[250.0, 300.0]);
        let line = repetition_line("p", "same_volume", &result.cells[0].runs[1], 3);
        assert!(line.ends_with("insert: 250 tx/s, p99 4.00 ms"), "{line}");
    }

    #[test]
    fn cell_lines_summarise_or_say_why_not() {
        let ok = cell_line("b", "c", &CellStatus::Ok, &[1.0, 1.0, 1.0]);
        assert!(ok.starts_with("b › c done · 3 measured · 1"), "{ok}");
        let failed = cell_line("b", "c", &CellStatus::Failed("disk full".into()), &[]);
        assert_eq!(failed, "b › c failed: disk full");
    }

    #[test]
    fn the_inner_recorder_still_gets_everything() {
        #[derive(Default)]
        struct Count(usize);
        impl Recorder for Count {
            fn benchmark_started(
                &mut self,
                _: &str,
                _: &BenchmarkResult,
                _: &[&str],
            ) -> Result<()> {
                self.0 += 1;
                Ok(())
            }
            fn cell_started(&mut self, _: &CellResult) -> Result<()> {
                self.0 += 1;
                Ok(())
            }
            fn repetition_finished(
                &mut self,
                _: &str,
                _: &RunResult,
                _: WindowTimes,
            ) -> Result<()> {
                self.0 += 1;
                Ok(())
            }
            fn cell_finished(&mut self, _: &str, _: &CellStatus) -> Result<()> {
                self.0 += 1;
                Ok(())
            }
            fn benchmark_finished(&mut self, _: &crate::model::results::Stopping) -> Result<()> {
                self.0 += 1;
                Ok(())
            }
            fn kept(&mut self, _: &str) -> Result<Vec<RunResult>> {
                Ok(Vec::new())
            }
            fn calibration(&mut self) -> Result<Option<crate::model::calibration::Calibration>> {
                Ok(None)
            }
            fn earlier(
                &mut self,
                _: &BenchmarkResult,
            ) -> Result<Vec<crate::model::earlier::EarlierRun>> {
                Ok(Vec::new())
            }
        }
        let result = crate::model::sample::vlf();
        let mut echo = Echo::with(Count::default(), Target::Off);
        echo.benchmark_started("s", &result, &["test_1"]).unwrap();
        echo.cell_started(&result.cells[0]).unwrap();
        echo.repetition_finished("test_1", &result.cells[0].runs[1], WindowTimes::default())
            .unwrap();
        echo.cell_finished("test_1", &CellStatus::Ok).unwrap();
        assert_eq!(echo.inner.0, 4);
        assert_eq!(echo.elapsed["test_1"], vec![10.74]);
    }
}
