//! The layers of dbbench-core import only downwards: model → util → engine → run → analysis →
//! output → cli (`docs/architecture.md`). This reads every source file, collects the paths it
//! names with `crate::<layer>` (in `use` items and in code, comments left out) and fails on any
//! that names a layer above the file's own. It also checks that no top-level module is left
//! outside the layers, and that a backend (a folder of `engine/`) takes from the rest of `engine`
//! only what the backends share (the trait, the profile, the fixture), never its dispatcher.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// The layers, lowest first.
const LAYERS: [&str; 7] = [
    "model", "util", "engine", "run", "analysis", "output", "cli",
];

/// Files at the crate root that are facades over every layer, not a layer themselves.
const FACADES: [&str; 2] = ["lib.rs", "__private.rs"];

fn sources(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            sources(&path, out);
        } else if path.extension().is_some_and(|x| x == "rs") {
            out.push(path);
        }
    }
}

/// The code of `text` without `//` comments (doc links are not dependencies).
fn code(text: &str) -> String {
    text.lines()
        .map(|line| match line.find("//") {
            Some(i) if !line[..i].contains('"') => &line[..i],
            _ => line,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The layers `text` names: `crate::layer`, and each name of a `use crate::{a, b::c}` group.
fn named_layers(text: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let mut rest = text;
    while let Some(i) = rest.find("crate::") {
        rest = &rest[i + "crate::".len()..];
        if let Some(group) = rest.strip_prefix('{') {
            let end = group.find('}').unwrap_or(group.len());
            for item in group[..end].split(',') {
                let name: String = item
                    .trim()
                    .chars()
                    .take_while(|c| c.is_alphanumeric() || *c == '_')
                    .collect();
                out.insert(name);
            }
        } else {
            let name: String = rest
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            out.insert(name);
        }
    }
    out
}

#[test]
fn layers_import_only_downwards() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    sources(&src, &mut files);
    let mut upward = Vec::new();
    let mut outside = Vec::new();
    for file in &files {
        let relative = file.strip_prefix(&src).unwrap();
        let top = relative
            .components()
            .next()
            .unwrap()
            .as_os_str()
            .to_string_lossy()
            .into_owned();
        if FACADES.contains(&top.as_str()) || top == "bin" {
            continue;
        }
        let Some(rank) = LAYERS.iter().position(|l| *l == top) else {
            outside.push(relative.display().to_string());
            continue;
        };
        let text = code(&std::fs::read_to_string(file).unwrap());
        for name in named_layers(&text) {
            match LAYERS.iter().position(|l| *l == name) {
                Some(r) if r > rank => {
                    upward.push(format!("{} ({top}) imports {name}", relative.display()))
                }
                Some(_) => {}
                None => upward.push(format!(
                    "{} names `crate::{name}`, which is not a layer",
                    relative.display()
                )),
            }
        }
    }
    assert!(
        outside.is_empty(),
        "modules outside the layers: {outside:?}"
    );
    assert!(
        upward.is_empty(),
        "imports against the layer order:\n{}",
        upward.join("\n")
    );
}

/// What a backend may name of `engine` outside its own folder: the modules every backend shares.
/// The dispatcher (`engine/mod.rs`, the registry, the `Connection` wrapper) is above them, and
/// `DatabasePlan` and the owned-name prefix live in `model::plan`.
const SHARED_WITH_BACKENDS: [&str; 3] = ["plugin", "profile", "fixture"];

/// The names of `engine` that `text`, a file of the backend folder `backend` nested `depth`
/// modules below `engine` (1 for the folder's `mod.rs`), reaches outside its own folder: through
/// `crate::engine::<name>` anywhere, or through as many `super::` as lead back to `engine` in the
/// file's own top-level items (unindented lines: inside an inline module, as `mod tests`, the same
/// `super::` chain ends one level lower).
fn engine_names(text: &str, backend: &str, depth: usize) -> BTreeSet<String> {
    let ups = format!("use {}", "super::".repeat(depth));
    let top_level: String = text
        .lines()
        .filter(|line| line.starts_with("use ") || line.starts_with("pub use "))
        .collect::<Vec<_>>()
        .join("\n");
    let mut out = BTreeSet::new();
    for (haystack, prefix) in [
        (text, "crate::engine::"),
        (top_level.as_str(), ups.as_str()),
    ] {
        for (i, _) in haystack.match_indices(prefix) {
            let rest = &haystack[i + prefix.len()..];
            if rest.starts_with("super::") {
                continue; // a longer chain: above `engine`
            }
            let names: Vec<String> = match rest.strip_prefix('{') {
                Some(group) => group[..group.find('}').unwrap_or(group.len())]
                    .split(',')
                    .map(|item| item.trim().to_string())
                    .collect(),
                None => vec![rest.to_string()],
            };
            out.extend(
                names
                    .iter()
                    .map(|n| {
                        n.chars()
                            .take_while(|c| c.is_alphanumeric() || *c == '_')
                            .collect::<String>()
                    })
                    .filter(|n| !n.is_empty() && n != backend),
            );
        }
    }
    out
}

#[test]
fn backends_take_only_what_they_share() {
    let engine = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("src")
        .join("engine");
    let mut files = Vec::new();
    sources(&engine, &mut files);
    let mut wrong = Vec::new();
    for file in &files {
        let relative = file.strip_prefix(&engine).unwrap();
        let parts: Vec<String> = relative
            .components()
            .map(|c| c.as_os_str().to_string_lossy().into_owned())
            .collect();
        if parts.len() < 2 {
            continue; // the dispatcher and the shared modules themselves
        }
        let backend = &parts[0];
        // `mssql/mod.rs` is the module `mssql` (one below `engine`); `mssql/a/b.rs` is three.
        let depth = if parts.last().is_some_and(|p| p == "mod.rs") {
            parts.len() - 1
        } else {
            parts.len()
        };
        let text = code(&std::fs::read_to_string(file).unwrap());
        for name in engine_names(&text, backend, depth) {
            if !SHARED_WITH_BACKENDS.contains(&name.as_str()) {
                wrong.push(format!("{} names engine::{name}", relative.display()));
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "backends reaching the dispatcher or each other (share through model::plan or \
         engine::plugin instead):\n{}",
        wrong.join("\n")
    );
}

#[test]
fn the_backend_checker_sees_the_dispatcher() {
    let names = |text: &str, depth| {
        engine_names(text, "mssql", depth)
            .into_iter()
            .collect::<Vec<_>>()
    };
    assert_eq!(
        names("use crate::engine::{DatabasePlan, OWNED_PREFIX};", 2),
        ["DatabasePlan", "OWNED_PREFIX"]
    );
    assert_eq!(names("use super::DatabasePlan;", 1), ["DatabasePlan"]);
    assert_eq!(
        names("use super::super::{Backend, profile};", 2),
        ["Backend", "profile"]
    );
    // Within the folder: a sibling (`super::x` from `mssql/a.rs`), the folder itself, and a
    // test module's `super::super::` one level lower.
    assert!(names("use super::marker;\nuse crate::engine::mssql::tsql;", 2).is_empty());
    assert!(names("mod tests {\n    use super::super::marker;\n}", 2).is_empty());
    assert_eq!(names("use crate::engine::plugin::Pending;", 2), ["plugin"]);
}

#[test]
fn the_checker_sees_groups_and_paths() {
    let names = named_layers("use crate::{model::x, util};\nlet a = crate::engine::f();");
    assert_eq!(
        names.into_iter().collect::<Vec<_>>(),
        ["engine", "model", "util"]
    );
    assert!(named_layers(&code("// see crate::cli")).is_empty());
}

/// The product words a generic layer must not hold in its code: what one backend knows stays in
/// its folder, and no item of it lives or dies by a backend's feature (issue 41: a new backend
/// touches no `util` match).
const PRODUCT_WORDS: [&str; 7] = [
    "feature = \"",
    "sqlservr",
    "\"postgres\"",
    "SQL Server",
    "Babelfish",
    "pg_backend_pid",
    "SERVERPROPERTY",
];

/// `text` up to its first `#[cfg(test)]`: a module's own tests may describe any product.
fn shipped(text: &str) -> &str {
    text.find("#[cfg(test)]").map_or(text, |i| &text[..i])
}

/// The product words in the shipped code of `text`, comments left out.
fn product_words(text: &str) -> Vec<&'static str> {
    let code = code(shipped(text));
    PRODUCT_WORDS
        .into_iter()
        .filter(|w| code.contains(w))
        .collect()
}

#[test]
fn util_names_no_product() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/util");
    let mut files = Vec::new();
    sources(&root, &mut files);
    let mut found = Vec::new();
    for file in files {
        // A module's tests kept in a file of their own (`owned_dir/tests.rs`) are tests too.
        let name = file.file_name().and_then(|n| n.to_str()).unwrap_or("");
        if name == "tests.rs" || name.ends_with("_tests.rs") {
            continue;
        }
        let words = product_words(&std::fs::read_to_string(&file).unwrap());
        if !words.is_empty() {
            found.push(format!("{}: {words:?}", file.display()));
        }
    }
    assert!(found.is_empty(), "util names products: {found:#?}");
}

/// What the model layer must not hold in its code besides [`PRODUCT_WORDS`]: the products'
/// names and the driver crates. The model is the data every backend shares, so a backend's errors
/// carry its name as data (`Error::Database::system`), made in its own folder (issue 41: a new
/// backend adds no error variant).
const MODEL_WORDS: [&str; 6] = [
    "rusqlite",
    "tiberius",
    "tokio_postgres",
    "postgres_protocol",
    "PostgreSQL",
    "SQLite",
];

/// The words of [`PRODUCT_WORDS`] and [`MODEL_WORDS`] in the shipped code of `text`.
fn model_words(text: &str) -> Vec<&'static str> {
    let code = code(shipped(text));
    let mut found = product_words(text);
    found.extend(MODEL_WORDS.into_iter().filter(|w| code.contains(w)));
    found
}

/// Whether `file` is compiled for tests only: its parent module declares it under `#[cfg(test)]`
/// (as `model/mod.rs` does `sample`, results invented for tests, and `model/config.rs` its
/// `config/tests.rs`). The parent is `mod.rs` beside the file or the folder's `.rs` file above it.
fn test_only(file: &Path) -> bool {
    let stem = file.file_stem().unwrap().to_string_lossy();
    if stem == "mod" {
        return false;
    }
    let parents = [
        file.with_file_name("mod.rs"),
        file.parent().unwrap().with_extension("rs"),
    ];
    parents
        .iter()
        .filter_map(|parent| std::fs::read_to_string(parent).ok())
        .any(|text| {
            let lines: Vec<&str> = text.lines().map(str::trim).collect();
            lines.windows(2).any(|pair| {
                pair[0] == "#[cfg(test)]"
                    && [format!("mod {stem};"), format!("pub mod {stem};")]
                        .contains(&pair[1].to_string())
            })
        })
}

#[test]
fn model_names_no_product() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/model");
    let mut files = Vec::new();
    sources(&root, &mut files);
    let mut found = Vec::new();
    for file in files.iter().filter(|f| !test_only(f)) {
        let words = model_words(&std::fs::read_to_string(file).unwrap());
        if !words.is_empty() {
            found.push(format!("{}: {words:?}", file.display()));
        }
    }
    assert!(found.is_empty(), "model names products: {found:#?}");
}

