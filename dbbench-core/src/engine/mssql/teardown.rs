//! Dropping a database dbbench owns. Only what was set up is torn down, in statements the product
//! has ([`Dropping`]). Each step stands on its own: a growth session the repetition left running
//! is stopped and its file removed, then `SET SINGLE_USER WITH ROLLBACK IMMEDIATE` and `DROP
//! DATABASE` go in ONE batch (in two batches another connection could take the single user slot
//! in between and leave the database single-user) where the product has `SET SINGLE_USER`, a
//! plain `DROP DATABASE` follows if the database is still there (a missing permission) or is the
//! only statement (Azure SQL Database, Babelfish), and the drop is verified with `DB_ID`. A failed step never stops the next; every error is reported together,
//! the drop's first. The marker is checked before any of it; a stale database's marker must
//! still be exactly the one the sweep judged ([`drop_if_marked`]).

use super::errors;
use super::evidence::growth_events;
use super::identity::Product;
use super::marker;
use super::provision::exists_sql;
use super::tsql::ident;
use super::MssqlConnection;
use crate::model::error::{Error, Result};

/// The batch that takes the database from every other session and drops it.
pub fn single_user_and_drop_sql(name: &str) -> String {
    let db = ident(name);
    format!("ALTER DATABASE {db} SET SINGLE_USER WITH ROLLBACK IMMEDIATE;\nDROP DATABASE {db};")
}

/// The drop alone, for servers where the batch above failed.
pub fn plain_drop_sql(name: &str) -> String {
    format!(
        "IF DB_ID({}) IS NOT NULL DROP DATABASE {};",
        super::tsql::literal(name),
        ident(name)
    )
}

/// What a drop sends besides `DROP DATABASE`: decided by the product and by what the repetition
/// set up, so that no statement goes to a server that lacks it or to clean what never existed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Dropping {
    /// `SET SINGLE_USER WITH ROLLBACK IMMEDIATE` in the drop's batch.
    pub single_user: bool,
    /// Look for the database's growth session (`dbbench_growth_<db>`) and remove it.
    pub growth_session: bool,
}

impl Dropping {
    /// A database of unknown history on `product` (a leftover of a killed run, which may have
    /// left its growth session where the product has them).
    pub fn leftover(product: &Product) -> Dropping {
        Dropping {
            single_user: product.has_single_user(),
            growth_session: product.has_server_event_sessions(),
        }
    }

    /// A database this process made on `product`, whose growth session is running only when
    /// `growth_session` says so (a window opened and never closed).
    pub fn own(product: &Product, growth_session: bool) -> Dropping {
        Dropping {
            single_user: product.has_single_user(),
            growth_session,
        }
    }
}

/// Whether database `name` still exists.
pub(super) async fn exists(conn: &mut MssqlConnection, name: &str) -> Result<bool> {
    let rows = conn.query(&exists_sql(name), &[]).await?;
    Ok(rows
        .first()
        .map(|r| r.get::<Option<i64>>(0))
        .transpose()?
        .flatten()
        .is_some())
}

/// Drops database `name` after finding its marker inside it (`require_marker` is false only for
/// a database this connection has just created and could not mark).
pub async fn drop_owned(
    conn: &mut MssqlConnection,
    name: &str,
    require_marker: bool,
    how: Dropping,
) -> Result<()> {
    if require_marker {
        if let Err(why) = marker::find(conn, name).await {
            return Err(Error::msg(format!(
                "{} ({why})",
                Error::NotOwned(name.to_string())
            )));
        }
    }
    remove(conn, name, how).await
}

/// What became of a stale database handed to [`drop_if_marked`].
#[derive(Debug)]
pub enum StaleDrop {
    /// Its marker was no longer the one judged: nothing was sent to drop it. Says why.
    Refused(String),
    /// The drop ran, with this outcome.
    Ran(Result<()>),
}

