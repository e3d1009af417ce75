//! Calendar dates from day counts, shared by the fixture (Julian days), the SQL Server value
//! conversion (days since 1900 or 0001) and the report (Unix time).

/// Days from 1900-01-01 (SQL Server's `datetime` epoch) to 1970-01-01.
pub const DAYS_1900_TO_1970: i64 = 25_567;
/// Days from 0001-01-01 (the `date`/`datetime2` epoch) to 1970-01-01.
pub const DAYS_0001_TO_1970: i64 = 719_162;
/// The Julian day number of 1970-01-01 00:00 UTC.
pub const JULIAN_DAY_OF_1970: f64 = 2_440_587.5;

/// `(year, month, day)` of the day `days` after 1970-01-01, negative days before it
/// (Howard Hinnant's civil-from-days, exact for the proleptic Gregorian calendar).
pub fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let month = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let year = yoe + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

/// `YYYY-MM-DD` of the day `days` after 1970-01-01.
pub fn civil_date(days: i64) -> String {
    let (year, month, day) = civil_from_days(days);
    format!("{year:04}-{month:02}-{day:02}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_dates() {
        assert_eq!(civil_date(0), "1970-01-01");
        assert_eq!(civil_date(-DAYS_1900_TO_1970), "1900-01-01");
        assert_eq!(civil_date(-DAYS_0001_TO_1970), "0001-01-01");
        assert_eq!(civil_date(10_957), "2000-01-01");
        assert_eq!(civil_date(11_016), "2000-02-29");
    }
}
