//! Ownership of databases: dbbench drops only databases it created and marked. A database is
//! dbbench's when its comment (`CREATE DATABASE … COMMENT`, MariaDB 10.5+, read back from
//! `information_schema.SCHEMATA`) starts with `dbbench:owned` and names its owner (host, PID,
//! process start, boot, PID namespace: `util::owner`). Every drop checks it first, and the sweep
//! of an existing server drops the marked databases whose owner is gone.

use super::connection::MariaDbConnection;
use crate::model::error::{Error, Result};
use crate::model::plan::OWNED_PREFIX;
use crate::model::value::Value;
use crate::util::owner::{Liveness, Owner};

/// The start of the comment dbbench puts on its databases.
pub const COMMENT_PREFIX: &str = "dbbench:owned";

/// The comment of a database this process creates, as the body of a SQL string literal: the
/// prefix, then the owner's marker fields, on one line. One line because the server keeps the
/// comment as a `comment=` line of the database's `db.opt`: after a restart it reads back only
/// the first line of a comment, and a mark whose owner was on the next lines named nobody.
pub fn comment() -> String {
    let lines = Owner::this().lines();
    let fields: Vec<&str> = lines.lines().collect();
    let text = format!("{COMMENT_PREFIX} {}", fields.join(" "));
    text.replace('\\', "\\\\").replace('\'', "\\'")
}

/// The owner a database comment names, when it is dbbench's mark (its fields on one line, or
/// one per line as earlier versions wrote them).
pub fn owner_of(comment: &str) -> Option<Owner> {
    let rest = comment.strip_prefix(COMMENT_PREFIX)?;
    let fields = rest.split_whitespace().collect::<Vec<_>>().join("\n");
    fields.contains("owner_pid=").then(|| Owner::parse(&fields))?
}

/// The comment of database `name`, or `None` when there is no such database.
async fn comment_of(admin: &mut MariaDbConnection, name: &str) -> Result<Option<String>> {
    let rows = admin
        .query(
            "SELECT SCHEMA_COMMENT FROM information_schema.SCHEMATA WHERE SCHEMA_NAME = ?",
            &[Value::Text(name.into())],
        )
        .await?;
    match rows.first() {
        Some(row) => Ok(Some(row.get::<Option<String>>(0)?.unwrap_or_default())),
        None => Ok(None),
    }
}

/// Drops `name` when it carries dbbench's mark; nothing when it is not there; refuses
/// ([`Error::NotOwned`]) a database of that name without the mark.
pub async fn drop_owned(admin: &mut MariaDbConnection, name: &str) -> Result<()> {
    let Some(comment) = comment_of(admin, name).await? else {
        return Ok(());
    };
    if owner_of(&comment).is_none() {
        return Err(Error::NotOwned(name.to_string()));
    }
    admin
        .batch(&format!("DROP DATABASE IF EXISTS `{name}`"))
        .await
}

/// Makes room for `name`: a leftover of an earlier run (marked) is dropped, anything else of
/// that name is refused.
pub async fn claim(admin: &mut MariaDbConnection, name: &str) -> Result<()> {
    drop_owned(admin, name).await
}

/// Drops the marked databases whose owner is gone; one line each, removed or not. Those of live
/// runs, of other hosts and PID namespaces, and every unmarked one are left alone.
pub async fn sweep(admin: &mut MariaDbConnection) -> Result<Vec<String>> {
    let pattern = format!("{}%", OWNED_PREFIX.replace('_', "\\_"));
    let rows = admin
        .query(
            "SELECT SCHEMA_NAME, SCHEMA_COMMENT FROM information_schema.SCHEMATA \
             WHERE SCHEMA_NAME LIKE ?",
            &[Value::Text(pattern)],
        )
        .await?;
    let mut lines = Vec::new();
    for row in rows {
        let name: String = row.get(0)?;
        let comment: Option<String> = row.get(1)?;
        let Some(owner) = comment.as_deref().and_then(owner_of) else {
            continue;
        };
        if owner.liveness() != Liveness::Gone {
            continue;
        }
        let who = owner.describe();
        lines.push(match drop_owned(admin, &name).await {
            Ok(()) => format!("mariadb: dropped the database {name} left by {who}, which is gone"),
            Err(e) => format!("mariadb: could not drop the database {name} left by {who}: {e}"),
        });
    }
    Ok(lines)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The comment as the server stores it: the literal's escapes undone.
    fn stored(literal: &str) -> String {
        literal
            .replace("\\n", "\n")
            .replace("\\'", "'")
            .replace("\\\\", "\\")
    }

    #[test]
    fn the_comment_names_this_process_and_reads_back() {
        let owner = owner_of(&stored(&comment())).unwrap();
        assert_eq!(owner, Owner::this());
        assert_eq!(owner.liveness(), Liveness::Alive);
        // All of it on the line a restarted server reads back from `db.opt`.
        let first_line = stored(&comment()).lines().next().unwrap().to_string();
        assert_eq!(owner_of(&first_line), Some(Owner::this()));
    }

    #[test]
    fn a_comment_without_the_prefix_or_an_owner_is_not_a_mark() {
        assert!(owner_of("someone else's database").is_none());
        assert!(owner_of("dbbench:owned").is_none());
        assert!(owner_of("a note\ndbbench:owned\nowner_pid=1").is_none());
        assert!(owner_of("dbbench:owned\nowner_pid=1\n").is_some());
        assert!(owner_of("dbbench:owned owner_host=h owner_pid=1").is_some());
        assert!(owner_of("dbbench:owned note=owner_pid=1").is_none());
    }
}
