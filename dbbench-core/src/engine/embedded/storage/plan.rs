//! The plan of one database's files: which physical files exist, where, how big they start and
//! how they grow, with the defaults filled in. It is written beside the database as a manifest so
//! that a database left by a killed process can be reopened ([`super::Layout::attach`]) and its
//! files removed.
//!
//! Defaults (an option the benchmark leaves unset):
//! - `data_size`: one 64 KiB extent per data file, so the data files start as small as a fresh
//!   SQLite file and grow with the workload;
//! - `growth`: 64 MB, SQL Server 2016+'s default for data files;
//! - `ifi`: on, because stock SQLite never zero-fills and SQL Server setup offers to grant it;
//! - `log_size`: 8 MB and `log_growth`: 64 MB, SQL Server 2016+'s `model` database.

use super::error::StorageError;
use crate::model::config::{self, StorageSpec};
use crate::model::error::{Error, Result};
use crate::model::units::{EXTENT, MIB};
use crate::model::volume::Volumes;
use dbbench_options::size::Growth;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// Initial size of each data file when `data_size` is unset.
pub const DEFAULT_DATA_FILE_BYTES: u64 = EXTENT;
/// Data file growth when `growth` is unset.
pub const DEFAULT_GROWTH_BYTES: u64 = 64 * MIB;
/// Instant file initialization when `ifi` is unset.
pub const DEFAULT_IFI: bool = true;
/// Initial log size when `log_size` is unset.
pub const DEFAULT_LOG_BYTES: u64 = 8 * MIB;
/// Log growth when `log_growth` is unset.
pub const DEFAULT_LOG_GROWTH_BYTES: u64 = 64 * MIB;
/// The most data files one database may have.
pub const MAX_DATA_FILES: u32 = 1024;

/// The plan's growth with its default filled in, in bytes: a declared size's literal is left
/// behind, as reports of the layer show what the file does (`64MB`, `1048577 bytes`).
fn planned(growth: Option<config::Growth>, default_bytes: u64) -> Growth {
    growth.map_or(Growth::Fixed(default_bytes), |g| g.in_bytes())
}

/// How a [`Growth`] is written in the manifest (`{"bytes":…}`, `{"percent":10}`, `"none"`): the
/// type is the options crate's, which has no serde, and manifests left by earlier runs must stay
/// readable.
#[derive(Serialize, Deserialize)]
#[serde(remote = "Growth", rename_all = "snake_case")]
enum ManifestGrowth {
    #[serde(rename = "bytes")]
    Fixed(u64),
    Percent(u32),
    None,
}

/// One physical file of the plan.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PlacedFile {
    /// Logical name in the results: `data_1`, `data_2`, …, `log`.
    pub name: String,
    /// Where the file is.
    pub path: PathBuf,
    /// The named volume it is on, if any.
    pub volume: Option<String>,
}

/// Every file of one database and the rules they follow.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LayoutPlan {
    /// The file SQLite opens: it stays empty and carries SQLite's locks and `-shm` file.
    pub anchor: PathBuf,
    /// The persisted extent map.
    pub map: PathBuf,
    /// The data files, in file order.
    pub data: Vec<PlacedFile>,
    /// The log.
    pub log: PlacedFile,
    /// Initial size of each data file.
    pub data_file_bytes: u64,
    /// Growth of each data file.
    #[serde(with = "ManifestGrowth")]
    pub growth: Growth,
    /// Instant file initialization for data files.
    pub ifi: bool,
    /// Size of the log when it is created.
    pub log_initial_bytes: u64,
    /// Size the log is pre-grown to, in steps of `log_initial_bytes`.
    pub log_target_bytes: u64,
    /// Growth of the log.
    #[serde(with = "ManifestGrowth")]
    pub log_growth: Growth,
}

/// Refuses storage options the layer cannot honour ([`Error::Unsupported`]: more data files than
/// it has) and settings that cannot work anywhere ([`Error::Config`]: a growth of nothing), with
/// the reason.
pub fn check(storage: &StorageSpec) -> Result<()> {
    // Mistakes of the declaration, wrong on every backend: they fail the cell.
    let bad = |option: &'static str, reason: String| {
        Error::Config(format!("option `{option}`: {reason}"))
    };
    if storage.data_files > MAX_DATA_FILES {
        return Err(Error::Unsupported {
            option: "data_files",
            backend: "embedded",
            reason: format!(
                "{} data files requested; the layer supports 1 to {MAX_DATA_FILES}",
                storage.data_files
            ),
        });
    }
    if storage.data_files == 0 {
        return Err(bad(
            "data_files",
            "0 data files requested; a database needs at least one".into(),
        ));
    }
    for (option, growth) in [
        ("growth", storage.growth),
        ("log_growth", storage.log_growth),
    ] {
        match growth {
            Some(Growth::Fixed(s)) if s.bytes == 0 => {
                return Err(bad(
                    option,
                    "a growth of 0 bytes never grows; write `none` to forbid growth".into(),
                ))
            }
            Some(Growth::Percent(0)) => {
                return Err(bad(
                    option,
                    "a growth of 0% never grows; write `none` to forbid growth".into(),
                ))
            }
            _ => {}
        }
    }
    if storage.log_pregrow.is_some() && storage.log_size.is_none() {
        return Err(bad(
            "log_pregrow",
            "pre-growing needs the size to grow to: set `log_size` as well".into(),
        ));
    }
    if storage.log_pregrow.is_some_and(|s| s.bytes == 0) {
        return Err(bad(
            "log_pregrow",
            "a pre-grow step of 0 bytes never reaches `log_size`".into(),
        ));
    }
    if storage.data_on.iter().any(|v| v.trim().is_empty()) {
        return Err(bad("data_on", "a volume name is empty".into()));
    }
    Ok(())
}

