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

/// The largest results file read: a benchmark's results are a few MiB at most, and a hostile or
/// damaged file (a device, a file that grows) must not take all memory.
const READ_LIMIT: u64 = 256 << 20;

/// Reads a result written by [`write`], refusing other schema versions and files larger than
/// 256 MiB.
pub fn read(path: &Path) -> Result<BenchmarkResult> {
    read_within(path, READ_LIMIT)
}

/// [`read`], with files larger than `limit` bytes refused.
fn read_within(path: &Path, limit: u64) -> Result<BenchmarkResult> {
    use std::io::Read;
    let file = std::fs::File::open(path).map_err(|e| Error::io("cannot read results", path, e))?;
    let mut text = String::new();
    file.take(limit + 1)
        .read_to_string(&mut text)
        .map_err(|e| Error::io("cannot read results", path, e))?;
    if text.len() as u64 > limit {
        return Err(Error::Config(format!(
            "`{}` is larger than {} bytes, more than any dbbench result; not read",
            path.display(),
            limit
        )));
    }
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
    fn a_file_past_the_limit_or_damaged_is_refused_with_a_sentence() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("r.json");
        write(&crate::model::sample::vlf(), &path).unwrap();
        let size = std::fs::metadata(&path).unwrap().len();
        assert!(read_within(&path, size).is_ok());
        let e = read_within(&path, size - 1).unwrap_err().to_string();
        assert!(e.contains("larger than"), "{e}");
        std::fs::write(&path, "{\"schema_version\": [[[[").unwrap();
        let e = read(&path).unwrap_err().to_string();
        assert!(e.contains("is not a dbbench result"), "{e}");
    }

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
