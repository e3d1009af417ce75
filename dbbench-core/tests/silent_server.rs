//! A server that stops answering without closing its connections, on PostgreSQL: every process
//! of the managed cluster stopped with SIGSTOP, and an existing server (a managed cluster reached
//! over TCP through a proxy, `support::proxy`) whose proxy stops forwarding, as a network
//! partition would. Each case runs a child process (this test binary, running the benchmark
//! through the harness as a generated `#[db_bench]` test does) and checks: a cell whose
//! `timeout = "3s"` passes fails within timeout + the cancel's grace (5 s) + 10 s of the server
//! falling silent, saying so and naming the statement; one Ctrl-C ends the process within 30 s;
//! the results store is intact; no server process or directory of the managed cluster is left;
//! on the existing server, what teardown could not drop is named, and the next run's sweep says
//! it removes it and does.
//!
//! The figures (silence to failed cell, Ctrl-C to exit) are printed for the record.

mod support;

use support::silent::*;

use dbbench_core::__internals::postgres::cluster::{self, Binaries, Cluster, ClusterSpec};
use dbbench_core::__internals::BodyFuture;
use dbbench_core::Session;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The body's statement that meets the silence.
const STATEMENT: &str = "INSERT INTO t SELECT x + 1 FROM t";

/// Makes the server silent: SIGSTOP to every process of the managed cluster, or the proxy stops
/// forwarding.
async fn go_silent(db: &mut Session) {
    if std::env::var(CHILD).as_deref() == Ok("managed") {
        let data_dir: String = db.query_scalar("SHOW data_directory").await.unwrap();
        let pids = support::processes_under(Path::new(&data_dir));
        assert!(!pids.is_empty(), "the cluster's processes");
        for pid in &pids {
            // SAFETY: kill has no memory preconditions; these are this run's cluster's processes.
            unsafe { libc::kill(*pid as i32, libc::SIGSTOP) };
        }
        let list: Vec<String> = pids.iter().map(u32::to_string).collect();
        eprintln!("TEST: data_dir={data_dir} stopped={}", list.join(","));
    } else {
        support::proxy::silence();
    }
}

fn silent_body(db: &mut Session) -> BodyFuture<'_> {
    Box::pin(async move {
        db.execute("CREATE TABLE t AS SELECT g AS x FROM generate_series(1, 20000) g")
            .await?;
        if std::env::var_os(NEVER_SILENT).is_none() {
            go_silent(db).await;
            eprintln!("{SILENT_LINE}");
        }
        db.execute(STATEMENT).await?;
        Ok(())
    })
}

support::silent::silent_benchmarks!(silent_body, "a server that stops answering");

/// In a child of the remote mode: the proxy in front of the upstream socket, and
/// `DBBENCH_POSTGRES` naming the proxy (set before anything reads it; the child runs this one
/// test alone).
fn child_setup() -> bool {
    let Ok(mode) = std::env::var(CHILD) else {
        return false;
    };
    if mode != "managed" {
        let port = support::proxy::start(support::proxy::Upstream::Unix(PathBuf::from(mode)));
        std::env::set_var(
            "DBBENCH_POSTGRES",
            format!("host=127.0.0.1 port={port} user=dbbench dbname=postgres"),
        );
    }
    true
}

/// The timed run goes through the runner alone: through the harness, a failed cell would be
/// checked against a snapshot.
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

/// The next run, through the runner alone (its sweep is what is checked; a run through the
/// harness would record a snapshot).
#[test]
fn child_sweeps() {
    if child_setup() {
        support::try_run(&UNTIMED, &child_context("sweep")).unwrap();
    }
}

