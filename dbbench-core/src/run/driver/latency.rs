//! Transaction latency: one HdrHistogram per worker (recording costs a few array operations and
//! never allocates), merged once when the load ends and summarised as percentiles.

use crate::model::load::LatencyStats;
use hdrhistogram::Histogram;
use std::time::Duration;

/// The longest latency kept exactly; slower transactions are recorded as this (one hour).
const HIGHEST_US: u64 = 3_600_000_000;

/// Latencies in microseconds, to three significant digits.
#[derive(Debug, Clone)]
pub(crate) struct Latency {
    histogram: Histogram<u64>,
}

impl Latency {
    /// An empty recorder.
    pub(crate) fn new() -> Latency {
        Latency {
            histogram: Histogram::new_with_bounds(1, HIGHEST_US, 3)
                .expect("constant histogram bounds are valid"),
        }
    }

    /// Records one transaction's latency.
    pub(crate) fn record(&mut self, latency: Duration) {
        let us = u64::try_from(latency.as_micros()).unwrap_or(u64::MAX);
        self.histogram.saturating_record(us);
    }

    /// Adds every latency of `other`.
    pub(crate) fn merge(&mut self, other: &Latency) {
        self.histogram
            .add(&other.histogram)
            .expect("histograms of equal bounds always add");
    }

    /// Percentiles in milliseconds; all zero when nothing was recorded.
    pub(crate) fn summary(&self) -> LatencyStats {
        let h = &self.histogram;
        if h.is_empty() {
            return LatencyStats::default();
        }
        let ms = |us: u64| us as f64 / 1e3;
        LatencyStats {
            transactions: h.len(),
            mean_ms: h.mean() / 1e3,
            p50_ms: ms(h.value_at_quantile(0.50)),
            p95_ms: ms(h.value_at_quantile(0.95)),
            p99_ms: ms(h.value_at_quantile(0.99)),
            max_ms: ms(h.max()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(actual: f64, expected: f64) -> bool {
        (actual - expected).abs() <= expected * 1e-3 + 1e-9
    }

    #[test]
    fn percentiles_of_a_known_distribution() {
        let mut a = Latency::new();
        let mut b = Latency::new();
        // 1..=1000 µs spread over two workers.
        for us in 1..=1000u64 {
            let target = if us % 2 == 0 { &mut a } else { &mut b };
            target.record(Duration::from_micros(us));
        }
        a.merge(&b);
        let s = a.summary();
        assert_eq!(s.transactions, 1000);
        assert!(close(s.mean_ms, 0.5005), "{s:?}");
        assert!(close(s.p50_ms, 0.5), "{s:?}");
        assert!(close(s.p95_ms, 0.95), "{s:?}");
        assert!(close(s.p99_ms, 0.99), "{s:?}");
        assert!(close(s.max_ms, 1.0), "{s:?}");
    }

    #[test]
    fn a_slow_tail_shows_in_p99_and_max_only() {
        let mut l = Latency::new();
        for _ in 0..990 {
            l.record(Duration::from_millis(2));
        }
        for _ in 0..10 {
            l.record(Duration::from_secs(3));
        }
        let s = l.summary();
        assert!(close(s.p50_ms, 2.0) && close(s.p95_ms, 2.0), "{s:?}");
        assert!(close(s.max_ms, 3000.0), "{s:?}");
        assert!(close(s.p99_ms, 2.0), "990 of 1000 are fast: {s:?}");
        // Beyond the top bound is kept as the bound, not lost.
        l.record(Duration::from_secs(7200));
        assert_eq!(l.summary().transactions, 1001);
        assert!(close(l.summary().max_ms, 3_600_000.0));
    }

    #[test]
    fn empty_is_all_zero() {
        assert_eq!(Latency::new().summary(), LatencyStats::default());
    }
}
