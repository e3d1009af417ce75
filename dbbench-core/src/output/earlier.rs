//! The earlier runs of a benchmark that this run is checked against (`analysis::between`): from
//! the results store, the newest [`EARLIER_RUNS`] completed invocations before this one that ran
//! the benchmark on the same host, backend and scale, with the same baseline cell and interval
//! order, and — where both sides have one — a calibration of the machine that agrees with this
//! run's. Each contributes its ratios to the baseline as its own results table computes them.

use crate::analysis::table::BenchmarkTable;
use crate::model::earlier::{EarlierRatio, EarlierRun};
use crate::model::error::Result;
use crate::model::results::BenchmarkResult;
use crate::output::store::Store;

/// How many earlier runs are pooled at most: enough for τ to mean something, few enough that a
/// machine's drift over months does not pass for spread between runs.
pub const EARLIER_RUNS: usize = 10;

/// What an earlier run must share with this one to be pooled with it.
#[derive(Debug, Clone)]
pub struct Key<'a> {
    /// The benchmark's path (`vlf::doubling`).
    pub benchmark: &'a str,
    /// The host name.
    pub host: &'a str,
    /// The backend keyword.
    pub backend: &'a str,
    /// The scale's name.
    pub scale: &'a str,
    /// The baseline cell's name.
    pub baseline: &'a str,
    /// This run's calibration, when known: earlier runs whose calibration differs are left out.
    pub calibration: Option<&'a crate::model::calibration::Calibration>,
}

impl<'a> Key<'a> {
    /// The key of `result`.
    pub fn of(result: &'a BenchmarkResult) -> Key<'a> {
        Key {
            benchmark: &result.benchmark,
            host: &result.host.hostname,
            backend: &result.backend.kind,
            scale: &result.scale,
            baseline: result
                .cells
                .get(result.baseline_index())
                .map_or("", |c| c.name.as_str()),
            calibration: result.calibration.as_ref(),
        }
    }
}

/// The earlier runs of `key` in `store` before invocation `this` (the current one, left out),
/// newest first.
pub fn earlier_runs(store: &Store, this: i64, key: &Key<'_>) -> Result<Vec<EarlierRun>> {
    use crate::model::calibration::{comparable, Tolerance};
    let mut runs = Vec::new();
    for row in store.history()?.into_iter().rev() {
        if runs.len() >= EARLIER_RUNS {
            break;
        }
        let same = row.host == key.host && row.backend == key.backend && row.scale == key.scale;
        if row.id >= this || row.status != "completed" || !same {
            continue;
        }
        let Some(result) = store.of_invocation(row.id, key.benchmark)? else {
            continue;
        };
        if key.calibration.is_some()
            && result.calibration.is_some()
            && comparable(
                key.calibration,
                result.calibration.as_ref(),
                &Tolerance::DEFAULT,
            )
            .is_err()
        {
            continue;
        }
        let table = BenchmarkTable::of(&result);
        if table.baseline != key.baseline {
            continue;
        }
        let ratios: Vec<EarlierRatio> = table
            .rows
            .iter()
            .filter(|r| r.name != table.baseline)
            .filter_map(|row| {
                let r = row.ratio.as_ref()?;
                let ci = r.ci?;
                Some(EarlierRatio {
                    cell: row.name.clone(),
                    ratio: r.ratio,
                    low: ci.low,
                    high: ci.high,
                    df: r.df?,
                })
            })
            .collect();
        if !ratios.is_empty() {
            runs.push(EarlierRun {
                invocation: row.id,
                started_at_unix_s: (row.started_at_unix_ms / 1000).max(0) as u64,
                ratios,
            });
        }
    }
    Ok(runs)
}

/// [`earlier_runs`] of `result` as the store holds it: before the newest invocation its cells
/// come from (every stored run when none says).
pub fn of_stored(store: &Store, result: &BenchmarkResult) -> Result<Vec<EarlierRun>> {
    let this = result
        .cells
        .iter()
        .filter_map(|c| c.invocation)
        .max()
        .unwrap_or(i64::MAX);
    earlier_runs(store, this, &Key::of(result))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::output::history::testing::record;

    #[test]
    fn earlier_runs_of_the_same_configuration_newest_first() {
        let dir = tempfile::tempdir().unwrap();
        let result = crate::model::sample::vlf();
        let store = Store::open(dir.path()).unwrap();
        assert!(of_stored(&store, &result).unwrap().is_empty());
        let first = record(&store, &result, 1.0);
        let mut other_scale = result.clone();
        other_scale.scale = "smoke".into();
        record(&store, &other_scale, 1.0);
        let second = record(&store, &result, 2.0);
        let current = record(&store, &result, 1.5);

        let runs = earlier_runs(&store, current, &Key::of(&result)).unwrap();
        let ids: Vec<i64> = runs.iter().map(|r| r.invocation).collect();
        assert_eq!(
            ids,
            vec![second, first],
            "newest first, other scales left out"
        );
        let table = BenchmarkTable::of(&result);
        let test_3 = table.rows.iter().find(|r| r.name == "test_3").unwrap();
        let stored = runs[0].of("test_3").unwrap();
        let ratio = test_3.ratio.as_ref().unwrap();
        // Every cell's time was doubled: the ratios are this run's.
        assert!((stored.ratio - ratio.ratio).abs() < 1e-9);
        assert_eq!(Some(stored.df), ratio.df);
        assert!(runs[0].of("test_1").is_none(), "the baseline has no ratio");
        assert_eq!(
            of_stored(&store, &result).unwrap().len(),
            3,
            "results that name no invocation are checked against every stored run"
        );
    }
}
