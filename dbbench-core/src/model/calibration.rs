//! A machine's identity by measurement: a short calibration of what storage benchmarks depend on,
//! taken before the first cell of a run and kept with its results, so that timings are compared
//! only between recordings of machines that measure alike.
//!
//! Machines of one kind share a name ("vm · AMD EPYC · 2 cores") but not their speed: the same
//! work ran two to three times slower on one virtual machine than on another of its kind. So each
//! recording keeps
//!
//! * a fixed CPU loop's time (the lowest of a few tries),
//! * per volume directory: the median latency of an 8 KiB write plus `fdatasync`, sequential
//!   write throughput (buffered writes then one `fdatasync`), and the median time of one SQLite
//!   commit in `synchronous = FULL`,
//!
//! and two recordings **agree** when every probe both have is within its [`Tolerance`] of the
//! other's, on the same build profile. The measuring is `util::probe`'s; the tolerances and the
//! measurements behind them are in `docs/busy-machine.md`.

use serde::{Deserialize, Serialize};

/// One calibration of this machine.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default)]
pub struct Calibration {
    /// `debug` or `release`: the CPU loop (and the embedded engine) are this build's.
    pub build_profile: String,
    /// Time of the fixed CPU loop, in milliseconds.
    pub cpu_loop_ms: f64,
    /// The probes of each volume directory the run writes to (none for a remote server).
    pub volumes: Vec<VolumeCalibration>,
}

/// The probes of one volume directory.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default)]
pub struct VolumeCalibration {
    /// The volume's name (`default` for the work directory).
    pub name: String,
    /// Median latency of an 8 KiB write plus `fdatasync`, in milliseconds.
    pub fsync_ms: f64,
    /// Sequential write throughput, MB/s (10^6 bytes).
    pub write_mb_s: f64,
    /// Median time of one SQLite commit (`synchronous = FULL`, WAL), in milliseconds.
    pub commit_ms: f64,
}

/// How far two calibrations' probes may differ and still agree, as a relative factor: `0.5` lets
/// a figure be up to 1.5 times the other's.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Tolerance {
    /// For the CPU loop.
    pub cpu: f64,
    /// For fsync latency, write throughput and commit time.
    pub storage: f64,
}

impl Tolerance {
    /// The documented tolerance for "a machine of the same speed, give or take its own noise"
    /// (see `docs/busy-machine.md`): what pools earlier runs and overrules verdicts between
    /// invocations.
    pub const DEFAULT: Tolerance = Tolerance {
        cpu: 0.25,
        storage: 0.75,
    };

    /// The tolerance that licenses a seconds check of relative tolerance `timing` (0.10 = 10%):
    /// `timing` on every probe. A machine whose storage may be `k` times slower and still agree
    /// may take `k` times as long for the same work, so a check that calls more than `1 + timing`
    /// a regression can only be made where `k ≤ 1 + timing` (`docs/busy-machine.md`).
    pub fn licensing(timing: f64) -> Tolerance {
        Tolerance {
            cpu: timing,
            storage: timing,
        }
    }
}

impl Calibration {
    /// Why `self` (this machine's) and `recorded` do not agree, or `Ok` when they do: "fsync
    /// 0.35 ms vs 0.54 ms, CPU loop 1.4× slower", listing every probe out of tolerance.
    pub fn agrees_with(
        &self,
        recorded: &Calibration,
        tolerance: &Tolerance,
    ) -> std::result::Result<(), String> {
        if self.build_profile != recorded.build_profile {
            return Err(format!(
                "{} build vs {} build",
                self.build_profile, recorded.build_profile
            ));
        }
        let mut differences = Vec::new();
        let out = |now: f64, then: f64, tol: f64| {
            now > 0.0 && then > 0.0 && (now / then > 1.0 + tol || then / now > 1.0 + tol)
        };
        if out(self.cpu_loop_ms, recorded.cpu_loop_ms, tolerance.cpu) {
            let factor = self.cpu_loop_ms / recorded.cpu_loop_ms;
            differences.push(if factor > 1.0 {
                format!("CPU loop {}× slower", short(factor))
            } else {
                format!("CPU loop {}× faster", short(1.0 / factor))
            });
        }
        let named = self.volumes.len() > 1 || recorded.volumes.len() > 1;
        for now in &self.volumes {
            let Some(then) = recorded.volumes.iter().find(|v| v.name == now.name) else {
                continue;
            };
            let prefix = if named {
                format!("{} ", now.name)
            } else {
                String::new()
            };
            let probes = [
                ("fsync", now.fsync_ms, then.fsync_ms, "ms"),
                ("write", now.write_mb_s, then.write_mb_s, "MB/s"),
                ("commit", now.commit_ms, then.commit_ms, "ms"),
            ];
            for (what, a, b, unit) in probes {
                if out(a, b, tolerance.storage) {
                    differences.push(format!(
                        "{prefix}{what} {} {unit} vs {} {unit}",
                        short(a),
                        short(b)
                    ));
                }
            }
        }
        if differences.is_empty() {
            Ok(())
        } else {
            Err(differences.join(", "))
        }
    }

