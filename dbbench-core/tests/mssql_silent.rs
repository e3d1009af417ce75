//! A SQL Server that stops answering without closing its connections (a network partition, a
//! frozen VM): the server of `DBBENCH_MSSQL` (Babelfish in CI) reached through a proxy
//! (`support::proxy`) that stops forwarding. Each case runs a child process (this test binary)
//! and checks: a cell whose `timeout = "3s"` passes fails within timeout + the cancel's grace
//! (5 s) + 10 s of the silence, saying so and naming the statement (the guarded `KILL` from a
//! second connection gets no answer either); one Ctrl-C ends the process within 30 s with the
//! results store intact; what teardown could not drop is named, and the next run's sweep removes
//! it and says so. Skipped, saying so, when `DBBENCH_MSSQL` is unset (unless
//! `DBBENCH_REQUIRE_MSSQL=1`).
//!
//! The figures (silence to failed cell, Ctrl-C to exit) are printed for the record.

mod support;

use dbbench_core::__internals::mssql::ConnectSettings;
use dbbench_core::__internals::BodyFuture;
use dbbench_core::{Connection, Session};
use std::time::Duration;
use support::silent::*;

/// The body's statement that meets the silence.
const STATEMENT: &str = "INSERT INTO t SELECT x + 1 FROM t";

fn silent_body(db: &mut Session) -> BodyFuture<'_> {
    Box::pin(async move {
        db.execute("CREATE TABLE t (x int)").await?;
        db.execute("INSERT INTO t VALUES (1), (2), (3)").await?;
        if std::env::var_os(NEVER_SILENT).is_none() {
            support::proxy::silence();
            eprintln!("{SILENT_LINE}");
        }
        db.execute(STATEMENT).await?;
        Ok(())
    })
}

support::silent::silent_benchmarks!(silent_body, "a SQL Server that stops answering");

/// `(host, port)` of an ADO connection string's `server=tcp:host,port`.
fn server_of(ado: &str) -> (String, u16) {
    let value = ado
        .split(';')
        .find_map(|kv| {
            let (k, v) = kv.split_once('=')?;
            matches!(
                k.trim().to_ascii_lowercase().as_str(),
                "server" | "data source"
            )
            .then(|| v.trim().to_string())
        })
        .expect("DBBENCH_MSSQL names its server");
    let value = value.strip_prefix("tcp:").unwrap_or(&value);
    match value.split_once(',') {
        Some((host, port)) => (host.to_string(), port.trim().parse().unwrap()),
        None => (value.to_string(), 1433),
    }
}

/// `ado` with its server replaced by the proxy on `port`.
fn through_proxy(ado: &str, port: u16) -> String {
    let rest: Vec<&str> = ado
        .split(';')
        .filter(|kv| {
            let key = kv
                .split('=')
                .next()
                .unwrap_or("")
                .trim()
                .to_ascii_lowercase();
            key != "server" && key != "data source"
        })
        .collect();
    format!("server=tcp:127.0.0.1,{port};{}", rest.join(";"))
}

/// In a child: the proxy in front of the server, and `DBBENCH_MSSQL` naming the proxy (set before
/// anything reads it; the child runs this one test alone).
fn child_setup() -> bool {
    if std::env::var_os(CHILD).is_none() {
        return false;
    }
    let ado = std::env::var("DBBENCH_MSSQL").unwrap();
    let (host, port) = server_of(&ado);
    let proxy = support::proxy::start(support::proxy::Upstream::Tcp(format!("{host}:{port}")));
    std::env::set_var("DBBENCH_MSSQL", through_proxy(&ado, proxy));
    true
}

/// Through the runner alone: through the harness, a failed cell would be checked against a
/// snapshot.
#[test]
fn child_timed() {
    if child_setup() {
        let result = support::try_run(&TIMED, &child_context("timed")).unwrap();
        eprintln!("TEST: cell status: {:?}", result.cells[0].status);
    }
}

#[test]
fn child_untimed() {
    if child_setup() {
        dbbench_core::__private::run_test(&UNTIMED, "only");
    }
}

/// The next run, through the runner alone (its sweep is what is checked).
#[test]
fn child_sweeps() {
    if child_setup() {
        support::try_run(&UNTIMED, &child_context("sweep")).unwrap();
    }
}

/// The server of `DBBENCH_MSSQL`, or `None` (skipped, said) when it is not set, unless
/// `DBBENCH_REQUIRE_MSSQL=1`.
fn server() -> Option<String> {
    let ado = std::env::var(dbbench_core::__internals::mssql::ENV)
        .ok()
        .filter(|v| !v.trim().is_empty());
    if ado.is_none() {
        let required = std::env::var(dbbench_core::__internals::mssql::REQUIRE_ENV)
            .is_ok_and(|v| v.trim() == "1");
        assert!(
            !required,
            "DBBENCH_REQUIRE_MSSQL=1 but DBBENCH_MSSQL is not set: start a server (Babelfish: \
             ../shared/babelfish/start.sh) and set DBBENCH_MSSQL"
        );
        eprintln!("skipped: DBBENCH_MSSQL not set");
    }
    ado
}

