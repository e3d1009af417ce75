//! A managed MariaDB instance that fails under a running cell: its server stops answering
//! without closing its connections (SIGSTOP, as a frozen VM would), or it dies (SIGKILL, as an
//! OOM kill or a crash would). Each case runs a child process (this test binary, running the
//! benchmark through the runner as a generated `#[db_bench]` test does) and checks:
//!
//! - silent: a cell whose `timeout = "3s"` passes fails within timeout + the cancel's grace
//!   (5 s) + 10 s of the silence, saying so and naming the statement (the guarded `KILL QUERY`
//!   from a second connection gets no answer either); one Ctrl-C ends the run within 30 s with the
//!   results store intact;
//! - crash: the cell fails saying what the client saw and that the server was killed by a signal
//!   (with its log's last lines), and the run goes on to its end;
//!
//! and, in each, that no server process and no instance directory is left. Skipped without
//! MariaDB's programs unless `DBBENCH_REQUIRE_MARIADB=1`. The figures are printed for the record.

mod support;

use support::silent::*;

use dbbench_core::__internals::mariadb;
use dbbench_core::__internals::BodyFuture;
use dbbench_core::Session;
use std::path::Path;
use std::time::Duration;

/// The body's statement that meets the fault: a few seconds of work at this size.
const STATEMENT: &str = "INSERT INTO t SELECT a.x + b.x FROM t a, t b";

/// What the child does to its server once the table is made, by the mode it runs in.
async fn fault(db: &mut Session) {
    let data_dir: String = db.query_scalar("SELECT @@datadir").await.unwrap();
    let pids = support::processes_under(Path::new(&data_dir));
    assert!(!pids.is_empty(), "the instance's server process");
    let signal = match std::env::var(CHILD).as_deref() {
        Ok("crash") => libc::SIGKILL,
        _ => libc::SIGSTOP,
    };
    for pid in &pids {
        // SAFETY: kill has no memory preconditions; these are this run's instance's processes.
        unsafe { libc::kill(*pid as i32, signal) };
    }
    let list: Vec<String> = pids.iter().map(u32::to_string).collect();
    eprintln!("TEST: data_dir={data_dir} stopped={}", list.join(","));
}

fn faulty_body(db: &mut Session) -> BodyFuture<'_> {
    Box::pin(async move {
        db.execute("CREATE TABLE t (x bigint NOT NULL) ENGINE=InnoDB")
            .await?;
        db.execute("INSERT INTO t SELECT seq FROM seq_1_to_2000")
            .await?;
        fault(db).await;
        eprintln!("{SILENT_LINE}");
        db.execute(STATEMENT).await?;
        Ok(())
    })
}

support::silent::silent_benchmarks!(faulty_body, "a MariaDB server that stops answering or dies");

/// The timed run goes through the runner alone: through the harness, a failed cell would be
/// checked against a snapshot.
#[test]
fn child_timed() {
    if std::env::var_os(CHILD).is_some() {
        let result = support::try_run(&TIMED, &child_context("timed")).unwrap();
        eprintln!("TEST: cell status: {:?}", result.cells[0].status);
    }
}

#[test]
fn child_untimed() {
    if std::env::var_os(CHILD).is_some() {
        dbbench_core::__private::run_test(&UNTIMED, "only");
    }
}

#[test]
fn managed_instance_stopped_by_sigstop() {
    if std::env::var_os(CHILD).is_some() || !mariadb::available_for_tests() {
        return;
    }
    // The timeout fires: the cell fails, the instance is killed and removed.
    let dir = support::scratch("mariadb-silent");
    let timed = run_child(
        "child_timed",
        "mariadb",
        "silent",
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
        "measured: managed MariaDB, SIGSTOP to failed cell {:.1} s, to exit {:.1} s",
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
        "mariadb",
        "silent",
        &dir,
        &[],
        Some(Duration::from_secs(1)),
    );
    let sigint = interrupted.sigint_at.expect("SIGINT sent");
    let to_exit = interrupted.exited_at - sigint;
    eprintln!(
        "measured: managed MariaDB, SIGINT to exit {:.1} s",
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

#[test]
fn managed_instance_killed_mid_cell() {
    if std::env::var_os(CHILD).is_some() || !mariadb::available_for_tests() {
        return;
    }
    let dir = support::scratch("mariadb-crash");
    let crashed = run_child("child_timed", "mariadb", "crash", &dir, &[], None);
    let said = crashed
        .line("TEST: cell status: ")
        .unwrap_or_else(|| panic!("no cell status:\n{}", crashed.text()))
        .to_string();
    eprintln!(
        "measured: managed MariaDB, SIGKILL to exit {:.1} s; {said}",
        (crashed.exited_at - crashed.silent_at()).as_secs_f64()
    );
    // The cell says what the client saw and why: the server is gone, killed by a signal, with
    // the last lines of its log.
    assert_cell_failed(&crashed, "Connection reset by peer");
    assert_cell_failed(&crashed, "the managed MariaDB server is gone: mariadbd pid");
    assert_cell_failed(&crashed, "was killed by signal 9");
    assert_server_gone(&crashed);
}
