//! The SQL dialect a backend speaks, so a benchmark body can choose its SQL.
//!
//! A dialect is a name, not a variant of a closed enum: a new backend defines its dialect in its
//! own folder (`Dialect::named("mysql")`) and nothing here changes. The three dialects of the
//! backends that came first keep their names as constants, so bodies written against the
//! enum this once was (`Dialect::TSql`, in expressions and in `match` patterns) compile as
//! they did.

use std::fmt;

/// The SQL dialect of a backend, so a body can choose its SQL.
///
/// A new backend may bring a new dialect, so a `match` on it needs a `_` arm: SQL that is
/// portable where there is some, or an error naming the dialect the body has no SQL for
/// ([`Dialect::name`]).
///
/// ```
/// use dbbench_core::Dialect;
///
/// fn index_sql(dialect: Dialect) -> Result<&'static str, String> {
///     match dialect {
///         Dialect::TSql => Ok("CREATE INDEX i ON dbo.charge (member_no)"),
///         Dialect::Sqlite | Dialect::Postgres => Ok("CREATE INDEX i ON charge (member_no)"),
///         other => Err(format!("no SQL for the {} dialect", other.name())),
///     }
/// }
/// assert!(index_sql(Dialect::named("mysql")).is_err());
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Dialect {
    name: &'static str,
}

// The constants are named as the enum's variants were, so that existing bodies compile.
#[allow(non_upper_case_globals)]
impl Dialect {
    /// SQLite's SQL (parameters `?1`, `?2`…).
    pub const Sqlite: Dialect = Dialect::named("sqlite");
    /// Transact-SQL (parameters `@P1`, `@P2`…).
    pub const TSql: Dialect = Dialect::named("tsql");
    /// PostgreSQL's SQL (parameters `$1`, `$2`…).
    pub const Postgres: Dialect = Dialect::named("postgresql");

    /// The dialect called `name`; a backend defines its own with this.
    pub const fn named(name: &'static str) -> Dialect {
        Dialect { name }
    }

    /// The dialect's name (`tsql`), for messages.
    pub const fn name(self) -> &'static str {
        self.name
    }
}

/// As the enum printed its variants (`TSql`), for the three that were variants; a backend's own
/// dialect prints its name.
impl fmt::Debug for Dialect {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let shown = match *self {
            Dialect::Sqlite => "Sqlite",
            Dialect::TSql => "TSql",
            Dialect::Postgres => "Postgres",
            other => other.name,
        };
        f.write_str(shown)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dialects_are_their_names() {
        assert_eq!(Dialect::TSql, Dialect::named("tsql"));
        assert_ne!(Dialect::TSql, Dialect::Postgres);
        assert_eq!(Dialect::named("mysql").name(), "mysql");
        assert_eq!(format!("{:?}", Dialect::TSql), "TSql");
        assert_eq!(format!("{:?}", Dialect::named("mysql")), "mysql");
    }

    #[test]
    fn a_match_on_the_old_variants_still_compiles_and_chooses() {
        let sql = |d: Dialect| match d {
            Dialect::Sqlite => "sqlite",
            Dialect::TSql => "tsql",
            Dialect::Postgres => "postgres",
            _ => "other",
        };
        assert_eq!(sql(Dialect::TSql), "tsql");
        assert_eq!(sql(Dialect::named("mysql")), "other");
    }
}
