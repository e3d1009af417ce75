//! A password with `/`, `?`, `@`, `;`, `'` and a space, given to each server backend in each of
//! its connection forms (servers that are not there: 127.0.0.1 port 9), appears nowhere: not in
//! the console of the run (a child process, this test binary run as a `#[db_bench]` test runs,
//! through the harness), not in its errors, not in any file under its work dir.

mod support;

use dbbench_core::__internals::config::{FixtureKind, RunSpec, StorageSpec};
use dbbench_core::__internals::BodyFuture;
use dbbench_core::Session;
use support::cell;

const CHILD: &str = "DBBENCH_SECRETS_CHILD";

/// The password: every character the connection forms give a meaning to, and a space.
const PASSWORD: &str = "Pw/se?cr@t;it's mine";

fn body(db: &mut Session) -> BodyFuture<'_> {
    Box::pin(async move {
        db.execute("SELECT 1").await?;
        Ok(())
    })
}

support::benchmark! {
    static PLAIN = body,
    title: "a benchmark on a server that is not there",
    run: RunSpec {
        repeat: 1,
        warmup: 0,
        fixture: FixtureKind::None,
        ..RunSpec::DEFAULT
    },
    cells: [cell("only", StorageSpec::DEFAULT)],
}

/// The child: runs the benchmark through the harness, as a generated test does.
#[test]
fn child_runs_the_benchmark() {
    if std::env::var_os(CHILD).is_none() {
        return;
    }
    dbbench_core::__private::run_test(&PLAIN, "only");
}

/// `text` with every byte but the unreserved ones percent-encoded, as a URL holds a password.
fn url_encoded(text: &str) -> String {
    text.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

/// Every file under `dir`, read whole (as bytes: a store or a chart as well as a text file).
fn files(dir: &std::path::Path) -> Vec<(std::path::PathBuf, Vec<u8>)> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let path = entry.path();
        if path.is_dir() {
            out.extend(files(&path));
        } else if let Ok(bytes) = std::fs::read(&path) {
            out.push((path, bytes));
        }
    }
    out
}

#[test]
fn the_password_appears_nowhere() {
    if std::env::var_os(CHILD).is_some() {
        return;
    }
    let encoded = url_encoded(PASSWORD);
    let kv = PASSWORD.replace('\\', "\\\\").replace('\'', "\\'");
    let ado = PASSWORD.replace('"', "\"\"");
    let runs = [
        (
            "postgres",
            "DBBENCH_POSTGRES",
            format!("postgres://bench:{encoded}@127.0.0.1:9/x"),
        ),
        (
            "postgres",
            "DBBENCH_POSTGRES",
            format!("host=127.0.0.1 port=9 user=bench password='{kv}' dbname=x"),
        ),
        (
            "mariadb",
            "DBBENCH_MARIADB",
            format!("mysql://bench:{encoded}@127.0.0.1:9/"),
        ),
        (
            "mssql",
            "DBBENCH_MSSQL",
            format!(
                "server=tcp:127.0.0.1,9;user id=sa;password=\"{ado}\";\
                 TrustServerCertificate=true;Connect Timeout=3"
            ),
        ),
    ];
    // What would betray the password: as written, as encoded, and its longest pieces.
    let needles = [PASSWORD, encoded.as_str(), "se?cr", "it's mine", "se%3Fcr"];
    for (i, (backend, var, value)) in runs.iter().enumerate() {
        let dir = support::scratch(&format!("secrets-nowhere-{i}"));
        let output = std::process::Command::new(std::env::current_exe().unwrap())
            .args(["--exact", "child_runs_the_benchmark", "--nocapture"])
            .env(CHILD, "1")
            .env("DBBENCH_DIR", &dir)
            .env("DBBENCH_BACKEND", backend)
            .env(var, value)
            .output()
            .unwrap();
        let console = format!(
            "{}{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        );
        // The run failed to connect, and said so.
        assert!(
            !output.status.success(),
            "{var}={value}: the child passed:\n{console}"
        );
        assert!(console.contains("127.0.0.1"), "{var}: {console}");
        for needle in needles {
            assert!(
                !console.contains(needle),
                "{var}={value}: `{needle}` in the console:\n{console}"
            );
            for (path, bytes) in files(&dir) {
                let text = String::from_utf8_lossy(&bytes);
                assert!(
                    !text.contains(needle),
                    "{var}={value}: `{needle}` in {}",
                    path.display()
                );
            }
        }
    }
}
