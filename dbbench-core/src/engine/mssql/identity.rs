//! Which product answers on the TDS port. Several servers speak SQL Server's protocol and T-SQL
//! grammar without its storage engine: Babelfish for PostgreSQL accepts `CREATE DATABASE … ON`
//! file specifications and silently ignores them (its `storage_options` escape hatch), Azure SQL
//! Database and Managed Instance manage files themselves and have no server-scoped Extended
//! Events or global trace flags. dbbench detects the product at start-up and refuses each option
//! the product cannot honour before anything is created, with one sentence per option, instead
//! of failing at the first statement, or worse, measuring a configuration that never existed.

use crate::model::config::StorageSpec;

/// The product behind the connection.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Product {
    /// Microsoft SQL Server (box product, any edition, Windows or Linux).
    SqlServer,
    /// Azure SQL Database (`EngineEdition` 5).
    AzureSqlDatabase,
    /// Azure SQL Managed Instance (`EngineEdition` 8).
    AzureSqlManagedInstance,
    /// Azure SQL Edge (`EngineEdition` 9).
    AzureSqlEdge,
    /// Babelfish for PostgreSQL (`@@VERSION` names it; `SERVERPROPERTY('Babelfish')` is 1).
    Babelfish,
}

impl Product {
    /// The product from `@@VERSION`, `SERVERPROPERTY('EngineEdition')` and
    /// `SERVERPROPERTY('Babelfish')` (NULL on SQL Server).
    pub fn detect(version_text: &str, engine_edition: i64, babelfish: Option<&str>) -> Product {
        let babelfish_flag = babelfish.is_some_and(|v| v.trim() == "1");
        if babelfish_flag || version_text.to_ascii_lowercase().contains("babelfish") {
            return Product::Babelfish;
        }
        match engine_edition {
            5 => Product::AzureSqlDatabase,
            8 => Product::AzureSqlManagedInstance,
            9 => Product::AzureSqlEdge,
            _ => Product::SqlServer,
        }
    }

