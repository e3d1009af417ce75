//! How the window's closing snapshots become its evidence: each metric from its pair of
//! snapshots (opening, closing), or the reason it is unavailable. The snapshots are taken by
//! [`super::Window::close`]; nothing here talks to the server.

use super::counters::{self, CounterSample};
use super::file_stats::{self, DbFile, IoSnapshot};
use super::growth_events::FileGrowth;
use super::vlf::VlfCount;
use crate::model::evidence::{Evidence, FileKind, LogStats};
use std::collections::BTreeMap;

/// A metric's value, or why the server could not provide it.
type Outcome<T> = std::result::Result<T, String>;

/// Records why `metric` is missing from the window's evidence.
pub(super) fn unavailable(evidence: &mut Evidence, metric: &str, why: String) {
    evidence.unavailable.insert(metric.to_string(), why);
}

/// The sampled performance counters as series; returns the Log Growths counter's increase, when
/// it was sampled.
pub(super) fn counter_evidence(
    samples: &Outcome<Vec<CounterSample>>,
    evidence: &mut Evidence,
) -> Option<i64> {
    match samples {
        Ok(samples) => match counters::missing(samples) {
            Some(why) => {
                unavailable(evidence, "counters", why);
                None
            }
            None => {
                evidence.series.extend(counters::series(samples));
                let growths = counters::increase(samples, "Log Growths");
                if growths.is_none() {
                    unavailable(
                        evidence,
                        "log_growths_counter",
                        "the Log Growths counter of this database was not sampled; log \
                         growths come from the growth events"
                            .into(),
                    );
                }
                growths
            }
        },
        Err(e) => {
            unavailable(evidence, "counters", e.clone());
            None
        }
    }
}

/// Each file's sizes, I/O and growths over the window, from the file lists `(before, after)`.
pub(super) fn file_evidence(
    (before, after): (&Outcome<Vec<DbFile>>, &Outcome<Vec<DbFile>>),
    io: Option<(&IoSnapshot, &IoSnapshot)>,
    growth: Option<&BTreeMap<i64, FileGrowth>>,
    volumes: &BTreeMap<String, String>,
    evidence: &mut Evidence,
) {
    match (before, after) {
        // Babelfish lists no files of its databases (its files are PostgreSQL's).
        (Ok(before), Ok(after)) if before.is_empty() && after.is_empty() => unavailable(
            evidence,
            "files",
            "sys.database_files lists no files of this database, so per-file sizes and I/O \
             are unknown"
                .into(),
        ),
        (Ok(before), Ok(after)) => {
            evidence.files = file_stats::file_stats(&file_stats::WindowFiles {
                before,
                after,
                io,
                growth,
                volumes,
            });
            unavailable(
                evidence,
                "flushes",
                "SQL Server does not report flushes per file".into(),
            );
            unavailable(
                evidence,
                "zero_fill_bytes",
                "SQL Server does not report zero-filled bytes per file".into(),
            );
        }
        (Err(e), _) | (_, Err(e)) => unavailable(evidence, "files", e.clone()),
    }
}

/// Where the window's log growths can be counted from.
pub(super) struct LogGrowths {
    /// The Log Growths counter's increase, when it was sampled.
    pub counter: Option<i64>,
    /// Whether the growth events were read (their log growths are in the files' evidence).
    pub events: bool,
}

/// The log's VLFs, size and growths over the window, from the VLF counts and the file lists
/// `(before, after)`. The counter is preferred to the growth events for the growths.
pub(super) fn log_evidence(
    vlfs: (&Outcome<VlfCount>, &Outcome<VlfCount>),
    files: (&Outcome<Vec<DbFile>>, &Outcome<Vec<DbFile>>),
    log_growths: LogGrowths,
    evidence: &mut Evidence,
) {
    match (vlfs.0, vlfs.1, files.0, files.1) {
        (Ok(vb), Ok(va), Ok(fb), Ok(fa)) => {
            let log_size = |files: &[DbFile]| {
                files
                    .iter()
                    .filter(|f| f.kind == FileKind::Log)
                    .map(|f| f.size_bytes)
                    .sum::<u64>()
            };
            let xe_log_growths = evidence
                .files
                .iter()
                .filter(|f| f.kind == FileKind::Log)
                .map(|f| f.growth_events)
                .sum::<u64>();
            let growths = match (log_growths.counter, log_growths.events) {
                (Some(n), _) => n.max(0) as u64,
                (None, true) => xe_log_growths,
                (None, false) => {
                    unavailable(
                        evidence,
                        "log_growths",
                        "neither the Log Growths counter nor growth events were available".into(),
                    );
                    0
                }
            };
            evidence.log = Some(LogStats {
                growths,
                segments_before: vb.total,
                segments_after: va.total,
                size_before_bytes: log_size(fb),
                size_after_bytes: log_size(fa),
            });
        }
        (Err(e), ..) | (_, Err(e), ..) => unavailable(evidence, "vlf", e.clone()),
        _ => unavailable(evidence, "vlf", "file sizes were unavailable".into()),
    }
}