/// Drops stale database `name` only if its marker, read again right before the drop, is still
/// exactly `marker`, the one the sweep read and judged (its owner gone).
pub async fn drop_if_marked(
    conn: &mut MssqlConnection,
    name: &str,
    marker: &str,
    how: Dropping,
) -> StaleDrop {
    match marker::find(conn, name).await {
        Ok(held) if held.text() == marker => StaleDrop::Ran(remove(conn, name, how).await),
        Ok(held) => StaleDrop::Refused(format!(
            "its ownership marker changed to `{}` since it was read",
            held.text()
        )),
        Err(why) => StaleDrop::Refused(format!(
            "its ownership marker is gone since it was read ({why})"
        )),
    }
}

/// The plain drop. Where there is no `SET SINGLE_USER … ROLLBACK IMMEDIATE` to end other sessions,
/// a connection of the repetition that the server is still closing makes the drop fail
/// (Babelfish: "Cannot drop database … because it is currently in use in another session"): the
/// drop is tried again for up to 2 s.
async fn plain_drop(conn: &mut MssqlConnection, name: &str) -> Result<()> {
    let mut tries = 0;
    loop {
        match conn.batch(&plain_drop_sql(name)).await {
            Err(e)
                if errors::server_error(&e)
                    .is_some_and(|(_, message)| message.contains("currently in use"))
                    && tries < 10 =>
            {
                tries += 1;
                tokio::time::sleep(std::time::Duration::from_millis(200)).await;
            }
            other => return other,
        }
    }
}

/// The drop itself, each step standing alone (see the module's documentation).
async fn remove(conn: &mut MssqlConnection, name: &str, how: Dropping) -> Result<()> {
    let mut drop_errors = Vec::new();
    let mut other_errors = Vec::new();
    if how.growth_session {
        other_errors.extend(
            growth_events::stop_and_clean(conn, &growth_events::session_name(name))
                .await
                .into_iter()
                .map(|e| format!("stopping the growth session: {e}")),
        );
    }
    let batch = if how.single_user {
        conn.batch(&single_user_and_drop_sql(name)).await
    } else {
        plain_drop(conn, name).await
    };
    match exists(conn, name).await {
        // Dropped and verified: a failed SET SINGLE_USER in the batch did not matter.
        Ok(false) => {
            if let (true, Err(e)) = (how.single_user, batch) {
                crate::util::console::say(&format!(
                    "dbbench › mssql: {name} was dropped; SET SINGLE_USER had failed: {e}"
                ));
            }
        }
        Ok(true) if how.single_user => {
            let plain = conn.batch(&plain_drop_sql(name)).await;
            match exists(conn, name).await {
                // The plain drop did it: the batch's failure (SET SINGLE_USER unsupported or
                // denied) did not matter.
                Ok(false) => {}
                Ok(true) => {
                    if let Err(e) = batch {
                        drop_errors.push(format!("SET SINGLE_USER + DROP DATABASE: {e}"));
                    }
                    if let Err(e) = plain {
                        drop_errors.push(format!("DROP DATABASE: {e}"));
                    }
                    drop_errors.push(format!(
                        "database {name} still exists after DROP DATABASE (DB_ID is not NULL); \
                         drop it by hand"
                    ));
                }
                Err(e) => drop_errors.push(format!("verifying the drop: {e}")),
            }
        }
        Ok(true) => {
            if let Err(e) = batch {
                drop_errors.push(format!("DROP DATABASE: {e}"));
            }
            drop_errors.push(format!(
                "database {name} still exists after DROP DATABASE (DB_ID is not NULL); drop it \
                 by hand"
            ));
        }
        Err(e) => other_errors.push(format!("verifying the drop: {e}")),
    }
    if drop_errors.is_empty() && other_errors.is_empty() {
        return Ok(());
    }
    drop_errors.extend(other_errors);
    Err(Error::msg(format!(
        "dropping database {name}: {}",
        drop_errors.join("; ")
    )))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn drop_statements() {
        insta::assert_snapshot!(format!(
            "{}\n{}\n{}",
            single_user_and_drop_sql("dbbench_a"),
            plain_drop_sql("dbbench_a"),
            exists_sql("dbbench_a")
        ));
    }
}
