//! The calibration probes (`model::calibration` says what they are for): a fixed CPU loop, and per
//! volume directory fsync latency, sequential write throughput and a SQLite commit loop. Together
//! they take well under a second per volume on a local disk; the files they write are removed.

use crate::model::calibration::{Calibration, VolumeCalibration};
use crate::model::error::{Error, Result};
use std::io::{Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// Iterations of the CPU loop: about 40 ms in a release build. A debug build runs a tenth of them
/// (its calibrations are never compared with a release build's).
const CPU_ITERATIONS: u64 = if cfg!(debug_assertions) {
    4_000_000
} else {
    40_000_000
};
/// Tries of the CPU loop; the fastest counts (a preempted try is slower, never faster).
const CPU_TRIES: usize = 3;
/// 8 KiB writes timed with their `fdatasync`.
const FSYNCS: usize = 40;
/// Bytes written by each try of the throughput probe.
const SEQUENTIAL_BYTES: usize = 16 << 20;
/// Tries of the throughput probe; the fastest counts.
const SEQUENTIAL_TRIES: usize = 3;
/// SQLite commits timed.
const COMMITS: usize = 40;

/// Calibrates this machine: the CPU loop, then each of `volumes` (`(name, directory)`).
pub fn calibrate(volumes: &[(String, PathBuf)]) -> Result<Calibration> {
    let mut out = Calibration {
        build_profile: if cfg!(debug_assertions) {
            "debug"
        } else {
            "release"
        }
        .to_string(),
        cpu_loop_ms: cpu_loop_ms(),
        volumes: Vec::new(),
    };
    for (name, dir) in volumes {
        out.volumes.push(volume(name, dir)?);
    }
    Ok(out)
}

/// Calibrates one volume directory, which must exist (the probes never create a volume).
pub fn volume(name: &str, dir: &Path) -> Result<VolumeCalibration> {
    // A new directory under a random name, made exclusively: a directory found there (of a
    // same-PID run in another container on a shared volume, or another user's) is never taken
    // or removed; only the one made here is.
    let scratch = Scratch(crate::util::private_dir::make_unique(
        dir,
        ".dbbench-calibration-",
        crate::util::private_dir::Reach::Owner,
    )?);
    Ok(VolumeCalibration {
        name: name.to_string(),
        fsync_ms: fsync_ms(&scratch.0.join("fsync"))?,
        write_mb_s: write_mb_s(&scratch.0.join("sequential"))?,
        commit_ms: commit_ms(&scratch.0.join("commit.sqlite"))?,
    })
}

/// The probes' directory, removed however they end.
struct Scratch(PathBuf);

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn cpu_loop_ms() -> f64 {
    (0..CPU_TRIES)
        .map(|_| {
            let start = Instant::now();
            let mut x = 0x9E37_79B9_7F4A_7C15u64;
            let mut sum = 0u64;
            for i in 0..std::hint::black_box(CPU_ITERATIONS) {
                // xorshift64 with a data-dependent add: no vectorising, no folding away.
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                sum = sum.wrapping_add(x ^ i);
            }
            std::hint::black_box(sum);
            start.elapsed().as_secs_f64() * 1e3
        })
        .fold(f64::INFINITY, f64::min)
}

fn median(mut samples: Vec<Duration>) -> f64 {
    samples.sort();
    samples[samples.len() / 2].as_secs_f64() * 1e3
}

/// Median of an 8 KiB overwrite of one block plus `fdatasync`: the device's flush latency, as a
/// log write to a pre-sized file sees it.
fn fsync_ms(path: &Path) -> Result<f64> {
    let io = |e| Error::io("calibration cannot write", path, e);
    let mut file = std::fs::File::create(path).map_err(io)?;
    let block = [0x5au8; 8192];
    file.write_all(&block).map_err(io)?;
    file.sync_all().map_err(io)?;
    let mut samples = Vec::with_capacity(FSYNCS);
    for _ in 0..FSYNCS {
        let start = Instant::now();
        file.seek(SeekFrom::Start(0)).map_err(io)?;
        file.write_all(&block).map_err(io)?;
        file.sync_data().map_err(io)?;
        samples.push(start.elapsed());
    }
    Ok(median(samples))
}

/// MB/s of writing [`SEQUENTIAL_BYTES`] to a new file in 1 MiB writes and one `fdatasync`, the
/// best of [`SEQUENTIAL_TRIES`].
fn write_mb_s(path: &Path) -> Result<f64> {
    let io = |e| Error::io("calibration cannot write", path, e);
    let chunk = vec![0xa5u8; 1 << 20];
    let mut best = 0.0f64;
    for _ in 0..SEQUENTIAL_TRIES {
        let _ = std::fs::remove_file(path);
        let mut file = std::fs::File::create(path).map_err(io)?;
        let start = Instant::now();
        for _ in 0..SEQUENTIAL_BYTES / chunk.len() {
            file.write_all(&chunk).map_err(io)?;
        }
        file.sync_data().map_err(io)?;
        let elapsed = start.elapsed().as_secs_f64();
        best = best.max(SEQUENTIAL_BYTES as f64 / 1e6 / elapsed.max(1e-9));
    }
    Ok(best)
}

/// Median time of one small SQLite transaction's commit, WAL journal, `synchronous = FULL`.
fn commit_ms(path: &Path) -> Result<f64> {
    let fail = |e: rusqlite::Error| Error::msg(format!("calibration: {}: {e}", path.display()));
    let conn = rusqlite::Connection::open(path).map_err(fail)?;
    conn.execute_batch(
        "PRAGMA journal_mode = WAL; PRAGMA synchronous = FULL; \
         CREATE TABLE t (id INTEGER PRIMARY KEY, payload BLOB NOT NULL);",
    )
    .map_err(fail)?;
    let payload = vec![7u8; 200];
    let mut samples = Vec::with_capacity(COMMITS);
    for _ in 0..COMMITS {
        let start = Instant::now();
        conn.execute("INSERT INTO t (payload) VALUES (?1)", [&payload])
            .map_err(fail)?;
        samples.push(start.elapsed());
    }
    Ok(median(samples))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn calibrates_a_directory_and_leaves_nothing() {
        let dir = std::env::temp_dir().join(format!("dbbench-probe-{}", std::process::id()));
        assert!(
            calibrate(&[("default".into(), dir.clone())]).is_err(),
            "no volume is created"
        );
        std::fs::create_dir_all(&dir).unwrap();
        // What the old scratch name of a same-PID process elsewhere would be: not ours.
        let foreign = dir.join(format!(".dbbench-calibration-{}", std::process::id()));
        std::fs::create_dir_all(&foreign).unwrap();
        std::fs::write(foreign.join("theirs"), "x").unwrap();
        let c = calibrate(&[("default".into(), dir.clone())]).unwrap();
        assert!(
            foreign.join("theirs").exists(),
            "another process's scratch is left"
        );
        std::fs::remove_dir_all(&foreign).unwrap();
        assert!(c.cpu_loop_ms > 0.0);
        let v = &c.volumes[0];
        assert_eq!(v.name, "default");
        assert!(
            v.fsync_ms > 0.0 && v.write_mb_s > 0.0 && v.commit_ms > 0.0,
            "{v:?}"
        );
        assert_eq!(
            std::fs::read_dir(&dir).unwrap().count(),
            0,
            "scratch removed"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
