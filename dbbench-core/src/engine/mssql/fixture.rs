//! The `credit` fixture on SQL Server: its statements in T-SQL, and loading it, `CREATE TABLE
//! dbo.charge` and the rows of [`crate::engine::fixture::credit_rows`] through tiberius's bulk
//! insert (TDS `INSERT BULK`), which is how a real restore-sized table gets loaded quickly.

use super::MssqlConnection;
use crate::engine::fixture::{credit_rows, ChargeRow};
use crate::engine::profile::FixtureSql;
use crate::model::error::Result;
use std::borrow::Cow;
use tiberius::{ColumnData, TokenRow};

/// The fixture's statements in T-SQL: the article's own `dbo.charge`, `charge_dt` a `datetime`
/// (which adds days with `+`) and `charge_amt` `money`.
pub static SQL: FixtureSql = FixtureSql {
    credit_schema: "CREATE TABLE dbo.charge (
                charge_no    int IDENTITY(1,1) NOT NULL CONSTRAINT charge_ident PRIMARY KEY CLUSTERED,
                member_no    int      NOT NULL,
                provider_no  int      NOT NULL,
                category_no  int      NOT NULL,
                charge_dt    datetime NOT NULL,
                charge_amt   money    NOT NULL,
                statement_no int      NOT NULL,
                charge_code  char(2)  NOT NULL
            )",
    doubling_insert,
};

/// The article's doubling statement for loop `loop_number`.
fn doubling_insert(loop_number: u32) -> String {
    let days = 30 * loop_number;
    format!(
        "INSERT INTO dbo.charge (member_no, provider_no, category_no, charge_dt, charge_amt, statement_no, charge_code) \
             SELECT member_no, provider_no, category_no, charge_dt + {days}, charge_amt, statement_no, charge_code FROM dbo.charge"
    )
}

/// Julian day number of 1900-01-01 00:00, the epoch of SQL Server's `datetime`.
const DATETIME_EPOCH_JULIAN: f64 = 2_415_020.5;

/// 1/300 s fragments in a day: the resolution of `datetime`.
const FRAGMENTS_PER_DAY: i64 = 86_400 * 300;

/// `charge_dt` (a Julian day) as a `datetime` value: whole days since 1900-01-01 and the time of
/// day in 1/300 s, rounded as SQL Server rounds.
pub fn charge_datetime(row: &ChargeRow) -> tiberius::time::DateTime {
    let offset = row.charge_dt - DATETIME_EPOCH_JULIAN;
    let mut days = offset.floor() as i64;
    let mut fragments = ((offset - days as f64) * FRAGMENTS_PER_DAY as f64).round() as i64;
    if fragments >= FRAGMENTS_PER_DAY {
        days += 1;
        fragments -= FRAGMENTS_PER_DAY;
    }
    tiberius::time::DateTime::new(days as i32, fragments as u32)
}

/// One `charge` row for the bulk load, in the table's column order without the identity column.
fn token_row(row: &ChargeRow) -> TokenRow<'static> {
    let mut out = TokenRow::with_capacity(7);
    out.push(ColumnData::I32(Some(row.member_no as i32)));
    out.push(ColumnData::I32(Some(row.provider_no as i32)));
    out.push(ColumnData::I32(Some(row.category_no as i32)));
    out.push(ColumnData::DateTime(Some(charge_datetime(row))));
    out.push(ColumnData::F64(Some(row.charge_amt)));
    out.push(ColumnData::I32(Some(row.statement_no as i32)));
    out.push(ColumnData::String(Some(Cow::Owned(
        row.charge_code.clone(),
    ))));
    out
}

/// The columns the bulk load fills (`charge_no` is an identity and assigned by the server).
pub const COLUMNS: [&str; 7] = [
    "member_no",
    "provider_no",
    "category_no",
    "charge_dt",
    "charge_amt",
    "statement_no",
    "charge_code",
];

/// Creates `dbo.charge` and bulk-loads `rows` rows; returns the number the server confirmed.
pub async fn load_credit(conn: &mut MssqlConnection, rows: u64) -> Result<u64> {
    conn.batch(SQL.credit_schema).await?;
    conn.bulk_load(
        "dbo.charge",
        &COLUMNS,
        credit_rows(rows).map(|r| token_row(&r)),
    )
    .await
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::mssql::connection::to_value;
    use crate::model::value::Value;

    #[test]
    fn datetimes_match_the_fixture_text() {
        for row in credit_rows(2_000) {
            let shown = to_value(&ColumnData::DateTime(Some(charge_datetime(&row))));
            assert_eq!(shown, Value::Text(row.charge_dt_text()), "{row:?}");
        }
    }

    #[test]
    fn first_day_is_1999_07_20() {
        let row = credit_rows(1).next().unwrap();
        let dt = charge_datetime(&ChargeRow {
            charge_dt: 2_451_379.5,
            ..row
        });
        assert_eq!((dt.days(), dt.seconds_fragments()), (36_359, 0));
    }

    #[test]
    fn rows_follow_the_column_order() {
        let row = credit_rows(1).next().unwrap();
        let token = token_row(&row);
        assert_eq!(token.len(), COLUMNS.len());
        assert_eq!(
            token.get(6),
            Some(&ColumnData::String(Some(Cow::Owned(
                row.charge_code.clone()
            ))))
        );
    }
}
