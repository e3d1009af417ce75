//! Arrival times of an open-loop load: a Poisson process, drawn from a seeded SplitMix64 so a
//! paced run offers exactly the same schedule every time.

use crate::util::rng::SplitMix64;
use std::time::{Duration, Instant};

/// A uniform number in `[0, 1)` from the top 53 bits of `rng`.
pub(crate) fn uniform(rng: &mut SplitMix64) -> f64 {
    (rng.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
}

/// An exponentially distributed number of seconds with mean `1 / rate` (inverse transform).
pub(crate) fn exponential(rng: &mut SplitMix64, rate: f64) -> f64 {
    // 1 - u lies in (0, 1], so the logarithm is finite.
    -(1.0 - uniform(rng)).ln() / rate
}

/// The arrival times of one worker: a Poisson process of `rate` per second from `start`.
#[derive(Debug)]
pub(crate) struct Arrivals {
    rng: SplitMix64,
    rate: f64,
    next: Instant,
}

impl Arrivals {
    /// Arrivals at `rate` per second from `start`, drawn from `seed`.
    pub(crate) fn new(start: Instant, rate: f64, seed: u64) -> Arrivals {
        let mut rng = SplitMix64::new(seed);
        let first = Duration::from_secs_f64(exponential(&mut rng, rate));
        Arrivals {
            rng,
            rate,
            next: start + first,
        }
    }

    /// The next arrival; the schedule does not depend on when transactions actually ran.
    pub(crate) fn next_arrival(&mut self) -> Instant {
        let at = self.next;
        self.next += Duration::from_secs_f64(exponential(&mut self.rng, self.rate));
        at
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exponential_has_the_right_mean_and_spread() {
        let mut rng = SplitMix64::new(42);
        let rate = 250.0;
        let n = 200_000;
        let samples: Vec<f64> = (0..n).map(|_| exponential(&mut rng, rate)).collect();
        let mean = samples.iter().sum::<f64>() / n as f64;
        let var = samples.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / n as f64;
        // Mean and standard deviation of an exponential are both 1 / rate.
        assert!((mean * rate - 1.0).abs() < 0.01, "mean {mean}");
        assert!((var.sqrt() * rate - 1.0).abs() < 0.02, "sd {}", var.sqrt());
        assert!(samples.iter().all(|x| x.is_finite() && *x >= 0.0));
        // P(X > mean) = 1/e.
        let above = samples.iter().filter(|&&x| x > 1.0 / rate).count() as f64 / n as f64;
        assert!((above - (-1.0f64).exp()).abs() < 0.01, "tail {above}");
    }

    #[test]
    fn arrivals_are_deterministic_increasing_and_at_the_rate() {
        let start = Instant::now();
        let mut a = Arrivals::new(start, 100.0, 7);
        let mut b = Arrivals::new(start, 100.0, 7);
        let mut last = start;
        for _ in 0..10_000 {
            let (x, y) = (a.next_arrival(), b.next_arrival());
            assert_eq!(x, y);
            assert!(x >= last);
            last = x;
        }
        // 10 000 arrivals at 100/s take about 100 s.
        let span = (last - start).as_secs_f64();
        assert!((span - 100.0).abs() < 3.0, "span {span}");
        let mut other = Arrivals::new(start, 100.0, 8);
        assert_ne!(
            Arrivals::new(start, 100.0, 7).next_arrival(),
            other.next_arrival()
        );
    }
}
