//! Child processes that meet a server that stops answering (`tests/silent_server.rs`,
//! `tests/mssql_silent.rs`): each child is the test binary itself running one test, whose
//! body makes its server silent and prints [`SILENT_LINE`]; the parent times every line the
//! child prints, sends one SIGINT when asked, and reads the results store it left.

use dbbench_core::__private::{FixtureKind, RunSpec};
use std::io::BufRead;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// The timed child's run: one repetition, no warm-up, no fixture, `timeout = "3s"`.
pub const TIMED_RUN: RunSpec = RunSpec {
    repeat: 1,
    warmup: 0,
    fixture: FixtureKind::None,
    timeout: Some(Duration::from_secs(3)),
    ..RunSpec::DEFAULT
};

/// The child that Ctrl-C ends: as [`TIMED_RUN`], without a timeout.
pub const UNTIMED_RUN: RunSpec = RunSpec {
    timeout: None,
    ..TIMED_RUN
};

/// The two benchmarks of a silent-server test file around its body `$body`, named after the
/// server `$server` ("a SQL Server"): `TIMED` ([`TIMED_RUN`]) and `UNTIMED` ([`UNTIMED_RUN`],
/// whose body, `untimed_body`, is `$body` under another name: a benchmark is named after its
/// body's function, and so are its databases).
#[allow(unused_macros)] // Used by the silent-server test files only.
macro_rules! silent_benchmarks {
    ($body:ident, $server:literal) => {
        fn untimed_body(
            db: &mut ::dbbench_core::Session,
        ) -> ::dbbench_core::__internals::BodyFuture<'_> {
            $body(db)
        }

        crate::support::benchmark! {
            static TIMED = $body,
            title: concat!($server, ", with a timeout"),
            run: crate::support::silent::TIMED_RUN,
            cells: [crate::support::cell(
                "only",
                ::dbbench_core::__private::StorageSpec::DEFAULT
            )],
        }

        crate::support::benchmark! {
            static UNTIMED = untimed_body,
            title: concat!($server, ", stopped by Ctrl-C"),
            run: crate::support::silent::UNTIMED_RUN,
            cells: [crate::support::cell(
                "only",
                ::dbbench_core::__private::StorageSpec::DEFAULT
            )],
        }
    };
}
// A path, `support::silent::silent_benchmarks!`; unused in the files without a silent server.
#[allow(unused_imports)]
pub(crate) use silent_benchmarks;

/// How a timed child's cell fails when its server falls silent under `statement`: the timeout of
/// [`TIMED_RUN`], then no reply to the cancel within its default grace.
pub fn silent_failure(statement: &str) -> String {
    format!(
        "the server stopped answering: no reply to the cancel request within 5 s after the 3 s \
         timeout (statement: {statement})"
    )
}

/// The child ran to its end with the cell failed, its status containing `says`.
pub fn assert_cell_failed(outcome: &Outcome, says: &str) {
    assert!(outcome.success, "{}", outcome.text());
    let status = outcome
        .line("TEST: cell status: ")
        .unwrap_or_else(|| panic!("no cell status:\n{}", outcome.text()));
    assert!(
        status.contains("Failed(") && status.contains(says),
        "{status}"
    );
}

/// Set in a child: its mode (what the test file makes of it: `managed`, an upstream).
pub const CHILD: &str = "DBBENCH_SILENT_CHILD";
/// Set in a child whose server stays answering (the run after, which sweeps).
pub const NEVER_SILENT: &str = "DBBENCH_SILENT_NEVER";
/// The line a child's body prints once its server says nothing more.
pub const SILENT_LINE: &str = "TEST: the server is silent now";
/// A run context in the child's work dir.
pub fn child_context(name: &str) -> dbbench_core::__internals::RunContext {
    let dir = PathBuf::from(std::env::var_os("DBBENCH_DIR").unwrap());
    dbbench_core::__internals::RunContext {
        scale: dbbench_core::Scale::smoke(),
        volumes: dbbench_core::__internals::Volumes::default(),
        work_dir: dir.join(name),
    }
}

/// What a child did, each line with when it arrived (from the spawn).
pub struct Outcome {
    pub success: bool,
    pub lines: Vec<(Duration, String)>,
    pub sigint_at: Option<Duration>,
    pub exited_at: Duration,
}

impl Outcome {
    /// When the first line containing `text` arrived.
    pub fn at(&self, text: &str) -> Option<Duration> {
        self.lines
            .iter()
            .find(|(_, l)| l.contains(text))
            .map(|(t, _)| *t)
    }

    pub fn line(&self, text: &str) -> Option<&str> {
        self.lines
            .iter()
            .find(|(_, l)| l.contains(text))
            .map(|(_, l)| l.as_str())
    }

    pub fn text(&self) -> String {
        let lines: Vec<&str> = self.lines.iter().map(|(_, l)| l.as_str()).collect();
        lines.join("\n")
    }

    pub fn silent_at(&self) -> Duration {
        self.at(SILENT_LINE)
            .unwrap_or_else(|| panic!("the server never went silent:\n{}", self.text()))
    }
}

