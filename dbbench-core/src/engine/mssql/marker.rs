//! The ownership marker: how dbbench proves, before any `DROP DATABASE`, that a database is one it
//! created. The marker is the extended property `dbbench_owner` on the database itself, added
//! with `sys.sp_addextendedproperty` through a connection to the new database, and read back the
//! same way. Everything goes through a connection to that database, never through three-part
//! names from master: a server that speaks TDS may run a three-part procedure in the current
//! database instead (Babelfish put the property on master, so teardown later refused to drop the
//! database and the next run found a stale property on master), and cross-database DDL is
//! refused on Babelfish and Azure SQL Database alike. When the property cannot be held there,
//! dbbench falls back to a marker table it creates inside the database (`dbo.__dbbench_owner`,
//! with host, pid and start time) and reads that back. When neither can be verified the database
//! is dropped (this process has just created it, under a `dbbench_` name) and the cell is
//! refused before any work.
//!
//! The marker text names its owner twice: in words for the DBA who finds the database
//! (`on <host> (pid <pid>, started <unix seconds>)`), and as util::owner's fields
//! (`owner_host=… owner_pid=… owner_start=…`, the start in clock ticks since boot) so that a later
//! dbbench process decides whether the owner still runs exactly as it does for the embedded
//! engine's directories ([`owner_of`], used by the sweep of stale databases). PIDs are reused, and
//! the seconds in the words are when the backend connected, not the process's start, so they
//! cannot tell a reused PID apart.

use super::errors::{self, NO_ACCESS};
use super::tsql::{ident, literal};
use super::MssqlConnection;
use crate::model::error::{Error, Result};
use crate::util::owner::Owner;

/// The name of the extended property that marks a database as created by dbbench.
pub const OWNER_PROPERTY: &str = "dbbench_owner";

/// The marker table used where the property cannot be held inside the database.
pub const MARKER_TABLE: &str = "__dbbench_owner";

/// How every marker text starts.
const HEAD: &str = "created by dbbench ";

/// The marker text of this process: unique per host, process and start time. `host` and
/// `started_unix_s` are the words for people; `owner` (this process, `Owner::this`) gives the
/// fields liveness is decided on, on one line so that the property reads well in a grid.
pub fn marker_text(host: &str, started_unix_s: u64, owner: &Owner) -> String {
    let mut lines = owner.lines();
    // Boot id, machine id and PID namespace: what tells a container of the same host name
    // apart (finding B6; see `whose`).
    if *owner == crate::util::owner::Owner::this() {
        lines.push_str(&super::whose::Whose::this().marker_fields());
    }
    // `Owner::lines` and `Whose::marker_fields` both name the boot and the namespace: once each.
    let mut fields: Vec<&str> = Vec::new();
    for field in lines.split_whitespace() {
        if !fields.contains(&field) {
            fields.push(field);
        }
    }
    format!(
        "{HEAD}{} on {host} (pid {}, started {started_unix_s}) {}",
        env!("CARGO_PKG_VERSION"),
        owner.pid,
        fields.join(" ")
    )
}

/// The owner a marker text names, or `None` when it is not a dbbench marker or names no owner
/// dbbench can read (then nothing is ever dropped on its account). Current markers carry
/// `owner_host=… owner_pid=… [owner_start=…]`. Markers written before those fields say only
/// `on <host> (pid <pid>, started <unix seconds>)`: their owner has no start time, which
/// util::owner takes as alive while any process of that PID runs on that host.
pub fn owner_of(marker: &str) -> Option<Owner> {
    let marker = marker.trim();
    let rest = marker.strip_prefix(HEAD)?;
    let field = |key: &str| marker.split_whitespace().find_map(|w| w.strip_prefix(key));
    if let Some(pid) = field("owner_pid=") {
        let start = match field("owner_start=") {
            // A start that does not parse is no reason to fall back to the PID alone.
            Some(start) => Some(start.parse().ok()?),
            None => None,
        };
        return Some(Owner {
            host: field("owner_host=").filter(|h| !h.is_empty())?.to_string(),
            machine: field("owner_machine=").map(str::to_string),
            pid: pid.parse().ok()?,
            start,
            boot: field("owner_boot=").map(str::to_string),
            pid_ns: field("owner_pidns=").and_then(|n| n.parse().ok()),
        });
    }
    let (_, named) = rest.split_once(" on ")?;
    let (host, after) = named.split_once(" (pid ")?;
    let digits: String = after.chars().take_while(char::is_ascii_digit).collect();
    if host.is_empty() || host.contains(char::is_whitespace) {
        return None;
    }
    Some(Owner {
        host: host.to_string(),
        machine: None,
        pid: digits.parse().ok()?,
        start: None,
        boot: None,
        pid_ns: None,
    })
}

/// Adds the property to database `db` with a three-part procedure name, from another database
/// (tests that stage a leftover on SQL Server use it; dbbench itself marks from inside).
pub fn add_property_sql(db: &str, marker: &str) -> String {
    format!(
        "EXEC {}.sys.sp_addextendedproperty @name = {}, @value = {};",
        ident(db),
        literal(OWNER_PROPERTY),
        literal(marker)
    )
}

