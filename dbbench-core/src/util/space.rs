//! Free space of the file systems dbbench writes to, and the check that a cell's files fit
//! before any is created.
//!
//! Why before: a cell whose files cannot fit (the population suite at `DBBENCH_SCALE=full` asks
//! for a 1 TB data file) otherwise fails deep inside creation or the body, after filling the disk
//! that other programs share. Needs are summed per file system (`st_dev`), since several volume
//! directories may be on one disk.

use crate::model::units::format_bytes;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

/// Bytes a cell will put into one directory, and what they are.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Need {
    /// The directory (it may not exist yet).
    pub dir: PathBuf,
    /// How many bytes.
    pub bytes: u64,
    /// What they are ("data files", "log, pre-grown", "fixture, estimated").
    pub what: String,
}

/// The device and free bytes (for unprivileged users) of the file system holding `dir`, or of
/// its nearest existing ancestor.
pub fn free_space(dir: &Path) -> Option<(u64, u64)> {
    let existing = dir.ancestors().find(|d| d.exists())?;
    let dev = std::fs::metadata(existing).ok()?.dev();
    let c_path = std::ffi::CString::new(existing.as_os_str().as_encoded_bytes()).ok()?;
    // SAFETY: statvfs writes only into the zeroed struct we pass.
    let mut stat: libc::statvfs = unsafe { std::mem::zeroed() };
    if unsafe { libc::statvfs(c_path.as_ptr(), &mut stat) } != 0 {
        return None;
    }
    Some((dev, stat.f_bavail as u64 * stat.f_frsize as u64))
}

/// One file system that is too small: what is needed on it, what is free.
#[derive(Debug, Clone, PartialEq)]
pub struct Shortfall {
    /// Where, in words: "the file system of /data" or "the server's volume /var/opt/mssql/".
    pub place: String,
    /// Everything the cell needs there.
    pub needed: u64,
    /// Its free bytes.
    pub free: u64,
    /// The needs, described.
    pub parts: Vec<String>,
}

impl Shortfall {
    /// "needs 1 TB on the file system of /data (data files 1 TB, log 8 MB) but 37 GB are free".
    pub fn describe(&self) -> String {
        format!(
            "needs {} on {} ({}) but only {} are free",
            format_bytes(self.needed),
            self.place,
            self.parts.join(", "),
            format_bytes(self.free)
        )
    }
}

/// The file systems among `needs` that have less free space than the needs on them.
pub fn shortfalls(needs: &[Need]) -> Vec<Shortfall> {
    let mut by_device: Vec<(u64, Shortfall)> = Vec::new();
    for need in needs {
        let Some((dev, free)) = free_space(&need.dir) else {
            continue;
        };
        let part = format!("{} {}", need.what, format_bytes(need.bytes));
        match by_device.iter_mut().find(|(d, _)| *d == dev) {
            Some((_, s)) => {
                s.needed = s.needed.saturating_add(need.bytes);
                s.parts.push(part);
            }
            None => by_device.push((
                dev,
                Shortfall {
                    place: format!("the file system of {}", need.dir.display()),
                    needed: need.bytes,
                    free,
                    parts: vec![part],
                },
            )),
        }
    }
    by_device
        .into_iter()
        .map(|(_, s)| s)
        .filter(|s| s.needed > s.free)
        .collect()
}

/// A scale factor as `DBBENCH_SCALE` takes it, to its two significant digits: `0.000019`.
pub fn show_factor(factor: f64) -> String {
    if factor <= 0.0 {
        return "0".into();
    }
    let decimals = (1.0 - factor.log10().floor()).max(0.0) as usize;
    format!("{factor:.decimals$}")
}

/// The largest scale factor at which needs that grow with the scale fit: the current factor
/// times the worst free/needed ratio, with a tenth kept free, rounded down to two significant
/// digits.
pub fn scale_that_fits(factor: f64, shortfalls: &[Shortfall]) -> f64 {
    let ratio = shortfalls
        .iter()
        .map(|s| s.free as f64 / s.needed.max(1) as f64)
        .fold(1.0, f64::min);
    let raw = factor * ratio * 0.9;
    if raw <= 0.0 {
        return 0.0;
    }
    let magnitude = 10f64.powf(raw.log10().floor() - 1.0);
    (raw / magnitude).floor() * magnitude
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_work_dirs_file_system_has_free_space() {
        let here = std::env::temp_dir();
        let (_, free) = free_space(&here.join("not/yet/created")).unwrap();
        assert!(free > 0);
    }

    #[test]
    fn needs_on_one_file_system_add_up() {
        let dir = std::env::temp_dir();
        let (_, free) = free_space(&dir).unwrap();
        let half = free / 2 + 1;
        let needs = [
            Need {
                dir: dir.join("a"),
                bytes: half,
                what: "data files".into(),
            },
            Need {
                dir: dir.join("b"),
                bytes: half,
                what: "log".into(),
            },
        ];
        let short = shortfalls(&needs);
        assert_eq!(short.len(), 1, "each half fits, both do not");
        assert_eq!(short[0].needed, 2 * half);
        assert!(short[0].describe().contains("data files"));
        assert!(shortfalls(&needs[..1]).is_empty());
    }

    #[test]
    fn the_scale_to_try_fits_with_room() {
        let short = [Shortfall {
            place: "the file system of /".into(),
            needed: 1000,
            free: 37,
            parts: Vec::new(),
        }];
        assert_eq!(scale_that_fits(1.0, &short), 0.033);
        assert_eq!(scale_that_fits(0.5, &short), 0.016);
        assert_eq!(show_factor(0.000018999999999999998), "0.000019");
        assert_eq!(show_factor(0.033), "0.033");
        assert_eq!(show_factor(2.5), "2.5");
    }
}
