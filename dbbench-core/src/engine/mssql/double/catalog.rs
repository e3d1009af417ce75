//! The scripted server's catalog: the databases it holds (created, dropped, marked), the global
//! trace flags, and the settings model, each answer with the document it comes from (SQL Server)
//! or the server it was recorded from (Babelfish 4.2).

use super::{settings, Recorded, Reply};
use crate::model::value::Value;

/// A minimal model of the server's databases, so a lifecycle can run without a rule for every
/// `DB_ID` and marker query: `CREATE DATABASE [x]` / `DROP DATABASE [x]` change it, the property
/// and the marker table are kept per database, and the stale sweep's listing of `sys.databases`
/// shows every `dbbench_` database as ONLINE.
#[derive(Default)]
pub(super) struct Catalog {
    pub(super) next_id: i64,
    pub(super) databases: std::collections::BTreeMap<String, Database>,
    /// Whose answers.
    pub(super) product: Recorded,
    /// Trace flags on globally (`DBCC TRACEON(…, -1)` until `DBCC TRACEOFF(…, -1)`).
    pub(super) trace_flags: std::collections::BTreeSet<u32>,
    /// Server options and database settings, for the settings read-back.
    pub(super) settings: settings::SettingsModel,
}

/// The numbers in the parentheses after `command` (`DBCC TRACEON(3004, 3605, -1)`), the final
/// `-1` (global) left out.
fn flags_after(sql: &str, command: &str) -> Option<Vec<u32>> {
    let start = sql.find(command)? + command.len();
    let inner = &sql[start..];
    let inner = &inner[..inner.find(')')?];
    Some(
        inner
            .split(',')
            .filter_map(|n| n.trim().parse::<i64>().ok())
            .filter(|n| *n > 0)
            .map(|n| n as u32)
            .collect(),
    )
}

#[derive(Default)]
pub(super) struct Database {
    id: i64,
    property: Option<String>,
    table: Option<String>,
}

/// The bracketed name after `marker` in `sql` (`[a]]b]` unescaped).
fn bracketed_after(sql: &str, marker: &str) -> Option<String> {
    let start = sql.find(marker)? + marker.len();
    let rest = &sql[start..];
    let rest = rest.strip_prefix('[')?;
    let mut name = String::new();
    let mut chars = rest.chars().peekable();
    while let Some(c) = chars.next() {
        if c == ']' {
            if chars.peek() == Some(&']') {
                chars.next();
            } else {
                return Some(name);
            }
        }
        name.push(c);
    }
    None
}

/// One `marker` column with the marker, if there is one.
fn marker_rows(marker: Option<String>) -> Reply {
    Reply::rows(
        &["marker"],
        marker.into_iter().map(|m| vec![Value::Text(m)]).collect(),
    )
}

/// The first N'…' literal after `marker` in `sql`, unescaped.
pub(crate) fn literal_after(sql: &str, marker: &str) -> Option<String> {
    let start = sql.find(marker)? + marker.len();
    let rest = sql[start..].trim_start().strip_prefix("N'")?;
    let mut out = String::new();
    let mut chars = rest.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\'' {
            if chars.peek() == Some(&'\'') {
                chars.next();
            } else {
                return Some(out);
            }
        }
        out.push(c);
    }
    None
}

impl Catalog {
    /// The database a catalog statement is about: the bracketed name after `marker` (a
    /// three-part name), else the connection's own.
    fn target(sql: &str, marker: &str, current: &str) -> String {
        bracketed_after(sql, marker).unwrap_or_else(|| current.to_string())
    }

    /// The reply to a catalog statement, `None` for a statement the catalog does not answer.
    /// Each statement dbbench sends is recognised by its text and handled by its own method.
    pub(super) fn answer(&mut self, sql: &str, current: &str) -> Option<Reply> {
        if sql.starts_with("SELECT name, state_desc FROM sys.databases") {
            return Some(self.owned_databases());
        }
        if let Some(reply) = self.trace_flag_statement(sql) {
            return Some(reply);
        }
        // Who created a database of this name: the double has one login, which created every
        // database after its sessions logged in.
        if sql.contains("AS created_by_this_session") {
            let name = literal_after(sql, "d.name =")?;
            return Some(Reply::rows(
                &["database_id", "created_by_this_session"],
                self.databases
                    .get(&name)
                    .map(|d| vec![Value::Int(d.id), Value::Int(1)])
                    .into_iter()
                    .collect(),
            ));
        }
        if let Some(name) = literal_after(sql, "DB_ID(").filter(|_| sql.contains("AS database_id"))
        {
            let id = self
                .databases
                .get(&name)
                .map_or(Value::Null, |d| Value::Int(d.id));
            return Some(Reply::rows(&["database_id"], vec![vec![id]]));
        }
        if sql.contains("sys.sp_addextendedproperty") {
            return self.add_property(sql, current);
        }
        if sql.contains("sys.extended_properties") && !sql.contains("master.sys") {
            let db = Catalog::target(sql, "FROM ", current);
            return Some(marker_rows(
                self.databases.get(&db).and_then(|d| d.property.clone()),
            ));
        }
        if sql.contains("CREATE TABLE") && sql.contains("__dbbench_owner") {
            let db = Catalog::target(sql, "CREATE TABLE ", current);
            let value = literal_after(sql, "VALUES (")?;
            self.databases.get_mut(&db)?.table = Some(value);
            return Some(Reply::Sets(Vec::new()));
        }
        if sql.contains("__dbbench_owner") && sql.starts_with("SELECT") {
            let db = Catalog::target(sql, "FROM ", current);
            return Some(
                match self.databases.get(&db).and_then(|d| d.table.clone()) {
                    Some(m) => marker_rows(Some(m)),
                    None => self.missing_table(&db),
                },
            );
        }
        if let Some(name) = bracketed_after(sql, "CREATE DATABASE ") {
            return Some(self.create_database(name));
        }
        if let Some(name) = bracketed_after(sql, "DROP DATABASE ") {
            return Some(self.drop_database(sql, &name));
        }
        None
    }

