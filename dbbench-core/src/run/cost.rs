//! What a round and a fork's setup cost, measured in the run: the allocation of rounds to forks
//! (Kalibera & Jones) and the budget's "would another fork fit" both need them.
//!
//! A fork's setup is more than the backend dropping what it kept: the first round of a fork
//! makes anew what later rounds reuse (the pre-grown log is zero-filled, the fixture loaded), so
//! its cost is the time to start the fork plus, for every cell, how much longer its repetition
//! in a fork's first round took than its repetitions in later rounds.

use std::collections::BTreeMap;

/// A running sum and count.
#[derive(Debug, Default, Clone, Copy)]
struct Mean {
    sum: f64,
    n: u32,
}

impl Mean {
    fn add(&mut self, x: f64) {
        self.sum += x;
        self.n += 1;
    }

    fn get(&self) -> Option<f64> {
        (self.n > 0).then(|| self.sum / f64::from(self.n))
    }
}

/// The measured costs so far; see the module's documentation.
#[derive(Debug, Default, Clone)]
pub struct Costs {
    /// Each cell's repetitions in a fork's first round.
    first: BTreeMap<usize, Mean>,
    /// Each cell's repetitions in a fork's later rounds.
    later: BTreeMap<usize, Mean>,
    /// Starting a fork.
    forks: Mean,
}

impl Costs {
    /// A measured repetition of `cell` took `seconds`, in a fork's first round or a later one.
    pub fn repetition(&mut self, cell: usize, first_in_fork: bool, seconds: f64) {
        let side = if first_in_fork {
            &mut self.first
        } else {
            &mut self.later
        };
        side.entry(cell).or_default().add(seconds);
    }

    /// Starting a fork took `seconds`.
    pub fn fork(&mut self, seconds: f64) {
        self.forks.add(seconds);
    }

    /// A round that reuses what its fork made: every cell's mean repetition in later rounds.
    /// `None` until every cell ran a later round.
    pub fn round_s(&self) -> Option<f64> {
        if self.later.is_empty() || self.first.keys().any(|c| !self.later.contains_key(c)) {
            return None;
        }
        self.later.values().map(Mean::get).sum()
    }

    /// A fork's setup: starting it, and what its first round took beyond a later one.
    pub fn setup_s(&self) -> Option<f64> {
        self.round_s()?;
        let extra: f64 = self
            .first
            .iter()
            .filter_map(|(c, first)| Some((first.get()? - self.later.get(c)?.get()?).max(0.0)))
            .sum();
        Some(self.forks.get().unwrap_or(0.0) + extra)
    }

    /// What another fork of `rounds` rounds would take: from the measured costs, or where they
    /// are not known yet, the mean fork so far (`elapsed` over `forks`).
    pub fn fork_s(&self, rounds: u32, elapsed: std::time::Duration, forks: u32) -> f64 {
        match (self.round_s(), self.setup_s()) {
            (Some(round), Some(setup)) => setup + f64::from(rounds) * round,
            _ => elapsed.as_secs_f64() / f64::from(forks.max(1)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn a_fork_costs_its_start_and_what_its_first_round_adds() {
        let mut costs = Costs::default();
        assert_eq!(costs.round_s(), None);
        assert_eq!(costs.fork_s(2, Duration::from_secs(30), 3), 10.0);
        costs.fork(0.5);
        costs.repetition(0, true, 3.0);
        costs.repetition(1, true, 2.0);
        assert_eq!(costs.round_s(), None, "no later round yet");
        costs.repetition(0, false, 2.0);
        costs.repetition(1, false, 2.5);
        // A round: 2.0 + 2.5; the setup: 0.5 + (3.0 − 2.0) + 0 (a first round may be faster).
        assert_eq!(costs.round_s(), Some(4.5));
        assert_eq!(costs.setup_s(), Some(1.5));
        assert_eq!(costs.fork_s(2, Duration::from_secs(99), 1), 1.5 + 9.0);
    }
}
