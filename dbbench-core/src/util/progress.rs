//! The live progress line of the running benchmark: which cell (k of n), which repetition, the
//! body's latest lap, the repetition's elapsed time and the estimated time left.
//!
//! Drawn with `indicatif` straight to the terminal behind stderr, so it shows under `cargo test`
//! (which captures only `print!`/`eprint!`), redrawn a few times a second so the elapsed time
//! moves during long repetitions, and silent when stderr is not a terminal (CI logs, pipes).
//! One benchmark runs at a time in a process, so the line is process-wide state.

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::fmt::Write as _;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// What the line shows.
#[derive(Debug, Clone)]
struct Status {
    benchmark: String,
    cell: String,
    cell_number: usize,
    cells: usize,
    repetition: u32,
    repetitions: u32,
    warmup: bool,
    lap: Option<String>,
    repetition_started: Instant,
    /// Wall time of every finished repetition, setup and teardown included.
    finished: Vec<Duration>,
    /// Repetitions not yet finished, the running one included.
    remaining: usize,
}

impl Status {
    /// The estimated time left: the mean finished repetition times the remaining ones, less what
    /// the running one has already taken; `None` before the first repetition finishes.
    fn time_left(&self, now: Instant) -> Option<Duration> {
        if self.finished.is_empty() {
            return None;
        }
        let mean = self.finished.iter().sum::<Duration>() / self.finished.len() as u32;
        let running = now.saturating_duration_since(self.repetition_started);
        Some((mean * self.remaining as u32).saturating_sub(running.min(mean)))
    }

    fn line(&self, now: Instant) -> String {
        let mut out = format!(
            "{} › {} (cell {} of {}) · repetition {} of {}",
            self.benchmark,
            self.cell,
            self.cell_number,
            self.cells,
            self.repetition,
            self.repetitions
        );
        if self.warmup {
            out.push_str(" (warm-up)");
        }
        if let Some(lap) = &self.lap {
            let _ = write!(out, " · lap {lap}");
        }
        let running = now.saturating_duration_since(self.repetition_started);
        let _ = write!(out, " · {}", clock(running));
        match self.time_left(now) {
            Some(left) => {
                let _ = write!(out, " · about {} left", clock(left));
            }
            None => out.push_str(" · time left known after the first repetition"),
        }
        out
    }
}

/// `4.2 s`, `3m 05s`, `1h 02m`.
fn clock(d: Duration) -> String {
    let s = d.as_secs();
    if s < 60 {
        format!("{:.1} s", d.as_secs_f64())
    } else if s < 3600 {
        format!("{}m {:02}s", s / 60, s % 60)
    } else {
        format!("{}h {:02}m", s / 3600, s % 3600 / 60)
    }
}

struct Live {
    bar: ProgressBar,
    status: Arc<Mutex<Status>>,
}

static LIVE: Mutex<Option<Live>> = Mutex::new(None);

fn with_live(f: impl FnOnce(&Live)) {
    let guard = LIVE.lock().unwrap_or_else(|p| p.into_inner());
    if let Some(live) = guard.as_ref() {
        f(live);
    }
}

fn update(f: impl FnOnce(&mut Status)) {
    with_live(|live| {
        f(&mut live.status.lock().unwrap_or_else(|p| p.into_inner()));
        live.bar.tick();
    });
}

/// Starts the line for `benchmark`, which will run `repetitions` repetitions in all. Does nothing
/// when stderr is not a terminal.
pub fn start(benchmark: &str, repetitions: usize) {
    let target = ProgressDrawTarget::stderr();
    if target.is_hidden() {
        return;
    }
    let status = Arc::new(Mutex::new(Status {
        benchmark: benchmark.to_string(),
        cell: String::new(),
        cell_number: 0,
        cells: 0,
        repetition: 0,
        repetitions: 0,
        warmup: false,
        lap: None,
        repetition_started: Instant::now(),
        finished: Vec::new(),
        remaining: repetitions,
    }));
    let shown = status.clone();
    let style = ProgressStyle::with_template("{spinner:.cyan} {status}")
        .expect("the template is valid")
        .with_key(
            "status",
            move |_: &indicatif::ProgressState, w: &mut dyn std::fmt::Write| {
                let line = shown
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .line(Instant::now());
                let _ = w.write_str(&line);
            },
        );
    let bar = ProgressBar::with_draw_target(Some(repetitions as u64), target).with_style(style);
    bar.enable_steady_tick(Duration::from_millis(250));
    *LIVE.lock().unwrap_or_else(|p| p.into_inner()) = Some(Live { bar, status });
}

