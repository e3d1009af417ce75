//! Throughput over time: transactions committed in each whole second since the measured window
//! opened, so sample `i` covers the same second as sample `i` of the server's counters, which are
//! sampled once a second from the window's start. Seconds before the load started (creating the
//! connections) are zeros; the last sample covers a partial second.

use crate::model::results::Series;
use std::time::Instant;

/// One worker's commits per second since `origin`.
#[derive(Debug, Clone)]
pub(crate) struct Timeline {
    origin: Instant,
    per_second: Vec<u64>,
}

impl Timeline {
    /// An empty timeline counting from `origin`.
    pub(crate) fn new(origin: Instant) -> Timeline {
        Timeline {
            origin,
            per_second: Vec::with_capacity(64),
        }
    }

    /// Counts one commit that ended at `at`.
    pub(crate) fn record(&mut self, at: Instant) {
        let second = at.saturating_duration_since(self.origin).as_secs() as usize;
        if second >= self.per_second.len() {
            self.per_second.resize(second + 1, 0);
        }
        self.per_second[second] += 1;
    }

    /// Adds `other`'s counts second by second (both count from the same origin).
    pub(crate) fn merge(&mut self, other: &Timeline) {
        if other.per_second.len() > self.per_second.len() {
            self.per_second.resize(other.per_second.len(), 0);
        }
        for (sum, n) in self.per_second.iter_mut().zip(&other.per_second) {
            *sum += n;
        }
    }

    /// The counts as a one-second series named `name`, in transactions per second.
    pub(crate) fn series(&self, name: String) -> Series {
        Series {
            name,
            unit: "1/s".to_string(),
            interval_s: 1.0,
            values: self.per_second.iter().map(|&n| n as f64).collect(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn buckets_are_whole_seconds_from_the_origin() {
        let origin = Instant::now();
        let at = |ms: u64| origin + Duration::from_millis(ms);
        let mut a = Timeline::new(origin);
        // The load starts 1.5 s into the window: second 0 stays empty.
        for ms in [1500, 1999, 2000, 3999] {
            a.record(at(ms));
        }
        let mut b = Timeline::new(origin);
        for ms in [1001, 4200] {
            b.record(at(ms));
        }
        a.merge(&b);
        let s = a.series("load: transactions/s".into());
        assert_eq!(s.values, vec![0.0, 3.0, 1.0, 1.0, 1.0]);
        assert_eq!((s.unit.as_str(), s.interval_s), ("1/s", 1.0));
        // A commit stamped before the origin counts in the first second.
        let mut early = Timeline::new(at(10));
        early.record(origin);
        assert_eq!(early.series(String::new()).values, vec![1.0]);
    }
}