#[test]
fn managed_cluster_stopped_by_sigstop() {
    if std::env::var_os(CHILD).is_some() || !cluster::available_for_tests() {
        return;
    }
    // The timeout fires: the cell fails, the cluster is killed and removed.
    let dir = support::scratch("silent-managed");
    let timed = run_child(
        "child_timed",
        "postgres",
        "managed",
        &dir,
        &[
            ("DBBENCH_DEADLINE_TEARDOWN", "3s"),
            ("DBBENCH_DEADLINE_SERVER_STOP", "2s"),
        ],
        None,
    );
    let failure = silent_failure(STATEMENT);
    let failed = timed
        .at(&failure)
        .unwrap_or_else(|| panic!("no failure line:\n{}", timed.text()));
    let to_failure = failed - timed.silent_at();
    eprintln!(
        "measured: managed PostgreSQL, SIGSTOP to failed cell {:.1} s, to exit {:.1} s",
        to_failure.as_secs_f64(),
        (timed.exited_at - timed.silent_at()).as_secs_f64()
    );
    assert!(
        to_failure <= Duration::from_secs(3 + 5 + 10),
        "{to_failure:?}"
    );
    assert_cell_failed(&timed, &failure);
    assert_server_gone(&timed);

    // One Ctrl-C, with the default deadlines, ends the run within 30 s.
    let interrupted = run_child(
        "child_untimed",
        "postgres",
        "managed",
        &dir,
        &[],
        Some(Duration::from_secs(1)),
    );
    let sigint = interrupted.sigint_at.expect("SIGINT sent");
    let to_exit = interrupted.exited_at - sigint;
    eprintln!(
        "measured: managed PostgreSQL, SIGINT to exit {:.1} s",
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
    assert_server_gone(&interrupted);
    assert_store_intact(&dir, 1, "interrupted");
}

/// An existing server for the remote path: a managed cluster this test starts, reached by the
/// child only through its proxy.
struct Server {
    cluster: Cluster,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.cluster.destroy();
    }
}

impl Server {
    fn start(base: &Path) -> Server {
        let binaries = Binaries::find().unwrap();
        let (work_base, _) =
            dbbench_core::__internals::postgres::place::work_base(base, cluster::run_as().unwrap());
        std::fs::create_dir_all(&work_base).unwrap();
        let spec = ClusterSpec {
            work_base,
            data_base: None,
            wal_base: None,
            wal_segsize_mb: None,
            settings: Vec::new(),
        };
        let cluster = Cluster::start(&binaries, spec, format!("silent-{}", std::process::id()))
            .expect("the existing server starts");
        Server { cluster }
    }

    /// The server's socket file, the proxy's upstream.
    fn socket(&self) -> String {
        let t = self.cluster.settings().target("postgres");
        format!("{}/.s.PGSQL.{}", t.host, t.port)
    }

    /// dbbench's databases on the server.
    fn dbbench_databases(&self) -> Vec<String> {
        let t = self.cluster.settings().target("postgres");
        let url = format!(
            "host={} port={} user={} dbname=postgres",
            t.host, t.port, t.user
        );
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap()
            .block_on(async {
                let (client, connection) = tokio_postgres::connect(&url, tokio_postgres::NoTls)
                    .await
                    .unwrap();
                let io = tokio::spawn(connection);
                let rows = client
                    .query(
                        "SELECT datname FROM pg_database WHERE datname LIKE 'dbbench\\_%'",
                        &[],
                    )
                    .await
                    .unwrap();
                drop(client);
                let _ = io.await;
                rows.iter().map(|r| r.get::<_, String>(0)).collect()
            })
    }
}

/// The next run on the same server: its sweep says it removes what the earlier run left, and
/// nothing of dbbench's stays.
fn next_run_sweeps(server: &Server, dir: &Path) {
    let left = server.dbbench_databases();
    let after = run_child(
        "child_sweeps",
        "postgres",
        &server.socket(),
        dir,
        &[(NEVER_SILENT, "1")],
        None,
    );
    assert!(after.success, "{}", after.text());
    for name in &left {
        let said = format!("postgres: removed database {name} left by pid");
        assert!(
            after.text().contains(&said),
            "`{said}` in:\n{}",
            after.text()
        );
    }
    assert_eq!(server.dbbench_databases(), Vec::<String>::new());
}

#[test]
fn existing_server_behind_a_proxy_that_stops_forwarding() {
    if std::env::var_os(CHILD).is_some() || !cluster::available_for_tests() {
        return;
    }
    let dir = support::scratch("silent-remote");
    let server = Server::start(&dir);

    // The timeout fires; teardown gets no answer either and names what it leaves.
    let timed = run_child(
        "child_timed",
        "postgres",
        &server.socket(),
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
        "measured: existing PostgreSQL behind a silent proxy, silence to failed cell {:.1} s, \
         to exit {:.1} s",
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
    assert_eq!(
        server.dbbench_databases().len(),
        1,
        "the database teardown could not drop"
    );
    next_run_sweeps(&server, &dir);

    // One Ctrl-C, with the default deadlines, ends the run within 30 s.
    let interrupted = run_child(
        "child_untimed",
        "postgres",
        &server.socket(),
        &dir,
        &[],
        Some(Duration::from_secs(1)),
    );
    let sigint = interrupted.sigint_at.expect("SIGINT sent");
    let to_exit = interrupted.exited_at - sigint;
    eprintln!(
        "measured: existing PostgreSQL behind a silent proxy, SIGINT to exit {:.1} s",
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
    next_run_sweeps(&server, &dir);
}
