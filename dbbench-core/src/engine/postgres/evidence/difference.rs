//! What the opening and closing snapshots of a window say, as [`Evidence`]: the counters'
//! differences, the I/O times the server did not measure left out, the sizes before and after,
//! the sampled waits and the WAL segments created. Apart from the window, which takes the
//! snapshots, because each of these reads two finished snapshots only.

use super::{Outcome, Snapshot, WalListing};
use crate::engine::postgres::waits;
use crate::model::evidence::{Evidence, LogStats};
use std::collections::{BTreeMap, BTreeSet};

/// The cumulative statistics views' counters: the closing value minus the opening one, per group
/// (a group the server could not give goes to `missing` whole).
pub(super) fn counter_differences(
    before: &Snapshot,
    after: &Snapshot,
    evidence: &mut Evidence,
    missing: &mut BTreeMap<String, String>,
) {
    for ((group, before), (_, after)) in before.groups.iter().zip(&after.groups) {
        match (before, after) {
            (Ok(b), Ok(a)) => {
                for (name, value) in a {
                    evidence
                        .values
                        .insert(name.clone(), value - b.get(name).copied().unwrap_or(0.0));
                }
            }
            (Err(e), _) | (_, Err(e)) => {
                missing.insert(group.to_string(), e.clone());
            }
        }
    }
}

/// Removes the I/O times the server did not measure: with its timing setting off, a time of 0 is
/// no measurement, so it goes to `missing` with the setting that would give it.
pub(super) fn drop_untimed(
    timing: &BTreeMap<&'static str, bool>,
    evidence: &mut Evidence,
    missing: &mut BTreeMap<String, String>,
) {
    for (setting, metrics) in [
        (
            "track_wal_io_timing",
            ["pg_wal_write_time_ms", "pg_wal_sync_time_ms"],
        ),
        (
            "track_io_timing",
            ["pg_db_blk_read_time_ms", "pg_db_blk_write_time_ms"],
        ),
    ] {
        if !timing[setting] {
            for metric in metrics {
                evidence.values.remove(metric);
                missing.insert(
                    metric.to_string(),
                    format!("{setting} is off on this server"),
                );
            }
        }
    }
}

/// The database's and each table's size before and after the window.
pub(super) fn size_evidence(
    before: &Snapshot,
    after: &Snapshot,
    evidence: &mut Evidence,
    missing: &mut BTreeMap<String, String>,
) {
    match (&before.db_size, &after.db_size) {
        (Ok(b), Ok(a)) => {
            evidence
                .values
                .insert("pg_database_size_before_bytes".into(), *b);
            evidence
                .values
                .insert("pg_database_size_after_bytes".into(), *a);
        }
        (Err(e), _) | (_, Err(e)) => {
            missing.insert("database_size".into(), e.clone());
        }
    }
    match (&before.tables, &after.tables) {
        (Ok(b), Ok(a)) => {
            let names: BTreeSet<&String> = b.keys().chain(a.keys()).collect();
            for name in names {
                let size = |m: &BTreeMap<String, f64>| m.get(name).copied().unwrap_or(0.0);
                evidence
                    .values
                    .insert(format!("pg_table_{name}_before_bytes"), size(b));
                evidence
                    .values
                    .insert(format!("pg_table_{name}_after_bytes"), size(a));
            }
        }
        (Err(e), _) | (_, Err(e)) => {
            missing.insert("table_sizes".into(), e.clone());
        }
    }
}

/// The sampled wait events, how many samples there were and how far apart, and the WAL series.
pub(super) fn wait_evidence(
    samples: Outcome<waits::Samples>,
    evidence: &mut Evidence,
    missing: &mut BTreeMap<String, String>,
) {
    match samples {
        Ok(samples) => {
            evidence.waits = samples.table();
            evidence
                .values
                .insert("pg_wait_samples".into(), samples.taken as f64);
            evidence.values.insert(
                "pg_wait_interval_ms".into(),
                waits::INTERVAL.as_secs_f64() * 1000.0,
            );
            evidence
                .values
                .insert("pg_active_cpu_samples".into(), samples.on_cpu as f64);
            evidence.series.extend(samples.wal_series());
        }
        Err(e) => {
            missing.insert("waits".into(), e);
        }
    }
}

/// The WAL segment evidence from the listings before and after.
pub(super) fn wal_evidence(
    wal_init_zero: Option<bool>,
    b: &WalListing,
    a: &WalListing,
    evidence: &mut Evidence,
    missing: &mut BTreeMap<String, String>,
) {
    let new_names: Vec<&String> = a
        .files
        .keys()
        .filter(|n| !b.files.contains_key(*n))
        .collect();
    let created: Vec<u64> = if a.by_inode {
        let inodes: BTreeSet<u64> = b.files.values().map(|f| f.0).collect();
        a.files
            .values()
            .filter(|f| !inodes.contains(&f.0))
            .map(|f| f.1)
            .collect()
    } else {
        missing.insert(
            "pg_wal_segments_created".into(),
            "without access to the WAL directory (an existing server) segments are counted by \
                 name from pg_ls_waldir(), so recycled segments count as new: `log.growths` is an \
                 upper bound"
                .into(),
        );
        new_names.iter().map(|n| a.files[*n].1).collect()
    };
    let count = created.len() as u64;
    evidence
        .values
        .insert("pg_wal_segments_created".into(), count as f64);
    if a.by_inode {
        let recycled = new_names.len() as u64 - count.min(new_names.len() as u64);
        evidence
            .values
            .insert("pg_wal_segments_recycled".into(), recycled as f64);
    }
    evidence
        .values
        .insert("pg_wal_segments_ahead_before".into(), b.ahead() as f64);
    evidence
        .values
        .insert("pg_wal_segments_ahead_after".into(), a.ahead() as f64);
    match wal_init_zero {
        // wal_init_zero = on writes the whole new segment with zeros; off writes one byte.
        Some(on) if a.by_inode => {
            let zeros = if on { created.iter().sum::<u64>() } else { 0 };
            evidence
                .values
                .insert("pg_wal_zero_fill_bytes".into(), zeros as f64);
        }
        _ => {
            missing.insert(
                "pg_wal_zero_fill_bytes".into(),
                "needs wal_init_zero and exact segment creation counts (a managed cluster)".into(),
            );
        }
    }
    evidence.log = Some(LogStats {
        growths: count,
        segments_before: b.files.len() as u64,
        segments_after: a.files.len() as u64,
        size_before_bytes: b.bytes(),
        size_after_bytes: a.bytes(),
    });
}