/// The directory of volume `name`, which must exist.
fn volume_dir(volumes: &Volumes, name: &str) -> Result<PathBuf> {
    let dir = volumes.resolve(name)?;
    if !dir.is_dir() {
        return Err(Error::Config(format!(
            "volume `{name}` is bound to `{}`, which does not exist or is not a directory \
             (create it or fix DBBENCH_VOLUMES)",
            dir.display()
        )));
    }
    Ok(dir.clone())
}

impl LayoutPlan {
    /// The plan for the database whose anchor (the path SQLite opens) is `anchor`.
    pub fn new(anchor: &Path, storage: &StorageSpec, volumes: &Volumes) -> Result<LayoutPlan> {
        check(storage)?;
        let home = anchor
            .parent()
            .ok_or_else(|| Error::Config(format!("`{}` has no directory", anchor.display())))?;
        let stem = anchor
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_else(|| "db".into());
        let place = |volume: Option<&str>, file: String, name: String| -> Result<PlacedFile> {
            let dir = match volume {
                Some(v) => volume_dir(volumes, v)?,
                None => home.to_path_buf(),
            };
            Ok(PlacedFile {
                name,
                path: dir.join(file),
                volume: volume.map(str::to_string),
            })
        };
        let data = (0..storage.data_files as usize)
            .map(|i| {
                let volume = (!storage.data_on.is_empty())
                    .then(|| storage.data_on[i % storage.data_on.len()].trim());
                let ext = if i == 0 { "mdf" } else { "ndf" };
                place(
                    volume,
                    format!("{stem}_data_{}.{ext}", i + 1),
                    format!("data_{}", i + 1),
                )
            })
            .collect::<Result<Vec<_>>>()?;
        let log = place(storage.log_on, format!("{stem}_log.ldf"), "log".into())?;
        let per_file = storage
            .data_size
            .map(|s| s.bytes / u64::from(storage.data_files))
            .unwrap_or(DEFAULT_DATA_FILE_BYTES);
        let log_target = storage
            .log_size
            .map(|s| s.bytes)
            .unwrap_or(DEFAULT_LOG_BYTES);
        let log_target = log_target.div_ceil(EXTENT).max(1) * EXTENT;
        let log_initial = storage
            .log_pregrow
            .map(|s| (s.bytes.div_ceil(EXTENT).max(1) * EXTENT).min(log_target))
            .unwrap_or(log_target);
        Ok(LayoutPlan {
            anchor: anchor.to_path_buf(),
            map: sibling(anchor, "-extents"),
            data,
            log,
            data_file_bytes: per_file.div_ceil(EXTENT).max(1) * EXTENT,
            growth: planned(storage.growth, DEFAULT_GROWTH_BYTES),
            ifi: storage.ifi.unwrap_or(DEFAULT_IFI),
            log_initial_bytes: log_initial,
            log_target_bytes: log_target,
            log_growth: planned(storage.log_growth, DEFAULT_LOG_GROWTH_BYTES),
        })
    }

    /// Where the manifest of the database at `anchor` is.
    pub fn manifest_path(anchor: &Path) -> PathBuf {
        sibling(anchor, "-layout.json")
    }

    /// Every file the layer creates for this plan, manifest included, in creation order.
    pub fn owned_files(&self) -> Vec<PathBuf> {
        let mut files = vec![Self::manifest_path(&self.anchor), self.anchor.clone()];
        files.push(self.map.clone());
        files.extend(self.data.iter().map(|f| f.path.clone()));
        files.push(self.log.path.clone());
        files
    }

    /// Writes the manifest (a new file: an existing one is never overwritten).
    pub fn write_manifest(
        &self,
        created: &mut Vec<PathBuf>,
    ) -> std::result::Result<(), StorageError> {
        let path = Self::manifest_path(&self.anchor);
        let text = serde_json::to_vec_pretty(self).map_err(|e| {
            StorageError::io("cannot encode manifest", &path, std::io::Error::other(e))
        })?;
        let mut file = create_owned(&path, created, "cannot create manifest")?;
        std::io::Write::write_all(&mut file, &text)
            .and_then(|()| file.sync_all())
            .map_err(|e| StorageError::io("cannot write manifest", &path, e))
    }

    /// Reads the manifest of the database at `anchor`.
    pub fn read_manifest(anchor: &Path) -> Result<LayoutPlan> {
        let path = Self::manifest_path(anchor);
        let text = std::fs::read(&path)
            .map_err(|e| Error::io("cannot read storage manifest", &path, e))?;
        serde_json::from_slice(&text).map_err(|e| {
            Error::Config(format!(
                "`{}` is not a dbbench storage manifest: {e}",
                path.display()
            ))
        })
    }
}

/// Creates the new file `path` (never an existing one) for reading and writing, and records it in
/// `created` at once, so that whoever fails later removes exactly the files that were made.
pub fn create_owned(
    path: &Path,
    created: &mut Vec<PathBuf>,
    action: &'static str,
) -> std::result::Result<std::fs::File, StorageError> {
    let file = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create_new(true)
        .open(path)
        .map_err(|e| StorageError::io(action, path, e))?;
    created.push(path.to_path_buf());
    Ok(file)
}

/// `path` with `suffix` appended to its file name (`x.db` → `x.db-extents`).
pub fn sibling(path: &Path, suffix: &str) -> PathBuf {
    let mut s = path.as_os_str().to_owned();
    s.push(suffix);
    PathBuf::from(s)
}

#[cfg(test)]
mod tests;
