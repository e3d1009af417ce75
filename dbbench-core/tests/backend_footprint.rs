//! What a new backend touches outside its folder (docs/architecture.md, "A backend"): the shipped
//! code of dbbench names a backend only in its folder `engine/<name>/`, in its one line of the
//! registry (`backends!` in `engine/mod.rs`) and in the name table of `dbbench-options`
//! (`keyword.rs`). No enum, dialect arm, error variant, util match, macro branch or other
//! generic code names one, so a fourth backend needs none of them.
//!
//! Every folder of `engine/` is a backend, so a new one is checked as soon as it exists. A
//! backend is named by its keyword (the folder's name, which is also its Cargo feature and what
//! `DBBENCH_BACKEND` says), matched as a whole word in any case (`mssql`, `MSSQL`, `Mssql`),
//! in code and in string literals; comments and tests may name any backend.

use std::path::{Path, PathBuf};

/// Lines of generic code that may name a backend, each with its reason: `(file from the
/// workspace root, a part of the line, the backend)`.
const ALLOWED: &[(&str, &str, &str)] = &[
    // The three dialects that were once a closed enum keep their names as constants, so bodies
    // that match on `Dialect::Postgres` compile as they did; a new backend's dialect is a name
    // it defines in its folder.
    (
        "dbbench-core/src/model/dialect.rs",
        "pub const Postgres: Dialect",
        "postgres",
    ),
    (
        "dbbench-core/src/model/dialect.rs",
        "Dialect::Postgres => \"Postgres\"",
        "postgres",
    ),
    // Which backend runs when `DBBENCH_BACKEND` is unset: the embedded engine, which needs no
    // server. A new backend does not change it.
    (
        "dbbench-options/src/defaults.rs",
        "pub const BACKEND: &str = crate::keyword::EMBEDDED",
        "embedded",
    ),
    // The macro's messages show examples of the attribute (`backends = ["mssql"]`,
    // `#[not_on(postgres = "…")]`): words for the reader, which a new backend leaves as they are.
    (
        "dbbench-macros/src/value.rs",
        "Key::Backends => &[",
        "mssql",
    ),
    (
        "dbbench-macros/src/value.rs",
        "Key::Backends => &[",
        "embedded",
    ),
    (
        "dbbench-macros/src/options.rs",
        "such as `backends = [",
        "mssql",
    ),
    ("dbbench-macros/src/not_on.rs", "#[not_on(mssql = ", "mssql"),
    (
        "dbbench-macros/src/not_on.rs",
        "#[not_on(mssql = ",
        "postgres",
    ),
    (
        "dbbench-macros/src/not_on.rs",
        "write `#[not_on(postgres = ",
        "postgres",
    ),
    (
        "dbbench-macros/src/not_on.rs",
        "as `postgres = ",
        "postgres",
    ),
    // A compile-time hint: `recovery = "bulk_logged"` on a cell that only the embedded engine
    // runs is an error at the attribute rather than a refusal at run time. A new backend
    // without bulk-logged recovery is refused at run time by its own `check`, and needs no
    // line here.
    (
        "dbbench-macros/src/setting.rs",
        "pub const Embedded: Backend",
        "embedded",
    ),
    (
        "dbbench-macros/src/check.rs",
        "b.value == [Backend::Embedded]",
        "embedded",
    ),
    (
        "dbbench-macros/src/check.rs",
        "exists only on SQL Server, but",
        "embedded",
    ),
    (
        "dbbench-macros/src/check.rs",
        "exists only on SQL Server, but",
        "mssql",
    ),
];

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

