use super::*;
use tiberius::time::{Date, DateTime, DateTime2, Time};

#[test]
fn converts_numbers_text_and_nulls() {
    assert_eq!(to_value(&ColumnData::I32(Some(7))), Value::Int(7));
    assert_eq!(to_value(&ColumnData::I64(None)), Value::Null);
    assert_eq!(to_value(&ColumnData::Bit(Some(true))), Value::Int(1));
    assert_eq!(
        to_value(&ColumnData::String(Some("Y".into()))),
        Value::Text("Y".into())
    );
    let n = tiberius::numeric::Numeric::new_with_scale(12345, 2);
    assert_eq!(
        to_value(&ColumnData::Numeric(Some(n))),
        Value::Float(123.45)
    );
    let whole = tiberius::numeric::Numeric::new_with_scale(42, 0);
    assert_eq!(to_value(&ColumnData::Numeric(Some(whole))), Value::Int(42));
}

#[test]
fn formats_dates_like_sql_server() {
    // 1999-07-20 is 36 359 days after 1900-01-01; 12:00:00 is 43 200 s * 300 fragments.
    let dt = DateTime::new(36_359, 43_200 * 300);
    assert_eq!(
        to_value(&ColumnData::DateTime(Some(dt))),
        Value::Text("1999-07-20 12:00:00.000".into())
    );
    let d2 = DateTime2::new(Date::new(730_000), Time::new(1_234_567, 3));
    assert_eq!(
        to_value(&ColumnData::DateTime2(Some(d2))),
        Value::Text("1999-09-04 00:20:34.567".into())
    );
    assert_eq!(civil_date(0), "1970-01-01");
    assert_eq!(civil_date(-DAYS_1900_TO_1970), "1900-01-01");
}

#[test]
fn headlines_are_short() {
    assert_eq!(headline("\n  SELECT 1\nFROM x"), "SELECT 1");
    assert!(headline(&"x".repeat(200)).ends_with('…'));
}
