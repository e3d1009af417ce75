//! What a cell on a managed cluster will put on each volume before its body runs: the cluster's
//! own files (`initdb` and the database copied from `template1`) and the fixture's rows in the
//! data directory; the WAL kept for `log_size` (`min_wal_size`, pre-grown segments included) and
//! the fixture's WAL in the WAL directory. The runner compares this with the free space
//! ([`crate::util::space`]) before the cell creates anything.
//!
//! The body's own growth is not estimated: it depends on what the body does, which no plan says.
//! An existing server's disks are the server's; nothing is estimated for them.

use super::options::Mapping;
use crate::model::plan::DatabasePlan;
use crate::util::space::Need;

/// A fresh cluster's files: 40 MB measured after `initdb` of PostgreSQL 15 (one 16 MB WAL segment
/// included), and one database copied from `template1` (7.5 MB).
pub const CLUSTER_BYTES: u64 = 48 << 20;

/// Bytes one row of the credit fixture's `charge` takes with its primary key: 91 measured
/// (200,000 rows, `pg_total_relation_size` / rows), rounded up.
pub const CHARGE_ROW_BYTES: u64 = 96;

/// WAL one fixture row writes: 166 bytes measured over the same 200,000 rows
/// (`pg_wal_lsn_diff` / rows, `wal_level = replica`, full-page images included), rounded up.
pub const CHARGE_ROW_WAL_BYTES: u64 = 176;

const MIB: u64 = 1 << 20;
const DEFAULT_SEGMENT: u64 = 16 * MIB;

/// The space `plan` (mapped to `mapping`) needs per directory with a fixture of `fixture_rows`
/// rows, in the directories the cluster is `placed` in.
pub fn needs(
    plan: &DatabasePlan,
    mapping: &Mapping,
    fixture_rows: u64,
    placed: &super::place::Placement,
) -> Vec<Need> {
    let data_dir = placed
        .data_base
        .clone()
        .unwrap_or_else(|| placed.work_base.clone());
    let wal_dir = placed.wal_base.clone().unwrap_or_else(|| data_dir.clone());
    let segment = mapping
        .wal_segsize_mb
        .map_or(DEFAULT_SEGMENT, |mb| u64::from(mb) * MIB);
    // `min_wal_size` keeps that much WAL (and pre-growth makes it); without `log_size` the WAL
    // directory holds at least two segments. With `recovery = full` nothing is removed at all,
    // so the fixture's WAL is added rather than overlapped.
    let kept = plan
        .storage
        .log_size
        .map_or(2 * segment, |s| s.bytes.max(2 * segment));
    let with_fixture = |what: &str| {
        if fixture_rows > 0 {
            format!("{what} and the fixture's, estimated")
        } else {
            what.to_string()
        }
    };
    vec![
        Need {
            dir: data_dir,
            bytes: CLUSTER_BYTES + fixture_rows.saturating_mul(CHARGE_ROW_BYTES),
            what: with_fixture("cluster files"),
        },
        Need {
            dir: wal_dir,
            bytes: kept.saturating_add(fixture_rows.saturating_mul(CHARGE_ROW_WAL_BYTES)),
            what: with_fixture("WAL kept for log_size"),
        },
    ]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::postgres::place::Placement;
    use crate::model::config::{Size, StorageSpec};
    use crate::model::scale::Scale;
    use crate::model::volume::Volumes;
    use std::path::PathBuf;

    /// Where a cluster of the work dir `/work` goes for the current user.
    fn place(volumes: &Volumes, mapping: &Mapping) -> crate::model::error::Result<Placement> {
        crate::engine::postgres::place::place(&PathBuf::from("/work"), volumes, mapping, None)
    }

    fn plan(storage: StorageSpec, volumes: Volumes) -> DatabasePlan {
        DatabasePlan {
            name: "dbbench_space".into(),
            storage,
            volumes,
            work_dir: PathBuf::from("/work"),
            scale: Scale::smoke(),
        }
    }

    #[test]
    fn the_cluster_the_fixture_and_the_kept_wal_are_counted_where_they_go() {
        let mut volumes = Volumes::default();
        volumes.bind("log", PathBuf::from("/disks/log"));
        let storage = StorageSpec {
            log_size: Some(Size::new(512 * MIB, "512MB")),
            log_on: Some("log"),
            ..StorageSpec::DEFAULT
        };
        let mapping = crate::engine::postgres::options::map(
            &storage,
            crate::engine::postgres::options::Mode::Managed,
        )
        .unwrap();
        let placed = place(&volumes, &mapping).unwrap();
        let needs = needs(&plan(storage, volumes), &mapping, 1000, &placed);
        assert_eq!(needs.len(), 2);
        assert_eq!(needs[0].dir, PathBuf::from("/work/postgres"));
        assert_eq!(needs[0].bytes, CLUSTER_BYTES + 1000 * CHARGE_ROW_BYTES);
        assert_eq!(needs[1].dir, PathBuf::from("/disks/log"));
        assert_eq!(needs[1].bytes, 512 * MIB + 1000 * CHARGE_ROW_WAL_BYTES);
        assert_eq!(
            needs[1].what,
            "WAL kept for log_size and the fixture's, estimated"
        );
    }

    #[test]
    fn without_log_size_two_segments_stay_and_an_unbound_volume_is_left_to_creation() {
        let mapping = Mapping::default();
        let placed = place(&Volumes::default(), &mapping).unwrap();
        let needs = needs(
            &plan(StorageSpec::DEFAULT, Volumes::default()),
            &mapping,
            0,
            &placed,
        );
        assert_eq!(needs[1].bytes, 2 * DEFAULT_SEGMENT);
        assert_eq!(
            needs[1].dir, needs[0].dir,
            "the WAL is in the data directory"
        );
        let elsewhere = Mapping {
            wal_volume: Some("log"),
            ..Mapping::default()
        };
        // No placement, so the backend asks for nothing; creation reports the unbound volume.
        assert!(place(&Volumes::default(), &elsewhere).is_err());
    }
}
