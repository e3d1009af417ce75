//! An existing MariaDB server (`DBBENCH_MARIADB`) that stops answering without closing its
//! connections, as a network partition or a frozen VM would: an instance this test starts,
//! reached by the child only over TCP through a proxy (`support::proxy`) that stops forwarding
//! once the body's table is made. As for PostgreSQL (`tests/silent_server.rs`), each case runs a
//! child process (this test binary, running the benchmark through the runner) and checks: a cell
//! whose `timeout = "3s"` passes fails within timeout + the cancel's grace (5 s) + 10 s of the
//! silence, saying so and naming the statement; teardown, which gets no answer either, names the
//! database it leaves, and the next run's sweep drops it and says so; one Ctrl-C ends the run
//! within 30 s with the results store intact. Skipped without MariaDB's programs unless
//! `DBBENCH_REQUIRE_MARIADB=1`. The figures are printed for the record.

mod support;

use support::silent::*;

use dbbench_core::__internals::mariadb;
use dbbench_core::__internals::BodyFuture;
use dbbench_core::Session;
use std::path::{Path, PathBuf};
use std::time::Duration;
use support::conformance::mariadb::Existing;

/// The body's statement that meets the silence: well under a second of work at this size, so
/// only the silence makes it outlast the timeout.
const STATEMENT: &str = "INSERT INTO t SELECT a.x + b.x FROM t a, t b";

fn silent_body(db: &mut Session) -> BodyFuture<'_> {
    Box::pin(async move {
        db.execute("CREATE TABLE t (x bigint NOT NULL) ENGINE=InnoDB")
            .await?;
        db.execute("INSERT INTO t SELECT seq FROM seq_1_to_300")
            .await?;
        if std::env::var_os(NEVER_SILENT).is_none() {
            support::proxy::silence();
            eprintln!("{SILENT_LINE}");
        }
        db.execute(STATEMENT).await?;
        Ok(())
    })
}

support::silent::silent_benchmarks!(
    silent_body,
    "an existing MariaDB server that stops answering"
);

/// In a child: the proxy in front of the server's socket (the mode), and `DBBENCH_MARIADB`
/// naming the proxy, set before anything reads it (the child runs this one test alone). Had
/// dbbench let the driver move its connections to the socket the server reports, they would
/// bypass the proxy, and the statement would finish.
fn child_setup() -> bool {
    let Ok(socket) = std::env::var(CHILD) else {
        return false;
    };
    let port = support::proxy::start(support::proxy::Upstream::Unix(PathBuf::from(socket)));
    std::env::set_var(
        mariadb::external::ENV,
        format!("mysql://root@127.0.0.1:{port}/"),
    );
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

/// The next run, through the runner alone: its sweep is what is checked.
#[test]
fn child_sweeps() {
    if child_setup() {
        support::try_run(&UNTIMED, &child_context("sweep")).unwrap();
    }
}

/// The existing server: an instance this test starts (the conformance suite's existing-server
/// target), which dbbench in the child reaches only through the proxy (and so treats as any
/// existing server).
struct Server(Existing);

impl Server {
    fn start() -> Server {
        let server = Server(Existing::default());
        server.socket();
        server
    }

    fn socket(&self) -> String {
        self.0.socket()
    }

    /// dbbench's databases on the server, asked with the `mariadb` client over the socket.
    fn dbbench_databases(&self) -> Vec<String> {
        let out = std::process::Command::new("mariadb")
            .args(["--no-defaults", "-uroot", "-N", "-S", &self.socket(), "-e"])
            .arg("SELECT SCHEMA_NAME FROM information_schema.SCHEMATA WHERE SCHEMA_NAME LIKE 'dbbench\\_%'")
            .output()
            .unwrap();
        assert!(out.status.success(), "{out:?}");
        String::from_utf8(out.stdout)
            .unwrap()
            .lines()
            .map(str::to_string)
            .collect()
    }
}

/// The next run on the same server: its sweep says it drops what the earlier run left, and
/// nothing of dbbench's stays.
fn next_run_sweeps(server: &Server, dir: &Path) {
    let left = server.dbbench_databases();
    assert!(!left.is_empty(), "the silent run left its database");
    let after = run_child(
        "child_sweeps",
        "mariadb",
        &server.socket(),
        dir,
        &[(NEVER_SILENT, "1")],
        None,
    );
    assert!(after.success, "{}", after.text());
    for name in &left {
        let said = format!("mariadb: dropped the database {name} left by pid");
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
    if std::env::var_os(CHILD).is_some() || !mariadb::available_for_tests() {
        return;
    }
    let dir = support::scratch("mariadb-silent-existing");
    let server = Server::start();

    // The timeout fires; teardown gets no answer either and names what it leaves.
    let timed = run_child(
        "child_timed",
        "mariadb",
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
        "measured: existing MariaDB behind a silent proxy, silence to failed cell {:.1} s, to \
         exit {:.1} s",
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
    next_run_sweeps(&server, &dir);

    // One Ctrl-C, with the default deadlines, ends the run within 30 s.
    let interrupted = run_child(
        "child_untimed",
        "mariadb",
        &server.socket(),
        &dir,
        &[],
        Some(Duration::from_secs(1)),
    );
    let sigint = interrupted.sigint_at.expect("SIGINT sent");
    let to_exit = interrupted.exited_at - sigint;
    eprintln!(
        "measured: existing MariaDB behind a silent proxy, SIGINT to exit {:.1} s",
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
    drop(server);
    std::fs::remove_dir_all(&dir).unwrap();
}
