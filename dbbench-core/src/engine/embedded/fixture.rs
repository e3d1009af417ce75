//! The `credit` fixture on the embedded engine: `CREATE TABLE charge` and the doubling statement
//! in SQLite's SQL, and loading the rows of [`crate::engine::fixture::credit_rows`] with one
//! prepared insert in one transaction (the database's template then copies them page for page).

use crate::engine::fixture::credit_rows;
use crate::engine::profile::FixtureSql;

/// The fixture's statements in SQLite's SQL: `charge_dt` is a Julian day (`REAL`), so days add
/// with `+` as they do to the article's `datetime`.
pub static SQL: FixtureSql = FixtureSql {
    credit_schema: "CREATE TABLE charge (
                charge_no    INTEGER PRIMARY KEY,
                member_no    INTEGER NOT NULL,
                provider_no  INTEGER NOT NULL,
                category_no  INTEGER NOT NULL,
                charge_dt    REAL    NOT NULL,
                charge_amt   REAL    NOT NULL,
                statement_no INTEGER NOT NULL,
                charge_code  TEXT    NOT NULL
            )",
    doubling_insert,
};

/// The article's doubling statement for loop `loop_number`; a Julian day adds days with `+`.
fn doubling_insert(loop_number: u32) -> String {
    let days = 30 * loop_number;
    format!(
        "INSERT INTO charge (member_no, provider_no, category_no, charge_dt, charge_amt, statement_no, charge_code) \
             SELECT member_no, provider_no, category_no, charge_dt + {days}, charge_amt, statement_no, charge_code FROM charge"
    )
}

/// Creates `charge` and inserts the first `rows` rows of the data set.
pub(super) fn load_credit(c: &mut rusqlite::Connection, rows: u64) -> rusqlite::Result<()> {
    c.execute_batch(SQL.credit_schema)?;
    let tx = c.transaction()?;
    {
        let mut stmt = tx.prepare(
            "INSERT INTO charge (member_no, provider_no, category_no, charge_dt, charge_amt, statement_no, charge_code) \
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
        )?;
        for row in credit_rows(rows) {
            stmt.execute(rusqlite::params![
                row.member_no,
                row.provider_no,
                row.category_no,
                row.charge_dt,
                row.charge_amt,
                row.statement_no,
                row.charge_code
            ])?;
        }
    }
    tx.commit()
}
