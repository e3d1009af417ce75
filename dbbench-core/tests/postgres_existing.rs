//! End to end on an existing PostgreSQL server, the way `DBBENCH_POSTGRES` reaches one: over TCP
//! with SCRAM password authentication, as an ordinary user who may create databases and nothing
//! more, the driver's four workers included. The server is a real cluster this test starts and removes; dbbench sees only the
//! connection string. Checked: a two-cell benchmark runs with its evidence (what the user may not
//! read is recorded as unavailable), a server-wide option is skipped by name, the server's other
//! databases, their rows and every server setting are as they were, dbbench's databases are gone,
//! and the password appears in no result and no error. A wrong password and a user who may not
//! create databases end with the server's reason.

mod support;

use dbbench_core::__internals::postgres::cluster;
use dbbench_core::__internals::postgres::settings::PgSettings;
use dbbench_core::__internals::postgres::PostgresConnection;
use dbbench_core::__internals::RunContext;
use dbbench_core::__internals::Volumes;
use dbbench_core::__private::{BodyFuture, FixtureKind, RunSpec, StorageSpec};
use dbbench_core::driver::{Load, Op, Work};
use dbbench_core::results::CellStatus;
use dbbench_core::{Connection, Scale, Session, Value};
use support::existing_postgres::ExistingPostgres;
use support::{cell, double, processes_under, try_run_external};
use tokio_postgres::NoTls;

/// Set by the first worker when its connection speaks the protocol itself over TCP.
static SPOKE_THE_PROTOCOL: std::sync::atomic::AtomicBool =
    std::sync::atomic::AtomicBool::new(false);

const PASSWORD: &str = "s3cret-Pa55word-never-shown";
const USER: &str = "bench_user";
const NO_CREATE_USER: &str = "bench_reader";

/// The server: a cluster listening on 127.0.0.1 with password authentication for TCP, removed
/// when dropped (also when an assertion fails).
struct Server(ExistingPostgres);

impl std::ops::Deref for Server {
    type Target = ExistingPostgres;
    fn deref(&self) -> &ExistingPostgres {
        &self.0
    }
}

impl Server {
    fn start(base: &std::path::Path) -> Server {
        // Later lines of postgresql.conf win: this one opens the loopback port.
        let settings = vec![("listen_addresses".into(), "'127.0.0.1'".into())];
        Server(ExistingPostgres::start(base, "existing", settings))
    }

    /// What a user would put in `DBBENCH_POSTGRES`.
    fn url(&self, user: &str, password: &str) -> String {
        format!(
            "host=127.0.0.1 port={} user={user} password={password} dbname=postgres",
            self.port()
        )
    }
}

fn block_on<T>(work: impl std::future::Future<Output = T>) -> T {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
        .block_on(work)
}

/// Runs `sql` as the superuser and returns the first column of each row as text.
fn admin_query(server: &Server, sql: &str) -> Vec<String> {
    block_on(async {
        let (client, connection) = tokio_postgres::connect(&server.admin(), NoTls)
            .await
            .unwrap();
        let io = tokio::spawn(connection);
        let rows = client.simple_query(sql).await.unwrap();
        drop(client);
        let _ = io.await;
        rows.into_iter()
            .filter_map(|m| match m {
                tokio_postgres::SimpleQueryMessage::Row(r) => {
                    Some(r.get(0).unwrap_or("NULL").to_string())
                }
                _ => None,
            })
            .collect()
    })
}

/// Every setting of the server with its value and where it came from.
fn all_settings(server: &Server) -> Vec<String> {
    admin_query(
        server,
        "SELECT name || '=' || setting || ' (' || source || ')' FROM pg_settings ORDER BY name",
    )
}

fn databases(server: &Server) -> Vec<String> {
    admin_query(
        server,
        "SELECT datname FROM pg_database WHERE NOT datistemplate ORDER BY datname",
    )
}

