//! How numbers are written for people: seconds with as many decimals as their size deserves,
//! sizes in MiB, ratios with their interval, counts with thousands separators.

use crate::analysis::ratio::Ratio;
use crate::analysis::stats::Summary;

/// Decimals that keep about three significant digits of a value of this size.
fn decimals_for(value: f64) -> usize {
    let magnitude = value.abs();
    if magnitude >= 100.0 {
        0
    } else if magnitude >= 10.0 {
        1
    } else if magnitude >= 1.0 {
        2
    } else if magnitude >= 0.1 {
        3
    } else {
        4
    }
}

/// `12.3 ± 0.4 s`; the `±` part is left out for a single run. Both numbers get the decimals of
/// the mean, so they line up.
pub fn mean_pm(summary: &Summary) -> String {
    let d = decimals_for(summary.mean);
    match summary.ci {
        Some(ci) => format!("{:.d$} ± {:.d$} s", summary.mean, ci.half_width()),
        None => format!("{:.d$} s", summary.mean),
    }
}

/// `0.72 [0.65, 0.80]`, or `0.72` without an interval.
pub fn ratio(r: &Ratio) -> String {
    match r.ci {
        Some(ci) => format!("{:.2} [{:.2}, {:.2}]", r.ratio, ci.low, ci.high),
        None => format!("{:.2}", r.ratio),
    }
}

/// `3.8 MiB`, `1,026 MiB`: tenths below 100 MiB, whole mebibytes above, where a tenth is noise
/// and the digit costs a table its width.
pub fn mib(bytes: u64) -> String {
    let tenths = (bytes as f64 * 10.0 / crate::model::units::MIB as f64).round() as u64;
    if tenths >= 1000 {
        return format!("{} MiB", thousands((tenths + 5) / 10));
    }
    format!("{}.{} MiB", tenths / 10, tenths % 10)
}

/// `126,399`.
pub fn thousands(value: u64) -> String {
    let digits = value.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mean_and_half_width_share_decimals() {
        let s = Summary::of(&[10.0, 12.0, 14.0]).unwrap();
        assert_eq!(mean_pm(&s), "12.0 ± 5.0 s");
        assert_eq!(mean_pm(&Summary::of(&[0.5]).unwrap()), "0.500 s");
    }

    #[test]
    fn sizes_and_counts_are_grouped() {
        assert_eq!(mib(1536 * 1024), "1.5 MiB");
        assert_eq!(mib(1024 * 1024 * 1024), "1,024 MiB");
        assert_eq!(mib(99 * 1024 * 1024), "99.0 MiB");
        assert_eq!(mib(2 * 1024 * 1024 - 1000), "2.0 MiB");
        assert_eq!(thousands(126_399), "126,399");
        assert_eq!(thousands(127), "127");
        assert_eq!(thousands(1_000_000), "1,000,000");
    }
}
