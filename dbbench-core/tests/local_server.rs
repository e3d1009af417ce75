//! A database server on this machine is the workload, not a neighbour. A PostgreSQL server this
//! test starts outside its own process tree (as a user's server is: `pg_ctl` daemonizes it) and
//! reaches the way `DBBENCH_POSTGRES` does, over loopback TCP and over its socket: dbbench takes
//! its postmaster and children for the server, names them in the results, and counts their CPU
//! in every window apart from other processes'. On the SQL Server path (Babelfish on this machine
//! when `DBBENCH_MSSQL` names it) the same holds for the postmaster behind the TDS port.

mod support;

use dbbench_core::__internals::postgres::settings::PgSettings;
use dbbench_core::__internals::postgres::PostgresBackend;
use dbbench_core::__internals::{Backend, EngineBackend};
use dbbench_core::__private::{BodyFuture, FixtureKind, RunSpec, StorageSpec};
use dbbench_core::{Scale, Session};
use std::path::PathBuf;
use std::process::Command;
use support::cell;

fn doubling(db: &mut Session) -> BodyFuture<'_> {
    Box::pin(async move { support::double(db, 3).await })
}

support::benchmark! {
    static PLAIN = doubling,
    title: "plain doubling beside a local server",
    run: RunSpec { fixture: FixtureKind::Credit, repeat: 2, ..RunSpec::DEFAULT },
    cells: [cell("plain", StorageSpec::DEFAULT)],
}

const BIN: &str = "/usr/lib/postgresql/15/bin";

/// A throwaway server that is no descendant of this process, stopped and removed when dropped.
struct Server {
    dir: PathBuf,
    port: u16,
}

