//! The settings part of the scripted server's catalog: what the settings read-back
//! ([`crate::engine::mssql::settings`]) asks, answered with SQL Server 2022's documented
//! defaults, and `sp_configure` / `RECONFIGURE` so that a test can change a server option behind
//! dbbench's back, as a DBA would.
//!
//! Defaults (Microsoft Learn, "Server configuration options", "ALTER DATABASE SET options",
//! "ALTER DATABASE SCOPED CONFIGURATION", SQL Server 2022): a new database inherits `model`'s
//! FULL recovery, CHECKSUM page verify, automatic statistics on, auto close and shrink off,
//! delayed durability DISABLED, target recovery time 60 s, compatibility level 160; MAXDOP 0 in
//! every scope; cost threshold for parallelism 5; max server memory 2147483647 MB.
//! `ALTER DATABASE [x] SET RECOVERY …` and `ALTER DATABASE SCOPED CONFIGURATION SET MAXDOP = n`
//! (run inside `x`) change the database's values. Babelfish is modelled as the read-back expects
//! it: no scoped configurations (an error, not recorded) and no `DBCC TRACESTATUS` (error
//! 33557097 with the words recorded from Babelfish 4.2), and
//! `sys.configurations` without these options (no rows).

use super::{rows, Recorded, Reply};
use crate::model::value::Value;
use std::collections::{BTreeMap, BTreeSet};

/// The server options and their SQL Server 2022 defaults (`value_in_use`).
const SERVER_DEFAULTS: &[(&str, &str)] = &[
    ("affinity I/O mask", "0"),
    ("affinity mask", "0"),
    ("backup checksum default", "0"),
    ("backup compression default", "0"),
    ("blocked process threshold (s)", "0"),
    ("cost threshold for parallelism", "5"),
    ("fill factor (%)", "0"),
    ("lightweight pooling", "0"),
    ("max degree of parallelism", "0"),
    ("max server memory (MB)", "2147483647"),
    ("max worker threads", "0"),
    ("min server memory (MB)", "0"),
    ("network packet size (B)", "4096"),
    ("optimize for ad hoc workloads", "0"),
    ("priority boost", "0"),
    ("query governor cost limit", "0"),
    ("recovery interval (min)", "0"),
];

/// The scoped configurations of a new database (a subset of SQL Server 2022's list).
const SCOPED_DEFAULTS: &[(&str, &str)] = &[
    ("LEGACY_CARDINALITY_ESTIMATION", "0"),
    ("MAXDOP", "0"),
    ("PARAMETER_SNIFFING", "1"),
    ("QUERY_OPTIMIZER_HOTFIXES", "0"),
];

/// Server options (configured and in use) and per-database settings.
#[derive(Debug, Clone)]
pub struct SettingsModel {
    /// `value` per option: what `sp_configure` set, waiting for `RECONFIGURE`.
    configured: BTreeMap<String, String>,
    /// `value_in_use` per option.
    in_use: BTreeMap<String, String>,
    /// Recovery model per database, where one was set (else `model`'s FULL).
    recovery: BTreeMap<String, String>,
    /// MAXDOP per database, where one was set.
    maxdop: BTreeMap<String, String>,
}

impl Default for SettingsModel {
    fn default() -> SettingsModel {
        let defaults: BTreeMap<String, String> = SERVER_DEFAULTS
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        SettingsModel {
            configured: defaults.clone(),
            in_use: defaults,
            recovery: BTreeMap::new(),
            maxdop: BTreeMap::new(),
        }
    }
}

impl SettingsModel {
    /// The value in use of server option `name`.
    pub fn in_use(&self, name: &str) -> Option<&str> {
        self.in_use.get(name).map(String::as_str)
    }

