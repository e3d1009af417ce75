//! Counting failed attempts by kind. Which kind an error is, is the engine's to say (its
//! profile's `classify`); which kinds are retried is [`ErrorKind::retryable`].

use crate::model::load::ErrorCounts;
pub use crate::model::load::ErrorKind;

impl ErrorCounts {
    /// Counts one failed attempt of `kind`.
    pub(crate) fn add(&mut self, kind: ErrorKind) {
        match kind {
            ErrorKind::Deadlock => self.deadlock += 1,
            ErrorKind::Busy => self.busy += 1,
            ErrorKind::Timeout => self.timeout += 1,
            ErrorKind::Other => self.other += 1,
        }
    }

    /// Adds `other`'s counts.
    pub(crate) fn merge(&mut self, other: &ErrorCounts) {
        self.deadlock += other.deadlock;
        self.busy += other.busy;
        self.timeout += other.timeout;
        self.other += other.other;
    }

    /// All failed attempts.
    pub fn total(&self) -> u64 {
        self.deadlock + self.busy + self.timeout + self.other
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_busy_and_deadlock_are_retried() {
        let retried: Vec<&str> = [
            ErrorKind::Deadlock,
            ErrorKind::Busy,
            ErrorKind::Timeout,
            ErrorKind::Other,
        ]
        .into_iter()
        .filter(|k| k.retryable())
        .map(ErrorKind::keyword)
        .collect();
        assert_eq!(retried, ["deadlock", "busy"]);
    }

    #[test]
    fn counts_add_and_merge() {
        let mut a = ErrorCounts::default();
        a.add(ErrorKind::Busy);
        a.add(ErrorKind::Busy);
        a.add(ErrorKind::Other);
        let mut b = ErrorCounts::default();
        b.add(ErrorKind::Deadlock);
        b.add(ErrorKind::Timeout);
        a.merge(&b);
        assert_eq!(
            a,
            ErrorCounts {
                deadlock: 1,
                busy: 2,
                timeout: 1,
                other: 1
            }
        );
        assert_eq!(a.total(), 5);
    }
}