/// Runs the child test `name` on `backend` with `env` in the work dir `dir`; with `sigint`, sends one SIGINT
/// that long after the server went silent. A child that outlives 150 s is killed and fails.
pub fn run_child(
    name: &str,
    backend: &str,
    mode: &str,
    dir: &Path,
    env: &[(&str, &str)],
    sigint: Option<Duration>,
) -> Outcome {
    let mut command = std::process::Command::new(std::env::current_exe().unwrap());
    command
        .args(["--exact", name, "--nocapture", "--test-threads=1"])
        .env(CHILD, mode)
        .env("DBBENCH_DIR", dir)
        .env("DBBENCH_BACKEND", backend)
        .env_remove("DBBENCH_POSTGRES")
        .env_remove("DBBENCH_MARIADB")
        .env_remove(NEVER_SILENT)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    for (k, v) in env {
        command.env(k, v);
    }
    let started = Instant::now();
    let mut child = command.spawn().unwrap();
    let (send, lines) = std::sync::mpsc::channel::<(Duration, String)>();
    for stream in [
        Box::new(child.stdout.take().unwrap()) as Box<dyn std::io::Read + Send>,
        Box::new(child.stderr.take().unwrap()),
    ] {
        let send = send.clone();
        std::thread::spawn(move || {
            for line in std::io::BufReader::new(stream)
                .lines()
                .map_while(Result::ok)
            {
                let _ = send.send((started.elapsed(), line));
            }
        });
    }
    drop(send);
    let mut seen = Vec::new();
    let mut sigint_at = None;
    let status = loop {
        while let Ok(line) = lines.try_recv() {
            seen.push(line);
        }
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if let (Some(after), None) = (sigint, sigint_at) {
            if let Some((silent, _)) = seen.iter().find(|(_, l)| l.contains(SILENT_LINE)) {
                if started.elapsed() >= *silent + after {
                    // SAFETY: kill has no memory preconditions; the child is ours.
                    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
                    sigint_at = Some(started.elapsed());
                }
            }
        }
        if started.elapsed() > Duration::from_secs(150) {
            let _ = child.kill();
            let _ = child.wait();
            // The server processes a child stopped are not left stopped behind a failed test.
            for (_, line) in &seen {
                if let Some((_, pids)) = line.split_once(" stopped=") {
                    for pid in pids.split(',').filter_map(|p| p.trim().parse::<i32>().ok()) {
                        // SAFETY: kill has no memory preconditions; the child's cluster's.
                        unsafe { libc::kill(pid, libc::SIGKILL) };
                    }
                }
            }
            let text: Vec<String> = seen.into_iter().map(|(_, l)| l).collect();
            panic!("the child ran for 150 s:\n{}", text.join("\n"));
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    let exited_at = started.elapsed();
    // The readers end with the pipes.
    for line in lines.iter() {
        seen.push(line);
    }
    seen.sort_by_key(|(t, _)| *t);
    Outcome {
        success: status.success(),
        lines: seen,
        sigint_at,
        exited_at,
    }
}

/// The results store opens, passes SQLite's integrity check and records `runs` invocations
/// (the harness's runs), the last with `status`.
pub fn assert_store_intact(dir: &Path, runs: usize, status: &str) {
    let store = dbbench_core::__internals::Store::open(dir).unwrap();
    let history = store.history().unwrap();
    assert_eq!(history.len(), runs, "one invocation per run");
    assert_eq!(history.last().unwrap().status, status);
    let conn = rusqlite::Connection::open(dbbench_core::__internals::store_file(dir)).unwrap();
    let check: String = conn
        .query_row("PRAGMA integrity_check", [], |r| r.get(0))
        .unwrap();
    assert_eq!(check, "ok");
}

/// The server the child stopped or killed is gone, from the line its body printed
/// (`TEST: data_dir=<dir> stopped=<pid,…>`): every one of those processes (reaped by its parent,
/// or by init once that is gone: a moment is allowed) and its data directory.
pub fn assert_server_gone(outcome: &Outcome) {
    let line = outcome
        .line("TEST: data_dir=")
        .unwrap_or_else(|| panic!("the body names its server:\n{}", outcome.text()));
    let rest = line.split("data_dir=").nth(1).unwrap();
    let (data_dir, pids) = rest.split_once(" stopped=").unwrap();
    let started = Instant::now();
    let alive = || -> Vec<&str> {
        pids.split(',')
            .filter(|pid| {
                std::fs::read_to_string(format!("/proc/{pid}/stat"))
                    .is_ok_and(|stat| !stat.contains(") Z ") && !stat.contains(") X "))
            })
            .collect()
    };
    while !alive().is_empty() && started.elapsed() < Duration::from_secs(5) {
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(alive().is_empty(), "server processes left: {:?}", alive());
    assert!(
        !Path::new(data_dir.trim_end_matches('/')).exists(),
        "the server's data directory is left: {data_dir}"
    );
}