    /// Answers `sql` sent through a connection to `current`, if it is a settings statement.
    pub(super) fn answer(
        &mut self,
        sql: &str,
        current: &str,
        product: Recorded,
        flags: &BTreeSet<u32>,
    ) -> Option<Reply> {
        if sql.contains("sp_configure") {
            return Some(self.configure(sql));
        }
        if sql
            .trim()
            .trim_end_matches(';')
            .eq_ignore_ascii_case("RECONFIGURE")
            || sql
                .trim()
                .trim_end_matches(';')
                .eq_ignore_ascii_case("RECONFIGURE WITH OVERRIDE")
        {
            self.in_use = self.configured.clone();
            return Some(Reply::Sets(Vec::new()));
        }
        self.remember(sql, current);
        // The read-back's batch: one recognised query a line.
        let lines: Vec<&str> = sql.lines().filter(|l| !l.trim().is_empty()).collect();
        if lines.is_empty() {
            return None;
        }
        let mut sets = Vec::new();
        for line in &lines {
            match self.query(line, current, product, flags)? {
                Ok(set) => sets.push(set),
                Err(error) => return Some(error),
            }
        }
        Some(Reply::Sets(sets))
    }

    /// The recovery model and MAXDOP statements dbbench sends while provisioning.
    fn remember(&mut self, sql: &str, current: &str) {
        if let Some(i) = sql.find("ALTER DATABASE [") {
            let rest = &sql[i + 16..];
            if let (Some(end), Some(model)) = (rest.find(']'), sql.split("SET RECOVERY ").nth(1)) {
                let model: String = model
                    .chars()
                    .take_while(|c| c.is_ascii_alphabetic() || *c == '_')
                    .collect();
                self.recovery.insert(rest[..end].to_string(), model);
            }
        }
        if let Some(rest) = sql.split("SET MAXDOP = ").nth(1) {
            let n: String = rest.chars().take_while(char::is_ascii_digit).collect();
            // `EXEC [db].sys.sp_executesql N'…'` runs in db; a plain batch in the current one.
            let db = sql
                .find("EXEC [")
                .and_then(|i| sql[i + 6..].split(']').next())
                .unwrap_or(current);
            self.maxdop.insert(db.to_string(), n);
        }
    }

    /// One read-back query's result set, `Err` with the server's error, `None` when `line` is
    /// no read-back query.
    fn query(
        &self,
        line: &str,
        current: &str,
        product: Recorded,
        flags: &BTreeSet<u32>,
    ) -> Option<Result<Vec<crate::model::value::Row>, Reply>> {
        let babelfish = product == Recorded::Babelfish42;
        let text = |s: &str| Value::Text(s.to_string());
        if line.contains("AS recovery_model") && line.contains("FROM sys.databases") {
            let name = line
                .split("WHERE name = N'")
                .nth(1)?
                .split('\'')
                .next()?
                .to_string();
            let recovery = self.recovery.get(&name).map_or("FULL", String::as_str);
            let columns = [
                "recovery_model",
                "page_verify",
                "auto_create_stats",
                "auto_update_stats",
                "auto_update_stats_async",
                "auto_close",
                "auto_shrink",
                "delayed_durability",
                "is_read_committed_snapshot_on",
                "snapshot_isolation",
                "forced_parameterization",
                "target_recovery_time",
                "compatibility_level",
            ];
            let values = vec![
                text(recovery),
                text("CHECKSUM"),
                Value::Int(1),
                Value::Int(1),
                Value::Int(0),
                Value::Int(0),
                Value::Int(0),
                text("DISABLED"),
                Value::Int(0),
                text("OFF"),
                Value::Int(0),
                Value::Int(60),
                Value::Int(160),
            ];
            return Some(Ok(rows(&columns, vec![values])));
        }
        if line.contains("FROM sys.database_scoped_configurations") {
            if babelfish {
                return Some(Err(Reply::error(
                    33557097,
                    "relation \"sys.database_scoped_configurations\" does not exist",
                )));
            }
            let values = SCOPED_DEFAULTS
                .iter()
                .map(|(k, v)| {
                    let v = match *k {
                        "MAXDOP" => self.maxdop.get(current).map_or(*v, String::as_str),
                        _ => v,
                    };
                    vec![text(k), text(v)]
                })
                .collect();
            return Some(Ok(rows(&["name", "value"], values)));
        }
        if line.contains("FROM sys.configurations") {
            let values = if babelfish {
                Vec::new()
            } else {
                self.in_use
                    .iter()
                    .filter(|(k, _)| line.contains(&format!("N'{k}'")))
                    .map(|(k, v)| vec![text(k), text(v)])
                    .collect()
            };
            return Some(Ok(rows(&["name", "value"], values)));
        }
        if line.contains("DBCC TRACESTATUS(-1)") {
            if babelfish {
                return Some(Err(Reply::error(
                    33557097,
                    "DBCC TRACESTATUS is not currently supported in Babelfish",
                )));
            }
            let on = |f: &u32| {
                vec![
                    Value::Int(i64::from(*f)),
                    Value::Int(1),
                    Value::Int(1),
                    Value::Int(0),
                ]
            };
            return Some(Ok(rows(
                &["TraceFlag", "Status", "Global", "Session"],
                flags.iter().map(on).collect(),
            )));
        }
        None
    }

