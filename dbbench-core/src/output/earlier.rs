//! The earlier runs of a benchmark that this run is checked against (`analysis::between`): from
//! the results store, the newest [`EARLIER_RUNS`] completed invocations before this one that ran
//! the same experiment — same host, backend, scale and baseline cell, the same cells with the
//! same configuration, the same order, precision settings and design (forks or not), the same
//! dbbench version, build profile and source commit, and where both sides have one, a
//! calibration of the machine that agrees with this run's. A pull request's base-branch run is
//! therefore never taken for an earlier run of its head (another commit). Each contributes its
//! ratios to the baseline as its own results table computes them.

use crate::analysis::table::BenchmarkTable;
use crate::model::earlier::{EarlierRatio, EarlierRun};
use crate::model::error::Result;
use crate::model::results::{BenchmarkResult, CellStatus};
use crate::output::store::Store;
use std::collections::BTreeMap;

/// How many earlier runs are pooled at most: enough for τ to mean something, few enough that a
/// machine's drift over months does not pass for spread between runs.
pub const EARLIER_RUNS: usize = 10;

/// What an earlier run must share with this one to be pooled with it: the run itself.
#[derive(Debug, Clone, Copy)]
pub struct Key<'a> {
    this: &'a BenchmarkResult,
}

impl<'a> Key<'a> {
    /// The key of `result`.
    pub fn of(result: &'a BenchmarkResult) -> Key<'a> {
        Key { this: result }
    }

    /// The baseline cell's name.
    fn baseline(&self) -> &str {
        self.this
            .cells
            .get(self.this.baseline_index())
            .map_or("", |c| c.name.as_str())
    }

    /// Whether `other` (stored, with its results `table`) ran the same experiment; see the
    /// module's documentation.
    fn matches(&self, other: &BenchmarkResult, table: &BenchmarkTable) -> bool {
        use crate::model::calibration::{comparable, Tolerance};
        let this = self.this;
        let cells = |r: &BenchmarkResult| -> Vec<(String, BTreeMap<String, String>)> {
            r.cells
                .iter()
                .filter(|c| !matches!(c.status, CellStatus::Skipped(_)))
                .map(|c| (c.name.clone(), c.config.clone()))
                .collect()
        };
        let calibrations_agree = match (&this.calibration, &other.calibration) {
            (Some(a), Some(b)) => comparable(Some(a), Some(b), &Tolerance::DEFAULT).is_ok(),
            _ => true,
        };
        table.baseline == self.baseline()
            && other.dbbench_version == this.dbbench_version
            && other.host.git_commit == this.host.git_commit
            && other.run.order == this.run.order
            && other.run.precision == this.run.precision
            && other.run.forked == this.run.forked
            && other.run.build_profile == this.run.build_profile
            && cells(other) == cells(this)
            && calibrations_agree
    }
}

/// The stored results of completed invocations before `this` that ran the same experiment as
/// `key`, newest first, at most `limit`, each with its invocation's row.
fn same_experiment(
    store: &Store,
    this: i64,
    key: &Key<'_>,
    limit: usize,
) -> Result<Vec<(i64, i64, BenchmarkResult, BenchmarkTable)>> {
    let mut found = Vec::new();
    let me = key.this;
    for row in store.history()?.into_iter().rev() {
        if found.len() >= limit {
            break;
        }
        let same =
            row.host == me.host.hostname && row.backend == me.backend.kind && row.scale == me.scale;
        if row.id >= this || row.status != "completed" || !same {
            continue;
        }
        let Some(mut result) = store.of_invocation(row.id, &me.benchmark)? else {
            continue;
        };
        // Its own forks' intervals, never widened by its own history: the drift is estimated
        // from them (`analysis::drift`).
        result.earlier.clear();
        let table = BenchmarkTable::of(&result);
        if key.matches(&result, &table) {
            found.push((row.id, row.started_at_unix_ms, result, table));
        }
    }
    Ok(found)
}

/// The earlier runs of `key` in `store` before invocation `this` (the current one, left out),
/// newest first.
pub fn earlier_runs(store: &Store, this: i64, key: &Key<'_>) -> Result<Vec<EarlierRun>> {
    let mut runs = Vec::new();
    for (id, started_at_unix_ms, _, table) in same_experiment(store, this, key, EARLIER_RUNS)? {
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
                invocation: id,
                started_at_unix_s: (started_at_unix_ms / 1000).max(0) as u64,
                ratios,
            });
        }
    }
    Ok(runs)
}

