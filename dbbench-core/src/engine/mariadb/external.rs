//! An existing MariaDB server, named by `DBBENCH_MARIADB`: a Unix socket's path (logged in as
//! this machine's user, which MariaDB's `unix_socket` authentication knows) or a URL
//! (`mysql://user:password@host:port/`, `mariadb://…` alike, `?socket=/path` for a socket with
//! a password).
//!
//! dbbench changes nothing of such a server's configuration: every storage option MariaDB
//! honours sets the instance (its system tablespace, its redo log, its binary log), shared by
//! every database on it and mostly read only at startup, so a cell that sets one is refused by
//! name before anything is created. Its databases carry dbbench's mark and owner
//! (`super::owner`), so the next run's sweep judges them.

use super::binaries::is_root;
use super::options::refuse;
use crate::model::config::StorageSpec;
use crate::model::error::{Error, Result};
use dbbench_options::Key;
use mysql_async::{Opts, OptsBuilder};

/// The variable that names an existing server.
pub const ENV: &str = "DBBENCH_MARIADB";

/// The connection options `spec` (the variable's value) names.
pub fn opts(spec: &str) -> Result<Opts> {
    let spec = spec.trim();
    if spec.starts_with('/') {
        let user = if is_root() {
            "root".to_string()
        } else {
            std::env::var("USER").unwrap_or_else(|_| "root".into())
        };
        return Ok(OptsBuilder::default()
            .socket(Some(spec))
            .user(Some(user))
            .into());
    }
    let url = match spec.strip_prefix("mariadb://") {
        Some(rest) => format!("mysql://{rest}"),
        None => spec.to_string(),
    };
    let (parsed, secrets) = parse_apart(&url);
    for secret in &secrets {
        crate::util::secret::keep(secret);
    }
    let opts = parsed.map_err(|e| Error::Config(crate::util::secret::scrub_with(&secrets, &e)))?;
    // The driver's default reconnects every TCP connection to the socket path the server reports
    // (`@@socket`), opened on *this* machine: a path where another server may listen (the
    // packaged default, /run/mysqld/mysqld.sock), which would then be measured, or written to,
    // instead of the one named. The server a URL names is reached as written; a socket is named
    // by its path (or `?socket=`).
    Ok(OptsBuilder::from_opts(opts).prefer_socket(false).into())
}

/// The options URL `url` names (or why it names none, without the URL: it may hold a password),
/// and its secrets: the whole URL and its password as written and as the driver read it.
fn parse_apart(url: &str) -> (std::result::Result<Opts, String>, Vec<String>) {
    let parsed = Opts::from_url(url);
    let decoded = parsed
        .as_ref()
        .ok()
        .and_then(|o| o.pass().map(str::to_string));
    let mut secrets = vec![url.to_string()];
    if let Some(rest) = url.strip_prefix("mysql://") {
        secrets.push(format!("mariadb://{rest}"));
    }
    secrets.extend(crate::util::secret::url_password_forms(
        url,
        decoded.as_deref(),
    ));
    secrets.retain(|s| !s.is_empty());
    let parsed = parsed.map_err(|e| {
        format!(
            "{ENV} must be a Unix socket's path (/run/mysqld/mysqld.sock) or a URL \
             (mysql://user:password@host:3306/, a password's `/ ? @ # %` and spaces \
             percent-encoded); its value (not shown: it may hold a password) is neither: {e}"
        )
    });
    (parsed, secrets)
}

/// What each option MariaDB honours sets on the instance, for its refusal on an existing server.
const INSTANCE_LEVEL: &[(Key, &str)] = &[
    (
        Key::DataFiles,
        "innodb_data_file_path, the system tablespace's files, made when the server was \
         installed",
    ),
    (Key::DataSize, "innodb_data_file_path, read only at startup"),
    (
        Key::Growth,
        "innodb_autoextend_increment with innodb_file_per_table off, global settings of the whole \
         server",
    ),
    (
        Key::LogSize,
        "innodb_log_file_size, the one redo log of the whole server",
    ),
    (
        Key::LogOn,
        "innodb_log_group_home_dir, read only at startup",
    ),
    (
        Key::Recovery,
        "the binary log (log_bin, read only at startup) and sync_binlog, global settings",
    ),
];

