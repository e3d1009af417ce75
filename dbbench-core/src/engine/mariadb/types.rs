//! dbbench [`Value`]s to and from the MySQL protocol's values.
//!
//! Parameters go as the protocol's own types (integer, double, string, bytes), which the server
//! converts to the column's type as it converts a literal. Results of the text protocol (a query
//! without parameters) arrive as bytes and are decoded by the column's type; those of the binary
//! protocol arrive typed. Dates, times and decimals come back as text, as the server writes them.

use crate::model::error::{Error, Result};
use crate::model::value::{Row, Value};
use mysql_async::consts::{ColumnFlags, ColumnType};
use mysql_async::Column;
use std::sync::Arc;

/// The `binary` character set: a string column of it is bytes, not text.
const BINARY_CHARSET: u16 = 63;

/// A statement parameter in the protocol's terms.
pub fn param(value: &Value) -> mysql_async::Value {
    match value {
        Value::Null => mysql_async::Value::NULL,
        Value::Int(v) => mysql_async::Value::Int(*v),
        Value::Float(v) => mysql_async::Value::Double(*v),
        Value::Text(v) => mysql_async::Value::Bytes(v.as_bytes().to_vec()),
        Value::Blob(v) => mysql_async::Value::Bytes(v.clone()),
    }
}

/// The parameters of a statement, or none.
pub fn params(values: &[Value]) -> mysql_async::Params {
    if values.is_empty() {
        mysql_async::Params::Empty
    } else {
        mysql_async::Params::Positional(values.iter().map(param).collect())
    }
}

/// The column names of a result, shared by its rows.
pub fn names(columns: &[Column]) -> Arc<[String]> {
    columns.iter().map(|c| c.name_str().into_owned()).collect()
}

/// One result row as dbbench's.
pub fn row(names: &Arc<[String]>, row: mysql_async::Row) -> Result<Row> {
    let columns = row.columns();
    let values = row
        .unwrap()
        .into_iter()
        .zip(columns.iter())
        .map(|(v, c)| value(v, c))
        .collect::<Result<Vec<_>>>()?;
    Ok(Row::new(names.clone(), values))
}

/// One value of column `column`.
pub fn value(v: mysql_async::Value, column: &Column) -> Result<Value> {
    use mysql_async::Value as M;
    Ok(match v {
        M::NULL => Value::Null,
        M::Int(i) => Value::Int(i),
        M::UInt(u) => Value::Int(i64::try_from(u).map_err(|_| {
            Error::msg(format!(
                "column `{}`: {u} does not fit a signed 64-bit integer",
                column.name_str()
            ))
        })?),
        M::Float(f) => Value::Float(f.into()),
        M::Double(f) => Value::Float(f),
        M::Bytes(bytes) => text_value(bytes, column)?,
        date @ M::Date(..) => Value::Text(unquoted(&date)),
        time @ M::Time(..) => Value::Text(unquoted(&time)),
    })
}

/// A date or time as the server writes it, without the quotes of its SQL literal.
fn unquoted(v: &mysql_async::Value) -> String {
    v.as_sql(true).trim_matches('\'').to_string()
}

/// A value of the text protocol (or a string of the binary one), decoded by its column's type.
fn text_value(bytes: Vec<u8>, column: &Column) -> Result<Value> {
    let text = || String::from_utf8(bytes.clone());
    let parse_error = || {
        Error::msg(format!(
            "column `{}` of type {:?}: the server sent {:?}",
            column.name_str(),
            column.column_type(),
            String::from_utf8_lossy(&bytes)
        ))
    };
    Ok(match column.column_type() {
        ColumnType::MYSQL_TYPE_TINY
        | ColumnType::MYSQL_TYPE_SHORT
        | ColumnType::MYSQL_TYPE_INT24
        | ColumnType::MYSQL_TYPE_LONG
        | ColumnType::MYSQL_TYPE_LONGLONG
        | ColumnType::MYSQL_TYPE_YEAR => {
            let s = text().map_err(|_| parse_error())?;
            if column.flags().contains(ColumnFlags::UNSIGNED_FLAG) {
                let u: u64 = s.parse().map_err(|_| parse_error())?;
                Value::Int(i64::try_from(u).map_err(|_| parse_error())?)
            } else {
                Value::Int(s.parse().map_err(|_| parse_error())?)
            }
        }
        ColumnType::MYSQL_TYPE_FLOAT | ColumnType::MYSQL_TYPE_DOUBLE => {
            let s = text().map_err(|_| parse_error())?;
            Value::Float(s.parse().map_err(|_| parse_error())?)
        }
        _ if column.character_set() == BINARY_CHARSET && !is_textual(column.column_type()) => {
            Value::Blob(bytes)
        }
        _ => match String::from_utf8(bytes) {
            Ok(s) => Value::Text(s),
            Err(e) => Value::Blob(e.into_bytes()),
        },
    })
}

/// Types the server writes as text even in the `binary` character set (numbers, dates).
fn is_textual(t: ColumnType) -> bool {
    matches!(
        t,
        ColumnType::MYSQL_TYPE_DECIMAL
            | ColumnType::MYSQL_TYPE_NEWDECIMAL
            | ColumnType::MYSQL_TYPE_DATE
            | ColumnType::MYSQL_TYPE_DATETIME
            | ColumnType::MYSQL_TYPE_TIMESTAMP
            | ColumnType::MYSQL_TYPE_TIME
            | ColumnType::MYSQL_TYPE_NEWDATE
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parameters_keep_their_kind() {
        assert_eq!(param(&Value::Int(-3)), mysql_async::Value::Int(-3));
        assert_eq!(param(&Value::Float(1.5)), mysql_async::Value::Double(1.5));
        assert_eq!(
            param(&Value::Text("ab".into())),
            mysql_async::Value::Bytes(b"ab".to_vec())
        );
        assert_eq!(param(&Value::Null), mysql_async::Value::NULL);
        assert!(matches!(params(&[]), mysql_async::Params::Empty));
    }

    #[test]
    fn text_results_are_decoded_by_column_type() {
        let col = |t: ColumnType| Column::new(t).with_name(b"c");
        let int = text_value(b"42".to_vec(), &col(ColumnType::MYSQL_TYPE_LONGLONG)).unwrap();
        assert_eq!(int, Value::Int(42));
        let float = text_value(b"2.5".to_vec(), &col(ColumnType::MYSQL_TYPE_DOUBLE)).unwrap();
        assert_eq!(float, Value::Float(2.5));
        let text = text_value(b"x".to_vec(), &col(ColumnType::MYSQL_TYPE_VAR_STRING)).unwrap();
        assert_eq!(text, Value::Text("x".into()));
        let bad = text_value(b"x".to_vec(), &col(ColumnType::MYSQL_TYPE_LONG));
        assert!(bad.is_err());
    }
}
