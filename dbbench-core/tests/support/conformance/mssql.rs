//! SQL Server as a conformance target: the scripted server (recorded answers of SQL Server 2022,
//! behind the private `_mssql_scripted` feature), and a live server (Babelfish in CI) when
//! `DBBENCH_MSSQL` names one. Databases are found and staged from a connection to `master`.

use super::{Owner, Target};
use crate::support::{mssql_marker, my_start, no_such_pid};
use dbbench_core::__internals::mssql::{marker, ConnectSettings, MssqlBackend};
use dbbench_core::__internals::{Backend, RunContext};
use dbbench_core::Connection;
use std::io::Write;
use std::time::Duration;

/// The ownership marker of a staged database of `owner`.
fn marker_of(owner: Owner) -> String {
    let me = std::process::id();
    match owner {
        Owner::Gone => mssql_marker(no_such_pid(), 1),
        Owner::Reused => mssql_marker(me, my_start() + 1),
        Owner::Me => mssql_marker(me, my_start()),
    }
}

fn say(line: &str) {
    let _ = writeln!(std::io::stderr().lock(), "{line}");
}

/// The server of `DBBENCH_MSSQL`, or `None` (the test is skipped, saying so) when it is not
/// set, unless `DBBENCH_REQUIRE_MSSQL=1` says the tests must run.
pub fn live_server() -> Option<String> {
    use dbbench_core::__internals::mssql::{ENV, REQUIRE_ENV};
    let ado = std::env::var(ENV).ok().filter(|v| !v.trim().is_empty());
    if ado.is_none() {
        let required = std::env::var(REQUIRE_ENV).is_ok_and(|v| v.trim() == "1");
        assert!(
            !required,
            "DBBENCH_REQUIRE_MSSQL=1 but DBBENCH_MSSQL is not set: start a server (Babelfish: \
             ../shared/babelfish/start.sh) and set DBBENCH_MSSQL"
        );
        say("skipped: DBBENCH_MSSQL not set");
    }
    ado
}

/// The names of this process's `dbbench_` databases on the server `conn` reaches.
async fn own_databases(conn: &mut Connection) -> Vec<String> {
    let pattern = format!("dbbench[_]%{}%", std::process::id());
    conn.query(&format!(
        "SELECT CAST(name AS nvarchar(128)) AS name FROM sys.databases WHERE name LIKE '{pattern}'"
    ))
    .await
    .unwrap()
    .iter()
    .map(|r| r.get::<String>(0).unwrap())
    .collect()
}

/// `DB_ID(name)` on the server: whether the database exists.
async fn db_exists(conn: &mut Connection, name: &str) -> bool {
    let id: Option<i64> = conn
        .query_scalar(&format!("SELECT CAST(DB_ID(N'{name}') AS bigint)"))
        .await
        .unwrap();
    id.is_some()
}

/// Drops database `name` (SET SINGLE_USER first where the product has it).
async fn drop_db(conn: &mut Connection, name: &str) {
    let single = format!("ALTER DATABASE [{name}] SET SINGLE_USER WITH ROLLBACK IMMEDIATE");
    let _ = conn.batch(&single).await;
    conn.batch(&format!("DROP DATABASE [{name}]"))
        .await
        .unwrap();
}

/// A live SQL Server (or Babelfish) named by `DBBENCH_MSSQL`.
pub struct Live;

impl Live {
    async fn master(&self) -> (ConnectSettings, Connection) {
        let settings = ConnectSettings::parse(&live_server().unwrap()).unwrap();
        let conn = Connection::new(settings.connect(Some("master")).await.unwrap());
        (settings, conn)
    }
}

impl Target for Live {
    async fn backend(&self) -> Option<Backend> {
        live_server()?;
        Some(Backend::new(
            MssqlBackend::from_env().await.expect("connects"),
        ))
    }

    /// This process's databases still on the server, which are then dropped, so that a failed
    /// test leaves nothing behind either.
    async fn leftovers(&self, _: &RunContext) -> Vec<String> {
        let (_, mut conn) = self.master().await;
        let left = own_databases(&mut conn).await;
        for name in &left {
            drop_db(&mut conn, name).await;
        }
        left
    }