    /// The product's name for the results.
    pub fn name(&self) -> &'static str {
        match self {
            Product::SqlServer => "Microsoft SQL Server",
            Product::AzureSqlDatabase => "Azure SQL Database",
            Product::AzureSqlManagedInstance => "Azure SQL Managed Instance",
            Product::AzureSqlEdge => "Azure SQL Edge",
            Product::Babelfish => "Babelfish for PostgreSQL",
        }
    }

    /// Whether the product runs server-scoped Extended Events sessions (`ON SERVER`).
    pub fn has_server_event_sessions(&self) -> bool {
        !matches!(self, Product::AzureSqlDatabase | Product::Babelfish)
    }

    /// Whether `ALTER DATABASE … SET SINGLE_USER` exists: Azure SQL Database's user-access
    /// options are `RESTRICTED_USER` and `MULTI_USER` only, and Babelfish has no `ALTER DATABASE …
    /// SET`. Where it does not, teardown sends the plain `DROP DATABASE` alone.
    pub fn has_single_user(&self) -> bool {
        !matches!(self, Product::AzureSqlDatabase | Product::Babelfish)
    }

    /// Whether global trace flags (`DBCC TRACEON … -1`, `DBCC TRACESTATUS`) exist: not on Azure
    /// SQL Database or Babelfish; Managed Instance allows a fixed list without 1806/1805.
    pub fn has_trace_flags(&self) -> bool {
        matches!(self, Product::SqlServer | Product::AzureSqlEdge)
    }

    /// How snapshot names tell this product's recordings from SQL Server's
    /// ([`BackendInfo::snapshot_tag`](crate::model::evidence::BackendInfo::snapshot_tag)):
    /// `None` for Microsoft SQL Server itself.
    pub fn compatible_tag(&self) -> Option<&'static str> {
        match self {
            Product::SqlServer => None,
            Product::AzureSqlDatabase => Some("azure_sql_database"),
            Product::AzureSqlManagedInstance => Some("azure_sql_managed_instance"),
            Product::AzureSqlEdge => Some("azure_sql_edge"),
            Product::Babelfish => Some("babelfish"),
        }
    }

    /// The word for the server in messages: "SQL Server" for Microsoft's own products, the
    /// product's name otherwise (a Babelfish error is not a SQL Server error).
    pub fn short_name(&self) -> &'static str {
        match self {
            Product::SqlServer => "SQL Server",
            other => other.name(),
        }
    }

    /// The longest database name the product keeps whole: SQL Server's `sysname` holds 128
    /// characters; Babelfish keeps a database as a PostgreSQL name, 63 bytes, and shortens a
    /// longer one with a hash, so that a second connection naming it finds no such database
    /// (error 911) and what dbbench left under the shortened name carries no owner it can judge.
    pub fn database_name_limit(&self) -> usize {
        match self {
            Product::Babelfish => 63,
            _ => 128,
        }
    }

    /// Refuses, before anything is created, a database name this product would not keep whole.
    pub fn check_database_name(&self, name: &str) -> crate::model::error::Result<()> {
        let limit = self.database_name_limit();
        if name.len() <= limit {
            return Ok(());
        }
        Err(crate::model::error::Error::NotOnProduct {
            option: "database name",
            product: self.name(),
            reason: format!(
                "it keeps only {limit} characters of a database name, and this cell's database \
                 `{name}` has {}: shorten the benchmark file's or the cell's name (the database is \
                 named `<file>_<cell>_r<repetition>_<pid>`)",
                name.len()
            ),
        })
    }

    /// Every option of `spec` this product cannot honour, with one sentence each. Options the
    /// spec leaves unset are never refused.
    pub fn refusals(&self, spec: &StorageSpec) -> Vec<(&'static str, String)> {
        let set: [(&'static str, bool); 13] = [
            ("data_files", spec.data_files > 1),
            ("data_size", spec.data_size.is_some()),
            ("growth", spec.growth.is_some()),
            ("log_size", spec.log_size.is_some()),
            ("log_growth", spec.log_growth.is_some()),
            ("log_pregrow", spec.log_pregrow.is_some()),
            ("ifi", spec.ifi.is_some()),
            ("recovery", spec.recovery.is_some()),
            ("maxdop", spec.maxdop.is_some()),
            ("tempdb_files", spec.tempdb_files.is_some()),
            ("tempdb_size", spec.tempdb_size.is_some()),
            ("tempdb_growth", spec.tempdb_growth.is_some()),
            ("data_on", !spec.data_on.is_empty() || spec.log_on.is_some()),
        ];
        set.iter()
            .filter(|(_, used)| *used)
            .filter_map(|(option, _)| self.reason(option).map(|r| (*option, r)))
            .collect()
    }

    /// `refusals` in one sentence per reason, each naming its options:
    /// "`data_size`, `growth`: it ignores file specifications …; `ifi`: it has no trace flags …".
    pub fn grouped(refusals: &[(&'static str, String)]) -> Vec<(Vec<&'static str>, String)> {
        let mut groups: Vec<(Vec<&'static str>, String)> = Vec::new();
        for (option, reason) in refusals {
            match groups.iter_mut().find(|(_, r)| r == reason) {
                Some((options, _)) => options.push(option),
                None => groups.push((vec![option], reason.clone())),
            }
        }
        groups
    }

    /// [`grouped`](Self::grouped) as one text.
    pub fn describe_refusals(refusals: &[(&'static str, String)]) -> String {
        Product::grouped(refusals)
            .iter()
            .map(|(options, reason)| {
                let named: Vec<String> = options.iter().map(|o| format!("`{o}`")).collect();
                format!("{}: {reason}", named.join(", "))
            })
            .collect::<Vec<_>>()
            .join("; ")
    }

    /// Why this product cannot honour `option`, or `None` when it can.
    fn reason(&self, option: &str) -> Option<String> {
        let sentence = match (self, option) {
            (Product::SqlServer, _) => return None,
            (Product::Babelfish, "maxdop") => {
                "it has no ALTER DATABASE SCOPED CONFIGURATION; parallelism is PostgreSQL's \
                 max_parallel_workers_per_gather"
            }
            (Product::Babelfish, "ifi" | "tempdb_files" | "tempdb_size" | "tempdb_growth") => {
                "it has no trace flags, no sys.dm_server_services and no tempdb files to change"
            }
            (Product::Babelfish, "recovery") => {
                "it has no ALTER DATABASE … SET RECOVERY and no BACKUP"
            }
            (Product::Babelfish, _) => {
                "it ignores file specifications in CREATE DATABASE (its storage_options escape \
                 hatch) and has no ALTER DATABASE … MODIFY FILE: the files are PostgreSQL's, so \
                 the declared layout would never exist"
            }
            (Product::AzureSqlDatabase, "maxdop") => return None,
            (Product::AzureSqlDatabase, "recovery") => {
                "it always uses FULL recovery and backs itself up"
            }
            (
                Product::AzureSqlDatabase,
                "ifi" | "tempdb_files" | "tempdb_size" | "tempdb_growth",
            ) => "it has no global trace flags and no instance-level tempdb configuration",
            (Product::AzureSqlDatabase, _) => {
                "it accepts no file specifications in CREATE DATABASE and sizes its files itself"
            }
            (Product::AzureSqlManagedInstance, "maxdop") => return None,
            (Product::AzureSqlManagedInstance, "recovery") => "it always uses FULL recovery",
            (Product::AzureSqlManagedInstance, "ifi") => {
                "it does not allow trace flag 1806/1805 or report IFI"
            }
            (
                Product::AzureSqlManagedInstance,
                "tempdb_files" | "tempdb_size" | "tempdb_growth",
            ) => "it manages tempdb's files itself",
            (Product::AzureSqlManagedInstance, _) => {
                "it places and names database files itself (no FILENAME in CREATE DATABASE)"
            }
            (Product::AzureSqlEdge, "ifi") => {
                "it does not report IFI in sys.dm_server_services, so neither state can be verified"
            }
            (Product::AzureSqlEdge, _) => return None,
        };
        Some(sentence.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn babelfish_refuses_a_database_name_it_would_shorten() {
        let long = format!("{}_r1_12345", "a".repeat(54));
        assert_eq!(long.len(), 63);
        assert!(Product::Babelfish.check_database_name(&long).is_ok());
        let longer = format!("b{long}");
        let refused = Product::Babelfish
            .check_database_name(&longer)
            .unwrap_err()
            .to_string();
        assert!(
            refused.starts_with("cannot run on Babelfish for PostgreSQL: it keeps only 63"),
            "{refused}"
        );
        assert!(refused.contains("has 64"), "{refused}");
        assert!(Product::SqlServer.check_database_name(&longer).is_ok());
        assert!(Product::SqlServer
            .check_database_name(&"c".repeat(129))
            .is_err());
    }
    use crate::model::config::{Recovery, Size};

    #[test]
    fn detects_products_from_recorded_identity() {
        // @@VERSION, EngineEdition and SERVERPROPERTY('Babelfish') as Babelfish 4.2.0 answers them
        // (recorded from the server shared/babelfish builds).
        let babelfish = "Babelfish for PostgreSQL with SQL Server Compatibility - 12.0.2000.8\n\
                         Dec  2 2026 03:58:21\nCopyright (c) Amazon Web Services\n\
                         PostgreSQL 16.3 on x86_64-pc-linux-gnu (Babelfish 4.2.0)";
        assert_eq!(Product::detect(babelfish, 2, Some("1")), Product::Babelfish);
        assert_eq!(Product::detect(babelfish, 2, None), Product::Babelfish);
        assert_eq!(
            Product::detect("Microsoft SQL Server 2022", 3, Some("1")),
            Product::Babelfish
        );
        let box_product = "Microsoft SQL Server 2022 (RTM-CU12) - 16.0.4125.3 (X64)";
        assert_eq!(Product::detect(box_product, 3, None), Product::SqlServer);
        assert_eq!(
            Product::detect("Microsoft SQL Azure (RTM) - 12.0.2000.8", 5, None),
            Product::AzureSqlDatabase
        );
        assert_eq!(
            Product::detect(box_product, 8, None),
            Product::AzureSqlManagedInstance
        );
        assert_eq!(Product::detect(box_product, 9, None), Product::AzureSqlEdge);
    }

    #[test]
    fn one_sentence_per_unsupported_option() {
        let spec = StorageSpec {
            data_size: Some(Size::new(8 << 20, "8MB")),
            recovery: Some(Recovery::Full),
            maxdop: Some(4),
            ..StorageSpec::DEFAULT
        };
        assert!(Product::SqlServer.refusals(&spec).is_empty());
        let babelfish = Product::Babelfish.refusals(&spec);
        let options: Vec<&str> = babelfish.iter().map(|(o, _)| *o).collect();
        assert_eq!(options, vec!["data_size", "recovery", "maxdop"]);
        assert!(babelfish.iter().all(|(_, r)| r.starts_with("it ")));
        let azure: Vec<&str> = Product::AzureSqlDatabase
            .refusals(&spec)
            .iter()
            .map(|(o, _)| *o)
            .collect();
        assert_eq!(
            azure,
            vec!["data_size", "recovery"],
            "MAXDOP per database works on Azure"
        );
        assert!(Product::Babelfish
            .refusals(&StorageSpec::DEFAULT)
            .is_empty());
        let every = Product::Babelfish.refusals(&StorageSpec {
            growth: Some(crate::model::config::Growth::Percent(10)),
            ..spec
        });
        let text = Product::describe_refusals(&every);
        assert!(
            text.starts_with("`data_size`, `growth`: it ignores file specifications")
                && text.contains("; `recovery`: it has no ALTER DATABASE")
                && text.matches("ignores file specifications").count() == 1,
            "{text}"
        );
        assert!(!Product::AzureSqlDatabase.has_server_event_sessions());
        assert!(Product::AzureSqlManagedInstance.has_server_event_sessions());
    }
}
