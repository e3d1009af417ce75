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

/// Every backend: its keyword and the name of its `BackendKind` variant in dbbench-core, in the
/// order they are documented. The macro accepts exactly these keywords.
pub const BACKENDS: [(&str, &str); 3] = [
    (EMBEDDED, "Embedded"),
    (MSSQL, "Mssql"),
    (POSTGRES, "Postgres"),
];
