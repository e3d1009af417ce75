//! The `credit` fixture: the `charge` table of the SQLskills Credit sample database, generated
//! deterministically from a fixed seed so that every run, backend and machine loads the same rows.
//! The rows only: each backend's folder holds the fixture's SQL in its own dialect
//! ([`crate::engine::profile::FixtureSql`]) and loads the rows its own way.
//!
//! The generator is a hand-written SplitMix64 rather than the `rand` crate because `rand` does not
//! promise the same stream across versions, and results must stay comparable across upgrades.

use crate::util::rng::SplitMix64;

/// The seed of the credit data set.
pub const CREDIT_SEED: u64 = 0x00C2_ED17_2008;

/// Julian day number of 1999-07-20, the first `charge_dt` in the Credit database.
const FIRST_DAY_JULIAN: f64 = 2_451_379.5;

/// One row of `charge` (the identity column `charge_no` is assigned by the database).
#[derive(Debug, Clone, PartialEq)]
pub struct ChargeRow {
    /// Member who was charged (1..=10 000).
    pub member_no: i64,
    /// Provider (1..=500).
    pub provider_no: i64,
    /// Category (1..=10).
    pub category_no: i64,
    /// Date of the charge as a Julian day (SQLite) — add days with `+`, as the article does.
    pub charge_dt: f64,
    /// Amount in currency units with two decimals (1.00..=5 000.00).
    pub charge_amt: f64,
    /// Statement the charge belongs to (1..=20 000).
    pub statement_no: i64,
    /// Two-letter charge code.
    pub charge_code: String,
}

impl ChargeRow {
    /// `charge_dt` as SQL Server `datetime` text (`1999-07-20 13:45:10.000`).
    pub fn charge_dt_text(&self) -> String {
        let since_1970 = self.charge_dt - crate::util::calendar::JULIAN_DAY_OF_1970;
        let days = since_1970.floor() as i64;
        let secs = ((since_1970 - days as f64) * 86_400.0).round() as i64;
        format!(
            "{} {:02}:{:02}:{:02}.000",
            crate::util::calendar::civil_date(days),
            secs / 3600,
            (secs / 60) % 60,
            secs % 60
        )
    }
}

/// The first `count` rows of the credit data set.
pub fn credit_rows(count: u64) -> impl Iterator<Item = ChargeRow> {
    let mut rng = SplitMix64::new(CREDIT_SEED);
    (0..count).map(move |_| {
        let code_a = b'A' + rng.range(0, 25) as u8;
        let code_b = b'A' + rng.range(0, 25) as u8;
        ChargeRow {
            member_no: rng.range(1, 10_000),
            provider_no: rng.range(1, 500),
            category_no: rng.range(1, 10),
            charge_dt: FIRST_DAY_JULIAN + rng.range(0, 60 * 86_400) as f64 / 86_400.0,
            charge_amt: rng.range(100, 500_000) as f64 / 100.0,
            statement_no: rng.range(1, 20_000),
            charge_code: String::from_utf8(vec![code_a, code_b]).expect("ASCII letters"),
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_are_deterministic_and_in_range() {
        let a: Vec<_> = credit_rows(1000).collect();
        let b: Vec<_> = credit_rows(1000).collect();
        assert_eq!(a, b);
        assert!(a.iter().all(|r| (1..=10_000).contains(&r.member_no)
            && (1..=10).contains(&r.category_no)
            && r.charge_code.len() == 2
            && r.charge_amt >= 1.0));
        // A prefix of a longer run is the shorter run.
        assert_eq!(credit_rows(10).collect::<Vec<_>>(), a[..10].to_vec());
    }

    #[test]
    fn julian_day_converts_to_datetime_text() {
        let row = ChargeRow {
            member_no: 1,
            provider_no: 1,
            category_no: 1,
            charge_dt: FIRST_DAY_JULIAN,
            charge_amt: 1.0,
            statement_no: 1,
            charge_code: "AB".into(),
        };
        assert_eq!(row.charge_dt_text(), "1999-07-20 00:00:00.000");
    }
}
