//! dbbench [`Value`]s to and from PostgreSQL's wire formats.
//!
//! Parameters go in PostgreSQL's *text* format (bytea in binary), so one `Value::Int` fits an
//! `integer`, `bigint`, `numeric` or `boolean` column alike: the server parses it for the type it
//! inferred, exactly as it parses a literal. Results come in binary and are decoded by type;
//! a type with no natural [`Value`] is an error that says to cast it in the query.

use crate::model::value::Value;
use crate::util::calendar::civil_date;
use bytes::BytesMut;
use std::fmt::Write as _;
use tokio_postgres::types::{to_sql_checked, Format, FromSql, IsNull, ToSql, Type};

type BoxError = Box<dyn std::error::Error + Sync + Send>;

/// Days from 1970-01-01 to 2000-01-01, PostgreSQL's epoch for dates and timestamps.
const DAYS_1970_TO_2000: i64 = 10_957;

/// A statement parameter.
#[derive(Debug)]
pub(crate) struct Param<'a>(pub &'a Value);

impl ToSql for Param<'_> {
    fn to_sql(&self, _ty: &Type, out: &mut BytesMut) -> Result<IsNull, BoxError> {
        Ok(match encode_param(self.0, out) {
            postgres_protocol::IsNull::Yes => IsNull::Yes,
            postgres_protocol::IsNull::No => IsNull::No,
        })
    }

    fn accepts(_ty: &Type) -> bool {
        true
    }

    fn encode_format(&self, _ty: &Type) -> Format {
        match param_format(self.0) {
            1 => Format::Binary,
            _ => Format::Text,
        }
    }

    to_sql_checked!();
}

/// Writes a parameter as the server reads it: text for everything but a blob, which goes in
/// binary (`bytea`). The server infers each parameter's type from the statement.
pub(crate) fn encode_param(value: &Value, out: &mut BytesMut) -> postgres_protocol::IsNull {
    match value {
        Value::Null => return postgres_protocol::IsNull::Yes,
        // Written in place: a `String` per parameter was an allocation per statement.
        Value::Int(v) => {
            let _ = write!(out, "{v}");
        }
        Value::Float(v) => out.extend_from_slice(float_text(*v).as_bytes()),
        Value::Text(v) => out.extend_from_slice(v.as_bytes()),
        Value::Blob(v) => out.extend_from_slice(v),
    }
    postgres_protocol::IsNull::No
}

/// The protocol's format code of a parameter: 1 (binary) for a blob, 0 (text) otherwise.
pub(crate) fn param_format(value: &Value) -> i16 {
    match value {
        Value::Blob(_) => 1,
        _ => 0,
    }
}

/// A float in PostgreSQL's input syntax (`Infinity`, not Rust's `inf`).
fn float_text(v: f64) -> String {
    if v.is_nan() {
        "NaN".into()
    } else if v.is_infinite() {
        if v > 0.0 { "Infinity" } else { "-Infinity" }.into()
    } else {
        v.to_string()
    }
}

/// A result cell.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Cell(pub Value);

impl<'a> FromSql<'a> for Cell {
    fn from_sql(ty: &Type, raw: &'a [u8]) -> Result<Cell, BoxError> {
        let value = match *ty {
            Type::BOOL => Value::Int(i64::from(bool::from_sql(ty, raw)?)),
            Type::INT2 => Value::Int(i16::from_sql(ty, raw)?.into()),
            Type::INT4 => Value::Int(i32::from_sql(ty, raw)?.into()),
            Type::INT8 => Value::Int(i64::from_sql(ty, raw)?),
            Type::OID => Value::Int(u32::from_sql(ty, raw)?.into()),
            Type::FLOAT4 => Value::Float(f32::from_sql(ty, raw)?.into()),
            Type::FLOAT8 => Value::Float(f64::from_sql(ty, raw)?),
            Type::NUMERIC => numeric(raw)?,
            Type::TEXT | Type::VARCHAR | Type::BPCHAR | Type::NAME | Type::UNKNOWN | Type::JSON => {
                Value::Text(String::from_utf8(raw.to_vec())?)
            }
            Type::CHAR => Value::Text(String::from_utf8(raw.to_vec())?),
            Type::BYTEA => Value::Blob(raw.to_vec()),
            Type::TIMESTAMP | Type::TIMESTAMPTZ => {
                Value::Text(timestamp_text(i64::from_sql(&Type::INT8, raw)?))
            }
            Type::DATE => {
                let days = i32::from_sql(&Type::INT4, raw)?;
                Value::Text(civil_date(i64::from(days) + DAYS_1970_TO_2000))
            }
            _ => {
                return Err(format!(
                    "dbbench has no value for PostgreSQL type `{}`; cast it in the query \
                     (`::text`, `::float8`, `::bigint`)",
                    ty.name()
                )
                .into())
            }
        };
        Ok(Cell(value))
    }

    fn from_sql_null(_ty: &Type) -> Result<Cell, BoxError> {
        Ok(Cell(Value::Null))
    }

    fn accepts(_ty: &Type) -> bool {
        true
    }
}

