//! Which SQL Server dbbench reaches and how: the ADO connection string in `DBBENCH_MSSQL` and its
//! timeouts, with the password kept out of every message (the TCP + TLS + login sequence that
//! uses them is [`login`](super::login)).
//!
//! tiberius reads the standard keys (`server`, `user id`, `password`, `database`, `encrypt`,
//! `TrustServerCertificate`, …). dbbench reads two more that tiberius ignores: `Connect Timeout`
//! (seconds for TCP connect plus handshake, default 15) and `Command Timeout` (seconds a single
//! server response may take; default none, because growing a file or creating a large database
//! legitimately takes minutes and tiberius's own default of 30 s would cut it off).

use crate::model::error::{Error, Result};
use std::time::Duration;

/// The environment variable holding the ADO connection string.
pub const ENV: &str = "DBBENCH_MSSQL";

/// Set to `1`, the live SQL Server tests fail instead of skipping when [`ENV`] is unset (CI
/// runs them against Babelfish, as `DBBENCH_REQUIRE_POSTGRES` does for PostgreSQL).
pub const REQUIRE_ENV: &str = "DBBENCH_REQUIRE_MSSQL";

/// Keys whose values are secrets.
const SECRET_KEYS: [&str; 2] = ["password", "pwd"];

/// One `key=value` pair of a connection string, with where its value sits in the text.
#[derive(Debug, Clone, PartialEq)]
struct Pair {
    key: String,
    value: String,
    span: std::ops::Range<usize>,
}

/// Splits an ADO.NET connection string into pairs. Values may be quoted with `'…'`, `"…"`
/// (doubling the quote embeds it) or `{…}`, as tiberius accepts them. An unterminated quote makes
/// the rest of the string that key's value, so a malformed password is still found and hidden.
fn pairs(text: &str) -> Vec<Pair> {
    let bytes = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        let Some(eq) = text[i..].find('=').map(|p| p + i) else {
            break;
        };
        // A `;` before the `=` means an entry without a value: skip it.
        if let Some(semi) = text[i..eq].find(';') {
            i += semi + 1;
            continue;
        }
        let key = text[i..eq].trim().to_ascii_lowercase();
        let mut start = eq + 1;
        while start < bytes.len() && bytes[start] == b' ' {
            start += 1;
        }
        let (value, end, next) = match bytes.get(start) {
            Some(&q @ (b'\'' | b'"')) => quoted(text, start, q),
            Some(b'{') => match text[start + 1..].find('}') {
                Some(close) => {
                    let close = start + 1 + close;
                    (text[start + 1..close].to_string(), close + 1, close + 1)
                }
                None => (text[start + 1..].to_string(), text.len(), text.len()),
            },
            _ => {
                let end = text[start..].find(';').map_or(text.len(), |p| p + start);
                (text[start..end].trim_end().to_string(), end, end)
            }
        };
        out.push(Pair {
            key,
            value,
            span: start..end,
        });
        i = text[next..].find(';').map_or(text.len(), |p| next + p + 1);
    }
    out
}

/// Reads a value quoted with `q` starting at `start`; returns (value, end of value, resume index).
fn quoted(text: &str, start: usize, q: u8) -> (String, usize, usize) {
    let bytes = text.as_bytes();
    let mut value = String::new();
    let mut j = start + 1;
    while j < bytes.len() {
        if bytes[j] == q {
            if bytes.get(j + 1) == Some(&q) {
                value.push(q as char);
                j += 2;
                continue;
            }
            return (value, j + 1, j + 1);
        }
        let ch = text[j..].chars().next().unwrap_or('\u{fffd}');
        value.push(ch);
        j += ch.len_utf8();
    }
    (value, text.len(), text.len())
}

/// Connection settings for one SQL Server, read once per process.
#[derive(Clone)]
pub struct ConnectSettings {
    ado: String,
    secrets: Vec<String>,
    server: String,
    /// What is shown of the connection: built from its parsed parts (server, user, database).
    shown: String,
    connect_timeout: Duration,
    command_timeout: Option<Duration>,
    /// Tests: every connection talks to this scripted server instead of the network (only in
    /// builds with the double: tests and the private `_mssql_scripted` feature).
    #[cfg(any(test, feature = "_mssql_scripted"))]
    scripted: Option<super::double::ScriptedServer>,
}

impl std::fmt::Debug for ConnectSettings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ConnectSettings")
            .field("connection_string", &self.redacted())
            .field("connect_timeout", &self.connect_timeout)
            .field("command_timeout", &self.command_timeout)
            .finish()
    }
}

impl ConnectSettings {
    /// The settings from `DBBENCH_MSSQL`; a missing or empty variable is a configuration error
    /// that says what to set.
    pub fn from_env() -> Result<ConnectSettings> {
        ConnectSettings::from_value(std::env::var(ENV).ok())
    }

    /// The settings from the value of `DBBENCH_MSSQL` (`None` when unset).
    pub fn from_value(value: Option<String>) -> Result<ConnectSettings> {
        match value {
            Some(text) if !text.trim().is_empty() => ConnectSettings::parse(&text),
            _ => Err(Error::Config(format!(
                "the mssql backend needs {ENV} set to an ADO connection string, e.g. \
                 {ENV}=\"server=tcp:localhost,1433;user id=sa;password=…;TrustServerCertificate=true\""
            ))),
        }
    }