#[test]
fn the_model_check_sees_crates_and_names_and_skips_test_modules() {
    assert_eq!(
        model_words("    Sqlite(#[from] rusqlite::Error),\n"),
        vec!["rusqlite"]
    );
    assert_eq!(
        model_words("#[error(\"PostgreSQL error {code}: {message}\")]\n"),
        vec!["PostgreSQL"]
    );
    assert_eq!(
        model_words("fn w() -> &'static str { \"Babelfish\" }\n"),
        vec!["Babelfish"]
    );
    assert!(
        model_words("/// The product (\"SQLite\", \"SQL Server\").\nsystem: &'static str,\n")
            .is_empty()
    );
    let model = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/model");
    assert!(test_only(&model.join("sample.rs")));
    assert!(test_only(&model.join("config/tests.rs")));
    assert!(!test_only(&model.join("error.rs")) && !test_only(&model.join("mod.rs")));
}

#[test]
fn the_product_check_sees_code_not_comments_or_tests() {
    assert_eq!(
        product_words("let name = \"sqlservr\";\n"),
        vec!["sqlservr"]
    );
    assert!(product_words("// sqlservr, as SQL Server names it\nlet x = 1;\n").is_empty());
    assert_eq!(
        product_words("#[cfg(feature = \"mssql\")]\npub const A: i64 = 1;\n"),
        vec!["feature = \""]
    );
    assert!(product_words(
        "fn a() {}\n#[cfg(test)]\nmod tests { const N: &str = \"postgres\"; }\n"
    )
    .is_empty());
}