/// dbbench's databases on the server that the processes `pids` made (names end in `_<pid>`).
fn databases_of(ado: &str, pids: &[u32]) -> Vec<String> {
    let settings = ConnectSettings::parse(ado).unwrap();
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
        .block_on(async {
            let mut conn = Connection::new(settings.connect(Some("master")).await.unwrap());
            let rows = conn
                .query(
                    "SELECT CAST(name AS nvarchar(128)) AS name FROM sys.databases \
                     WHERE name LIKE 'dbbench[_]%'",
                )
                .await
                .unwrap();
            rows.iter()
                .map(|r| r.get::<String>(0).unwrap())
                .filter(|name| pids.iter().any(|pid| name.ends_with(&format!("_{pid}"))))
                .collect()
        })
}

/// The PIDs of the processes whose databases a run says it left (names end in `_<pid>`).
fn child_pids(outcome: &Outcome) -> Vec<u32> {
    let mut pids: Vec<u32> = outcome
        .text()
        .split("the database ")
        .skip(1)
        .filter_map(|rest| {
            let (name, _) = rest.split_once(" was left")?;
            name.rsplit('_').next()?.parse().ok()
        })
        .collect();
    pids.dedup();
    pids
}

/// The next run through the proxy, never silent: its sweep says it removes what `earlier` left,
/// and nothing of theirs stays on the server.
fn next_run_sweeps(ado: &str, dir: &std::path::Path, earlier: &Outcome) {
    let pids = child_pids(earlier);
    assert!(
        !pids.is_empty(),
        "the run names its database:\n{}",
        earlier.text()
    );
    let left = databases_of(ado, &pids);
    assert!(
        !left.is_empty(),
        "teardown could not drop on a silent server"
    );
    let after = run_child(
        "child_sweeps",
        "mssql",
        "proxy",
        dir,
        &[(NEVER_SILENT, "1")],
        None,
    );
    assert!(after.success, "{}", after.text());
    for name in &left {
        let said = format!("mssql: removed database {name} left by pid");
        assert!(
            after.text().contains(&said),
            "`{said}` in:\n{}",
            after.text()
        );
    }
    assert_eq!(databases_of(ado, &pids), Vec::<String>::new());
}

#[test]
fn sql_server_behind_a_proxy_that_stops_forwarding() {
    if std::env::var_os(CHILD).is_some() {
        return;
    }
    let Some(ado) = server() else {
        return;
    };
    let dir = support::scratch("mssql-silent");

    // The timeout fires; teardown gets no answer either and names what it leaves.
    let timed = run_child(
        "child_timed",
        "mssql",
        "proxy",
        &dir,
        &[("DBBENCH_DEADLINE_TEARDOWN", "3s")],
        None,
    );
    let failure = silent_failure(STATEMENT);
    let failed = timed
        .at(&failure)
        .unwrap_or_else(|| panic!("no failure line:\n{}", timed.text()));
    let to_failure = failed - timed.silent_at();
    eprintln!(
        "measured: SQL Server behind a silent proxy, silence to failed cell {:.1} s, to exit \
         {:.1} s",
        to_failure.as_secs_f64(),
        (timed.exited_at - timed.silent_at()).as_secs_f64()
    );
    assert!(
        to_failure <= Duration::from_secs(3 + 5 + 10),
        "{to_failure:?}"
    );
    assert_cell_failed(&timed, &failure);
    assert!(
        timed
            .text()
            .contains("its ownership marker keeps it for the next run's sweep"),
        "{}",
        timed.text()
    );
    next_run_sweeps(&ado, &dir, &timed);

    // One Ctrl-C, with the default deadlines, ends the run within 30 s.
    let interrupted = run_child(
        "child_untimed",
        "mssql",
        "proxy",
        &dir,
        &[],
        Some(Duration::from_secs(1)),
    );
    let sigint = interrupted.sigint_at.expect("SIGINT sent");
    let to_exit = interrupted.exited_at - sigint;
    eprintln!(
        "measured: SQL Server behind a silent proxy, SIGINT to exit {:.1} s",
        to_exit.as_secs_f64()
    );
    assert!(
        to_exit <= Duration::from_secs(30),
        "{to_exit:?}\n{}",
        interrupted.text()
    );
    assert!(!interrupted.success);
    assert!(
        interrupted.text().contains("interrupted by SIGINT"),
        "{}",
        interrupted.text()
    );
    assert_store_intact(&dir, 1, "interrupted");
    next_run_sweeps(&ado, &dir, &interrupted);
}
