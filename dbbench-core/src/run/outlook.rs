//! What a precision target can still reach, said once after its pilot forks: from the widest
//! ratio's measured interval and the measured cost of another fork, how many forks (and how much
//! time) ±5% and ±10% would take, and what this budget reaches ("±5% needs 11 forks ≈ 9 min; this
//! budget reaches ±7%"), so a user whose run will stop at its budget learns it at the start, not
//! at the end, with what to change.
//!
//! The interval is Stein's two-stage one (`analysis::ratio`): its spread comes from the pilot's
//! forks and is fixed after them, so its half-width after `F` forks is the pilot's `w₀` times
//! `√(F₀ / F)` — known in advance, up to the centre it is drawn around. That is what makes the
//! outlook exact rather than a guess (on the log scale, as the widths are).

use crate::model::config::Precision;

/// The outlook after the pilot.
#[derive(Debug, Clone, PartialEq)]
pub struct Outlook {
    /// The ratio with the widest interval.
    pub cell: String,
    /// Its half-width after the pilot (log scale).
    pub width: f64,
    /// Forks that ran in the pilot.
    pub forks: u32,
    /// Seconds the pilot took.
    pub elapsed_s: f64,
    /// What another fork takes, measured.
    pub fork_s: f64,
    /// The target.
    pub target: Precision,
}

impl Outlook {
    /// Forks the widest interval needs to be `half` wide (at least the pilot's).
    pub fn forks_for(&self, half: f64) -> u32 {
        if self.width <= half {
            return self.forks;
        }
        let needed = f64::from(self.forks) * (self.width / half).powi(2);
        (needed.ceil() as u32).max(self.forks)
    }

    /// Seconds from the start that `forks` forks take.
    pub fn seconds_for(&self, forks: u32) -> f64 {
        self.elapsed_s + f64::from(forks.saturating_sub(self.forks)) * self.fork_s
    }

    /// The forks this budget and fork limit reach.
    pub fn reachable_forks(&self) -> u32 {
        let room = (self.target.budget.as_secs_f64() - self.elapsed_s).max(0.0);
        let more = if self.fork_s > 0.0 {
            (room / self.fork_s).floor() as u32
        } else {
            u32::MAX
        };
        self.forks
            .saturating_add(more)
            .min(self.target.max_rounds.max(self.forks))
    }

    /// The half-width after `forks` forks.
    pub fn width_at(&self, forks: u32) -> f64 {
        self.width * (f64::from(self.forks) / f64::from(forks.max(1))).sqrt()
    }

    /// "vlf::doubling: after the pilot's 7 forks (161 s) the widest interval is test_3's, ±6.1%:
    /// ±5% needs 11 forks ≈ 4 min 40 s, ±10% is met; this budget (230 s, at most 14 forks)
    /// reaches ±5.5% in 10 forks".
    pub fn line(&self, benchmark: &str) -> String {
        let pct = |w: f64| format!("±{:.1}%", w * 100.0);
        let goal = |half: f64| {
            let forks = self.forks_for(half);
            let label = pct(half).replace(".0%", "%");
            if forks <= self.forks {
                format!("{label} is met")
            } else {
                format!(
                    "{label} needs {forks} forks ≈ {}",
                    duration(self.seconds_for(forks))
                )
            }
        };
        let reach = self.reachable_forks();
        let reaches = if reach <= self.forks {
            "allows no further fork".to_string()
        } else {
            format!("reaches {} in {reach} forks", pct(self.width_at(reach)))
        };
        let target = self.target.target();
        let mut goals = vec![goal(target)];
        if (target - 0.10).abs() > 1e-9 {
            goals.push(goal(0.10));
        }
        format!(
            "dbbench › {benchmark}: after the pilot's {} forks ({}) the widest interval is {}'s, \
             {}: {}; this budget ({}, at most {} forks) {reaches}",
            self.forks,
            duration(self.elapsed_s),
            self.cell,
            pct(self.width),
            goals.join(", "),
            duration(self.target.budget.as_secs_f64()),
            self.target.max_rounds
        )
    }
}

/// "4 min 40 s", "52 s".
fn duration(seconds: f64) -> String {
    let s = seconds.round() as u64;
    match (s / 60, s % 60) {
        (0, s) => format!("{s} s"),
        (m, 0) => format!("{m} min"),
        (m, s) => format!("{m} min {s} s"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn outlook(width: f64) -> Outlook {
        Outlook {
            cell: "test_3".into(),
            width,
            forks: 7,
            elapsed_s: 161.0,
            fork_s: 23.0,
            target: Precision {
                hundredths_of_percent: 500,
                min_rounds: 7,
                max_rounds: 14,
                budget: Duration::from_secs(230),
                fork_rounds: 2,
            },
        }
    }

    #[test]
    fn the_forks_needed_follow_the_two_stage_width() {
        let o = outlook(0.061);
        // 7 · (6.1 / 5)² = 10.4 → 11 forks; 4 more at 23 s after 161 s.
        assert_eq!(o.forks_for(0.05), 11);
        assert_eq!(o.seconds_for(11), 161.0 + 4.0 * 23.0);
        assert_eq!(o.forks_for(0.10), 7);
        // (230 − 161) / 23 = 3 more forks.
        assert_eq!(o.reachable_forks(), 10);
        assert!((o.width_at(10) - 0.061 * (0.7f64).sqrt()).abs() < 1e-12);
        // The width after the forks it needs is within the goal, one fork fewer is not.
        assert!(o.width_at(11) <= 0.05 && o.width_at(10) > 0.05);
    }

    #[test]
    fn the_line_says_what_each_goal_takes_and_what_the_budget_reaches() {
        assert_eq!(
            outlook(0.061).line("vlf::doubling"),
            "dbbench › vlf::doubling: after the pilot's 7 forks (2 min 41 s) the widest interval \
             is test_3's, ±6.1%: ±5% needs 11 forks ≈ 4 min 13 s, ±10% is met; this budget \
             (3 min 50 s, at most 14 forks) reaches ±5.1% in 10 forks"
        );
        let wide = outlook(0.40);
        assert!(
            wide.line("p").contains("±10% needs 112 forks"),
            "{}",
            wide.line("p")
        );
    }

    #[test]
    fn the_fork_limit_caps_what_the_budget_reaches() {
        let mut o = outlook(0.2);
        o.fork_s = 1.0;
        assert_eq!(o.reachable_forks(), 14);
        o.elapsed_s = 240.0;
        assert_eq!(o.reachable_forks(), 7);
        assert!(o.line("p").contains("allows no further fork"));
    }
}
