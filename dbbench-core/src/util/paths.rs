//! Every path dbbench writes under its work dir, in one place: databases, volumes, results (JSON
//! and CSV) and the report.
//!
//! `DBBENCH_DIR` overrides the work dir; otherwise it is `target/dbbench` of the workspace that
//! declares the benchmark (honouring `CARGO_TARGET_DIR`).

use std::path::{Path, PathBuf};

/// `name` fit to be one component of a path under the work dir: every character but ASCII
/// letters, digits, `.`, `-` and `_` becomes `_`, and a leading `.` too, so that no `/`, `..` or
/// hidden name comes through (a stem or host read from another machine's store).
pub fn file_safe(name: &str) -> String {
    let safe: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '.' || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect();
    match safe.strip_prefix('.') {
        Some(rest) => format!("_{rest}"),
        None if safe.is_empty() => "_".to_string(),
        None => safe,
    }
}

/// dbbench's working directory for benchmarks declared in the crate at `manifest_dir`.
pub fn work_dir(manifest_dir: &Path) -> PathBuf {
    if let Some(dir) = std::env::var_os("DBBENCH_DIR").filter(|d| !d.is_empty()) {
        return PathBuf::from(dir);
    }
    if let Some(target) = std::env::var_os("CARGO_TARGET_DIR").filter(|d| !d.is_empty()) {
        let target = PathBuf::from(target);
        let target = if target.is_relative() {
            workspace_root(manifest_dir).join(target)
        } else {
            target
        };
        return target.join("dbbench");
    }
    workspace_root(manifest_dir).join("target").join("dbbench")
}

/// The nearest ancestor of `manifest_dir` (itself included) that holds a `Cargo.lock`.
pub fn workspace_root(manifest_dir: &Path) -> PathBuf {
    manifest_dir
        .ancestors()
        .find(|dir| dir.join("Cargo.lock").exists())
        .unwrap_or(manifest_dir)
        .to_path_buf()
}

/// The directory of the results files.
pub fn results_dir(work_dir: &Path) -> PathBuf {
    work_dir.join("results")
}

/// The results JSON of the benchmark with this file stem.
pub fn results_file(work_dir: &Path, stem: &str) -> PathBuf {
    results_dir(work_dir).join(format!("{stem}.json"))
}

/// The CSV of the benchmark with this file stem, beside its JSON.
pub fn csv_file(work_dir: &Path, stem: &str) -> PathBuf {
    results_dir(work_dir).join(format!("{stem}.csv"))
}

/// The report directory.
pub fn report_dir(work_dir: &Path) -> PathBuf {
    work_dir.join("report")
}

/// The report's index page.
pub fn report_index(work_dir: &Path) -> PathBuf {
    report_dir(work_dir).join("index.html")
}

/// The report's order of benchmarks, as the suite declares them (`output::order`).
pub fn report_order(work_dir: &Path) -> PathBuf {
    report_dir(work_dir).join("order.txt")
}

/// The directory of one benchmark's charts.
pub fn chart_dir(work_dir: &Path, stem: &str) -> PathBuf {
    report_dir(work_dir).join(stem)
}

/// Where the embedded engine creates the directory of the database `name`.
pub fn database_dir(work_dir: &Path, name: &str) -> PathBuf {
    work_dir.join("db").join(name)
}

/// The directory standing in for a volume name that `DBBENCH_VOLUMES` does not bind.
pub fn default_volume_dir(work_dir: &Path, volume: &str) -> PathBuf {
    work_dir.join("volumes").join(volume)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_safe_name_has_no_separator_or_parent() {
        assert_eq!(
            file_safe("x/../../../../home/u/.config"),
            "x_.._.._.._.._home_u_.config"
        );
        assert_eq!(file_safe(".."), "_.");
        assert_eq!(file_safe(""), "_");
        assert_eq!(file_safe("suite.vlf-1_a"), "suite.vlf-1_a");
    }

    #[test]
    fn finds_the_workspace_root_from_a_member() {
        let member = Path::new(env!("CARGO_MANIFEST_DIR"));
        let root = workspace_root(member);
        assert!(root.join("Cargo.lock").exists());
        assert!(member.starts_with(&root));
    }
}
