//! The store's tables and their migrations. The schema version is SQLite's `user_version`; each
//! migration brings a store from one version to the next inside one transaction, so a store
//! written by any earlier dbbench opens with this one (`tests/store.rs` opens a version-1 store
//! kept as SQL text).

use rusqlite::Connection;

/// The schema version this dbbench writes.
pub const VERSION: i64 = 3;

/// Migration `i` brings version `i` to `i + 1`; version 0 is an empty file.
const MIGRATIONS: [&str; VERSION as usize] = [V1, V2, V3];

/// Version 1: invocations, the benchmarks each ran, their cell runs and repetitions.
const V1: &str = "
CREATE TABLE invocations (
    id INTEGER PRIMARY KEY,
    uid TEXT NOT NULL UNIQUE,
    run_key TEXT UNIQUE,
    started_at_unix_ms INTEGER NOT NULL,
    ended_at_unix_ms INTEGER,
    command_line TEXT NOT NULL,
    git_commit TEXT,
    host TEXT NOT NULL,
    backend TEXT NOT NULL,
    scale TEXT NOT NULL,
    status TEXT NOT NULL,
    detail TEXT,
    baseline TEXT UNIQUE,
    origin TEXT
);
CREATE TABLE benchmark_runs (
    id INTEGER PRIMARY KEY,
    invocation_id INTEGER NOT NULL REFERENCES invocations(id),
    benchmark TEXT NOT NULL,
    stem TEXT NOT NULL,
    header TEXT NOT NULL,
    declared TEXT NOT NULL
);
CREATE INDEX benchmark_runs_by_name ON benchmark_runs(benchmark);
CREATE TABLE cell_runs (
    id INTEGER PRIMARY KEY,
    benchmark_run_id INTEGER NOT NULL REFERENCES benchmark_runs(id),
    cell TEXT NOT NULL,
    config TEXT NOT NULL,
    effective TEXT NOT NULL,
    status TEXT NOT NULL,
    detail TEXT
);
CREATE INDEX cell_runs_by_benchmark_run ON cell_runs(benchmark_run_id);
CREATE TABLE repetitions (
    id INTEGER PRIMARY KEY,
    cell_run_id INTEGER NOT NULL REFERENCES cell_runs(id),
    repetition INTEGER NOT NULL,
    sequence INTEGER NOT NULL,
    warmup INTEGER NOT NULL,
    window_start_unix_ns INTEGER NOT NULL,
    window_end_unix_ns INTEGER NOT NULL,
    run TEXT NOT NULL
);
CREATE INDEX repetitions_by_cell_run ON repetitions(cell_run_id);
";

/// Version 2: each repetition's elapsed time in a column of its own, so the report's history
/// reads it without parsing every stored repetition's JSON (which made each report slower than the
/// last); earlier repetitions get theirs from their JSON once. The index covers the history's
/// query: the column sits after the large `run` text, which SQLite would otherwise read through.
const V2: &str = "
ALTER TABLE repetitions ADD COLUMN elapsed_s REAL;
UPDATE repetitions SET elapsed_s = json_extract(run, '$.elapsed_s');
CREATE INDEX repetitions_elapsed ON repetitions(cell_run_id, id, warmup, elapsed_s);
";

/// Version 3: a window set aside because the busy-machine guard found it disturbed and its
/// repetition was measured again (`RunResult::set_aside`) is marked in a column of its own, so the
/// report's history leaves it out without parsing the run; earlier stores have none. The history's
/// index covers the new column.
const V3: &str = "
ALTER TABLE repetitions ADD COLUMN set_aside INTEGER NOT NULL DEFAULT 0;
DROP INDEX repetitions_elapsed;
CREATE INDEX repetitions_elapsed ON repetitions(cell_run_id, id, warmup, set_aside, elapsed_s);
";

/// Brings the store to [`VERSION`]; refuses a store written by a newer dbbench.
pub fn migrate(conn: &mut Connection) -> rusqlite::Result<std::result::Result<(), i64>> {
    let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
    let found: i64 = tx.query_row("PRAGMA user_version", [], |r| r.get(0))?;
    if found > VERSION {
        return Ok(Err(found));
    }
    for migration in &MIGRATIONS[found as usize..] {
        tx.execute_batch(migration)?;
    }
    tx.execute_batch(&format!("PRAGMA user_version = {VERSION}"))?;
    tx.commit()?;
    Ok(Ok(()))
}