    fn placeholder(&self, n: usize) -> String {
        format!("@P{n}")
    }

    fn settings(&self) -> &'static [&'static str] {
        &["database.recovery_model"]
    }

    fn missing_table_error(&self) -> &'static [&'static str] {
        &["no_such_table"]
    }

    /// A count over a quadruple cross join of the catalog, which every product runs (Babelfish
    /// has no `WAITFOR`): only a killed session ends it early.
    fn runaway(&self) -> &'static str {
        "SELECT COUNT_BIG(*) FROM sys.all_objects a CROSS JOIN sys.all_objects b \
         CROSS JOIN sys.all_objects c CROSS JOIN sys.all_objects d"
    }

    /// The kill logs in from a second connection first.
    fn stop_within(&self) -> Duration {
        Duration::from_secs(30)
    }

    fn names_statement(&self) -> bool {
        false
    }

    async fn stage_foreign(&self, _: &RunContext, _: &mut Connection, name: &str, _: bool) {
        let (_, mut conn) = self.master().await;
        conn.batch(&format!("CREATE DATABASE [{name}]"))
            .await
            .unwrap();
    }

    async fn stage_owned(
        &self,
        _: &RunContext,
        _: &mut Connection,
        name: &str,
        owner: Owner,
    ) -> bool {
        let (settings, mut conn) = self.master().await;
        conn.batch(&format!("CREATE DATABASE [{name}]"))
            .await
            .unwrap();
        // As dbbench marks: from inside the database (Babelfish runs a three-part procedure
        // name in the current database).
        let mut inside = settings.connect(Some(name)).await.unwrap();
        inside
            .raw()
            .unwrap()
            .simple_query(marker::add_property_here_sql(&marker_of(owner)))
            .await
            .unwrap()
            .into_results()
            .await
            .unwrap();
        true
    }

    async fn exists(&self, _: &RunContext, _: &mut Connection, name: &str) -> bool {
        db_exists(&mut self.master().await.1, name).await
    }

    async fn remove(&self, _: &RunContext, _: &mut Connection, name: &str) {
        let (_, mut conn) = self.master().await;
        drop_db(&mut conn, name).await;
        for owner in [Owner::Gone, Owner::Reused, Owner::Me] {
            let sql = marker::stray_property_cleanup_sql(&marker_of(owner));
            conn.batch(&sql).await.unwrap();
        }
    }
}

#[cfg(feature = "_mssql_scripted")]
#[allow(unused_imports)] // Each test binary uses what it needs.
pub use scripted::{identity, Scripted, IDENTITY_COLUMNS};

#[cfg(feature = "_mssql_scripted")]
mod scripted {
    use super::*;
    use dbbench_core::__internals::mssql::double::{Recorded, Reply, ScriptedServer};
    use dbbench_core::__internals::mssql::Hooks;
    use dbbench_core::Value;
    use std::sync::Mutex;

    const ADO: &str = "server=tcp:sql2022,1433;user id=bench;password=Sc3ipted!Pass";

    /// The columns of the properties query (engine/mssql/server.rs).
    pub const IDENTITY_COLUMNS: [&str; 11] = [
        "product_version",
        "product_level",
        "product_update_level",
        "edition",
        "engine_edition",
        "babelfish",
        "default_data_path",
        "default_log_path",
        "machine_name",
        "is_sysadmin",
        "version_text",
    ];

    /// `SERVERPROPERTY` and `@@VERSION` as a server answers them.
    pub fn identity(version_text: &str, engine_edition: i64, data_path: Option<&str>) -> Reply {
        let text = |v: &str| Value::Text(v.to_string());
        let path = data_path.map_or(Value::Null, text);
        Reply::rows(
            &IDENTITY_COLUMNS,
            vec![vec![
                text("16.0.4135.4"),
                text("RTM"),
                text("CU15"),
                text("Developer Edition (64-bit)"),
                Value::Int(engine_edition),
                Value::Null,
                path.clone(),
                path,
                text("sql2022"),
                Value::Int(1),
                text(version_text),
            ]],
        )
    }

