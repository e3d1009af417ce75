//! Where libpq-style clients (pgbench, psql) find one database: what a connection and its
//! settings both name, kept apart from either so that neither imports the other for it.

/// Where libpq-style clients (pgbench, psql) find one database.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LibpqTarget {
    /// Host name, or the socket directory of a managed cluster.
    pub host: String,
    /// Port (it also names the socket file).
    pub port: u16,
    /// User name.
    pub user: String,
    /// Database name.
    pub dbname: String,
}
