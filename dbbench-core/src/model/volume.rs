//! Named volumes: `data_on` / `log_on` name them in source, `DBBENCH_VOLUMES` binds them to
//! directories on this machine (`fast=/mnt/ssd,slow=/mnt/sata`), so source code holds no paths.

use crate::model::error::{Error, Result};
use std::collections::BTreeMap;
use std::path::PathBuf;

/// The binding of volume names to directories.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Volumes {
    map: BTreeMap<String, PathBuf>,
}

impl Volumes {
    /// Parses `name=dir,name=dir`.
    pub fn parse(text: &str) -> Result<Volumes> {
        let mut map = BTreeMap::new();
        for item in text.split(',').map(str::trim).filter(|s| !s.is_empty()) {
            let (name, dir) = item.split_once('=').ok_or_else(|| {
                Error::Config(format!(
                    "DBBENCH_VOLUMES entry `{item}` must be `name=directory`, e.g. `fast=/mnt/ssd`"
                ))
            })?;
            let (name, dir) = (name.trim(), dir.trim());
            if name.is_empty() || dir.is_empty() {
                return Err(Error::Config(format!(
                    "DBBENCH_VOLUMES entry `{item}` needs both a name and a directory"
                )));
            }
            if map.insert(name.to_string(), PathBuf::from(dir)).is_some() {
                return Err(Error::Config(format!(
                    "DBBENCH_VOLUMES names volume `{name}` twice"
                )));
            }
        }
        Ok(Volumes { map })
    }

    /// The binding from `DBBENCH_VOLUMES` (empty when unset).
    pub fn from_env() -> Result<Volumes> {
        Volumes::parse(&std::env::var("DBBENCH_VOLUMES").unwrap_or_default())
    }

    /// Adds or replaces a binding (used by tests and by the suites' defaults).
    pub fn bind(&mut self, name: &str, dir: impl Into<PathBuf>) {
        self.map.insert(name.to_string(), dir.into());
    }

    /// The directory bound to `name`, or an error that says how to bind it.
    pub fn resolve(&self, name: &str) -> Result<&PathBuf> {
        self.map.get(name).ok_or_else(|| {
            Error::Config(format!(
                "volume `{name}` is not bound to a directory: set DBBENCH_VOLUMES=\"{name}=/path/to/dir\" (bound now: {})",
                if self.map.is_empty() {
                    "none".to_string()
                } else {
                    self.map.keys().cloned().collect::<Vec<_>>().join(", ")
                }
            ))
        })
    }

    /// Whether no volume is bound.
    pub fn is_empty(&self) -> bool {
        self.map.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_and_resolves() {
        let v = Volumes::parse("fast=/mnt/ssd, slow=/mnt/sata").unwrap();
        assert_eq!(v.resolve("slow").unwrap(), &PathBuf::from("/mnt/sata"));
        let err = v.resolve("tape").unwrap_err().to_string();
        assert!(
            err.contains("DBBENCH_VOLUMES") && err.contains("fast, slow"),
            "{err}"
        );
    }

    #[test]
    fn rejects_malformed_entries() {
        assert!(Volumes::parse("fast").is_err());
        assert!(Volumes::parse("a=/x,a=/y").is_err());
        assert!(Volumes::parse("").unwrap().is_empty());
    }
}
