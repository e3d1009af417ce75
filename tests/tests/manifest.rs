//! The three library crates are published together: their manifests carry the metadata crates.io
//! shows, one version from the workspace, and dependencies on each other pinned to exactly that
//! version, so a `dbbench-core` from the registry never meets a `dbbench-macros` whose expansion
//! it does not match.

use std::path::{Path, PathBuf};
use toml::{Table, Value};

/// The crates `cargo package -p dbbench-options -p dbbench-macros -p dbbench-core` publishes.
const PUBLISHED: [&str; 3] = ["dbbench-options", "dbbench-macros", "dbbench-core"];

/// What crates.io and docs.rs show of a crate, each either in the crate's manifest or inherited
/// from `[workspace.package]` with `<field>.workspace = true`.
const METADATA: [&str; 8] = [
    "description",
    "license",
    "repository",
    "readme",
    "keywords",
    "categories",
    "documentation",
    "rust-version",
];

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("the tests crate sits in the workspace")
        .to_path_buf()
}

fn manifest(path: &Path) -> Table {
    let text = std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    text.parse()
        .unwrap_or_else(|e| panic!("{} is not TOML: {e}", path.display()))
}

fn table<'a>(t: &'a Table, key: &str, whose: &str) -> &'a Table {
    t.get(key)
        .and_then(Value::as_table)
        .unwrap_or_else(|| panic!("{whose} has no [{key}]"))
}

fn inherits(package: &Table, field: &str) -> bool {
    package
        .get(field)
        .and_then(Value::as_table)
        .and_then(|t| t.get("workspace"))
        .and_then(Value::as_bool)
        == Some(true)
}

#[test]
fn the_workspace_dependencies_pin_the_workspace_version() {
    let ws = manifest(&root().join("Cargo.toml"));
    let workspace = table(&ws, "workspace", "Cargo.toml");
    let version = table(workspace, "package", "[workspace]")
        .get("version")
        .and_then(Value::as_str)
        .expect("[workspace.package] sets the version");
    let deps = table(workspace, "dependencies", "[workspace]");
    for name in PUBLISHED {
        let dep = deps
            .get(name)
            .and_then(Value::as_table)
            .unwrap_or_else(|| panic!("[workspace.dependencies] has no {name} table"));
        assert_eq!(
            dep.get("path").and_then(Value::as_str),
            Some(name),
            "{name} comes from its folder of the workspace"
        );
        assert_eq!(
            dep.get("version").and_then(Value::as_str),
            Some(format!("={version}").as_str()),
            "{name} must carry exactly the workspace version `={version}`, so the macro and the \
             runtime never mismatch"
        );
    }
}

#[test]
fn every_published_crate_has_its_metadata_and_the_workspace_version() {
    let ws = manifest(&root().join("Cargo.toml"));
    let inherited = table(
        table(&ws, "workspace", "Cargo.toml"),
        "package",
        "[workspace]",
    );
    for name in PUBLISHED {
        let path = root().join(name).join("Cargo.toml");
        let crate_manifest = manifest(&path);
        let package = table(&crate_manifest, "package", name);
        assert_eq!(package.get("name").and_then(Value::as_str), Some(name));
        assert!(
            inherits(package, "version"),
            "{name}: `version.workspace = true`, one version for the three crates"
        );
        assert!(
            package.get("publish").is_none(),
            "{name} is published; it must not set `publish`"
        );
        for field in METADATA {
            let own = package.get(field).filter(|v| !v.is_table());
            let value = if inherits(package, field) {
                inherited.get(field)
            } else {
                own
            };
            let filled = match value {
                Some(Value::String(s)) => !s.trim().is_empty(),
                Some(Value::Array(a)) => !a.is_empty(),
                _ => false,
            };
            assert!(
                filled,
                "{name}: `{field}` is missing or empty in {}",
                path.display()
            );
        }
        // Each crate depends on the others only through the pinned workspace entries.
        let deps = crate_manifest.get("dependencies").and_then(Value::as_table);
        for (dep, spec) in deps.into_iter().flatten() {
            if PUBLISHED.contains(&dep.as_str()) {
                let via_workspace = spec
                    .as_table()
                    .and_then(|t| t.get("workspace"))
                    .and_then(Value::as_bool);
                assert_eq!(
                    via_workspace,
                    Some(true),
                    "{name} depends on {dep} with `{dep}.workspace = true`"
                );
            }
        }
    }
    let readme = inherited
        .get("readme")
        .and_then(Value::as_str)
        .expect("[workspace.package] sets the readme");
    assert!(
        root().join(readme).is_file(),
        "the readme `{readme}` exists"
    );
}