    /// The scripted SQL Server 2022 (recorded answers, sessions modelled); the server of the
    /// last backend is kept to answer what is left on it.
    #[derive(Default)]
    pub struct Scripted(Mutex<Option<ScriptedServer>>);

    impl Scripted {
        fn server(&self) -> ScriptedServer {
            self.0
                .lock()
                .unwrap()
                .clone()
                .expect("a backend was started")
        }

        async fn master(&self) -> Connection {
            let settings = ConnectSettings::scripted(ADO, &self.server()).unwrap();
            Connection::new(settings.connect(Some("master")).await.unwrap())
        }
    }

    fn sql_server_2022() -> ScriptedServer {
        let one = |column: &str, value: Value| Reply::rows(&[column], vec![vec![value]]);
        let server = ScriptedServer::new()
            .with_catalog(Recorded::SqlServer2022)
            .with_sessions();
        server
            .on("SERVERPROPERTY('ProductVersion')", identity(
                "Microsoft SQL Server 2022 (RTM-CU15) (KB5041321) - 16.0.4135.4 (X64)\n\tJul 10 2024 14:09:09\n\tDeveloper Edition (64-bit) on Linux (Ubuntu 22.04.4 LTS) <X64>",
                3,
                Some("/var/opt/mssql/data/"),
            ))
            .on("sys.dm_os_host_info", one("host_platform", Value::Text("Linux".into())))
            .on("sys.dm_server_services", one("ifi", Value::Text("Y".into())))
            .on("AS recovery FROM sys.databases", one("recovery", Value::Text("FULL".into())))
            .on("database_id = 3 AND file_id = 1", one("pages", Value::Int(1024)))
            // The double keeps no rows: an insert says it wrote one, every count is one.
            .on("INSERT INTO conformance_rows", Reply::Affected(1))
            .on("SELECT count(*) FROM", one("n", Value::Int(1)))
            .on("no_such_table", Reply::error(208, "Invalid object name 'no_such_table'."));
        server
    }

    impl Target for Scripted {
        async fn backend(&self) -> Option<Backend> {
            let server = sql_server_2022();
            let settings = ConnectSettings::scripted(ADO, &server).unwrap();
            *self.0.lock().unwrap() = Some(server);
            let backend = MssqlBackend::connect(settings, Hooks::default(), false);
            Some(Backend::new(backend.await.unwrap()))
        }

        async fn leftovers(&self, _: &RunContext) -> Vec<String> {
            self.server().databases()
        }

        fn placeholder(&self, n: usize) -> String {
            format!("@P{n}")
        }

        fn settings(&self) -> &'static [&'static str] {
            &["database.recovery_model"]
        }

        fn missing_table_error(&self) -> &'static [&'static str] {
            &["error 208", "Invalid object name 'no_such_table'"]
        }

        /// The scripted server answers at once: the suite sends it again until the kill.
        fn runaway(&self) -> &'static str {
            "INSERT INTO t VALUES (1)"
        }

        fn stores_rows(&self) -> bool {
            false
        }

        async fn stage_foreign(&self, _: &RunContext, _: &mut Connection, name: &str, _: bool) {
            let sql = format!("CREATE DATABASE [{name}]");
            self.master().await.batch(&sql).await.unwrap();
        }

        async fn stage_owned(
            &self,
            _: &RunContext,
            _: &mut Connection,
            name: &str,
            owner: Owner,
        ) -> bool {
            let mut conn = self.master().await;
            conn.batch(&format!("CREATE DATABASE [{name}]"))
                .await
                .unwrap();
            let sql = marker::add_property_sql(name, &marker_of(owner));
            conn.batch(&sql).await.unwrap();
            true
        }

        async fn exists(&self, _: &RunContext, _: &mut Connection, name: &str) -> bool {
            self.server().databases().iter().any(|d| d == name)
        }

        async fn remove(&self, _: &RunContext, _: &mut Connection, name: &str) {
            drop_db(&mut self.master().await, name).await;
        }
    }
}
