//! How to reach a PostgreSQL server: the connection string of `DBBENCH_POSTGRES`, or the socket of
//! a managed cluster, and the redaction that keeps a password out of every message and `Debug`.

use super::connection::PostgresConnection;
pub use super::target::LibpqTarget;
use crate::model::error::{Error, Result};
use crate::util::deadline::{bounded, Deadline};
use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::time::Duration;

/// The variable that names an existing server; when unset dbbench manages a cluster itself.
pub const ENV: &str = "DBBENCH_POSTGRES";

/// Connection settings. `Debug` and [`PgSettings::describe`] never show the password.
#[derive(Clone)]
pub struct PgSettings {
    config: tokio_postgres::Config,
    /// The text to show instead of the configuration: redacted.
    shown: String,
}

impl std::fmt::Debug for PgSettings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "PgSettings({})", self.shown)
    }
}

impl PgSettings {
    /// Parses a connection string (`host=… user=… password=…` or `postgres://user:pw@host/db`).
    pub fn parse(text: &str) -> Result<PgSettings> {
        let mut config = tokio_postgres::Config::from_str(text.trim()).map_err(|e| {
            // The parser's message names the option, never its value; the string is redacted.
            Error::Config(format!(
                "{ENV} is not a PostgreSQL connection string ({}): {e}",
                redact(text)
            ))
        })?;
        if config.get_connect_timeout().is_none() {
            config.connect_timeout(Duration::from_secs(15));
        }
        Ok(PgSettings {
            config,
            shown: redact(text),
        })
    }

    /// The settings of `DBBENCH_POSTGRES`, or `None` when it is unset or empty.
    pub fn from_env() -> Result<Option<PgSettings>> {
        match std::env::var(ENV) {
            Ok(text) if !text.trim().is_empty() => PgSettings::parse(&text).map(Some),
            _ => Ok(None),
        }
    }

    /// A managed cluster: its socket directory and port, trust authentication for `user`.
    pub fn socket(dir: &Path, port: u16, user: &str) -> PgSettings {
        let mut config = tokio_postgres::Config::new();
        config
            .host_path(dir)
            .port(port)
            .user(user)
            .connect_timeout(Duration::from_secs(10));
        PgSettings {
            config,
            shown: format!("socket {} port {port} user {user}", dir.display()),
        }
    }

    /// The database the connection string names, if any.
    pub fn admin_db(&self) -> Option<&str> {
        self.config.get_dbname()
    }

    /// The redacted description, for messages and results.
    pub fn describe(&self) -> &str {
        &self.shown
    }

    /// Opens a connection to database `dbname`.
    pub async fn connect(&self, dbname: &str) -> Result<PostgresConnection> {
        let mut config = self.config.clone();
        config.dbname(dbname).application_name("dbbench");
        // Bounded here, not only by the dispatcher: administrative connections (create, the
        // teardown's) open through this too.
        let doing = format!("connecting to {}, database {dbname}", self.shown);
        bounded(
            Deadline::Connect,
            &doing,
            PostgresConnection::open(config, self.target(dbname), &self.shown),
        )
        .await
    }

    /// Opens a connection to database `dbname` for a driver worker (see
    /// [`PostgresConnection::open_wire`]).
    pub(crate) async fn connect_worker(&self, dbname: &str) -> Result<PostgresConnection> {
        let mut config = self.config.clone();
        config.dbname(dbname).application_name("dbbench");
        let doing = format!("connecting to {}, database {dbname}", self.shown);
        bounded(
            Deadline::Connect,
            &doing,
            PostgresConnection::open_wire(config, self.target(dbname), &self.shown),
        )
        .await
    }

    /// Where a libpq client finds `dbname` (no password: managed clusters trust local users, and
    /// for an existing server the user passes `PGPASSWORD` themselves).
    pub fn target(&self, dbname: &str) -> LibpqTarget {
        use tokio_postgres::config::Host;
        let host = match self.config.get_hosts().first() {
            Some(Host::Tcp(h)) => h.clone(),
            Some(Host::Unix(p)) => p.display().to_string(),
            None => PathBuf::from("/var/run/postgresql").display().to_string(),
        };
        LibpqTarget {
            host,
            port: self.config.get_ports().first().copied().unwrap_or(5432),
            user: self.config.get_user().unwrap_or("postgres").to_string(),
            dbname: dbname.to_string(),
        }
    }
}