    /// The databases dbbench owns, all online.
    fn owned_databases(&self) -> Reply {
        let online = |n: &String| vec![Value::Text(n.clone()), Value::Text("ONLINE".into())];
        Reply::rows(
            &["name", "state_desc"],
            self.databases
                .keys()
                .filter(|n| n.starts_with(crate::model::plan::OWNED_PREFIX))
                .map(online)
                .collect(),
        )
    }

    /// `DBCC TRACEON`, `TRACEOFF` and `TRACESTATUS` over the instance's global flags; `None` for
    /// any other statement.
    fn trace_flag_statement(&mut self, sql: &str) -> Option<Reply> {
        // SQL Server 2016–2022: DBCC TRACESTATUS(f, -1) returns one row per flag with TraceFlag,
        // Status, Global and Session (Global = 1 while the flag is on for the instance): DBCC
        // TRACESTATUS, https://learn.microsoft.com/sql/t-sql/database-console-commands/dbcc-tracestatus-transact-sql.
        if let Some(flags) = flags_after(sql, "DBCC TRACEON(") {
            self.trace_flags.extend(flags);
            return Some(Reply::Sets(Vec::new()));
        }
        if let Some(flags) = flags_after(sql, "DBCC TRACEOFF(") {
            for flag in flags {
                self.trace_flags.remove(&flag);
            }
            return Some(Reply::Sets(Vec::new()));
        }
        let flags = flags_after(sql, "DBCC TRACESTATUS(")?;
        let on = |f: &u32| i64::from(self.trace_flags.contains(f));
        Some(Reply::rows(
            &["TraceFlag", "Status", "Global", "Session"],
            flags
                .iter()
                .map(|f| {
                    vec![
                        Value::Int(i64::from(*f)),
                        Value::Int(on(f)),
                        Value::Int(on(f)),
                        Value::Int(0),
                    ]
                })
                .collect(),
        ))
    }

    /// `sp_addextendedproperty`: the ownership marker set on a database, where the product
    /// runs the call.
    fn add_property(&mut self, sql: &str, current: &str) -> Option<Reply> {
        let three_part = bracketed_after(sql, "EXEC ");
        let value = literal_after(sql, "@value =")?;
        // Recorded on Babelfish 4.2: a three-part call from master runs in master.
        let db = match (three_part, self.product) {
            (Some(_), Recorded::Babelfish42) => return Some(Reply::Sets(Vec::new())),
            (Some(db), Recorded::SqlServer2022) => db,
            (None, _) => current.to_string(),
        };
        if db != "master" {
            self.databases.get_mut(&db)?.property = Some(value);
        }
        Some(Reply::Sets(Vec::new()))
    }

    /// `CREATE DATABASE`: a new database with the next id, or error 1801 for a name in use
    /// (Database Engine errors, https://learn.microsoft.com/sql/relational-databases/errors-events/database-engine-events-and-errors:
    /// "Database '%.*ls' already exists. Choose a different database name."). Ids start above the
    /// four system databases and the resource database, as on a fresh instance.
    fn create_database(&mut self, name: String) -> Reply {
        if self.databases.contains_key(&name) {
            return Reply::error(1801, &format!("Database '{name}' already exists."));
        }
        self.next_id += 1;
        let id = 6 + self.next_id;
        self.databases.insert(
            name,
            Database {
                id,
                ..Database::default()
            },
        );
        Reply::Sets(Vec::new())
    }

    /// `DROP DATABASE`, refused on Babelfish when it first sets the database single-user.
    fn drop_database(&mut self, sql: &str, name: &str) -> Reply {
        if self.product == Recorded::Babelfish42 && sql.contains("SET SINGLE_USER") {
            return Reply::error(
                33557097,
                "'ALTER DATABASE SET SINGLE_USER' is not currently supported in Babelfish",
            );
        }
        self.databases.remove(name);
        Reply::Sets(Vec::new())
    }

    /// A query of the marker table in `db`, which has none: SQL Server's error 208 "Invalid object
    /// name '%.*ls'." (Database Engine errors, as above); Babelfish's recorded 33557097.
    fn missing_table(&self, db: &str) -> Reply {
        match self.product {
            Recorded::SqlServer2022 => {
                Reply::error(208, "Invalid object name 'dbo.__dbbench_owner'.")
            }
            Recorded::Babelfish42 => Reply::error(
                33557097,
                &format!("relation \"{db}_dbo.__dbbench_owner\" does not exist"),
            ),
        }
    }
}