impl Server {
    /// `None` where no PostgreSQL 15 binaries are installed.
    fn start() -> Option<Server> {
        if !std::path::Path::new(BIN).join("pg_ctl").exists() {
            eprintln!("skipped: no PostgreSQL binaries in {BIN}");
            return None;
        }
        let dir = std::env::temp_dir().join(format!("dbbench-local-server-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let server = Server { dir, port };
        // SAFETY: geteuid has no preconditions.
        if unsafe { libc::geteuid() } == 0 {
            assert!(Command::new("chown")
                .args(["postgres:postgres", &server.dir.to_string_lossy()])
                .status()
                .unwrap()
                .success());
        }
        let d = server.dir.display();
        server.shell(&format!(
            "{BIN}/initdb -D {d}/data -U postgres --auth=trust >/dev/null && \
             {BIN}/pg_ctl -D {d}/data -w -l {d}/log \
             -o '-p {port} -k {d} -c listen_addresses=127.0.0.1' start >/dev/null"
        ));
        Some(server)
    }

    /// Runs `script` as the server's user (`postgres` when this test runs as root).
    fn shell(&self, script: &str) {
        // SAFETY: geteuid has no preconditions.
        let status = if unsafe { libc::geteuid() } == 0 {
            Command::new("su")
                .args(["postgres", "-s", "/bin/sh", "-c", script])
                .status()
        } else {
            Command::new("sh").args(["-c", script]).status()
        };
        assert!(status.unwrap().success(), "{script}");
    }

    fn postmaster(&self) -> u32 {
        let pid = std::fs::read_to_string(self.dir.join("data/postmaster.pid")).unwrap();
        pid.lines().next().unwrap().trim().parse().unwrap()
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let d = self.dir.display();
        let stop = format!("{BIN}/pg_ctl -D {d}/data -m immediate stop >/dev/null");
        // SAFETY: geteuid has no preconditions.
        let _ = if unsafe { libc::geteuid() } == 0 {
            Command::new("su")
                .args(["postgres", "-s", "/bin/sh", "-c", &stop])
                .status()
        } else {
            Command::new("sh").args(["-c", &stop]).status()
        };
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

fn block_on<T>(work: impl std::future::Future<Output = T>) -> T {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
        .block_on(work)
}

#[test]
fn a_local_postgres_server_is_the_workload() {
    let Some(server) = Server::start() else {
        return;
    };
    let postmaster = server.postmaster();
    let me = std::process::id();
    let tcp = PgSettings::parse(&format!(
        "host=127.0.0.1 port={} user=postgres dbname=postgres",
        server.port
    ))
    .unwrap();
    let socket = PgSettings::parse(&format!(
        "host={} port={} user=postgres dbname=postgres",
        server.dir.display(),
        server.port
    ))
    .unwrap();
    for settings in [tcp.clone(), socket] {
        let backend = block_on(PostgresBackend::external(settings)).unwrap();
        let found = backend.server_on_host().expect("the local server is found");
        assert_eq!((found.name.as_str(), found.pid), ("postgres", postmaster));
        assert!(found.children >= 3, "{found:?}");
        assert!(found.found_by.contains("pg_backend_pid()"), "{found:?}");
        assert_ne!(found.pid, me);
    }

    let ctx = support::context("local-server", Scale::smoke(), Default::default());
    let result = support::exclusively(async {
        let backend = PostgresBackend::external(tcp).await?;
        let mut backend = Backend::new(backend);
        dbbench_core::__internals::run_benchmark(&PLAIN, None, &ctx, &mut backend).await
    })
    .unwrap();
    let named = result.server_on_host.as_ref().expect("the results name it");
    assert_eq!(named.pid, postmaster);
    let runs: Vec<_> = result.cells[0].measured().collect();
    assert_eq!(runs.len(), 2, "{:?}", result.cells[0].status);
    for run in runs {
        let seen = run.interference.as_ref().unwrap();
        assert!(seen.server_cpu_cores.is_some(), "{seen:?}");
    }
    let json = serde_json::to_string(&result).unwrap();
    assert!(json.contains("\"server_on_host\"") && json.contains("\"server_cpu_cores\""));
}

#[test]
fn a_managed_cluster_stays_dbbenchs_own() {
    if !std::path::Path::new(BIN).join("pg_ctl").exists() {
        return;
    }
    let ctx = support::context("local-server-managed", Scale::smoke(), Default::default());
    let result = support::run_postgres(&PLAIN, &ctx);
    assert_eq!(result.server_on_host, None);
    for run in result.cells[0].measured() {
        assert_eq!(run.interference.as_ref().unwrap().server_cpu_cores, None);
    }
    support::assert_no_cluster_left(&ctx);
}

#[test]
fn babelfish_on_this_machine_is_the_workload() {
    let Some(ado) = std::env::var(dbbench_core::__internals::mssql::ENV)
        .ok()
        .filter(|v| !v.trim().is_empty())
    else {
        eprintln!("skipped: DBBENCH_MSSQL not set");
        return;
    };
    let settings = dbbench_core::__internals::mssql::ConnectSettings::parse(&ado).unwrap();
    let local = settings
        .host()
        .is_some_and(|h| dbbench_core::__internals::local_server::is_local_host(&h));
    let backend = block_on(dbbench_core::__internals::mssql::MssqlBackend::connect(
        settings,
        dbbench_core::__internals::mssql::Hooks::default(),
        false,
    ))
    .unwrap();
    match backend.server_on_host() {
        Some(found) => {
            assert!(local, "a server found on this machine was reached here");
            let comm = std::fs::read_to_string(format!("/proc/{}/comm", found.pid)).unwrap();
            assert_eq!(comm.trim(), found.name);
            assert!(["postgres", "sqlservr"].contains(&found.name.as_str()));
        }
        // A remote server, or one whose processes this machine does not see.
        None => eprintln!("no server on this host: {}", settings_host(&ado)),
    }
}

fn settings_host(ado: &str) -> String {
    dbbench_core::__internals::mssql::ConnectSettings::parse(ado)
        .ok()
        .and_then(|s| s.host())
        .unwrap_or_default()
}