fn doubling(db: &mut Session) -> BodyFuture<'_> {
    Box::pin(async move {
        double(db, 1).await?;
        // The driver's workers connect over the same TCP and SCRAM, and speak the protocol
        // themselves once the server let them in.
        db.execute("CREATE TABLE worker_rows (id bigint PRIMARY KEY, worker integer)")
            .await?;
        let load = Load::new(4, Work::Statements(200)).statements_per_transaction(5);
        db.load(load)
            .run(async move |conn: &mut Connection, op: Op| {
                if let (0, Some(pg)) = (op.id, conn.downcast_mut::<PostgresConnection>()) {
                    // Only a connection that speaks the protocol itself has no client to lend.
                    let refused = pg.with_client(|c| c.simple_query("SELECT 1")).await;
                    let wire = refused.is_err_and(|e| e.to_string().contains("protocol itself"));
                    SPOKE_THE_PROTOCOL.store(wire, std::sync::atomic::Ordering::SeqCst);
                }
                conn.execute_with(
                    "INSERT INTO worker_rows VALUES ($1, $2)",
                    &[Value::Int(op.id as i64), Value::Int(op.worker.into())],
                )
                .await
            })
            .await?;
        let rows: i64 = db.query_scalar("SELECT count(*) FROM worker_rows").await?;
        db.record_count("worker_rows", rows);
        let workers: String = db
            .query_scalar("SELECT current_setting('max_parallel_workers_per_gather')")
            .await?;
        db.record_count("parallel_workers", workers.parse().unwrap());
        Ok(())
    })
}

support::benchmark! {
    static ON_EXISTING = doubling,
    title: "",
    run: RunSpec {
        repeat: 1,
        warmup: 1,
        fixture: FixtureKind::Credit,
        ..RunSpec::DEFAULT
    },
    cells: [
        cell("plain", StorageSpec::DEFAULT),
        cell(
            "one_worker",
            StorageSpec {
                maxdop: Some(2),
                ..StorageSpec::DEFAULT
            }
        ),
        cell(
            "wal_zero_fill",
            StorageSpec {
                ifi: Some(false),
                ..StorageSpec::DEFAULT
            }
        ),
    ],
}

fn context(name: &str) -> RunContext {
    support::context(
        &format!("pg-existing-{name}"),
        Scale::parse("0.002").unwrap(),
        Volumes::default(),
    )
}

