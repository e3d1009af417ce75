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
    /// Parses a connection string (`host=… user=… password=…` or `postgres://user:pw@host/db`),
    /// keeping its password for the scrubber (`util::secret`).
    pub fn parse(text: &str) -> Result<PgSettings> {
        let (settings, secrets) = PgSettings::parse_apart(text);
        for secret in &secrets {
            crate::util::secret::keep(secret);
        }
        settings.map_err(|e| Error::Config(crate::util::secret::scrub_with(&secrets, &e)))
    }

    /// The settings `text` names (or the parser's message, which names an option, never its
    /// value), and the secrets in it: the whole string, the password as the driver read it and,
    /// for a URL, as written.
    fn parse_apart(text: &str) -> (std::result::Result<PgSettings, String>, Vec<String>) {
        let parsed = tokio_postgres::Config::from_str(text.trim());
        let decoded = parsed
            .as_ref()
            .ok()
            .and_then(|c| c.get_password())
            .map(|p| String::from_utf8_lossy(p).into_owned());
        let mut secrets = vec![text.trim().to_string()];
        if text.trim_start().starts_with("postgres") {
            secrets.extend(crate::util::secret::url_password_forms(
                text,
                decoded.as_deref(),
            ));
        } else {
            secrets.extend(decoded);
        }
        secrets.retain(|s| !s.is_empty());
        let settings = match parsed {
            Ok(mut config) => {
                if config.get_connect_timeout().is_none() {
                    config.connect_timeout(Duration::from_secs(15));
                }
                let shown = crate::util::secret::scrub_with(&secrets, &shown(&config));
                Ok(PgSettings { config, shown })
            }
            Err(e) => Err(format!("{ENV} is not a PostgreSQL connection string: {e}")),
        };
        (settings, secrets)
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

/// What is shown of a parsed connection: its hosts and ports, user and database, built from the
/// parsed parts and never from the string, so no way of writing a password can show through.
fn shown(config: &tokio_postgres::Config) -> String {
    use tokio_postgres::config::Host;
    let ports = config.get_ports();
    let hosts: Vec<String> = config
        .get_hosts()
        .iter()
        .enumerate()
        .map(|(i, host)| {
            let port = ports.get(i).or(ports.first()).copied().unwrap_or(5432);
            match host {
                Host::Tcp(h) => format!("{h}:{port}"),
                Host::Unix(p) => format!("socket {} port {port}", p.display()),
            }
        })
        .collect();
    let mut text = if hosts.is_empty() {
        "the default server".to_string()
    } else {
        hosts.join(", ")
    };
    if let Some(user) = config.get_user() {
        text.push_str(&format!(" user {user}"));
    }
    if let Some(db) = config.get_dbname() {
        text.push_str(&format!(" database {db}"));
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `password` as a libpq URL writes it: every byte but the unreserved ones percent-encoded.
    fn url_encoded(password: &str) -> String {
        password
            .bytes()
            .map(|b| match b {
                b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' => {
                    (b as char).to_string()
                }
                _ => format!("%{b:02X}"),
            })
            .collect()
    }

    #[test]
    fn no_printable_password_shows_in_either_form() {
        for password in crate::util::secret::printable_passwords() {
            let quoted = password.replace('\\', "\\\\").replace('\'', "\\'");
            let forms = [
                format!("host=127.0.0.1 port=9 user=bench password='{quoted}' dbname=x"),
                format!("postgres://bench:{}@127.0.0.1:9/x", url_encoded(&password)),
                format!(
                    "postgresql://bench@127.0.0.1:9/x?password={}",
                    url_encoded(&password)
                ),
                // As written by hand: the raw characters, whatever the parser makes of them.
                format!("postgres://bench:{password}@127.0.0.1:9/x"),
            ];
            for (i, text) in forms.iter().enumerate() {
                let (settings, secrets) = PgSettings::parse_apart(text);
                let settings = match settings {
                    Ok(settings) => settings,
                    Err(message) => {
                        let shown = crate::util::secret::scrub_with(&secrets, &message);
                        assert!(!shown.contains(&password), "{text}: {shown}");
                        continue;
                    }
                };
                if i < 3 {
                    // The driver reads the same password as was written.
                    assert_eq!(
                        settings.config.get_password(),
                        Some(password.as_bytes()),
                        "{text}"
                    );
                }
                for shown in [settings.describe().to_string(), format!("{settings:?}")] {
                    assert!(!shown.contains(&password), "{text}: {shown}");
                    assert!(!shown.contains("Zq"), "{text}: {shown}");
                }
                let read = settings
                    .config
                    .get_password()
                    .map(|p| String::from_utf8_lossy(p).into_owned());
                for secret in read.iter().chain([&password]) {
                    let said = format!("connecting with {secret} failed");
                    let scrubbed = crate::util::secret::scrub_with(&secrets, &said);
                    assert!(!scrubbed.contains("Zq"), "{text}: {scrubbed}");
                }
            }
        }
    }

    #[test]
    fn what_is_shown_is_the_parsed_server() {
        let s =
            PgSettings::parse("postgres://bench:s3cret@db.example:5433/x?sslmode=disable").unwrap();
        assert_eq!(s.describe(), "db.example:5433 user bench database x");
        let kv = PgSettings::parse("host=/run/pg port=5 user=u password=s3cret").unwrap();
        assert_eq!(kv.describe(), "socket /run/pg port 5 user u");
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
