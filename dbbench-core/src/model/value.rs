//! Values and rows returned by queries, independent of the backend.

use crate::model::error::{Error, Result};
use std::sync::Arc;

/// One value of a result row or a statement parameter.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    /// SQL NULL.
    Null,
    /// An integer.
    Int(i64),
    /// A floating-point number.
    Float(f64),
    /// Text.
    Text(String),
    /// Bytes.
    Blob(Vec<u8>),
}

impl From<i64> for Value {
    fn from(v: i64) -> Self {
        Value::Int(v)
    }
}
impl From<i32> for Value {
    fn from(v: i32) -> Self {
        Value::Int(v.into())
    }
}
impl From<f64> for Value {
    fn from(v: f64) -> Self {
        Value::Float(v)
    }
}
impl From<&str> for Value {
    fn from(v: &str) -> Self {
        Value::Text(v.to_string())
    }
}
impl From<String> for Value {
    fn from(v: String) -> Self {
        Value::Text(v)
    }
}
impl From<Vec<u8>> for Value {
    fn from(v: Vec<u8>) -> Self {
        Value::Blob(v)
    }
}

/// A result row: values by position, column names shared by all rows of a result.
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    columns: Arc<[String]>,
    values: Vec<Value>,
}

impl Row {
    /// A row with these column names and values.
    pub fn new(columns: Arc<[String]>, values: Vec<Value>) -> Row {
        Row { columns, values }
    }

    /// The value at `index`, converted.
    pub fn get<T: FromValue>(&self, index: usize) -> Result<T> {
        let value = self.values.get(index).ok_or_else(|| {
            Error::msg(format!(
                "column {index} out of range: the row has {} columns",
                self.values.len()
            ))
        })?;
        T::from_value(value)
    }

    /// The value of the column named `name` (case-insensitive), converted.
    pub fn get_named<T: FromValue>(&self, name: &str) -> Result<T> {
        let index = self
            .columns
            .iter()
            .position(|c| c.eq_ignore_ascii_case(name))
            .ok_or_else(|| {
                Error::msg(format!(
                    "no column named `{name}`; columns are {:?}",
                    self.columns
                ))
            })?;
        self.get(index)
    }

    /// The column names.
    pub fn columns(&self) -> &[String] {
        &self.columns
    }

    /// The raw values.
    pub fn values(&self) -> &[Value] {
        &self.values
    }
}

/// Conversion from a [`Value`] to a Rust type.
pub trait FromValue: Sized {
    /// Converts, or explains why not.
    fn from_value(value: &Value) -> Result<Self>;
}

fn mismatch(want: &str, value: &Value) -> Error {
    Error::msg(format!("cannot read {value:?} as {want}"))
}

impl FromValue for Value {
    fn from_value(value: &Value) -> Result<Self> {
        Ok(value.clone())
    }
}
impl FromValue for i64 {
    fn from_value(value: &Value) -> Result<Self> {
        match value {
            Value::Int(v) => Ok(*v),
            Value::Float(f) if f.fract() == 0.0 => Ok(*f as i64),
            Value::Text(t) => t.trim().parse().map_err(|_| mismatch("an integer", value)),
            _ => Err(mismatch("an integer", value)),
        }
    }
}
impl FromValue for u64 {
    fn from_value(value: &Value) -> Result<Self> {
        let v = i64::from_value(value)?;
        u64::try_from(v).map_err(|_| mismatch("a non-negative integer", value))
    }
}
impl FromValue for f64 {
    fn from_value(value: &Value) -> Result<Self> {
        match value {
            Value::Int(v) => Ok(*v as f64),
            Value::Float(f) => Ok(*f),
            Value::Text(t) => t.trim().parse().map_err(|_| mismatch("a number", value)),
            _ => Err(mismatch("a number", value)),
        }
    }
}
impl FromValue for String {
    fn from_value(value: &Value) -> Result<Self> {
        match value {
            Value::Text(t) => Ok(t.clone()),
            Value::Int(v) => Ok(v.to_string()),
            Value::Float(f) => Ok(f.to_string()),
            _ => Err(mismatch("text", value)),
        }
    }
}
impl FromValue for bool {
    fn from_value(value: &Value) -> Result<Self> {
        Ok(i64::from_value(value)? != 0)
    }
}
impl<T: FromValue> FromValue for Option<T> {
    fn from_value(value: &Value) -> Result<Self> {
        match value {
            Value::Null => Ok(None),
            other => T::from_value(other).map(Some),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn converts_by_position_and_name() {
        let row = Row::new(
            Arc::from(vec!["n".to_string(), "label".to_string()]),
            vec![Value::Int(7), Value::Null],
        );
        assert_eq!(row.get::<i64>(0).unwrap(), 7);
        assert_eq!(row.get_named::<f64>("N").unwrap(), 7.0);
        assert_eq!(row.get_named::<Option<String>>("label").unwrap(), None);
        assert!(row.get::<String>(1).is_err());
        assert!(row
            .get::<i64>(5)
            .unwrap_err()
            .to_string()
            .contains("out of range"));
    }
}