    /// Parses and validates an ADO connection string.
    pub fn parse(ado: &str) -> Result<ConnectSettings> {
        let pairs = pairs(ado);
        let get = |names: &[&str]| {
            pairs
                .iter()
                .rev()
                .find(|p| names.contains(&p.key.as_str()))
                .map(|p| p.value.clone())
        };
        // The whole string and every password value, as read and as written, for the scrubber
        // (here and `util::secret`, which every sink passes its text through).
        let mut secrets: Vec<String> = vec![ado.trim().to_string()];
        for p in pairs
            .iter()
            .filter(|p| SECRET_KEYS.contains(&p.key.as_str()))
        {
            secrets.push(p.value.clone());
            secrets.push(ado[p.span.clone()].to_string());
        }
        secrets.retain(|s| !s.is_empty());
        for secret in &secrets {
            crate::util::secret::keep(secret);
        }
        let seconds = |names: &[&str], what: &str| -> Result<Option<u64>> {
            match get(names) {
                None => Ok(None),
                Some(v) => v.trim().parse::<u64>().map(Some).map_err(|_| {
                    Error::Config(format!(
                        "{ENV}: `{what}` must be a whole number of seconds; found `{v}`"
                    ))
                }),
            }
        };
        let connect_timeout = seconds(
            &["connect timeout", "connection timeout", "timeout"],
            "Connect Timeout",
        )?
        .unwrap_or(15);
        let command_timeout = seconds(&["command timeout"], "Command Timeout")?
            .filter(|s| *s > 0)
            .map(Duration::from_secs);
        let server = get(&["server", "data source", "address", "addr"]).unwrap_or_default();
        let server = server.trim_start_matches("tcp:").to_string();
        let mut shown = format!("server {server}");
        if let Some(user) = get(&["user id", "uid", "user", "username"]) {
            shown.push_str(&format!(" user {user}"));
        }
        if let Some(database) = get(&["database", "initial catalog"]) {
            shown.push_str(&format!(" database {database}"));
        }
        let settings = ConnectSettings {
            ado: ado.to_string(),
            shown: crate::util::secret::scrub_with(&secrets, &shown),
            secrets,
            server,
            connect_timeout: Duration::from_secs(connect_timeout.max(1)),
            command_timeout,
            #[cfg(any(test, feature = "_mssql_scripted"))]
            scripted: None,
        };
        if settings.server.contains('\\') && !settings.server.contains(',') {
            return Err(Error::Config(format!(
                "{ENV}: named instance `{}` needs an explicit port (`server=tcp:host,port`): \
                 dbbench does not query the SQL Browser service",
                settings.server
            )));
        }
        // Validate now so a typo fails before any benchmark starts.
        settings.config(None)?;
        Ok(settings)
    }

    /// What is shown of the connection: its server, user and database, from the parsed string
    /// (never the string edited).
    pub fn redacted(&self) -> String {
        self.shown.clone()
    }

    /// `host,port` as written in the connection string, for messages.
    pub fn server(&self) -> &str {
        &self.server
    }

    /// The host connections go to (`localhost` when the string names none, as tiberius reads
    /// it); `None` for a scripted server, which is on no machine.
    pub fn host(&self) -> Option<String> {
        #[cfg(any(test, feature = "_mssql_scripted"))]
        if self.scripted.is_some() {
            return None;
        }
        let addr = self.config(None).ok()?.get_addr();
        addr.rsplit_once(':').map(|(host, _)| host.to_string())
    }

    /// How long TCP connect plus TLS and login may take.
    pub fn connect_timeout(&self) -> Duration {
        self.connect_timeout
    }

    /// How long one server response may take, if bounded.
    pub fn command_timeout(&self) -> Option<Duration> {
        self.command_timeout
    }

    /// `text` with every occurrence of the password replaced by `***`: applied to every message
    /// that may quote the connection string or a driver error.
    pub fn scrub(&self, text: &str) -> String {
        crate::util::secret::scrub(&crate::util::secret::scrub_with(&self.secrets, text))
    }

    /// The tiberius configuration, connected to `database` (the login's default when `None`).
    pub(super) fn config(&self, database: Option<&str>) -> Result<tiberius::Config> {
        let mut config = tiberius::Config::from_ado_string(&self.ado).map_err(|e| {
            Error::Config(format!(
                "{ENV} is not a valid ADO connection string: {} (connection: {})",
                self.scrub(&e.to_string()),
                self.redacted()
            ))
        })?;
        if let Some(database) = database {
            config.database(database);
        }
        config.application_name("dbbench");
        config.handshake_timeout(Some(self.connect_timeout));
        config.command_timeout(self.command_timeout);
        Ok(config)
    }