    /// Why `self` (this machine's) and `recorded` are not one machine within `tolerance`, as the
    /// factors between their probes, this machine's over the recording's: "commit ×1.68, fsync
    /// ×1.57" (every probe out of tolerance, slowest first); `Ok` when they agree.
    pub fn factors(
        &self,
        recorded: &Calibration,
        tolerance: &Tolerance,
    ) -> std::result::Result<(), String> {
        if self.build_profile != recorded.build_profile {
            return Err(format!(
                "{} build vs {} build",
                self.build_profile, recorded.build_profile
            ));
        }
        // (name, now / then as "how much slower", the tolerance): throughput is inverted so
        // every factor above 1 means slower here.
        let mut out: Vec<(String, f64)> = Vec::new();
        let mut check = |what: String, now: f64, then: f64, slower: f64, tol: f64| {
            if now > 0.0 && then > 0.0 && (slower > 1.0 + tol || 1.0 / slower > 1.0 + tol) {
                out.push((what, slower));
            }
        };
        check(
            "CPU loop".into(),
            self.cpu_loop_ms,
            recorded.cpu_loop_ms,
            self.cpu_loop_ms / recorded.cpu_loop_ms,
            tolerance.cpu,
        );
        let named = self.volumes.len() > 1 || recorded.volumes.len() > 1;
        for now in &self.volumes {
            let Some(then) = recorded.volumes.iter().find(|v| v.name == now.name) else {
                continue;
            };
            let prefix = if named {
                format!("{} ", now.name)
            } else {
                String::new()
            };
            let probes = [
                ("commit", now.commit_ms, then.commit_ms, false),
                ("fsync", now.fsync_ms, then.fsync_ms, false),
                ("write time", now.write_mb_s, then.write_mb_s, true),
            ];
            for (what, a, b, throughput) in probes {
                let slower = if throughput { b / a } else { a / b };
                check(format!("{prefix}{what}"), a, b, slower, tolerance.storage);
            }
        }
        if out.is_empty() {
            return Ok(());
        }
        out.sort_by(|a, b| b.1.max(1.0 / b.1).total_cmp(&a.1.max(1.0 / a.1)));
        Err(out
            .iter()
            .map(|(what, f)| format!("{what} ×{}", short(*f)))
            .collect::<Vec<_>>()
            .join(", "))
    }

    /// One line for snapshots and report headers:
    /// `release · CPU loop 41.2 ms · default: fsync 0.35 ms, write 812 MB/s, commit 0.52 ms`.
    /// [`Calibration::parse_line`] reads it back.
    pub fn line(&self) -> String {
        let mut parts = vec![
            self.build_profile.clone(),
            format!("CPU loop {} ms", short(self.cpu_loop_ms)),
        ];
        parts.extend(self.volumes.iter().map(|v| {
            format!(
                "{}: fsync {} ms, write {} MB/s, commit {} ms",
                v.name,
                short(v.fsync_ms),
                short(v.write_mb_s),
                short(v.commit_ms)
            )
        }));
        parts.join(" · ")
    }

    /// The calibration a [`Calibration::line`] shows (to three significant digits).
    pub fn parse_line(line: &str) -> Option<Calibration> {
        let mut parts = line.split(" · ");
        let build_profile = parts.next()?.trim().to_string();
        let cpu_loop_ms = parts
            .next()?
            .strip_prefix("CPU loop ")?
            .strip_suffix(" ms")?
            .parse()
            .ok()?;
        let volumes = parts
            .map(|part| {
                let (name, probes) = part.split_once(": ")?;
                let mut figures = probes.split(", ").map(|p| {
                    p.split_whitespace()
                        .nth(1)
                        .and_then(|n| n.parse::<f64>().ok())
                });
                Some(VolumeCalibration {
                    name: name.to_string(),
                    fsync_ms: figures.next()??,
                    write_mb_s: figures.next()??,
                    commit_ms: figures.next()??,
                })
            })
            .collect::<Option<Vec<_>>>()?;
        Some(Calibration {
            build_profile,
            cpu_loop_ms,
            volumes,
        })
    }
}

