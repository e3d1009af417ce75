//! The measured windows' share of an invocation's wall time, and where the rest went: the sum of
//! the windows ÷ the invocation's span, from the store alone (`dbbench share`).
//!
//! Each repetition records its window (`window_start_unix_ns`, `window_end_unix_ns`) and, since
//! the preparation was timed, what it spent outside the window (`run.start`: `settle_s` and
//! `preparation`: `create_s`, `fixture_s`, `checkpoint_s`, `close_s`, `teardown_s`, and `lock_wait_s`, the
//! wait for another dbbench process's measurement). A benchmark's span runs
//! from the end of the previous benchmark's last window (the invocation's start, for the first)
//! to the end of its own last window; what the timed steps do not explain is `other` (the
//! calibration, the precision target's judging, recording, the body's connections and closing
//! the window). The invocation's span runs from its start to its end (to its last window, while
//! it runs); the last benchmark's outputs and the process's exit are in the overall figure only.

use super::Store;
use crate::model::error::{Error, Result};
use rusqlite::OptionalExtension;

/// Where the wall time of one benchmark (or of the whole invocation) went, in seconds.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ShareRow {
    /// The benchmark, or `all` for the invocation.
    pub name: String,
    /// Repetitions kept.
    pub repetitions: usize,
    /// Wall time from the span's start to its end.
    pub span_s: f64,
    /// Sum of the measured windows.
    pub windows_s: f64,
    /// Creating databases.
    pub create_s: f64,
    /// Loading fixtures.
    pub fixture_s: f64,
    /// The engine's checkpoint as a window opens.
    pub checkpoint_s: f64,
    /// Flushing and waiting for writeback before each window.
    pub settle_s: f64,
    /// Closing the window's connection.
    pub close_s: f64,
    /// Dropping databases.
    pub teardown_s: f64,
    /// Waiting for another dbbench process's measurement on this machine.
    pub lock_wait_s: f64,
}

impl ShareRow {
    /// Windows ÷ span (0 for an empty span).
    pub fn share(&self) -> f64 {
        if self.span_s > 0.0 {
            self.windows_s / self.span_s
        } else {
            0.0
        }
    }

    /// The part of the span no window and no timed step explains.
    pub fn other_s(&self) -> f64 {
        self.span_s
            - self.windows_s
            - self.create_s
            - self.fixture_s
            - self.checkpoint_s
            - self.settle_s
            - self.close_s
            - self.teardown_s
            - self.lock_wait_s
    }

    fn add(&mut self, rep: &Rep) {
        self.repetitions += 1;
        self.windows_s += (rep.end_ns - rep.start_ns) as f64 / 1e9;
        let start = rep.run.get("start");
        let secs = |v: Option<&serde_json::Value>, key: &str| {
            v.and_then(|v| v.get(key))
                .and_then(|v| v.as_f64())
                .unwrap_or(0.0)
        };
        self.settle_s += secs(start, "settle_s");
        let prep = start.and_then(|s| s.get("preparation"));
        self.create_s += secs(prep, "create_s");
        self.fixture_s += secs(prep, "fixture_s");
        self.checkpoint_s += secs(prep, "checkpoint_s");
        self.close_s += secs(prep, "close_s");
        self.teardown_s += secs(prep, "teardown_s");
        self.lock_wait_s += secs(prep, "lock_wait_s");
    }
}

/// The share of one invocation: a row per benchmark, in the order they ran, and the total.
#[derive(Debug, Clone, PartialEq)]
pub struct Share {
    /// The invocation's id.
    pub invocation: i64,
    /// One row per benchmark.
    pub benchmarks: Vec<ShareRow>,
    /// The whole invocation: its span from start to end.
    pub total: ShareRow,
}

struct Rep {
    benchmark: String,
    start_ns: i64,
    end_ns: i64,
    run: serde_json::Value,
}

