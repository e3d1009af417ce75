//! The calibration a benchmark's timings are compared by: the machine's and each volume's speed,
//! measured once per invocation (under the measurement lock, since it is a measurement) and
//! extended with the volumes a later benchmark adds.

use crate::model::calibration::Calibration;
use crate::model::error::{Error, Result};
use crate::run::recorder::Recorder;
use crate::util::machine_lock;
use std::path::PathBuf;

/// This invocation's calibration of the machine and of `dirs`: the one an earlier benchmark of
/// the invocation took, with any directory it lacks probed now, or a new one. Taken under the
/// measurement lock, since it is a measurement. A calibration that cannot be taken is said and
/// left out (the run's timings are then compared with none), rather than stopping the run.
pub(crate) fn calibrate(
    recorder: &mut dyn Recorder,
    dirs: &[(String, PathBuf)],
    server_roots: &[u32],
) -> Result<Option<Calibration>> {
    let earlier = recorder.calibration()?;
    let missing: Vec<&(String, PathBuf)> = dirs
        .iter()
        .filter(|(name, _)| {
            earlier
                .as_ref()
                .is_none_or(|c| !c.volumes.iter().any(|v| &v.name == name))
        })
        .collect();
    if earlier.is_some() && missing.is_empty() {
        return Ok(earlier);
    }
    // The work dir's database directory is dbbench's own to create; volumes are not.
    if let Some((_, default)) = dirs.first() {
        std::fs::create_dir_all(default)
            .map_err(|e| Error::io("cannot create the database directory", default, e))?;
    }
    let lock = machine_lock::acquire("calibration")?;
    let started = std::time::Instant::now();
    // A calibration is a measurement too: a busy machine distorts it (a local server idles
    // meanwhile, and is told apart as in the windows).
    let monitor = crate::util::monitor::Monitor::open_with(server_roots);
    let measured = match earlier {
        Some(mut c) => missing
            .iter()
            .map(|(name, dir)| crate::util::probe::volume(name, dir))
            .collect::<Result<Vec<_>>>()
            .map(|probed| {
                c.volumes.extend(probed);
                c
            }),
        None => crate::util::probe::calibrate(dirs),
    };
    let seen = monitor.close();
    drop(lock);
    Ok(match measured {
        Ok(c) => {
            crate::util::console::say(&format!(
                "dbbench › calibrated this machine in {:.1} s: {}",
                started.elapsed().as_secs_f64(),
                c.line()
            ));
            if seen.disturbed() {
                crate::util::console::say(&format!(
                    "dbbench › warning: the machine was busy while it was calibrated ({}); \
                     timings of this run may be judged not comparable with a quiet recording",
                    seen.disturbed_by.join("; ")
                ));
            }
            Some(c)
        }
        Err(e) => {
            crate::util::console::say(&format!(
                "dbbench › warning: the calibration failed ({e}); this run's timings will not be \
                 compared with other recordings"
            ));
            None
        }
    })
}
