//! The results JSON: one file per benchmark, `results/<stem>.json`, in the versioned schema of
//! `docs/results-schema.md`; and reading such files back (one, or a directory of them).

use crate::model::error::{Error, Result};
use crate::model::results::{BenchmarkResult, SCHEMA_VERSION};
use crate::util::fs::write_file;
use crate::util::paths::results_file;
use std::path::{Path, PathBuf};

/// The JSON output.
pub struct Json;

impl super::Output for Json {
    fn name(&self) -> &'static str {
        "JSON"
    }

    fn is_source(&self) -> bool {
        true
    }

    fn benchmark(&self, result: &BenchmarkResult, stem: &str, work_dir: &Path) -> Result<()> {
        write(result, &results_file(work_dir, stem))
    }
}

/// Writes `result` as pretty JSON to `path`, creating the directory.
pub fn write(result: &BenchmarkResult, path: &Path) -> Result<()> {
    let text = serde_json::to_string_pretty(result)?;
    write_file(path, text, "cannot write results")
}

/// Reads a result written by [`write`], refusing other schema versions.
pub fn read(path: &Path) -> Result<BenchmarkResult> {
    let text =
        std::fs::read_to_string(path).map_err(|e| Error::io("cannot read results", path, e))?;
    let value: BenchmarkResult = serde_json::from_str(&text)
        .map_err(|e| Error::Config(format!("`{}` is not a dbbench result: {e}", path.display())))?;
    if value.schema_version != SCHEMA_VERSION {
        return Err(Error::Config(format!(
            "`{}` has schema version {}, this dbbench reads version {SCHEMA_VERSION}",
            path.display(),
            value.schema_version
        )));
    }
    Ok(value)
}

/// The `*.json` files of `dir`, sorted by name.
pub fn results_files(dir: &Path) -> Result<Vec<PathBuf>> {
    let entries =
        std::fs::read_dir(dir).map_err(|e| Error::io("cannot list results directory", dir, e))?;
    let mut files = Vec::new();
    for entry in entries {
        let path = entry
            .map_err(|e| Error::io("cannot list results directory", dir, e))?
            .path();
        if path.extension().is_some_and(|x| x == "json") {
            files.push(path);
        }
    }
    files.sort();
    Ok(files)
}

/// The results at `path`: one file, or every results file of a directory, each with its file
/// name. A path that does not exist, or a directory without results, is an error that says so.
pub fn read_all(path: &Path) -> Result<Vec<(String, BenchmarkResult)>> {
    let name = |p: &Path| {
        p.file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default()
    };
    if path.is_file() {
        return Ok(vec![(name(path), read(path)?)]);
    }
    if !path.is_dir() {
        return Err(Error::Config(format!(
            "`{}` is neither a results file nor a directory of them",
            path.display()
        )));
    }
    let files = results_files(path)?;
    if files.is_empty() {
        return Err(Error::Config(format!(
            "`{}` holds no results files (`*.json`)",
            path.display()
        )));
    }
    files.iter().map(|f| Ok((name(f), read(f)?))).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_and_schema_check() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("results/a.json");
        let result = crate::model::sample::vlf();
        write(&result, &path).unwrap();
        assert_eq!(read(&path).unwrap(), result);
        let mut old = result.clone();
        old.schema_version = SCHEMA_VERSION + 1;
        write(&old, &path).unwrap();
        let e = read(&path).unwrap_err().to_string();
        assert!(e.contains("schema version"), "{e}");
    }

    #[test]
    fn directories_without_results_are_errors() {
        let dir = tempfile::tempdir().unwrap();
        let e = read_all(dir.path()).unwrap_err().to_string();
        assert!(e.contains("holds no results"), "{e}");
        let e = read_all(&dir.path().join("missing"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("neither a results file"), "{e}");
    }
}