/// `result` (the newest invocation its cells come from) and every earlier completed invocation
/// of the same experiment in `store`, up to `limit` in all, newest first: what a dimensioning
/// experiment (`analysis::components`) is computed over.
pub fn with_same_experiment(
    store: &Store,
    result: &BenchmarkResult,
    limit: usize,
) -> Result<Vec<BenchmarkResult>> {
    let this = newest_invocation(result);
    let mut all = vec![result.clone()];
    let earlier = same_experiment(store, this, &Key::of(result), limit.saturating_sub(1))?;
    all.extend(earlier.into_iter().map(|(_, _, r, _)| r));
    Ok(all)
}

fn newest_invocation(result: &BenchmarkResult) -> i64 {
    result
        .cells
        .iter()
        .filter_map(|c| c.invocation)
        .max()
        .unwrap_or(i64::MAX)
}

/// [`earlier_runs`] of `result` as the store holds it: before the newest invocation its cells
/// come from (every stored run when none says).
pub fn of_stored(store: &Store, result: &BenchmarkResult) -> Result<Vec<EarlierRun>> {
    earlier_runs(store, newest_invocation(result), &Key::of(result))
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
        // Another commit, another configuration of a cell, another precision: other
        // experiments, never pooled (a pull request's base-branch run is not its head's).
        let mut other_commit = result.clone();
        other_commit.host.git_commit = Some("0123abc".into());
        record(&store, &other_commit, 1.0);
        let mut other_config = result.clone();
        other_config.cells[1]
            .config
            .insert("growth".into(), "2MB".into());
        record(&store, &other_config, 1.0);
        let mut other_precision = result.clone();
        other_precision.run.forked = !result.run.forked;
        record(&store, &other_precision, 1.0);
        let second = record(&store, &result, 2.0);
        let current = record(&store, &result, 1.5);

        let runs = earlier_runs(&store, current, &Key::of(&result)).unwrap();
        let ids: Vec<i64> = runs.iter().map(|r| r.invocation).collect();
        assert_eq!(
            ids,
            vec![second, first],
            "newest first, other scales, commits, configurations and designs left out"
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

    #[test]
    fn a_new_invocation_s_recorder_hands_the_judge_what_the_table_pools_with() {
        use crate::analysis::precision::IntervalJudge;
        use crate::output::store::InvocationStart;
        use crate::run::recorder::Recorder;
        use crate::run::target::Judge;
        let dir = tempfile::tempdir().unwrap();
        let result = crate::model::sample::vlf();
        let store = Store::open(dir.path()).unwrap();
        let recorded: Vec<i64> = (0..5).map(|_| record(&store, &result, 1.0)).collect();
        // The five earlier runs an hour apart, the newest an hour before this one: each counts
        // as a draw of the machine's drift (`analysis::drift::apart`).
        let conn = rusqlite::Connection::open(store.path()).unwrap();
        for (i, id) in recorded.iter().rev().enumerate() {
            let at = (result.started_at_unix_s as i64 - 3600 * (i as i64 + 1)) * 1000;
            conn.execute(
                "UPDATE invocations SET started_at_unix_ms = ?1 WHERE id = ?2",
                rusqlite::params![at, id],
            )
            .unwrap();
        }
        let id = store
            .begin(&InvocationStart {
                command_line: "test".into(),
                git_commit: None,
                host: result.host.hostname.clone(),
                backend: result.backend.kind.clone(),
                scale: result.scale.clone(),
                run_key: None,
            })
            .unwrap();
        // What the runner asks before its first fork: the header with its cells as admitted.
        let earlier = store.recorder(id).earlier(&result).unwrap();
        assert_eq!(earlier.len(), 5);
        let plain = IntervalJudge::default();
        let knowing = plain
            .knowing(result.started_at_unix_s, &earlier)
            .expect("five earlier runs");
        let pilot = result
            .run
            .precision
            .as_ref()
            .map_or(3, |p| p.min_rounds as usize);
        let alone = plain.widths(&result.cells, "test_1", true, pilot);
        let pooled = knowing.widths(&result.cells, "test_1", true, pilot);
        let mut shown = result.clone();
        shown.earlier = earlier;
        let table = BenchmarkTable::of(&shown);
        for (cell, width) in &pooled {
            let row = table.rows.iter().find(|r| &r.name == cell).unwrap();
            let r = row.ratio.as_ref().unwrap();
            assert_eq!(
                *width,
                r.relative_half_width(),
                "{cell}: the rule sees the table's"
            );
            let own = alone.iter().find(|(c, _)| c == cell).unwrap().1.unwrap();
            assert!(
                width.unwrap() < own,
                "{cell}: six agreeing runs pool narrower"
            );
        }
        assert!(plain.knowing(result.started_at_unix_s, &[]).is_none());
    }
}