/// Adds the property to the current database (a connection to the new database).
pub fn add_property_here_sql(marker: &str) -> String {
    format!(
        "EXEC sys.sp_addextendedproperty @name = {}, @value = {};",
        literal(OWNER_PROPERTY),
        literal(marker)
    )
}

/// Reads the property of the current database (no row when it has none).
pub fn read_property_sql() -> String {
    format!(
        "SELECT CAST(value AS nvarchar(4000)) AS marker FROM sys.extended_properties \
         WHERE class = 0 AND name = {};",
        literal(OWNER_PROPERTY)
    )
}

/// Removes a property this process put on master by mistake (a server that ran the procedure
/// in master): only the exact marker of this process is removed.
pub fn stray_property_cleanup_sql(marker: &str) -> String {
    format!(
        "IF EXISTS (SELECT 1 FROM master.sys.extended_properties WHERE class = 0 AND name = {0} \
         AND CAST(value AS nvarchar(4000)) = {1}) EXEC master.sys.sp_dropextendedproperty @name = {0};",
        literal(OWNER_PROPERTY),
        literal(marker)
    )
}

/// Creates the marker table in the current database (a connection to the new database).
pub fn add_table_sql(marker: &str, host: &str, pid: u32, started: u64) -> String {
    let table = format!("dbo.{}", ident(MARKER_TABLE));
    format!(
        "CREATE TABLE {table} (marker nvarchar(4000) NOT NULL, host nvarchar(256) NOT NULL, \
         pid int NOT NULL, started_unix_s bigint NOT NULL);\n\
         INSERT INTO {table} (marker, host, pid, started_unix_s) VALUES ({}, {}, {pid}, {started});",
        literal(marker),
        literal(host)
    )
}

/// Reads the marker table of the current database (an error when it does not exist).
pub fn read_table_sql() -> String {
    format!(
        "SELECT CAST(marker AS nvarchar(4000)) AS marker FROM dbo.{};",
        ident(MARKER_TABLE)
    )
}

/// Where the marker of a database was found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Held {
    /// The extended property inside the database.
    Property(String),
    /// The marker table inside the database.
    Table(String),
}

impl Held {
    /// The marker text, wherever it is held.
    pub fn text(&self) -> &str {
        match self {
            Held::Property(m) | Held::Table(m) => m,
        }
    }
}

/// The first marker value in `rows`, if any.
fn first_marker(rows: &[crate::model::value::Row]) -> Option<String> {
    rows.first()
        .and_then(|r| r.get::<Option<String>>(0).ok().flatten())
        .map(|m| m.trim().to_string())
        .filter(|m| !m.is_empty())
}

/// A connection to database `db` for reading or writing its marker, from the settings of `conn`.
async fn inside(conn: &MssqlConnection, db: &str) -> Result<MssqlConnection> {
    conn.settings().connect(Some(db)).await
}

/// The marker of existing database `db`, looked up inside it: the property, else the table.
/// `Err` carries what each lookup said, for the refusal.
pub async fn find(conn: &mut MssqlConnection, db: &str) -> std::result::Result<Held, String> {
    let mut here = inside(conn, db)
        .await
        .map_err(|e| format!("connecting to {db}: {e}"))?;
    let property = match here.query(&read_property_sql(), &[]).await {
        Ok(rows) => match first_marker(&rows) {
            Some(m) => return Ok(Held::Property(m)),
            None => "no dbbench_owner property inside the database".to_string(),
        },
        Err(e) => e.to_string(),
    };
    let table = match here.query(&read_table_sql(), &[]).await {
        Ok(rows) => match first_marker(&rows) {
            Some(m) => return Ok(Held::Table(m)),
            None => format!("dbo.{MARKER_TABLE} is empty"),
        },
        Err(e) => e.to_string(),
    };
    Err(format!("property: {property}; table: {table}"))
}

/// The marker of existing database `db` for the sweep of stale databases, which must tell "no
/// marker" (`Ok(None)`: the property is absent and the table does not exist) from "cannot look"
/// (`Err`): a login without a user in that database cannot connect to it (916, 4060), so nothing
/// inside is tried.
pub async fn read(conn: &mut MssqlConnection, db: &str) -> Result<Option<Held>> {
    let mut here = inside(conn, db).await?;
    let property = match here.query(&read_property_sql(), &[]).await {
        Ok(rows) => match first_marker(&rows) {
            Some(m) => return Ok(Some(Held::Property(m))),
            None => None,
        },
        Err(e) if errors::code_of(&e) == Some(NO_ACCESS) => return Err(e),
        // A server without the view may still hold the table.
        Err(e) => Some(e),
    };
    match here.query(&read_table_sql(), &[]).await {
        Ok(rows) => {
            if let Some(m) = first_marker(&rows) {
                return Ok(Some(Held::Table(m)));
            }
        }
        Err(e) if !errors::is_missing_object(&e) => return Err(property.unwrap_or(e)),
        Err(_) => {}
    }
    property.map_or(Ok(None), Err)
}