impl Store {
    /// The share of invocation `id`, or of the newest one that kept a repetition.
    pub fn share(&self, id: Option<i64>) -> Result<Share> {
        let id = match id {
            Some(id) => id,
            None => self
                .conn
                .query_row(
                    "SELECT max(b.invocation_id) FROM repetitions r \
                     JOIN cell_runs c ON c.id = r.cell_run_id \
                     JOIN benchmark_runs b ON b.id = c.benchmark_run_id",
                    [],
                    |r| r.get::<_, Option<i64>>(0),
                )
                .map_err(|e| self.fail(e))?
                .ok_or_else(|| {
                    Error::Config(format!(
                        "the results store `{}` has no repetitions yet",
                        self.path.display()
                    ))
                })?,
        };
        let (started_ms, ended_ms): (i64, Option<i64>) = self
            .conn
            .query_row(
                "SELECT started_at_unix_ms, ended_at_unix_ms FROM invocations WHERE id = ?1",
                [id],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .optional()
            .map_err(|e| self.fail(e))?
            .ok_or_else(|| Error::Config(format!("no invocation {id} in the results store")))?;
        let mut stmt = self
            .conn
            .prepare(
                "SELECT b.benchmark, r.window_start_unix_ns, r.window_end_unix_ns, r.run \
                 FROM repetitions r JOIN cell_runs c ON c.id = r.cell_run_id \
                 JOIN benchmark_runs b ON b.id = c.benchmark_run_id \
                 WHERE b.invocation_id = ?1 ORDER BY r.window_start_unix_ns",
            )
            .map_err(|e| self.fail(e))?;
        let reps = stmt
            .query_map([id], |r| {
                Ok((
                    r.get::<_, String>(0)?,
                    r.get::<_, i64>(1)?,
                    r.get::<_, i64>(2)?,
                    r.get::<_, String>(3)?,
                ))
            })
            .map_err(|e| self.fail(e))?
            .collect::<rusqlite::Result<Vec<_>>>()
            .map_err(|e| self.fail(e))?;
        let reps: Vec<Rep> = reps
            .into_iter()
            .map(|(benchmark, start_ns, end_ns, run)| Rep {
                benchmark,
                start_ns,
                end_ns,
                run: serde_json::from_str(&run).unwrap_or(serde_json::Value::Null),
            })
            .collect();
        Ok(share_of(id, started_ms, ended_ms, &reps))
    }
}

fn share_of(id: i64, started_ms: i64, ended_ms: Option<i64>, reps: &[Rep]) -> Share {
    let mut benchmarks: Vec<(ShareRow, i64)> = Vec::new();
    let mut total = ShareRow {
        name: "all".into(),
        ..ShareRow::default()
    };
    for rep in reps {
        let at = match benchmarks
            .iter()
            .position(|(row, _)| row.name == rep.benchmark)
        {
            Some(at) => at,
            None => {
                benchmarks.push((
                    ShareRow {
                        name: rep.benchmark.clone(),
                        ..ShareRow::default()
                    },
                    rep.end_ns,
                ));
                benchmarks.len() - 1
            }
        };
        let (row, last_end) = &mut benchmarks[at];
        row.add(rep);
        *last_end = (*last_end).max(rep.end_ns);
        total.add(rep);
    }
    // Each benchmark's span starts where the previous one's last window ended.
    let mut from_ns = started_ms.saturating_mul(1_000_000);
    for (row, last_end) in &mut benchmarks {
        row.span_s = (*last_end - from_ns).max(0) as f64 / 1e9;
        from_ns = *last_end;
    }
    let end_ns = ended_ms.map_or(from_ns, |ms| ms.saturating_mul(1_000_000).max(from_ns));
    total.span_s = (end_ns - started_ms.saturating_mul(1_000_000)).max(0) as f64 / 1e9;
    Share {
        invocation: id,
        benchmarks: benchmarks.into_iter().map(|(row, _)| row).collect(),
        total,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rep(benchmark: &str, start_s: i64, end_s: i64, settle_s: f64, create_s: f64) -> Rep {
        Rep {
            benchmark: benchmark.into(),
            start_ns: start_s * 1_000_000_000,
            end_ns: end_s * 1_000_000_000,
            run: serde_json::json!({
                "start": {"settle_s": settle_s, "preparation": {"create_s": create_s,
                    "fixture_s": 0.5, "checkpoint_s": 0.0, "teardown_s": 0.25,
                    "lock_wait_s": 0.125, "close_s": 0.0625}}
            }),
        }
    }

    #[test]
    fn windows_over_spans_per_benchmark_and_overall() {
        // a: windows 2 s + 3 s in 100..106; b: a window 5 s in 108..113; invocation 100..120.
        let reps = [
            rep("a", 101, 103, 0.5, 0.25),
            rep("a", 103, 106, 0.0, 0.0),
            rep("b", 108, 113, 1.0, 0.0),
        ];
        let share = share_of(7, 100_000, Some(120_000), &reps);
        assert_eq!(share.invocation, 7);
        let a = &share.benchmarks[0];
        assert_eq!((a.name.as_str(), a.repetitions), ("a", 2));
        assert_eq!((a.span_s, a.windows_s), (6.0, 5.0));
        assert_eq!(
            (a.settle_s, a.create_s, a.fixture_s, a.teardown_s),
            (0.5, 0.25, 1.0, 0.5)
        );
        assert_eq!((a.lock_wait_s, a.close_s), (0.25, 0.125));
        assert!((a.other_s() - (6.0 - 5.0 - 0.5 - 0.25 - 1.0 - 0.5 - 0.25 - 0.125)).abs() < 1e-9);
        let b = &share.benchmarks[1];
        assert_eq!((b.span_s, b.windows_s), (7.0, 5.0));
        assert_eq!(share.total.span_s, 20.0);
        assert_eq!(share.total.windows_s, 10.0);
        assert_eq!(share.total.share(), 0.5);
        // Results recorded before the preparation was timed count their windows only.
        let old = Rep {
            run: serde_json::json!({"elapsed_s": 1.0}),
            ..rep("a", 101, 102, 0.0, 0.0)
        };
        let share = share_of(1, 100_000, None, &[old]);
        assert_eq!(
            share.total.span_s, 2.0,
            "a running invocation spans to its last window"
        );
        assert_eq!(share.total.settle_s, 0.0);
    }
}
