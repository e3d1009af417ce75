//! The README's "Use it in your own crate" is true: a crate made of exactly its `Cargo.toml` and
//! `src/lib.rs` builds against this checkout (dbbench-core patched in for the registry's), and its
//! commands behave as the README says: the first `cargo test` fails with a pending snapshot,
//! accepting it passes, a plain `cargo test` passes after that, and the results are where the
//! README says they go.
//!
//! The crate is built in `target/readme-crate/`, with a target dir of its own there (the
//! workspace's is locked by the `cargo test` running this): the first run compiles dbbench's
//! dependencies once, later runs only the crate. Dependencies resolve offline, from this
//! workspace's `Cargo.lock` and the local registry cache the workspace build filled.

use std::path::{Path, PathBuf};
use std::process::Command;

const SECTION: &str = "## Use it in your own crate";

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("the tests crate sits in the workspace")
        .to_path_buf()
}

/// The fenced blocks of the README's section, as `(language, text)`, in order.
fn blocks() -> Vec<(String, String)> {
    let readme = std::fs::read_to_string(root().join("README.md")).unwrap();
    let start = readme
        .find(SECTION)
        .unwrap_or_else(|| panic!("README.md has no `{SECTION}` section"));
    let section = &readme[start + SECTION.len()..];
    let section = &section[..section.find("\n## ").unwrap_or(section.len())];
    let mut blocks = Vec::new();
    let mut lines = section.lines();
    while let Some(line) = lines.next() {
        if let Some(lang) = line.strip_prefix("```").filter(|l| !l.is_empty()) {
            let body: Vec<&str> = lines.by_ref().take_while(|l| *l != "```").collect();
            blocks.push((lang.to_string(), body.join("\n") + "\n"));
        }
    }
    blocks
}

fn block(blocks: &[(String, String)], lang: &str) -> String {
    let found: Vec<&String> = blocks
        .iter()
        .filter(|(l, _)| l == lang)
        .map(|(_, b)| b)
        .collect();
    assert_eq!(found.len(), 1, "the section has one ```{lang} block");
    found[0].clone()
}

/// One command of the README's `sh` block: its environment, its arguments after `cargo`, and
/// whether its comment says it fails.
struct Step {
    env: Vec<(String, String)>,
    args: Vec<String>,
    fails: bool,
    line: String,
}

fn steps(sh: &str) -> Vec<Step> {
    sh.lines()
        .filter(|l| !l.trim().is_empty())
        .map(|line| {
            let (command, comment) = line.split_once('#').unwrap_or((line, ""));
            let mut words = command.split_whitespace().peekable();
            let mut env = Vec::new();
            while let Some((k, v)) = words.peek().and_then(|w| w.split_once('=')) {
                env.push((k.to_string(), v.to_string()));
                words.next();
            }
            assert_eq!(words.next(), Some("cargo"), "`{line}` runs cargo");
            Step {
                env,
                args: words.map(String::from).collect(),
                fails: comment.contains("fails"),
                line: line.to_string(),
            }
        })
        .collect()
}

#[test]
fn the_readme_crate_builds_tests_and_accepts_its_snapshot() {
    let blocks = blocks();
    let manifest = block(&blocks, "toml");
    let lib = block(&blocks, "rust");
    let steps = steps(&block(&blocks, "sh"));
    assert_eq!(steps.len(), 3, "fail, accept, pass");
    assert!(
        manifest.contains("dbbench-core = \"0.1\""),
        "the dependency line: {manifest}"
    );

    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .map(|t| if t.is_relative() { root().join(t) } else { t })
        .unwrap_or_else(|| root().join("target"));
    let base = target.join("readme-crate");
    let krate = base.join("my-benchmarks");
    let crate_target = base.join("target");
    for stale in [krate.join("snapshots"), crate_target.join("dbbench")] {
        let _ = std::fs::remove_dir_all(stale);
    }
    std::fs::create_dir_all(krate.join("src")).unwrap();
    // The README's manifest as written, then what makes it build here: this checkout for the
    // registry's dbbench-core, and a workspace of its own (it sits inside this one's target).
    let patched = format!(
        "{manifest}\n[patch.crates-io]\ndbbench-core = {{ path = {:?} }}\n\n[workspace]\n",
        root().join("dbbench-core")
    );
    std::fs::write(krate.join("Cargo.toml"), patched).unwrap();
    std::fs::write(krate.join("src/lib.rs"), lib).unwrap();
    if !krate.join("Cargo.lock").exists() {
        std::fs::copy(root().join("Cargo.lock"), krate.join("Cargo.lock")).unwrap();
    }

    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    for (i, step) in steps.iter().enumerate() {
        let mut command = Command::new(&cargo);
        command
            .args(&step.args)
            .current_dir(&krate)
            .env("CARGO_TARGET_DIR", &crate_target)
            .env("CARGO_NET_OFFLINE", "true");
        // As on a developer's machine: none of this run's settings leak into the crate's.
        for (key, _) in std::env::vars() {
            if key.starts_with("DBBENCH_") || key.starts_with("INSTA_") || key == "CI" {
                command.env_remove(key);
            }
        }
        command.envs(step.env.iter().map(|(k, v)| (k, v)));
        let out = command.output().unwrap();
        let log = format!(
            "`{}`:\n{}\n{}",
            step.line,
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        assert_eq!(
            out.status.success(),
            !step.fails,
            "step {} did not do what the README says: {log}",
            i + 1
        );
        if i == 0 {
            let pending = krate.join("snapshots/my_benchmarks.double_charges__smoke.snap.new");
            assert!(pending.is_file(), "no {}: {log}", pending.display());
        }
    }
    let snapshot = krate.join("snapshots/my_benchmarks.double_charges__smoke.snap");
    assert!(snapshot.is_file(), "accepted: {}", snapshot.display());
    let results = crate_target.join("dbbench/tests");
    for file in [
        "results.sqlite",
        "results/my_benchmarks.double_charges.json",
        "results/my_benchmarks.double_charges.csv",
        "report/index.html",
    ] {
        assert!(
            results.join(file).is_file(),
            "the README says results go to {}",
            results.join(file).display()
        );
    }
}
