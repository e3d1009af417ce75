//! The layers of dbbench-core import only downwards: model → util → engine → run → analysis →
//! output → cli (`docs/architecture.md`). This reads every source file, collects the paths it
//! names with `crate::<layer>` (in `use` items and in code, comments left out) and fails on any
//! that names a layer above the file's own. It also checks that no top-level module is left
//! outside the layers.

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

#[test]
fn the_checker_sees_groups_and_paths() {
    let names = named_layers("use crate::{model::x, util};\nlet a = crate::engine::f();");
    assert_eq!(
        names.into_iter().collect::<Vec<_>>(),
        ["engine", "model", "util"]
    );
    assert!(named_layers(&code("// see crate::cli")).is_empty());
}
