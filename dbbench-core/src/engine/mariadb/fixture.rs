//! The `credit` fixture on MariaDB: `CREATE TABLE charge` and the doubling statement in
//! MariaDB's SQL, and loading the rows of [`crate::engine::fixture::credit_rows`] as multi-row
//! `INSERT`s in one transaction.
//!
//! Why multi-row inserts and not `LOAD DATA LOCAL INFILE`: the fixture is loaded before the
//! window, so its speed only costs setup time, and literals need no local-infile handler on the
//! connection nor `local_infile` on the server.

use super::connection::MariaDbConnection;
use crate::engine::fixture::{credit_rows, ChargeRow};
use crate::engine::profile::FixtureSql;
use crate::model::error::{Error, Result};

/// The fixture's statements in MariaDB's SQL: `AUTO_INCREMENT` for the identity, `DATETIME(3)`
/// and `DECIMAL(19,4)` for SQL Server's `datetime` and `money`, InnoDB named so the server's
/// default engine cannot change it.
pub static SQL: FixtureSql = FixtureSql {
    credit_schema: "CREATE TABLE charge (
                charge_no    INT           NOT NULL AUTO_INCREMENT PRIMARY KEY,
                member_no    INT           NOT NULL,
                provider_no  INT           NOT NULL,
                category_no  INT           NOT NULL,
                charge_dt    DATETIME(3)   NOT NULL,
                charge_amt   DECIMAL(19,4) NOT NULL,
                statement_no INT           NOT NULL,
                charge_code  CHAR(2)       NOT NULL
            ) ENGINE=InnoDB",
    doubling_insert,
};

/// The article's doubling statement for loop `loop_number`: days are added with `DATE_ADD`.
fn doubling_insert(loop_number: u32) -> String {
    let days = 30 * loop_number;
    format!(
        "INSERT INTO charge (member_no, provider_no, category_no, charge_dt, charge_amt, statement_no, charge_code) \
             SELECT member_no, provider_no, category_no, DATE_ADD(charge_dt, INTERVAL {days} DAY), charge_amt, statement_no, charge_code FROM charge"
    )
}

/// Rows per `INSERT`: about 60 KB of text, well below `max_allowed_packet` (16 MB).
const ROWS_PER_INSERT: usize = 1000;

const INSERT: &str = "INSERT INTO charge (member_no, provider_no, category_no, charge_dt, \
                      charge_amt, statement_no, charge_code) VALUES ";

/// One row as a parenthesised list of literals (every field is a number, a date or two
/// letters, so nothing needs escaping).
pub fn values_tuple(row: &ChargeRow, out: &mut String) {
    use std::fmt::Write;
    let _ = write!(
        out,
        "({},{},{},'{}',{:.2},{},'{}')",
        row.member_no,
        row.provider_no,
        row.category_no,
        row.charge_dt_text(),
        row.charge_amt,
        row.statement_no,
        row.charge_code
    );
}

/// Creates `charge` and loads `rows` rows; returns the rows the server counted.
pub async fn load_credit(conn: &mut MariaDbConnection, rows: u64) -> Result<u64> {
    conn.batch(SQL.credit_schema).await?;
    conn.batch("START TRANSACTION").await?;
    let mut sql = String::with_capacity(INSERT.len() + ROWS_PER_INSERT * 64);
    let mut in_statement = 0;
    let mut loaded = 0;
    for row in credit_rows(rows) {
        if in_statement == 0 {
            sql.clear();
            sql.push_str(INSERT);
        } else {
            sql.push(',');
        }
        values_tuple(&row, &mut sql);
        in_statement += 1;
        if in_statement == ROWS_PER_INSERT {
            loaded += conn.execute(&sql, &[]).await?;
            in_statement = 0;
        }
    }
    if in_statement > 0 {
        loaded += conn.execute(&sql, &[]).await?;
    }
    conn.batch("COMMIT").await?;
    if loaded != rows {
        return Err(Error::msg(format!("INSERT loaded {loaded} rows of {rows}")));
    }
    // Fresh statistics, as after a restore.
    conn.query("ANALYZE TABLE charge", &[]).await?;
    Ok(loaded)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_row_is_a_tuple_of_literals_in_column_order() {
        let row = credit_rows(1).next().unwrap();
        let mut text = String::new();
        values_tuple(&row, &mut text);
        let inner = text.trim_start_matches('(').trim_end_matches(')');
        let fields: Vec<&str> = inner.split(',').collect();
        assert_eq!(fields.len(), 7);
        assert_eq!(fields[3], format!("'{}'", row.charge_dt_text()));
        assert_eq!(fields[6], format!("'{}'", row.charge_code));
        assert!(doubling_insert(2).contains("INTERVAL 60 DAY"));
    }
}