/// Who marks the database: the marker text and what the marker table records.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Marking {
    /// The database.
    pub db: String,
    /// The marker text ([`marker_text`]).
    pub marker: String,
    /// The host dbbench runs on.
    pub host: String,
    /// dbbench's process id.
    pub pid: u32,
    /// When the backend connected, seconds since the Unix epoch (for people: liveness is
    /// decided on the start ticks in the marker text).
    pub started: u64,
}

/// Marks the database `db` that this process has just created, through `here` (a connection to
/// it), and proves the mark is inside it; `master` removes a property that landed there instead.
/// Returns where it is held; `Err` when no marker could be verified (the caller drops the
/// database it just created and refuses the cell).
pub async fn mark(
    here: &mut MssqlConnection,
    master: &mut MssqlConnection,
    owner: &Marking,
) -> Result<Held> {
    let marker = owner.marker.as_str();
    let added = here.batch(&add_property_here_sql(marker)).await;
    let accepted = added.is_ok();
    let property = match here.query(&read_property_sql(), &[]).await {
        Ok(rows) if first_marker(&rows).as_deref() == Some(marker) => {
            return Ok(Held::Property(marker.to_string()))
        }
        Ok(_) => match added {
            Ok(()) => "sp_addextendedproperty was accepted, but the property is not inside the \
                       new database"
                .to_string(),
            Err(e) => e.to_string(),
        },
        Err(e) => e.to_string(),
    };
    // The property may have landed on master: remove it there, or the next run would find it.
    if accepted {
        let _ = master.batch(&stray_property_cleanup_sql(marker)).await;
    }
    let created = here
        .batch(&add_table_sql(
            marker,
            &owner.host,
            owner.pid,
            owner.started,
        ))
        .await;
    let table = match here.query(&read_table_sql(), &[]).await {
        Ok(rows) if first_marker(&rows).as_deref() == Some(marker) => {
            return Ok(Held::Table(marker.to_string()))
        }
        Ok(_) => "the marker table holds no marker of this run".to_string(),
        Err(e) => match created {
            Err(c) => c.to_string(),
            Ok(()) => e.to_string(),
        },
    };
    Err(Error::Unsupported {
        option: "database",
        backend: "mssql",
        reason: format!(
            "this server cannot hold dbbench's ownership marker inside the new database {} \
             (property: {property}; table: {table}), so dbbench could not later prove the \
             database is its own before dropping it; it runs nothing on this server",
            owner.db
        ),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bench_host(start: Option<u64>) -> Owner {
        Owner {
            host: "bench-host".into(),
            machine: None,
            pid: 4242,
            start,
            boot: None,
            pid_ns: None,
        }
    }

    #[test]
    fn the_marker_names_its_owner_in_words_and_in_fields() {
        let marker = marker_text("bench-host", 1_780_000_000, &bench_host(Some(987_654)));
        assert_eq!(
            marker,
            format!(
                "created by dbbench {} on bench-host (pid 4242, started 1780000000) \
                 owner_host=bench-host owner_pid=4242 owner_start=987654",
                env!("CARGO_PKG_VERSION")
            )
        );
        assert_eq!(owner_of(&marker), Some(bench_host(Some(987_654))));
        // Without /proc there is no start: the marker says so by leaving the field out.
        let no_start = marker_text("bench-host", 1_780_000_000, &bench_host(None));
        assert!(!no_start.contains("owner_start"), "{no_start}");
        assert_eq!(owner_of(&no_start), Some(bench_host(None)));
        // This process round-trips and is alive.
        let me = Owner::this();
        let mine = owner_of(&marker_text(&me.host, 1, &me)).unwrap();
        assert_eq!(mine, me);
        assert_eq!(mine.liveness(), crate::util::owner::Liveness::Alive);
    }

    #[test]
    fn older_markers_name_host_and_pid_but_no_comparable_start() {
        let old = "created by dbbench 0.1.0 on bench-host (pid 4242, started 1780000000)";
        assert_eq!(owner_of(old), Some(bench_host(None)));
        // What dbbench cannot read names no owner, so nothing is dropped on its account.
        for text in [
            "",
            "made by hand",
            "created by dbbench 0.1.0 on  (pid 4242, started 1)",
            "created by dbbench 0.1.0 on bench-host (pid x)",
            "created by dbbench 0.2.0 owner_host=bench-host owner_pid=4242 owner_start=soon",
            "created by dbbench 0.2.0 owner_host= owner_pid=4242",
            "owner_host=bench-host owner_pid=4242 owner_start=1",
        ] {
            assert_eq!(owner_of(text), None, "{text}");
        }
    }

    #[test]
    fn marker_statements() {
        insta::assert_snapshot!([
            add_property_here_sql("m"),
            read_property_sql(),
            stray_property_cleanup_sql("m"),
            add_table_sql("m", "bench-host", 4242, 1_780_000_000),
            read_table_sql(),
        ]
        .join("\n"));
    }
}
