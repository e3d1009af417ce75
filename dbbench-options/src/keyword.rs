//! The keywords of option values, compared with the contents of string literals in the attribute
//! and written by the runtime in results and errors (`recovery = "full"`, `backends = ["mssql"]`).

/// `growth = "none"`: the file never grows.
pub const GROWTH_NONE: &str = "none";

/// `recovery = "simple"`.
pub const SIMPLE: &str = "simple";
/// `recovery = "full"`.
pub const FULL: &str = "full";
/// `recovery = "bulk_logged"`.
pub const BULK_LOGGED: &str = "bulk_logged";

/// `fixture = "none"`.
pub const FIXTURE_NONE: &str = "none";
/// `fixture = "credit"`.
pub const CREDIT: &str = "credit";

/// `order = "interleaved"`.
pub const INTERLEAVED: &str = "interleaved";
/// `order = "blocked"`.
pub const BLOCKED: &str = "blocked";

/// `cache = "warm"`.
pub const WARM: &str = "warm";
/// `cache = "cold"`.
pub const COLD: &str = "cold";

/// `backends = ["embedded"]`.
pub const EMBEDDED: &str = "embedded";
/// `backends = ["mssql"]`.
pub const MSSQL: &str = "mssql";
/// `backends = ["postgres"]`.
pub const POSTGRES: &str = "postgres";
/// `backends = ["mariadb"]`.
pub const MARIADB: &str = "mariadb";

/// A backend's name: the one table of backends ([`BACKENDS`]) is made of these.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BackendName {
    /// What `backends = [...]` and `DBBENCH_BACKEND` say, and the name of the backend's Cargo
    /// feature of dbbench-core (`mssql`).
    pub keyword: &'static str,
    /// The backend as a sentence names it (`SQL Server`), and the heading of its column in
    /// `docs/options.md`.
    pub title: &'static str,
}

/// Every backend, in the order they are documented: the one list of them. The macro accepts
/// exactly these keywords, and the runtime knows these names in every build, with or without
/// each backend's feature (a stored result of any of them is read and shown).
pub const BACKENDS: &[BackendName] = &[
    BackendName {
        keyword: EMBEDDED,
        title: "embedded engine",
    },
    BackendName {
        keyword: MSSQL,
        title: "SQL Server",
    },
    BackendName {
        keyword: POSTGRES,
        title: "PostgreSQL",
    },
    BackendName {
        keyword: MARIADB,
        title: "MariaDB",
    },
];

/// The backend whose keyword is `keyword`, if the table has one.
pub fn backend(keyword: &str) -> Option<&'static BackendName> {
    BACKENDS.iter().find(|b| b.keyword == keyword)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backends_are_named_once_and_found_by_their_keyword() {
        for (i, name) in BACKENDS.iter().enumerate() {
            assert!(
                !BACKENDS[..i]
                    .iter()
                    .any(|b| b.keyword == name.keyword || b.title == name.title),
                "{name:?} is listed twice"
            );
            assert_eq!(backend(name.keyword), Some(name));
        }
        assert_eq!(backend("mysql"), None);
    }
}
