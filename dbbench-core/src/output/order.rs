//! The order of the report's benchmarks: the order in which the suite declares them, as its
//! front end receives them (`cli::main(&[&a::BENCHMARK, &b::BENCHMARK])`), not the alphabetical
//! order of their results files. The front end records it in the work dir (`report/order.txt`,
//! one results file stem a line) because the index is rewritten from the files on disk by every
//! later publish, `report` and `merge`, some of which (the `dbbench` binary, a `cargo test` run of
//! one benchmark) do not know the suite. Benchmarks it does not name follow, by name.

use crate::model::error::{Error, Result};
use crate::util::fs::write_file;
use crate::util::paths::report_order;
use std::path::{Path, PathBuf};

/// Records `stems` (results file stems, `dbbench_suites.vlf.doubling`) as the declared order of
/// the work dir's benchmarks. Stems an earlier declaration named and this one does not (another
/// suite's, in the same work dir) keep their order after these.
pub fn declare(work_dir: &Path, stems: &[String]) -> Result<()> {
    let mut order: Vec<String> = Vec::new();
    for stem in stems.iter().cloned().chain(declared(work_dir)?) {
        if !order.contains(&stem) {
            order.push(stem);
        }
    }
    let path = report_order(work_dir);
    let text: String = order.iter().map(|s| format!("{s}\n")).collect();
    if std::fs::read_to_string(&path).is_ok_and(|old| old == text) {
        return Ok(());
    }
    write_file(&path, text, "cannot write the report's order")
}

/// The declared order of the work dir (empty when nothing declared one).
pub fn declared(work_dir: &Path) -> Result<Vec<String>> {
    let path = report_order(work_dir);
    match std::fs::read_to_string(&path) {
        Ok(text) => Ok(text
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty())
            .map(String::from)
            .collect()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Vec::new()),
        Err(e) => Err(Error::io("cannot read the report's order", &path, e)),
    }
}

/// `files` (results files) in the declared order; a merged benchmark of another host
/// (`<stem>@<host>.json`) follows its own host's. Files the order does not name come last, by name.
pub fn sorted(mut files: Vec<PathBuf>, declared: &[String]) -> Vec<PathBuf> {
    files.sort_by_cached_key(|file| {
        let stem = super::file_stem(file);
        let (base, host) = match stem.split_once('@') {
            Some((base, host)) => (base.to_string(), host.to_string()),
            None => (stem.clone(), String::new()),
        };
        let rank = declared
            .iter()
            .position(|d| *d == base)
            .unwrap_or(usize::MAX);
        // Undeclared files keep the name order they always had.
        let name = if rank == usize::MAX { stem } else { host };
        (rank, name)
    });
    files
}

#[cfg(test)]
mod tests {
    use super::*;

    fn files(names: &[&str]) -> Vec<PathBuf> {
        names
            .iter()
            .map(|n| PathBuf::from(format!("results/{n}.json")))
            .collect()
    }

    fn names(files: &[PathBuf]) -> Vec<String> {
        files.iter().map(|f| super::super::file_stem(f)).collect()
    }

    #[test]
    fn files_follow_the_declared_order_then_their_names() {
        let declared = ["s.vlf", "s.population", "s.data_files"].map(String::from);
        let sorted = sorted(
            files(&[
                "s.data_files",
                "other.b",
                "s.population@box",
                "s.population",
                "other.a",
                "s.vlf",
            ]),
            &declared,
        );
        assert_eq!(
            names(&sorted),
            [
                "s.vlf",
                "s.population",
                "s.population@box",
                "s.data_files",
                "other.a",
                "other.b"
            ]
        );
        // Nothing declared: the file names' order.
        assert_eq!(
            names(&super::sorted(files(&["b", "c", "a"]), &[])),
            ["a", "b", "c"]
        );
    }

    #[test]
    fn a_declaration_comes_first_and_keeps_the_earlier_ones_after_it() {
        let dir = tempfile::tempdir().unwrap();
        assert!(declared(dir.path()).unwrap().is_empty());
        declare(dir.path(), &["s.vlf".into(), "s.population".into()]).unwrap();
        assert_eq!(declared(dir.path()).unwrap(), ["s.vlf", "s.population"]);
        declare(dir.path(), &["t.one".into(), "s.population".into()]).unwrap();
        assert_eq!(
            declared(dir.path()).unwrap(),
            ["t.one", "s.population", "s.vlf"]
        );
    }
}