    /// `EXEC sp_configure N'name', value` (with `RECONFIGURE` in the same batch or later).
    fn configure(&mut self, sql: &str) -> Reply {
        let after = sql.split("sp_configure").nth(1).unwrap_or_default();
        let mut parts = after.splitn(2, ',');
        let name = parts
            .next()
            .unwrap_or_default()
            .trim()
            .trim_start_matches('N')
            .trim_matches('\'')
            .to_string();
        let value: String = parts
            .next()
            .unwrap_or_default()
            .trim()
            .chars()
            .take_while(|c| c.is_ascii_digit() || *c == '-')
            .collect();
        if !self.configured.contains_key(&name) {
            // SQL Server 2022, sp_configure with an unknown name (message 15123).
            return Reply::error(
                15123,
                &format!(
                    "The configuration option '{name}' does not exist, or it may be an \
                     advanced option."
                ),
            );
        }
        self.configured.insert(name, value);
        if sql.contains("RECONFIGURE") {
            self.in_use = self.configured.clone();
        }
        Reply::Sets(Vec::new())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn server_rows(model: &mut SettingsModel) -> Vec<(String, String)> {
        let sql = crate::engine::mssql::settings::server_sql();
        match model.answer(&sql, "db", Recorded::SqlServer2022, &BTreeSet::new()) {
            Some(Reply::Sets(sets)) => sets[0]
                .iter()
                .map(|r| (r.get_named("name").unwrap(), r.get_named("value").unwrap()))
                .collect(),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn sp_configure_takes_effect_at_reconfigure_and_refuses_unknown_options() {
        let mut model = SettingsModel::default();
        assert_eq!(server_rows(&mut model).len(), SERVER_DEFAULTS.len());
        let none = BTreeSet::new();
        model.answer(
            "EXEC sp_configure N'cost threshold for parallelism', 50;",
            "master",
            Recorded::SqlServer2022,
            &none,
        );
        assert_eq!(model.in_use("cost threshold for parallelism"), Some("5"));
        model.answer("RECONFIGURE;", "master", Recorded::SqlServer2022, &none);
        assert_eq!(model.in_use("cost threshold for parallelism"), Some("50"));
        let refused = model.answer(
            "EXEC sp_configure N'no such option', 1; RECONFIGURE;",
            "master",
            Recorded::SqlServer2022,
            &none,
        );
        assert!(matches!(refused, Some(Reply::Error { code: 15123, .. })));
    }

    #[test]
    fn recovery_and_maxdop_follow_what_provisioning_sent() {
        let mut model = SettingsModel::default();
        let none = BTreeSet::new();
        let p = Recorded::SqlServer2022;
        model.answer(
            "ALTER DATABASE [d] SET RECOVERY SIMPLE;",
            "master",
            p,
            &none,
        );
        model.answer(
            "EXEC [d].sys.sp_executesql N'ALTER DATABASE SCOPED CONFIGURATION SET MAXDOP = 4;';",
            "master",
            p,
            &none,
        );
        let sql = format!(
            "{}\n{}",
            crate::engine::mssql::settings::database_sql("d"),
            crate::engine::mssql::settings::SCOPED_SQL
        );
        let Some(Reply::Sets(sets)) = model.answer(&sql, "d", p, &none) else {
            panic!()
        };
        assert_eq!(sets.len(), 2);
        assert_eq!(
            sets[0][0].get_named::<String>("recovery_model").unwrap(),
            "SIMPLE"
        );
        let maxdop = sets[1]
            .iter()
            .find(|r| r.get_named::<String>("name").unwrap() == "MAXDOP")
            .unwrap();
        assert_eq!(maxdop.get_named::<String>("value").unwrap(), "4");
    }
}