/// The backends: the folders of `engine/`.
fn backends(core: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(core.join("src/engine"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir())
        .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

/// `text` up to its first `#[cfg(test)]` (a module's own tests may name any backend), with
/// `//` comments left out; numbered lines.
fn shipped_lines(text: &str) -> Vec<(usize, String)> {
    let test = ["#[cfg(test)]", "#[cfg(all(test"]
        .iter()
        .filter_map(|mark| text.find(mark))
        .min();
    let shipped = test.map_or(text, |i| &text[..i]);
    shipped
        .lines()
        .enumerate()
        .map(|(i, line)| {
            let code = match line.find("//") {
                Some(at) if !line[..at].contains('"') => &line[..at],
                _ => line,
            };
            (i + 1, code.to_string())
        })
        .collect()
}

/// Whether `line` names `backend` as a whole word, in any case.
fn names(line: &str, backend: &str) -> bool {
    let line = line.to_ascii_lowercase();
    let word = |c: char| c.is_ascii_alphanumeric() || c == '_';
    line.match_indices(backend).any(|(at, _)| {
        let before = line[..at].chars().next_back();
        let after = line[at + backend.len()..].chars().next();
        !before.is_some_and(word) && !after.is_some_and(word)
    })
}

/// Files that hold only tests: `tests.rs`, and modules declared under `#[cfg(test)]` by their
/// parent (`#[cfg(test)] mod any_build;`).
fn test_only(file: &Path) -> bool {
    let stem = file.file_stem().unwrap().to_string_lossy().into_owned();
    if stem == "tests" || file.components().any(|c| c.as_os_str() == "tests") {
        return true;
    }
    let dir = file.parent().unwrap();
    let parents = [
        dir.join("mod.rs"),
        dir.join("lib.rs"),
        dir.with_extension("rs"),
    ];
    parents.iter().any(|parent| {
        let Ok(text) = std::fs::read_to_string(parent) else {
            return false;
        };
        let lines: Vec<&str> = text.lines().map(str::trim).collect();
        lines.windows(2).any(|w| {
            w[0].starts_with("#[cfg(") && w[0].contains("test") && {
                let decl = w[1]
                    .trim_start_matches("pub ")
                    .trim_start_matches("pub(crate) ");
                decl == format!("mod {stem};")
            }
        })
    })
}

/// Every line of generic code that names a backend, as `file:line: code`.
fn findings(root: &Path, core: &Path) -> Vec<String> {
    let backends = backends(core);
    let mut files = Vec::new();
    for dir in [
        core.join("src"),
        root.join("dbbench-macros/src"),
        root.join("dbbench-options/src"),
    ] {
        sources(&dir, &mut files);
    }
    let registry = core.join("src/engine/mod.rs");
    let name_table = root.join("dbbench-options/src/keyword.rs");
    let mut found = Vec::new();
    for file in files {
        if test_only(&file) || file == name_table {
            continue;
        }
        let shown = file
            .strip_prefix(root)
            .unwrap_or(&file)
            .display()
            .to_string();
        let text = std::fs::read_to_string(&file).unwrap();
        for (number, line) in shipped_lines(&text) {
            for backend in &backends {
                let own = core.join("src/engine").join(backend);
                if file.starts_with(&own) || !names(&line, backend) {
                    continue;
                }
                if file == registry && is_registry_line(&line, backend) {
                    continue;
                }
                let allowed = ALLOWED
                    .iter()
                    .any(|(f, l, b)| shown == *f && line.contains(l) && b == backend);
                // Another backend's folder may name this one in its own messages (a refusal
                // that suggests `backends = ["mssql"]`): that is not a change a new backend
                // forces, and the registry line is checked below.
                let in_a_backend = backends
                    .iter()
                    .any(|b| file.starts_with(core.join("src/engine").join(b)));
                if !allowed && !in_a_backend {
                    found.push(format!("{shown}:{number}: {}", line.trim()));
                }
            }
        }
    }
    found
}

/// `mssql = "mssql",`: a backend's one line in `backends!`, its module and its feature.
fn is_registry_line(line: &str, backend: &str) -> bool {
    line.trim() == format!("{backend} = \"{backend}\",")
}

fn roots() -> (PathBuf, PathBuf) {
    let core = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    (core.parent().unwrap().to_path_buf(), core)
}

#[test]
fn generic_code_names_no_backend() {
    let (root, core) = roots();
    let found = findings(&root, &core);
    assert!(
        found.is_empty(),
        "generic code names a backend; a new backend would have to edit these (docs/architecture.md, \
         \"A backend\"): {found:#?}"
    );
}

#[test]
fn each_backend_is_registered_in_one_line() {
    let (_, core) = roots();
    let registry = std::fs::read_to_string(core.join("src/engine/mod.rs")).unwrap();
    for backend in backends(&core) {
        let lines = registry
            .lines()
            .filter(|line| is_registry_line(line, &backend))
            .count();
        assert_eq!(
            lines, 1,
            "`{backend}` has {lines} registry lines in engine/mod.rs"
        );
    }
}

#[test]
fn the_check_sees_a_backend_named_in_code_in_any_case() {
    assert!(names("BackendKind::Mssql => 1,", "mssql"));
    assert!(names("#[cfg(feature = \"mssql\")]", "mssql"));
    assert!(names("pub use crate::engine::mssql;", "mssql"));
    assert!(names("const MSSQL: &str = x;", "mssql"));
    assert!(!names("let postgresql = 1;", "postgres"));
    assert!(!names("let embedded_rows = 1;", "embedded"));
    let lines =
        shipped_lines("let a = 1; // mssql\n#[cfg(test)]\nmod t { const B: &str = \"mssql\"; }\n");
    assert!(lines.iter().all(|(_, l)| !names(l, "mssql")));
    assert!(is_registry_line("    mssql = \"mssql\",", "mssql"));
    assert!(!is_registry_line(
        "    #[cfg(feature = \"mssql\")] pub mod mssql;",
        "mssql"
    ));
}
