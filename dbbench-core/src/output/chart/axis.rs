//! Units and tick labels that read at every scale. A smoke run's charts span milliseconds and
//! kilobytes, a full run's hundreds of seconds and gigabytes; a fixed unit and a fixed number of
//! decimals would label one of them `0.00, 0.00, 0.01` or `0, 0, 0`. Each axis therefore picks its
//! unit from its data ([`time_unit`], [`byte_unit`], [`count_unit`]), the chart converts its values
//! into it, and [`Ticks`] labels the ticks plotters will place with the fewest decimals that keep
//! every label distinct.

use plotters::coord::ranged1d::Ranged;
use plotters::coord::types::RangedCoordf64;
use std::ops::Range;

/// How many tick labels every numeric axis asks plotters for: the charts set it on the mesh and
/// [`Ticks`] computes the same ticks from it.
pub const LABELS: usize = 10;

/// A display unit: its name for the axis title and how many base units (seconds, bytes) one is.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Unit {
    /// `ms`, `MiB`, `k`; empty for a plain count.
    pub name: &'static str,
    /// Base units per display unit.
    pub per: f64,
}

impl Unit {
    /// `value` (in base units) in this unit.
    pub fn of(&self, value: f64) -> f64 {
        value / self.per
    }

    /// `what (unit)` for an axis title, or `what` alone for a plain count.
    pub fn title(&self, what: &str) -> String {
        if self.name.is_empty() {
            what.to_string()
        } else {
            format!("{what} ({})", self.name)
        }
    }
}

/// The largest of `units` (largest first) of which `max` is at least `from` units, else the
/// smallest.
fn pick(max: f64, from: f64, units: &[Unit]) -> Unit {
    let max = if max.is_finite() { max.abs() } else { 0.0 };
    units
        .iter()
        .find(|u| max >= from * u.per)
        .copied()
        .unwrap_or(units[units.len() - 1])
}

/// The unit for a time axis whose largest value is `max_s` seconds: s, ms or µs.
pub fn time_unit(max_s: f64) -> Unit {
    pick(
        max_s,
        1.0,
        &[
            Unit {
                name: "s",
                per: 1.0,
            },
            Unit {
                name: "ms",
                per: 1e-3,
            },
            Unit {
                name: "µs",
                per: 1e-6,
            },
        ],
    )
}

/// The unit for a size axis whose largest value is `max_bytes`: GiB, MiB, KiB or B.
pub fn byte_unit(max_bytes: f64) -> Unit {
    pick(
        max_bytes,
        1.0,
        &[
            Unit {
                name: "GiB",
                per: (1u64 << 30) as f64,
            },
            Unit {
                name: "MiB",
                per: (1u64 << 20) as f64,
            },
            Unit {
                name: "KiB",
                per: 1024.0,
            },
            Unit {
                name: "B",
                per: 1.0,
            },
        ],
    )
}

/// The unit for a count or rate axis whose largest value is `max`: thousands from 10,000 on,
/// millions from 10 million, billions from 10 billion, so a label keeps at most four digits before
/// its decimals and 9,500 stays 9500 rather than 9.5 thousands.
pub fn count_unit(max: f64) -> Unit {
    pick(
        max,
        10.0,
        &[
            Unit {
                name: "billions",
                per: 1e9,
            },
            Unit {
                name: "millions",
                per: 1e6,
            },
            Unit {
                name: "thousands",
                per: 1e3,
            },
            Unit { name: "", per: 1.0 },
        ],
    )
}

/// The tick labels of one numeric axis over `range` (in display units).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Ticks {
    decimals: usize,
}

impl Ticks {
    /// The labels of the at most `labels` ticks plotters places on `range`: as few decimals as
    /// keep them all distinct (plotters may step by 0.25 of a power of ten, so this is computed
    /// from its ticks rather than from the range's magnitude).
    pub fn new(range: Range<f64>, labels: usize) -> Ticks {
        let points = RangedCoordf64::from(range).key_points(labels);
        let decimals = (0..=9)
            .find(|&decimals| {
                let texts: Vec<String> = points
                    .iter()
                    .map(|v| Ticks { decimals }.label(*v))
                    .collect();
                texts.windows(2).all(|w| w[0] != w[1])
            })
            .unwrap_or(9);
        Ticks { decimals }
    }

    /// The label of the tick at `value`.
    pub fn label(&self, value: f64) -> String {
        let text = format!("{value:.*}", self.decimals);
        // `-0.00` is a rounding artefact of a tick at zero.
        if text
            .trim_start_matches('-')
            .chars()
            .all(|c| c == '0' || c == '.')
        {
            text.trim_start_matches('-').to_string()
        } else {
            text
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn units_follow_the_data() {
        assert_eq!(time_unit(412.0).name, "s");
        assert_eq!(time_unit(1.0).name, "s");
        assert_eq!(time_unit(0.004).name, "ms");
        assert_eq!(time_unit(0.000_05).name, "µs");
        assert_eq!(time_unit(0.0).name, "µs");
        assert_eq!(byte_unit(3.0 * (1u64 << 30) as f64).name, "GiB");
        assert_eq!(byte_unit(5.0 * (1u64 << 20) as f64).name, "MiB");
        assert_eq!(byte_unit(6500.0).name, "KiB");
        assert_eq!(byte_unit(100.0).name, "B");
        assert_eq!(count_unit(9_500.0).name, "");
        assert_eq!(count_unit(90_000.0).name, "thousands");
        assert_eq!(count_unit(4.2e7).name, "millions");
        assert_eq!(time_unit(0.004).of(0.004), 4.0);
        assert_eq!(time_unit(0.004).title("elapsed time"), "elapsed time (ms)");
        assert_eq!(count_unit(5.0).title("tx/s"), "tx/s");
    }

    #[test]
    fn ticks_get_the_decimals_their_step_needs() {
        let labels = |range: Range<f64>| -> Vec<String> {
            let ticks = Ticks::new(range.clone(), LABELS);
            RangedCoordf64::from(range)
                .key_points(LABELS)
                .into_iter()
                .map(|v| ticks.label(v))
                .collect()
        };
        assert_eq!(labels(0.0..500.0)[..3], ["0", "100", "200"]);
        let small = labels(0.0..0.013);
        assert!(small.windows(2).all(|w| w[0] != w[1]), "{small:?}");
        assert!(small.iter().all(|l| l.len() <= 6), "{small:?}");
        for range in [0.0..0.3, 0.0..2.6, 0.0..1.02, -0.4..1.7, 100.0..100.5] {
            let texts = labels(range.clone());
            let values: Vec<f64> = texts.iter().map(|t| t.parse().unwrap()).collect();
            assert!(
                values.windows(2).all(|w| w[0] < w[1]),
                "{range:?}: {texts:?}"
            );
        }
        assert_eq!(Ticks { decimals: 2 }.label(-0.0001), "0.00");
    }
}
