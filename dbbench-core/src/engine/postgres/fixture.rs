//! The `credit` fixture on PostgreSQL: its statements in PostgreSQL's SQL, and loading it,
//! `CREATE TABLE charge` and the rows of [`crate::engine::fixture::credit_rows`] through
//! `COPY … FROM STDIN`, PostgreSQL's bulk path.

use super::connection::PostgresConnection;
use crate::engine::fixture::{credit_rows, ChargeRow};
use crate::engine::profile::FixtureSql;
use crate::model::error::{Error, Result};
use futures_util::SinkExt;
use std::io::Cursor;

/// The fixture's statements in PostgreSQL's SQL. `money` is locale-dependent on PostgreSQL;
/// numeric(19,4) is its exact range and scale.
pub static SQL: FixtureSql = FixtureSql {
    credit_schema: "CREATE TABLE charge (
                charge_no    integer GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
                member_no    integer       NOT NULL,
                provider_no  integer       NOT NULL,
                category_no  integer       NOT NULL,
                charge_dt    timestamp(3)  NOT NULL,
                charge_amt   numeric(19,4) NOT NULL,
                statement_no integer       NOT NULL,
                charge_code  char(2)       NOT NULL
            )",
    doubling_insert,
};

/// The article's doubling statement for loop `loop_number`. A timestamp plus an integer is not
/// defined on PostgreSQL: it adds an interval of days.
fn doubling_insert(loop_number: u32) -> String {
    let days = 30 * loop_number;
    format!(
        "INSERT INTO charge (member_no, provider_no, category_no, charge_dt, charge_amt, statement_no, charge_code) \
             SELECT member_no, provider_no, category_no, charge_dt + interval '{days} days', charge_amt, statement_no, charge_code FROM charge"
    )
}

/// Bytes per COPY message: large enough to amortise the protocol, small enough to stream.
const CHUNK: usize = 256 << 10;

/// The COPY statement of the fixture's columns (`charge_no` is an identity).
pub const COPY_SQL: &str = "COPY charge (member_no, provider_no, category_no, charge_dt, \
                            charge_amt, statement_no, charge_code) FROM STDIN";

/// One row in COPY's text format.
pub fn copy_line(row: &ChargeRow, out: &mut String) {
    use std::fmt::Write;
    let _ = writeln!(
        out,
        "{}\t{}\t{}\t{}\t{:.2}\t{}\t{}",
        row.member_no,
        row.provider_no,
        row.category_no,
        row.charge_dt_text(),
        row.charge_amt,
        row.statement_no,
        row.charge_code
    );
}

/// Creates `charge` and loads `rows` rows; returns the rows the server confirmed.
pub async fn load_credit(conn: &mut PostgresConnection, rows: u64) -> Result<u64> {
    conn.batch(SQL.credit_schema).await?;
    let loaded = conn
        .with_client(|client| async move {
            let sink = client.copy_in::<_, Cursor<Vec<u8>>>(COPY_SQL).await?;
            let mut sink = std::pin::pin!(sink);
            let mut buffer = String::with_capacity(CHUNK + 256);
            for row in credit_rows(rows) {
                copy_line(&row, &mut buffer);
                if buffer.len() >= CHUNK {
                    let chunk = std::mem::replace(&mut buffer, String::with_capacity(CHUNK + 256));
                    sink.send(Cursor::new(chunk.into_bytes())).await?;
                }
            }
            if !buffer.is_empty() {
                sink.send(Cursor::new(buffer.into_bytes())).await?;
            }
            sink.as_mut().finish().await
        })
        .await?;
    if loaded != rows {
        return Err(Error::msg(format!("COPY loaded {loaded} rows of {rows}")));
    }
    // Fresh statistics, as after a restore: the planner should know the table's size.
    conn.batch("ANALYZE charge").await?;
    Ok(loaded)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn copy_lines_follow_the_column_order() {
        let row = credit_rows(1).next().unwrap();
        let mut line = String::new();
        copy_line(&row, &mut line);
        let fields: Vec<&str> = line.trim_end().split('\t').collect();
        assert_eq!(fields.len(), 7);
        assert_eq!(fields[3], row.charge_dt_text());
        assert_eq!(fields[6], row.charge_code);
        assert_eq!(fields[4], format!("{:.2}", row.charge_amt));
    }
}