/// `YYYY-MM-DD hh:mm:ss.fff` (microseconds when they are not whole milliseconds) of a timestamp
/// in microseconds since 2000-01-01.
fn timestamp_text(micros: i64) -> String {
    let day_us = 86_400_000_000i64;
    let days = micros.div_euclid(day_us);
    let us = micros.rem_euclid(day_us);
    let (h, m, s) = (
        us / 3_600_000_000,
        (us / 60_000_000) % 60,
        (us / 1_000_000) % 60,
    );
    let fraction = if us % 1000 == 0 {
        format!("{:03}", (us / 1000) % 1000)
    } else {
        format!("{:06}", us % 1_000_000)
    };
    format!(
        "{} {h:02}:{m:02}:{s:02}.{fraction}",
        civil_date(days + DAYS_1970_TO_2000)
    )
}

/// PostgreSQL's binary `numeric`: base-10000 digits with a weight and a display scale. Whole
/// numbers that fit become integers, the rest floats (as decimals do on SQL Server).
fn numeric(raw: &[u8]) -> Result<Value, BoxError> {
    let word = |i: usize| -> Result<u16, BoxError> {
        raw.get(i * 2..i * 2 + 2)
            .map(|b| u16::from_be_bytes([b[0], b[1]]))
            .ok_or_else(|| "truncated numeric".into())
    };
    let ndigits = word(0)? as usize;
    let weight = word(1)? as i16 as i32;
    let sign = word(2)?;
    let dscale = word(3)?;
    match sign {
        0xC000 => return Ok(Value::Float(f64::NAN)),
        0xD000 => return Ok(Value::Float(f64::INFINITY)),
        0xF000 => return Ok(Value::Float(f64::NEG_INFINITY)),
        _ => {}
    }
    let negative = sign == 0x4000;
    let digits: Vec<u16> = (0..ndigits)
        .map(|i| word(4 + i))
        .collect::<Result<_, _>>()?;
    if dscale == 0 {
        let mut acc: i128 = 0;
        let mut exact = true;
        for d in &digits {
            acc = acc
                .checked_mul(10_000)
                .and_then(|a| a.checked_add(i128::from(*d)))
                .unwrap_or_else(|| {
                    exact = false;
                    0
                });
        }
        let trailing = weight + 1 - ndigits as i32;
        for _ in 0..trailing.max(0) {
            acc = acc.checked_mul(10_000).unwrap_or_else(|| {
                exact = false;
                0
            });
        }
        let acc = if negative { -acc } else { acc };
        if exact && trailing >= 0 {
            if let Ok(v) = i64::try_from(acc) {
                return Ok(Value::Int(v));
            }
        }
    }
    let mut value = 0f64;
    for (i, d) in digits.iter().enumerate() {
        value += f64::from(*d) * 10_000f64.powi(weight - i as i32);
    }
    Ok(Value::Float(if negative { -value } else { value }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn numeric_bytes(weight: i16, sign: u16, dscale: u16, digits: &[u16]) -> Vec<u8> {
        let mut out = Vec::new();
        for w in [digits.len() as u16, weight as u16, sign, dscale] {
            out.extend_from_slice(&w.to_be_bytes());
        }
        for d in digits {
            out.extend_from_slice(&d.to_be_bytes());
        }
        out
    }

    #[test]
    fn numerics_decode_to_integers_and_floats() {
        // 123456789 = 1 2345 6789 with weight 2.
        let whole = numeric_bytes(2, 0, 0, &[1, 2345, 6789]);
        assert_eq!(numeric(&whole).unwrap(), Value::Int(123_456_789));
        // 50000 = 5 (weight 1, trailing zero group dropped).
        assert_eq!(
            numeric(&numeric_bytes(1, 0, 0, &[5])).unwrap(),
            Value::Int(50_000)
        );
        // -12.5 = 12 . 5000, scale 1.
        assert_eq!(
            numeric(&numeric_bytes(0, 0x4000, 1, &[12, 5000])).unwrap(),
            Value::Float(-12.5)
        );
        assert_eq!(
            numeric(&numeric_bytes(0, 0, 0, &[])).unwrap(),
            Value::Int(0)
        );
    }

    #[test]
    fn timestamps_and_dates_read_like_the_fixture_text() {
        assert_eq!(timestamp_text(0), "2000-01-01 00:00:00.000");
        // 1999-07-20 13:45:10 is 165 days and 10h14m50s before 2000-01-01.
        let micros = -((165 * 86_400 - (13 * 3600 + 45 * 60 + 10)) as i64) * 1_000_000;
        assert_eq!(timestamp_text(micros), "1999-07-20 13:45:10.000");
        assert_eq!(timestamp_text(1_500), "2000-01-01 00:00:00.001500");
    }

    #[test]
    fn parameters_go_as_text_and_blobs_as_binary() {
        let mut out = BytesMut::new();
        let int = Value::Int(-42);
        assert!(matches!(
            Param(&int).to_sql(&Type::INT4, &mut out).unwrap(),
            IsNull::No
        ));
        assert_eq!(&out[..], b"-42");
        assert!(matches!(
            Param(&int).encode_format(&Type::INT4),
            Format::Text
        ));
        let blob = Value::Blob(vec![1, 2]);
        assert!(matches!(
            Param(&blob).encode_format(&Type::BYTEA),
            Format::Binary
        ));
        assert_eq!(float_text(f64::INFINITY), "Infinity");
        let null = Value::Null;
        assert!(matches!(
            Param(&null).to_sql(&Type::TEXT, &mut out).unwrap(),
            IsNull::Yes
        ));
    }
}