    /// `ado`'s settings with every connection answered by `server` (tests of recorded server
    /// behaviour; nothing goes over the network). Each login is recorded as [`Api::Login`].
    ///
    /// [`Api::Login`]: super::double::Api::Login
    #[cfg(any(test, feature = "_mssql_scripted"))]
    pub fn scripted(ado: &str, server: &super::double::ScriptedServer) -> Result<ConnectSettings> {
        let mut settings = ConnectSettings::parse(ado)?;
        settings.scripted = Some(server.clone());
        Ok(settings)
    }

    /// The scripted server every connection talks to instead of the network (tests), if any.
    #[cfg(any(test, feature = "_mssql_scripted"))]
    pub(super) fn scripted_server(&self) -> Option<&super::double::ScriptedServer> {
        self.scripted.as_ref()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const PASSWORD: &str = "S3cr;et=pa''ss";

    #[test]
    fn splits_quoted_and_plain_values() {
        let p = pairs("server=tcp:h,1433; User Id = sa ;password='a;b=''c';Encrypt={x;y}");
        let got: Vec<(&str, &str)> = p
            .iter()
            .map(|p| (p.key.as_str(), p.value.as_str()))
            .collect();
        assert_eq!(
            got,
            vec![
                ("server", "tcp:h,1433"),
                ("user id", "sa"),
                ("password", "a;b='c"),
                ("encrypt", "x;y")
            ]
        );
    }

    #[test]
    fn no_printable_password_shows_in_any_quoting() {
        for password in crate::util::secret::printable_passwords() {
            let mut forms = vec![
                format!("password=\"{}\"", password.replace('"', "\"\"")),
                format!("password='{}'", password.replace('\'', "''")),
            ];
            if !password.contains('}') {
                forms.push(format!("Password={{{password}}}"));
            }
            if !password.contains(';') {
                // Unquoted, as written by hand: whatever the parsers make of it.
                forms.push(format!("pwd={password}"));
            }
            for form in forms {
                let ado = format!("server=tcp:127.0.0.1,9;user id=sa;{form};database=x");
                let Ok(settings) = ConnectSettings::parse(&ado) else {
                    let err = ConnectSettings::parse(&ado).unwrap_err().to_string();
                    assert!(!err.contains("Zq"), "{ado}: {err}");
                    continue;
                };
                if !form.starts_with("pwd=") {
                    let read = pairs(&ado)
                        .into_iter()
                        .find(|p| SECRET_KEYS.contains(&p.key.as_str()));
                    assert_eq!(read.map(|p| p.value), Some(password.clone()), "{ado}");
                }
                for shown in [settings.redacted(), format!("{settings:?}")] {
                    assert!(!shown.contains("Zq"), "{ado}: {shown}");
                }
                assert_eq!(settings.redacted(), "server 127.0.0.1,9 user sa database x");
                let said = settings.scrub(&format!("login with {password} failed: {ado}"));
                assert!(!said.contains("Zq"), "{ado}: {said}");
            }
        }
    }

    #[test]
    fn settings_never_show_the_password() {
        let ado = format!(
            "server=tcp:localhost,1433;user id=sa;password=\"{}\";TrustServerCertificate=true;Command Timeout=0",
            PASSWORD.replace('"', "\"\"")
        );
        let settings = ConnectSettings::parse(&ado).unwrap();
        let secret = "S3cr;et=pa''ss";
        assert!(!format!("{settings:?}").contains(secret));
        assert!(!settings.redacted().contains(secret));
        assert_eq!(
            settings.scrub(&format!("login failed for {secret}")),
            "login failed for ***"
        );
        assert_eq!(settings.command_timeout(), None);
        assert_eq!(settings.connect_timeout(), Duration::from_secs(15));
        assert_eq!(settings.server(), "localhost,1433");
    }

    #[test]
    fn reads_timeouts_and_rejects_bad_ones() {
        let s = ConnectSettings::parse(
            "server=tcp:h,1433;user=sa;password=p;Connect Timeout=3;Command Timeout=600",
        )
        .unwrap();
        assert_eq!(s.connect_timeout(), Duration::from_secs(3));
        assert_eq!(s.command_timeout(), Some(Duration::from_secs(600)));
        let err = ConnectSettings::parse("server=h;password=hunter2;Connect Timeout=soon")
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("Connect Timeout") && !err.contains("hunter2"),
            "{err}"
        );
    }

    #[test]
    fn a_missing_variable_says_what_to_set() {
        for value in [None, Some("  ".to_string())] {
            let err = ConnectSettings::from_value(value).unwrap_err().to_string();
            assert!(
                err.starts_with("configuration error: the mssql backend needs DBBENCH_MSSQL"),
                "{err}"
            );
        }
    }

    #[test]
    fn refuses_named_instance_without_port() {
        let err = ConnectSettings::parse("server=tcp:host\\SQL2022;user=sa;password=p")
            .unwrap_err()
            .to_string();
        assert!(err.contains("explicit port"), "{err}");
    }

    #[test]
    fn a_malformed_string_is_reported_without_its_password() {
        let err = ConnectSettings::parse("server=h;user=sa;password='hunter2")
            .unwrap_err()
            .to_string();
        assert!(!err.contains("hunter2"), "{err}");
        assert!(err.contains("not a valid ADO connection string"), "{err}");
    }
}
