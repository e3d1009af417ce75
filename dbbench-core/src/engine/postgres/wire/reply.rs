//! Reading the server's answers: its errors as dbbench errors (with the SQLSTATE the driver
//! classifies), row descriptions, data rows as dbbench values, and the wording of a lost
//! connection.

use super::super::errors;
use super::super::types::Cell;
use super::Prepared;
use crate::model::error::Error;
use crate::model::error::Result;
use crate::model::value::Row;
use crate::util::cancel::headline;
use fallible_iterator::FallibleIterator;
use postgres_protocol::message::backend::{DataRowBody, ErrorResponseBody, RowDescriptionBody};
use std::io;
use tokio_postgres::types::{FromSql, Type};

/// Why a read or write failed, in words: a peer that went away says so.
pub(super) fn closed(e: &io::Error) -> String {
    match e.kind() {
        io::ErrorKind::UnexpectedEof => e.to_string(),
        io::ErrorKind::BrokenPipe | io::ErrorKind::ConnectionReset => {
            format!("the server closed the connection ({e})")
        }
        _ => e.to_string(),
    }
}

pub(super) fn lost(why: &str, sql: &str) -> Error {
    Error::msg(format!(
        "the connection to the PostgreSQL server was lost while running `{}`: {why}",
        headline(sql)
    ))
}

pub(super) fn encoding(e: io::Error, sql: &str) -> Error {
    Error::msg(format!("cannot encode `{}`: {e}", headline(sql)))
}

pub(super) fn protocol(e: io::Error, sql: &str) -> Error {
    Error::msg(format!(
        "PostgreSQL client error while running `{}`: malformed message from the server: {e}",
        headline(sql)
    ))
}

/// The server's error with its SQLSTATE (which the driver classifies), worded as the session's
/// connection words it; the second value is the message when the error ends the session.
pub(super) fn server_error(body: &ErrorResponseBody, sql: &str) -> (Error, Option<String>) {
    let (mut code, mut message, mut detail, mut hint, mut severity) =
        (String::new(), String::new(), None, None, String::new());
    let mut fields = body.fields();
    while let Ok(Some(field)) = fields.next() {
        let value = String::from_utf8_lossy(field.value_bytes()).into_owned();
        match field.type_() {
            b'C' => code = value,
            b'M' => message = value,
            b'D' => detail = Some(value),
            b'H' => hint = Some(value),
            b'V' => severity = value,
            b'S' if severity.is_empty() => severity = value,
            _ => {}
        }
    }
    let mut text = format!("{message} (while running `{}`)", headline(sql));
    if let Some(detail) = detail {
        text.push_str(&format!("; detail: {detail}"));
    }
    if let Some(hint) = hint {
        text.push_str(&format!("; hint: {hint}"));
    }
    let fatal = matches!(severity.as_str(), "FATAL" | "PANIC")
        .then(|| format!("{severity}: {message} (SQLSTATE {code})"));
    (errors::raised(code, text), fatal)
}

/// Column names and types of a row description.
pub(super) fn columns_of(
    description: &RowDescriptionBody,
) -> io::Result<(Vec<String>, Vec<Option<Type>>)> {
    let mut names = Vec::new();
    let mut types = Vec::new();
    let mut fields = description.fields();
    while let Some(field) = fields.next()? {
        names.push(field.name().to_string());
        types.push(Type::from_oid(field.type_oid()));
    }
    Ok((names, types))
}

/// One data row as dbbench values (binary format, read as the session's connection reads it).
pub(super) fn decode(row: &DataRowBody, prepared: &Prepared, sql: &str) -> Result<Row> {
    let buffer = row.buffer();
    let mut values = Vec::with_capacity(prepared.types.len());
    let mut ranges = row.ranges();
    let mut i = 0;
    while let Some(range) = ranges.next().map_err(|e| protocol(e, sql))? {
        let column =
            |e: String| Error::msg(format!("reading column {i} of `{}`: {e}", headline(sql)));
        let ty = match prepared.types.get(i) {
            Some(Some(ty)) => ty,
            _ => {
                return Err(column(
                    "dbbench has no value for this PostgreSQL type; cast it in the query \
                     (`::text`, `::float8`, `::bigint`)"
                        .into(),
                ))
            }
        };
        let cell = match range {
            Some(range) => Cell::from_sql(ty, &buffer[range]),
            None => Cell::from_sql_null(ty),
        };
        values.push(cell.map_err(|e| column(e.to_string()))?.0);
        i += 1;
    }
    Ok(Row::new(prepared.columns.clone(), values))
}

#[cfg(test)]
mod tests {
    use super::*;
    use bytes::{BufMut, BytesMut};
    use postgres_protocol::message::backend::Message;

    /// An ErrorResponse as the server frames it: `E`, the length, then typed fields.
    fn error_response(fields: &[(u8, &str)]) -> ErrorResponseBody {
        let mut body = Vec::new();
        for (kind, value) in fields {
            body.push(*kind);
            body.extend_from_slice(value.as_bytes());
            body.push(0);
        }
        body.push(0);
        let mut raw = BytesMut::new();
        raw.put_u8(b'E');
        raw.put_i32(body.len() as i32 + 4);
        raw.extend_from_slice(&body);
        match Message::parse(&mut raw).unwrap() {
            Some(Message::ErrorResponse(body)) => body,
            _ => panic!("not an ErrorResponse"),
        }
    }

    #[test]
    fn a_server_error_keeps_its_sqlstate_detail_and_hint() {
        let body = error_response(&[
            (b'S', "ERROR"),
            (b'V', "ERROR"),
            (b'C', "23505"),
            (
                b'M',
                "duplicate key value violates unique constraint \"kv_pkey\"",
            ),
            (b'D', "Key (k)=(1) already exists."),
            (b'H', "Pick another key."),
        ]);
        let (error, fatal) = server_error(&body, "INSERT INTO kv VALUES ($1)\n  -- second line");
        assert_eq!(
            error.to_string(),
            "PostgreSQL error 23505: duplicate key value violates unique constraint \"kv_pkey\" \
             (while running `INSERT INTO kv VALUES ($1)`); detail: Key (k)=(1) already exists.; \
             hint: Pick another key."
        );
        assert!(fatal.is_none());
    }

    #[test]
    fn a_fatal_error_ends_the_session_with_its_reason() {
        let body = error_response(&[
            (b'S', "FATAL"),
            (b'V', "FATAL"),
            (b'C', "57P01"),
            (b'M', "terminating connection due to administrator command"),
        ]);
        let (error, fatal) = server_error(&body, "SELECT 1");
        assert_eq!(errors::sqlstate(&error), Some("57P01"));
        assert_eq!(
            fatal.as_deref(),
            Some("FATAL: terminating connection due to administrator command (SQLSTATE 57P01)")
        );
    }

    #[test]
    fn a_peer_that_went_away_is_said_plainly() {
        let reset = io::Error::from(io::ErrorKind::ConnectionReset);
        assert!(closed(&reset).starts_with("the server closed the connection ("));
        let error = lost(&closed(&reset), "COMMIT");
        assert!(error.to_string().starts_with(
            "the connection to the PostgreSQL server was lost while running `COMMIT`"
        ));
    }
}
