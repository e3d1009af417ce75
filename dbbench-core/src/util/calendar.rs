//! Calendar dates from day counts, shared by the fixture (Julian days), the backends' value
//! conversions (each from its own epoch) and the report and its history (Unix time).

/// The Julian day number of 1970-01-01 00:00 UTC.
pub const JULIAN_DAY_OF_1970: f64 = 2_440_587.5;

/// `(year, month, day)` of the day `days` after 1970-01-01, negative days before it, in the
/// proleptic Gregorian calendar (from the `time` crate).
pub fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let julian = i32::try_from(days + UNIX_EPOCH_JULIAN_DAY)
        .expect("a day within the range of the calendar");
    let date = time::Date::from_julian_day(julian).expect("a day within the range of the calendar");
    (
        i64::from(date.year()),
        u32::from(u8::from(date.month())),
        u32::from(date.day()),
    )
}

/// The (integer, noon-based) Julian day number of 1970-01-01, the `time` crate's day count.
const UNIX_EPOCH_JULIAN_DAY: i64 = 2_440_588;

/// `YYYY-MM-DD` of the day `days` after 1970-01-01.
pub fn civil_date(days: i64) -> String {
    let (year, month, day) = civil_from_days(days);
    format!("{year:04}-{month:02}-{day:02}")
}

/// `2023-11-14 22:13 UTC` for seconds since the Unix epoch.
pub fn utc_text(unix_s: u64) -> String {
    let days = (unix_s / 86_400) as i64;
    let secs = unix_s % 86_400;
    format!(
        "{} {:02}:{:02} UTC",
        civil_date(days),
        secs / 3600,
        secs % 3600 / 60
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_dates() {
        assert_eq!(civil_date(0), "1970-01-01");
        assert_eq!(civil_date(-25_567), "1900-01-01");
        assert_eq!(civil_date(-719_162), "0001-01-01");
        assert_eq!(civil_date(10_957), "2000-01-01");
        assert_eq!(civil_date(11_016), "2000-02-29");
    }

    #[test]
    fn utc_dates() {
        assert_eq!(utc_text(0), "1970-01-01 00:00 UTC");
        assert_eq!(utc_text(1_700_000_000), "2023-11-14 22:13 UTC");
        assert_eq!(utc_text(951_782_400), "2000-02-29 00:00 UTC");
    }
}
