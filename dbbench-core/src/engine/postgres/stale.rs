//! The sweep of an existing PostgreSQL server (`DBBENCH_POSTGRES`): the `dbbench_` databases a
//! run could not drop (its server stopped answering, it was killed) keep their markers; at the
//! start of each benchmark, those whose owner is gone are dropped, and the console says so.
//!
//! Why the owner is read from the comment: it is on the database itself (`shobj_description`),
//! readable from the maintenance database without connecting to each one; the drop then checks
//! both markers (`marker::drop_owned`), as every dbbench drop does. An owner on another host, or
//! one that still runs, is left alone. (Managed clusters are swept as a whole when one starts.)

use super::marker::{drop_owned, COMMENT_PREFIX};
use super::settings::PgSettings;
use crate::model::plan::OWNED_PREFIX;
use crate::model::value::Value;
use crate::util::owner::{Liveness, Owner};

/// The owner named by a database comment `dbbench:owned pid=… host=… start=… boot=… pidns=…`
/// (an owner in another PID namespace is `Elsewhere`, one of an earlier boot is gone:
/// `util::owner`).
pub(super) fn owner_of(comment: &str) -> Option<Owner> {
    let rest = comment.strip_prefix(COMMENT_PREFIX)?;
    let field = |key: &str| {
        rest.split_whitespace()
            .find_map(|word| word.strip_prefix(key))
            .map(str::to_string)
    };
    Some(Owner {
        pid: field("pid=")?.parse().ok()?,
        host: field("host=")?,
        start: field("start=").and_then(|s| s.parse().ok()),
        // "unknown" (and comments written before these were) leaves them unknown.
        boot: field("boot=").filter(|b| b != "unknown"),
        machine: field("machine=").filter(|m| m != "unknown"),
        pid_ns: field("pidns=").and_then(|s| s.parse().ok()),
    })
}

/// Drops the marked databases whose owner is gone; one line each, removed or not.
pub(super) async fn sweep(settings: &PgSettings, admin_db: &str) -> Vec<String> {
    let mut admin = match settings.connect(admin_db).await {
        Ok(admin) => admin,
        Err(e) => {
            return vec![format!(
                "postgres: could not look for databases left by earlier runs: {e}"
            )]
        }
    };
    let pattern = format!("{}%", OWNED_PREFIX.replace('_', "\\_"));
    let rows = match admin
        .query(
            "SELECT datname, coalesce(shobj_description(oid, 'pg_database'), '') \
             FROM pg_database WHERE datname LIKE $1 ORDER BY datname",
            &[Value::Text(pattern)],
        )
        .await
    {
        Ok(rows) => rows,
        Err(e) => {
            return vec![format!(
                "postgres: could not look for databases left by earlier runs: {e}"
            )]
        }
    };
    let mut lines = Vec::new();
    for row in rows {
        let (Ok(name), Ok(comment)) = (row.get::<String>(0), row.get::<String>(1)) else {
            continue;
        };
        let Some(owner) = owner_of(&comment) else {
            continue;
        };
        if owner.liveness() != Liveness::Gone {
            continue;
        }
        let who = owner.describe();
        // Read again just before the drop: a run that took the name since (its owner gone,
        // the name claimed anew) has marked it as its own.
        match super::marker::comment_of(&mut admin, &name).await {
            Ok(Some(now)) if now == comment => {}
            _ => continue,
        }
        lines.push(match drop_owned(settings, &mut admin, &name).await {
            Ok(()) => format!("postgres: removed database {name} left by {who}, which is gone"),
            Err(e) => format!("postgres: could not remove database {name} left by {who}: {e}"),
        });
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_comment_names_the_owner() {
        let owner = owner_of("dbbench:owned pid=5353 host=vm start=464643").unwrap();
        assert_eq!(owner.pid, 5353);
        assert_eq!(owner.host, "vm");
        assert_eq!(owner.start, Some(464643));
        let old = owner_of("dbbench:owned pid=7 host=vm start=unknown").unwrap();
        assert_eq!((old.start, old.boot, old.pid_ns), (None, None, None));
        let full =
            owner_of("dbbench:owned pid=7 host=vm start=9 boot=b-1 pidns=4026531836").unwrap();
        assert_eq!(full.boot.as_deref(), Some("b-1"));
        assert_eq!(full.pid_ns, Some(4026531836));
        assert!(owner_of("someone else's database").is_none());
        assert!(owner_of("dbbench:owned host=vm").is_none());
    }

    #[test]
    fn the_comment_dbbench_writes_is_read_back_as_this_process() {
        let sql = super::super::marker::comment_sql("dbbench_x");
        let comment = sql.split('\'').nth(1).unwrap();
        let owner = owner_of(comment).unwrap();
        assert_eq!(owner, Owner::this());
        assert_eq!(owner.liveness(), Liveness::Alive);
    }
}
