//! Ownership of databases: dbbench drops only databases it created and marked. A database is
//! dbbench's when its comment (`CREATE DATABASE … COMMENT`, MariaDB 10.5+, read back from
//! `information_schema.SCHEMATA`) starts with `dbbench:owned` and names its owner (host, PID,
//! process start, boot, PID namespace: `util::owner`). Every drop checks it first, and the sweep
//! of an existing server drops the marked databases whose owner is gone.

use super::connection::MariaDbConnection;
use super::errors;
use crate::model::error::{Error, Result};
use crate::model::plan::OWNED_PREFIX;
use crate::model::value::Value;
use crate::util::deadline::Deadline;
use crate::util::owner::{Liveness, Owner};

/// The start of the comment dbbench puts on its databases.
pub const COMMENT_PREFIX: &str = "dbbench:owned";

/// The comment of a database this process creates, as the body of a SQL string literal: the
/// prefix, then the owner's marker fields, on one line. One line because the server keeps the
/// comment as a `comment=` line of the database's `db.opt`: after a restart it reads back only
/// the first line of a comment, and a mark whose owner was on the next lines named nobody.
///
/// The literal holds no backslash (a host name with one gets `/`) and doubles its quotes, so it
/// reads the same whether or not the server's `sql_mode` has `NO_BACKSLASH_ESCAPES`.
pub fn comment() -> String {
    literal(&comment_text(&Owner::this()))
}

/// The comment naming `owner`, as the server keeps it.
fn comment_text(owner: &Owner) -> String {
    let lines = owner.lines();
    let fields: Vec<&str> = lines.lines().collect();
    format!("{COMMENT_PREFIX} {}", fields.join(" "))
}

/// `text` as the body of a string literal in any `sql_mode`: quotes doubled, no backslash.
fn literal(text: &str) -> String {
    text.replace('\\', "/").replace('\'', "''")
}

/// `name` as a quoted identifier: backticks around it, a backtick in it doubled.
pub fn quote_ident(name: &str) -> String {
    format!("`{}`", name.replace('`', "``"))
}

/// How long a `DROP DATABASE` waits for another session's metadata lock before failing, in
/// seconds: the server's default (`lock_wait_timeout`, a year) would hang every later run at its
/// start behind a DBA's open transaction on a leftover table. Half the teardown's deadline, 30 s
/// at most: the drop gives up, and says what holds the database, before the deadline ends the
/// whole sweep or teardown with a sentence that can name neither.
fn drop_lock_wait_s() -> u64 {
    let teardown = Deadline::Teardown
        .limit()
        .unwrap_or(Deadline::Teardown.default_limit());
    (teardown.as_secs() / 2).clamp(1, 30)
}

/// Why a drop that waited `waited_s` for a lock gave up, in words: another session
/// holds a lock on it, and the sessions with a transaction open now (one of them holds it), as
/// far as this account may see them (`PROCESS` shows other users' sessions).
async fn held(admin: &mut MariaDbConnection, waited_s: u64) -> String {
    let rows = admin
        .query(
            "SELECT CAST(p.ID AS SIGNED), p.USER, p.HOST,              CAST(TIMESTAMPDIFF(SECOND, t.trx_started, NOW()) AS SIGNED)              FROM information_schema.INNODB_TRX t              JOIN information_schema.PROCESSLIST p ON p.ID = t.trx_mysql_thread_id              WHERE p.ID <> CONNECTION_ID() ORDER BY t.trx_started",
            &[],
        )
        .await
        .unwrap_or_default();
    let sessions: Vec<String> = rows
        .iter()
        .filter_map(|row| {
            let id: i64 = row.get(0).ok()?;
            let user: String = row.get(1).ok()?;
            let host: String = row.get(2).ok()?;
            let open: i64 = row.get(3).ok()?;
            Some(format!("session {id} of {user}@{host}, open {open} s"))
        })
        .collect();
    let who = if sessions.is_empty() {
        String::new()
    } else {
        format!(
            " (sessions with a transaction open: {})",
            sessions.join("; ")
        )
    };
    format!(
        "another session holds a lock on it{who}; the drop gave up after waiting {waited_s} s \
         (lock_wait_timeout) and left it"
    )
}

/// The owner a database comment names, when it is dbbench's mark (its fields on one line, or
/// one per line as earlier versions wrote them).
pub fn owner_of(comment: &str) -> Option<Owner> {
    let rest = comment.strip_prefix(COMMENT_PREFIX)?;
    let fields = rest.split_whitespace().collect::<Vec<_>>().join("\n");
    fields
        .contains("owner_pid=")
        .then(|| Owner::parse(&fields))?
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
    drop_marked(admin, name, None).await
}

/// Drops `name` when it carries dbbench's mark and, when `expected` is given, that very
/// comment (read again just before the drop: a sweep's leftover may have been claimed anew).
async fn drop_marked(
    admin: &mut MariaDbConnection,
    name: &str,
    expected: Option<&str>,
) -> Result<()> {
    let Some(comment) = comment_of(admin, name).await? else {
        return Ok(());
    };
    if owner_of(&comment).is_none() {
        return Err(Error::NotOwned(name.to_string()));
    }
    if expected.is_some_and(|e| e != comment) {
        return Err(Error::msg(format!(
            "the database {name} was marked anew while being swept; left alone"
        )));
    }
    let wait = drop_lock_wait_s();
    let dropped = admin
        .batch(&format!(
            "SET SESSION lock_wait_timeout = {wait}; DROP DATABASE IF EXISTS {}",
            quote_ident(name)
        ))
        .await;
    match dropped {
        Err(e) if errors::code(&e) == Some(errors::LOCK_WAIT_TIMEOUT) => {
            Err(Error::msg(held(admin, wait).await))
        }
        other => other,
    }
}

/// Makes room for `name`: a leftover of an earlier run (marked, its owner gone) is dropped; one
/// whose owner may still run (the same name from another host or container of the same PID)
/// and anything unmarked are refused.
pub async fn claim(admin: &mut MariaDbConnection, name: &str) -> Result<()> {
    if let Some(owner) = comment_of(admin, name).await?.as_deref().and_then(owner_of) {
        owner
            .may_take(&format!("a database named {name}"))
            .map_err(Error::msg)?;
    }
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
        let expected = comment.unwrap_or_default();
        lines.push(match drop_marked(admin, &name, Some(&expected)).await {
            Ok(()) => format!("mariadb: dropped the database {name} left by {who}, which is gone"),
            Err(e) => format!("mariadb: could not drop the database {name} left by {who}: {e}"),
        });
    }
    Ok(lines)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The comment as the server stores it: the literal's doubled quotes undone (the same in
    /// every `sql_mode`: the literal holds no backslash).
    fn stored(literal: &str) -> String {
        assert!(!literal.contains('\\'), "{literal}");
        literal.replace("''", "'")
    }

    #[test]
    fn names_and_comments_cannot_leave_their_quotes() {
        assert_eq!(quote_ident("a`b"), "`a``b`");
        let odd = Owner {
            host: "h'\\x".into(),
            ..Owner::this()
        };
        let text = literal(&comment_text(&odd));
        assert!(text.contains("owner_host=h''/x"), "{text}");
        assert!(!text.replace("''", "").contains('\''), "{text}");
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