/// `text` with any password replaced by `***`, in both the key/value and the URL form.
pub fn redact(text: &str) -> String {
    let text = text.trim();
    if text.starts_with("postgres://") || text.starts_with("postgresql://") {
        let (scheme, rest) = text.split_once("://").unwrap_or(("", text));
        let (authority, tail) = match rest.find(['/', '?']) {
            Some(i) => rest.split_at(i),
            None => (rest, ""),
        };
        let authority = match authority.rsplit_once('@') {
            Some((userinfo, host)) => match userinfo.split_once(':') {
                Some((user, _)) => format!("{user}:***@{host}"),
                None => format!("{userinfo}@{host}"),
            },
            None => authority.to_string(),
        };
        let tail = redact_query(tail);
        return format!("{scheme}://{authority}{tail}");
    }
    redact_pairs(text)
}

/// `?password=…` in a URL's query.
fn redact_query(tail: &str) -> String {
    let Some((path, query)) = tail.split_once('?') else {
        return tail.to_string();
    };
    let pairs: Vec<String> = query
        .split('&')
        .map(|pair| match pair.split_once('=') {
            Some((k, _)) if k.eq_ignore_ascii_case("password") => format!("{k}=***"),
            _ => pair.to_string(),
        })
        .collect();
    format!("{path}?{}", pairs.join("&"))
}

/// `password=…` (quoted or not) in a key/value string.
fn redact_pairs(text: &str) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(at) = find_key(rest, "password") {
        out.push_str(&rest[..at]);
        let after_key = &rest[at + "password".len()..];
        let trimmed = after_key.trim_start();
        let Some(value) = trimmed.strip_prefix('=') else {
            out.push_str("password");
            rest = after_key;
            continue;
        };
        let value = value.trim_start();
        let end = if let Some(quoted) = value.strip_prefix('\'') {
            let mut escaped = false;
            let close = quoted
                .char_indices()
                .find(|&(_, c)| {
                    let hit = c == '\'' && !escaped;
                    escaped = c == '\\' && !escaped;
                    hit
                })
                .map_or(quoted.len(), |(i, _)| i + 1);
            1 + close
        } else {
            value.find(char::is_whitespace).unwrap_or(value.len())
        };
        out.push_str("password=***");
        rest = &value[end.min(value.len())..];
    }
    out.push_str(rest);
    out
}

/// The byte offset of `key` as a whole word in `text`, case-insensitively.
fn find_key(text: &str, key: &str) -> Option<usize> {
    let lower = text.to_ascii_lowercase();
    let mut from = 0;
    while let Some(i) = lower[from..].find(key) {
        let at = from + i;
        let before_ok = at == 0 || lower.as_bytes()[at - 1].is_ascii_whitespace();
        if before_ok {
            return Some(at);
        }
        from = at + key.len();
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn passwords_never_show() {
        let kv = "host=db.example user=bench password=s3cret dbname=x";
        assert_eq!(
            redact(kv),
            "host=db.example user=bench password=*** dbname=x"
        );
        let quoted = "host=h password = 'a b\\' c' user=u";
        assert_eq!(redact(quoted), "host=h password=*** user=u");
        let url = "postgres://bench:s3cret@db.example:5433/x?sslmode=disable&password=again";
        let shown = redact(url);
        assert!(
            !shown.contains("s3cret") && !shown.contains("again"),
            "{shown}"
        );
        assert_eq!(
            shown,
            "postgres://bench:***@db.example:5433/x?sslmode=disable&password=***"
        );
        assert_eq!(redact("postgres://u@h/d"), "postgres://u@h/d");
    }

    #[test]
    fn settings_debug_and_errors_hide_the_password() {
        let s = PgSettings::parse("host=127.0.0.1 user=u password=hunter2").unwrap();
        assert!(!format!("{s:?}").contains("hunter2"));
        assert!(!s.describe().contains("hunter2"));
        let bad = PgSettings::parse("host=h password=hunter2 port=notaport").unwrap_err();
        assert!(!bad.to_string().contains("hunter2"), "{bad}");
    }

    #[test]
    fn targets_for_libpq_clients() {
        let s = PgSettings::socket(Path::new("/tmp/sock"), 54321, "dbbench");
        let t = s.target("dbbench_x");
        assert_eq!(
            (t.host.as_str(), t.port, t.user.as_str()),
            ("/tmp/sock", 54321, "dbbench")
        );
    }
}
