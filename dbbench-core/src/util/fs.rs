//! Writing a file together with its directory, with the path in every error.

use crate::model::error::{Error, Result};
use std::path::Path;

/// Writes `contents` to `path`, creating its directory first; `what` names the file in errors
/// ("results", "CSV", "report file").
pub fn write_file(path: &Path, contents: impl AsRef<[u8]>, what: &'static str) -> Result<()> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(|e| Error::io("cannot create directory", dir, e))?;
    }
    std::fs::write(path, contents).map_err(|e| Error::io(what, path, e))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn creates_the_directory_and_names_the_path_on_failure() {
        let dir = std::env::temp_dir().join(format!("dbbench-fs-{}", std::process::id()));
        let file = dir.join("a/b/c.txt");
        write_file(&file, "x", "cannot write test file").unwrap();
        assert_eq!(std::fs::read_to_string(&file).unwrap(), "x");
        // A file where a directory should be: the error names the path.
        let blocked = file.join("d.txt");
        let e = write_file(&blocked, "y", "cannot write test file").unwrap_err();
        assert!(e.to_string().contains("c.txt"), "{e}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