#[test]
fn an_existing_server_keeps_its_databases_and_settings_and_never_sees_the_password_printed() {
    if !cluster::available_for_tests() {
        return;
    }
    let base = support::scratch("pg-existing-server");
    let server = Server::start(&base);
    admin_query(
        &server,
        &format!(
            "CREATE ROLE {USER} LOGIN CREATEDB PASSWORD '{PASSWORD}'; \
             CREATE ROLE {NO_CREATE_USER} LOGIN PASSWORD '{PASSWORD}'"
        ),
    );
    admin_query(&server, "CREATE DATABASE keep_me");
    block_on(async {
        let url = format!("{} dbname=keep_me", server.admin());
        let (client, connection) = tokio_postgres::connect(&url, NoTls).await.unwrap();
        let io = tokio::spawn(connection);
        client
            .batch_execute(
                "CREATE TABLE precious (id integer PRIMARY KEY, note text); \
                 INSERT INTO precious VALUES (1, 'do not drop'), (2, 'do not change')",
            )
            .await
            .unwrap();
        drop(client);
        let _ = io.await;
    });
    // Password authentication over TCP, as on a real server; the superuser keeps its socket.
    let hba = server.cluster.pgdata().join("pg_hba.conf");
    std::fs::write(
        &hba,
        "local all all trust\nhost all all 127.0.0.1/32 scram-sha-256\n",
    )
    .unwrap();
    admin_query(&server, "SELECT pg_reload_conf()");
    std::thread::sleep(std::time::Duration::from_millis(300));
    let settings_before = all_settings(&server);
    let databases_before = databases(&server);

    let ctx = context("run");
    let settings = PgSettings::parse(&server.url(USER, PASSWORD)).unwrap();
    assert!(!format!("{settings:?}").contains(PASSWORD));
    let result = try_run_external(&ON_EXISTING, &ctx, settings).expect("the benchmark runs");

    assert_eq!(result.backend.kind, "postgres");
    assert_eq!(
        result.backend.preconditions["mode"],
        "existing server (DBBENCH_POSTGRES)"
    );
    assert_eq!(result.backend.preconditions["superuser"], "off");
    for (i, name) in ["plain", "one_worker"].iter().enumerate() {
        let cell = &result.cells[i];
        assert_eq!(&cell.name, name);
        assert_eq!(cell.status, CellStatus::Ok, "{name}: {:?}", cell.status);
        let run = &cell.runs[1];
        assert!(run.counts["fixture_rows"] > 0);
        assert_eq!(run.counts["worker_rows"], 200);
        assert!(run.values["pg_wal_records"] > 0.0, "{:?}", run.values);
        assert!(run.values["pg_db_tup_inserted"] > 0.0, "{:?}", run.values);
        // An ordinary user may not list the WAL directory: unavailable, with the server's reason.
        assert!(run.log.is_none());
        assert!(
            run.unavailable["log"].contains("permission denied for function pg_ls_waldir"),
            "{:?}",
            run.unavailable
        );
        // The server's settings are left alone, yet the database's are pinned: JIT off on
        // dbbench's database, autovacuum off on its tables, and the settings read back.
        assert_eq!(run.settings["pg.jit"].value, "off");
        assert_eq!(run.settings["pg.jit"].source.as_deref(), Some("database"));
        assert!(run.facts["jit"].starts_with("off"), "{:?}", run.facts);
        assert!(
            run.values["pg_autovacuum_disabled_tables"] >= 1.0,
            "{:?}",
            run.unavailable
        );
        assert_eq!(run.counts["pg_autovacuum_runs"], 0);
    }
    // The maxdop cell differs only in the setting maxdop sets.
    let found = dbbench_core::results::confounders(&result);
    assert!(found.is_empty(), "{found:#?}");
    assert!(SPOKE_THE_PROTOCOL.load(std::sync::atomic::Ordering::SeqCst));
    // The server's default of 2 on the plain cell; maxdop 2 is one worker besides the leader,
    // set on dbbench's own database only.
    assert_eq!(result.cells[0].runs[1].counts["parallel_workers"], 2);
    assert_eq!(result.cells[1].runs[1].counts["parallel_workers"], 1);
    match &result.cells[2].status {
        CellStatus::Skipped(why) => assert!(
            why.contains("`ifi`") && why.contains("DBBENCH_POSTGRES"),
            "{why}"
        ),
        other => panic!("a server-wide option must be skipped, got {other:?}"),
    }

    // Nothing of the server changed, and nothing of dbbench is left on it.
    assert_eq!(databases(&server), databases_before);
    let precious = block_on(async {
        let url = format!("{} dbname=keep_me", server.admin());
        let (client, connection) = tokio_postgres::connect(&url, NoTls).await.unwrap();
        let io = tokio::spawn(connection);
        let row = client
            .query_one(
                "SELECT string_agg(id || ':' || note, ',' ORDER BY id) FROM precious",
                &[],
            )
            .await
            .unwrap();
        drop(client);
        let _ = io.await;
        row.get::<_, String>(0)
    });
    assert_eq!(precious, "1:do not drop,2:do not change");
    assert_eq!(all_settings(&server), settings_before);
    assert_eq!(
        admin_query(
            &server,
            "SELECT count(*) FROM pg_db_role_setting s JOIN pg_database d ON d.oid = \
             s.setdatabase"
        ),
        ["0"],
        "no per-database setting left behind"
    );
    let json = serde_json::to_string(&result).unwrap();
    assert!(!json.contains(PASSWORD), "the password is in the results");

    // A wrong password: the server's reason, and still no password.
    let wrong = PgSettings::parse(&server.url(USER, "not-the-password-either")).unwrap();
    let error = try_run_external(&ON_EXISTING, &context("wrong"), wrong)
        .expect_err("a wrong password cannot connect")
        .to_string();
    assert!(
        error.contains("password authentication failed") && error.contains(USER),
        "{error}"
    );
    assert!(
        !error.contains("not-the-password-either") && !error.contains(PASSWORD),
        "{error}"
    );

    // A user who may log in but not create databases: each cell fails with the server's
    // permission error, and nothing is created or dropped.
    let reader = PgSettings::parse(&server.url(NO_CREATE_USER, PASSWORD)).unwrap();
    let denied = try_run_external(&ON_EXISTING, &context("denied"), reader)
        .expect("the benchmark runs and its cells fail");
    for cell in &denied.cells[..2] {
        match &cell.status {
            CellStatus::Failed(e) => assert!(
                e.contains("permission denied to create database") && !e.contains(PASSWORD),
                "{}: {e}",
                cell.name
            ),
            other => panic!(
                "{}: expected a permission failure, got {other:?}",
                cell.name
            ),
        }
    }
    assert_eq!(databases(&server), databases_before);
    assert_eq!(all_settings(&server), settings_before);

    let pgdata = server.cluster.pgdata().to_path_buf();
    let owned = server.cluster.owned().to_vec();
    drop(server);
    assert!(processes_under(&pgdata).is_empty(), "server processes left");
    let left: Vec<_> = owned.iter().filter(|dir| dir.exists()).collect();
    assert!(left.is_empty(), "cluster directories left: {left:?}");
}
