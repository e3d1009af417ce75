//! A cell's timing block in the snapshot: the machine, its calibration, how busy it was, and the
//! elapsed time and laps as measurements rounded to four significant digits. Apart from the view
//! because these are the nodes the comparator judges as measurements, not exactly.

use crate::analysis::stats::Summary;
use crate::model::results::RunResult;
use serde::Serialize;

/// The cell's timings; every entry is a measurement (see [`crate::output::comparator`]).
#[derive(Debug, Serialize)]
pub(super) struct TimingView {
    /// Where the timings were measured, for the reader.
    machine: String,
    /// The machine's calibration ([`crate::model::calibration`]): timings are checked only
    /// against a recording whose calibration agrees (see [`crate::output::comparator`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    calibration: Option<String>,
    /// "3 of 5 runs" when runs were measured while the machine was busy: such timings are not
    /// checked, in either direction.
    #[serde(skip_serializing_if = "Option::is_none")]
    busy: Option<String>,
    /// The measured runs, where a precision target chose their number: it varies from run to
    /// run, so it is not compared.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) runs: Option<usize>,
    pub(super) elapsed: Measurement,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    laps: Vec<LapMeasurement>,
}

/// Mean and 95% interval in seconds, rounded to four significant digits so the file stays
/// readable; `ci95_s` is null for a single run.
#[derive(Debug, Serialize)]
pub(super) struct Measurement {
    pub(super) mean_s: f64,
    pub(super) ci95_s: Option<[f64; 2]>,
}

#[derive(Debug, Serialize)]
struct LapMeasurement {
    name: String,
    mean_s: f64,
    ci95_s: Option<[f64; 2]>,
}

impl Measurement {
    fn of(values: &[f64]) -> Option<Measurement> {
        let s = Summary::of(values)?;
        Some(Measurement {
            mean_s: significant(s.mean),
            ci95_s: s.ci.map(|ci| [significant(ci.low), significant(ci.high)]),
        })
    }
}

/// `x` rounded to four significant digits.
pub(super) fn significant(x: f64) -> f64 {
    if x == 0.0 || !x.is_finite() {
        return x;
    }
    let digits = 3 - x.abs().log10().floor() as i32;
    if digits >= 0 {
        let scale = 10f64.powi(digits);
        (x * scale).round() / scale
    } else {
        let scale = 10f64.powi(-digits);
        (x / scale).round() * scale
    }
}

/// Timings of the measured runs: elapsed, and each lap of the first run's lap list whose name
/// every run shares at the same position.
pub(super) fn timing(
    cell: &crate::model::results::CellResult,
    machine: &str,
    adaptive: bool,
) -> Option<TimingView> {
    let runs: Vec<&RunResult> = cell.measured().collect();
    let elapsed: Vec<f64> = runs.iter().map(|r| r.elapsed_s).collect();
    let laps = runs
        .first()
        .map(|first| {
            first
                .laps
                .iter()
                .enumerate()
                .filter_map(|(i, lap)| {
                    let splits: Option<Vec<f64>> = runs
                        .iter()
                        .map(|r| {
                            r.laps
                                .get(i)
                                .filter(|l| l.name == lap.name)
                                .map(|l| l.split_s)
                        })
                        .collect();
                    let m = Measurement::of(&splits?)?;
                    Some(LapMeasurement {
                        name: lap.name.clone(),
                        mean_s: m.mean_s,
                        ci95_s: m.ci95_s,
                    })
                })
                .collect()
        })
        .unwrap_or_default();
    let busy = crate::model::interference::Busy::of(runs.iter().copied());
    Some(TimingView {
        machine: machine.to_string(),
        calibration: cell.calibration.as_ref().map(|c| c.line()),
        busy: busy
            .any()
            .then(|| format!("{} of {} runs", busy.disturbed, busy.runs)),
        runs: adaptive.then_some(runs.len()),
        elapsed: Measurement::of(&elapsed)?,
        laps,
    })
}