/// Whether timings measured under `now` can be compared with timings recorded under `recorded`:
/// `Err` says why not ("this machine's calibration differs from the recording's (fsync 0.35 ms
/// vs 0.54 ms)", or which side has none).
pub fn comparable(
    now: Option<&Calibration>,
    recorded: Option<&Calibration>,
    tolerance: &Tolerance,
) -> std::result::Result<(), String> {
    match (now, recorded) {
        (Some(now), Some(recorded)) => now
            .agrees_with(recorded, tolerance)
            .map_err(|d| format!("this machine's calibration differs from the recording's ({d})")),
        (Some(_), None) => Err("the recording has no calibration of its machine".into()),
        (None, Some(_)) => Err("this run has no calibration of its machine".into()),
        (None, None) => Err("neither run has a calibration of its machine".into()),
    }
}

/// `x` to three significant digits, without a trailing `.0`.
fn short(x: f64) -> String {
    if !x.is_finite() || x == 0.0 {
        return format!("{x}");
    }
    let decimals = (2 - x.abs().log10().floor() as i32).max(0) as usize;
    let text = format!("{x:.decimals$}");
    if text.contains('.') {
        text.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        text
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Calibration {
        Calibration {
            build_profile: "release".into(),
            cpu_loop_ms: 41.23,
            volumes: vec![VolumeCalibration {
                name: "default".into(),
                fsync_ms: 0.354,
                write_mb_s: 812.4,
                commit_ms: 0.52,
            }],
        }
    }

    #[test]
    fn the_line_reads_back() {
        let c = sample();
        let line = c.line();
        assert_eq!(
            line,
            "release · CPU loop 41.2 ms · default: fsync 0.354 ms, write 812 MB/s, commit 0.52 ms"
        );
        let back = Calibration::parse_line(&line).unwrap();
        assert_eq!(back.line(), line);
        assert!(back.agrees_with(&c, &Tolerance::DEFAULT).is_ok());
        assert!(Calibration::parse_line("nonsense").is_none());
    }

    #[test]
    fn differing_probes_are_named() {
        let recorded = sample();
        let mut now = sample();
        now.volumes[0].fsync_ms = 0.8;
        now.cpu_loop_ms = 41.23 * 1.4;
        assert_eq!(
            now.agrees_with(&recorded, &Tolerance::DEFAULT).unwrap_err(),
            "CPU loop 1.4× slower, fsync 0.8 ms vs 0.354 ms"
        );
        now = sample();
        now.cpu_loop_ms = 41.23 * 1.1;
        now.volumes[0].write_mb_s = 600.0;
        assert!(now.agrees_with(&recorded, &Tolerance::DEFAULT).is_ok());
        now.build_profile = "debug".into();
        assert_eq!(
            now.agrees_with(&recorded, &Tolerance::DEFAULT).unwrap_err(),
            "debug build vs release build"
        );
    }

    #[test]
    fn another_machine_is_named_by_its_factors() {
        let recorded = sample();
        let mut now = sample();
        // The VM: commit ×1.68 and fsync ×1.57 "agree" by the default tolerance, but
        // they are not the machine a 10% seconds check can be made on.
        now.volumes[0].commit_ms = 0.52 * 1.68;
        now.volumes[0].fsync_ms = 0.354 * 1.57;
        now.volumes[0].write_mb_s = 812.4 / 1.05;
        assert!(now.agrees_with(&recorded, &Tolerance::DEFAULT).is_ok());
        assert_eq!(
            now.factors(&recorded, &Tolerance::licensing(0.10))
                .unwrap_err(),
            "commit ×1.68, fsync ×1.57"
        );
        now.volumes[0].write_mb_s = 812.4 / 1.2;
        now.cpu_loop_ms = 41.23 / 1.3;
        assert_eq!(
            now.factors(&recorded, &Tolerance::licensing(0.10))
                .unwrap_err(),
            "commit ×1.68, fsync ×1.57, CPU loop ×0.769, write time ×1.2"
        );
        let mut same = sample();
        same.volumes[0].commit_ms = 0.52 * 1.09;
        assert_eq!(same.factors(&recorded, &Tolerance::licensing(0.10)), Ok(()));
    }
}