/// Where the run is: repetition `repetition` (from 0) of `repetitions` of cell `cell`, number
/// `index` (from 0) of `cells`, with `remaining` repetitions left in the benchmark, this one
/// included.
#[derive(Debug, Clone, Copy)]
pub struct Position<'a> {
    /// The cell's name.
    pub cell: &'a str,
    /// The cell's index in the run, from 0.
    pub index: usize,
    /// Cells in the run.
    pub cells: usize,
    /// The repetition, from 0, warm-ups first.
    pub repetition: u32,
    /// Repetitions per cell, warm-ups included.
    pub repetitions: u32,
    /// Whether this repetition is a warm-up.
    pub warmup: bool,
    /// Repetitions left in the benchmark, this one included.
    pub remaining: usize,
}

/// Reports that a repetition starts.
pub fn repetition_started(p: Position<'_>) {
    let Position {
        cell,
        index,
        cells,
        repetition,
        repetitions,
        warmup,
        remaining,
    } = p;
    update(|s| {
        s.remaining = remaining;
        s.cell = cell.to_string();
        s.cell_number = index + 1;
        s.cells = cells;
        s.repetition = repetition + 1;
        s.repetitions = repetitions;
        s.warmup = warmup;
        s.lap = None;
        s.repetition_started = Instant::now();
    });
}

/// Reports that the running repetition finished (successfully or not).
pub fn repetition_finished() {
    update(|s| {
        s.finished.push(s.repetition_started.elapsed());
        s.remaining = s.remaining.saturating_sub(1);
    });
    with_live(|live| live.bar.inc(1));
}

/// Reports that the body recorded the lap `name`.
pub fn lap(name: &str) {
    update(|s| s.lap = Some(name.to_string()));
}

/// Clears the line.
pub fn finished() {
    if let Some(live) = LIVE.lock().unwrap_or_else(|p| p.into_inner()).take() {
        live.bar.finish_and_clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn status(now: Instant) -> Status {
        Status {
            benchmark: "vlf::doubling".into(),
            cell: "test_3".into(),
            cell_number: 2,
            cells: 3,
            repetition: 2,
            repetitions: 4,
            warmup: false,
            lap: Some("loop 3".into()),
            repetition_started: now - Duration::from_secs(4),
            finished: vec![Duration::from_secs(10), Duration::from_secs(14)],
            remaining: 6,
        }
    }

    #[test]
    fn the_line_names_cell_repetition_lap_elapsed_and_time_left() {
        let now = Instant::now();
        // 6 left at a mean of 12 s, less the 4 s the running one has taken.
        assert_eq!(
            status(now).line(now),
            "vlf::doubling › test_3 (cell 2 of 3) · repetition 2 of 4 · lap loop 3 · 4.0 s · \
             about 1m 08s left"
        );
    }

    #[test]
    fn before_any_repetition_finished_the_time_left_is_unknown() {
        let now = Instant::now();
        let mut s = status(now);
        s.finished.clear();
        s.warmup = true;
        s.lap = None;
        let line = s.line(now);
        assert!(
            line.contains("repetition 2 of 4 (warm-up) · 4.0 s"),
            "{line}"
        );
        assert!(line.ends_with("time left known after the first repetition"));
    }

    #[test]
    fn clock_reads_naturally() {
        assert_eq!(clock(Duration::from_millis(4200)), "4.2 s");
        assert_eq!(clock(Duration::from_secs(185)), "3m 05s");
        assert_eq!(clock(Duration::from_secs(3720)), "1h 02m");
    }
}