/// Refuses, by name, the first option `storage` sets: on an existing server each is a setting
/// of the instance that dbbench does not change.
pub fn refuse_instance_options(storage: &StorageSpec) -> Result<()> {
    let Some((key, what)) = storage
        .set_options()
        .find_map(|key| INSTANCE_LEVEL.iter().find(|(k, _)| *k == key))
    else {
        return Ok(());
    };
    Err(refuse(
        key.as_str(),
        format!(
            "on an existing server ({ENV}) dbbench does not change the instance's configuration, \
             and `{}` is {what}; unset {ENV} so that dbbench runs a managed instance for the \
             case, or remove the option",
            key.as_str()
        ),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::config::{Recovery, Size};

    #[test]
    fn a_socket_path_and_urls_are_read() {
        let socket = opts("/run/mysqld/mysqld.sock").unwrap();
        assert_eq!(socket.socket(), Some("/run/mysqld/mysqld.sock"));
        let url = opts("mariadb://bench:pw@db.example:3307/").unwrap();
        assert_eq!(url.ip_or_hostname(), "db.example");
        assert_eq!(url.tcp_port(), 3307);
        assert_eq!(url.user(), Some("bench"));
        // Reached as named, never through a socket of this machine the server reports.
        assert!(!url.prefer_socket());
        assert!(!opts("mysql://bench@127.0.0.1:3306/?prefer_socket=true")
            .unwrap()
            .prefer_socket());
        let by_socket = opts("mysql://bench:pw@localhost/?socket=/tmp/m.sock").unwrap();
        assert_eq!(by_socket.socket(), Some("/tmp/m.sock"));
        assert!(matches!(opts("db.example"), Err(Error::Config(_))));
    }

    /// `password` with every byte but the unreserved ones percent-encoded.
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
    fn no_printable_password_shows_encoded_or_raw() {
        for password in crate::util::secret::printable_passwords() {
            let encoded = format!("mysql://bench:{}@127.0.0.1:9/", url_encoded(&password));
            let raw = format!("mysql://bench:{password}@127.0.0.1:9/");
            for (url, exact) in [(encoded, true), (raw, false)] {
                let (parsed, secrets) = parse_apart(&url);
                let opts = match parsed {
                    Ok(opts) => opts,
                    Err(message) => {
                        let shown = crate::util::secret::scrub_with(&secrets, &message);
                        assert!(!shown.contains("Zq"), "{url}: {shown}");
                        continue;
                    }
                };
                if exact {
                    assert_eq!(opts.pass(), Some(password.as_str()), "{url}");
                }
                let shown = crate::util::secret::scrub_with(
                    &secrets,
                    &super::super::connection::where_(&opts),
                );
                assert!(!shown.contains("Zq"), "{url}: {shown}");
                let said = format!("access denied for {password}, {url}");
                let said = crate::util::secret::scrub_with(&secrets, &said);
                assert!(!said.contains("Zq"), "{url}: {said}");
            }
        }
    }

    #[test]
    fn every_option_that_sets_the_instance_is_refused_by_name() {
        assert!(refuse_instance_options(&StorageSpec::DEFAULT).is_ok());
        let refused = |storage: StorageSpec| match refuse_instance_options(&storage) {
            Err(Error::Unsupported { option, reason, .. }) => (option, reason),
            other => panic!("expected a refusal, got {other:?}"),
        };
        let (option, reason) = refused(StorageSpec {
            log_size: Some(Size {
                bytes: 64 << 20,
                text: "64MB",
            }),
            ..StorageSpec::DEFAULT
        });
        assert_eq!(option, "log_size");
        assert!(reason.contains("innodb_log_file_size"), "{reason}");
        let (option, _) = refused(StorageSpec {
            recovery: Some(Recovery::Full),
            ..StorageSpec::DEFAULT
        });
        assert_eq!(option, "recovery");
        for key in super::super::PROFILE.options {
            assert!(
                INSTANCE_LEVEL.iter().any(|(k, _)| k == key),
                "{key:?} is honoured by the profile but not judged on an existing server"
            );
        }
    }
}
