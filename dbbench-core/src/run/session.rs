//! The session a benchmark body gets: a connection to the fresh database, split timing, the
//! dialect, the scale, a way to open more connections, and concurrent loads (`LoadRun`, which
//! hands the driver the session's database and records its report here).

use crate::engine::connection::Connection;
use crate::engine::Database;
use crate::model::dialect::Dialect;
use crate::model::error::{Error, Result};
use crate::model::results::Lap;
use crate::model::scale::Scale;
use crate::run::driver::{run_load, Load, LoadReport, Op};
use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Instant;

/// What a benchmark body works with. It dereferences to its main [`Connection`], so
/// `db.execute(…)` and `db.query_scalar(…)` work directly.
pub struct Session {
    conn: Connection,
    database: Arc<Database>,
    started: Instant,
    last_lap: Instant,
    laps: Vec<Lap>,
    counts: BTreeMap<String, i64>,
    values: BTreeMap<String, f64>,
    scale: Scale,
    fixture_rows: u64,
    cell: String,
    loads: Vec<LoadReport>,
}

impl std::fmt::Debug for Session {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Session")
            .field("cell", &self.cell)
            .field("dialect", &self.dialect())
            .field("laps", &self.laps)
            .finish()
    }
}

impl Session {
    /// A session over `conn` to `database`; the runner creates it.
    pub(crate) fn new(
        conn: Connection,
        database: Arc<Database>,
        scale: Scale,
        fixture_rows: u64,
        cell: &str,
    ) -> Session {
        let now = Instant::now();
        Session {
            conn,
            database,
            started: now,
            last_lap: now,
            laps: Vec::new(),
            counts: BTreeMap::new(),
            values: BTreeMap::new(),
            scale,
            fixture_rows,
            cell: cell.to_string(),
            loads: Vec::new(),
        }
    }

    /// Restarts the clock: the runner calls it just before the body starts.
    pub(crate) fn start_clock(&mut self) {
        self.started = Instant::now();
        self.last_lap = self.started;
        self.laps.clear();
    }

    /// Records a split time named `name` and returns the time since the previous lap, as the VLF
    /// article prints "Loop N done in X seconds".
    pub fn lap(&mut self, name: impl Into<String>) -> std::time::Duration {
        let now = Instant::now();
        let split = now - self.last_lap;
        self.last_lap = now;
        let name = name.into();
        crate::util::progress::lap(&name);
        self.laps.push(Lap {
            name,
            at_s: (now - self.started).as_secs_f64(),
            split_s: split.as_secs_f64(),
        });
        split
    }

    /// The SQL dialect of the backend, so a body can choose its SQL.
    pub fn dialect(&self) -> Dialect {
        self.conn.dialect()
    }

    /// The data scale of this run.
    pub fn scale(&self) -> &Scale {
        &self.scale
    }

    /// Rows the fixture loaded.
    pub fn fixture_rows(&self) -> u64 {
        self.fixture_rows
    }

    /// The name of the cell being run.
    pub fn cell(&self) -> &str {
        &self.cell
    }

    /// Opens another connection to the same database (its own SQLite connection, or its own TDS
    /// connection). The caller closes it by dropping it.
    pub async fn connect(&self) -> Result<Connection> {
        self.database.connect().await
    }

    /// Records a deterministic count in the results (`rows_after`), compared exactly in snapshots.
    pub fn record_count(&mut self, name: impl Into<String>, value: i64) {
        self.counts.insert(name.into(), value);
    }

    /// Records a measured value that varies between runs; put the unit in the name
    /// (`throughput_rows_per_s`). A non-finite value (NaN, ±infinity) is recorded as unavailable,
    /// "not a finite number", in the results instead.
    pub fn record_value(&mut self, name: impl Into<String>, value: f64) {
        self.values.insert(name.into(), value);
    }

    /// The main connection.
    pub fn connection(&mut self) -> &mut Connection {
        &mut self.conn
    }

    /// A concurrent load on this database: `db.load(load).run(statement).await` runs it with
    /// workers of their own connections, returns its [`LoadReport`] and records it in the
    /// results. See [`crate::driver`].
    pub fn load(&mut self, load: Load) -> LoadRun<'_> {
        LoadRun::new(self, load)
    }

    fn database(&self) -> Arc<Database> {
        self.database.clone()
    }

    /// When the measured window opened (the clock's start), so load timelines line up with it.
    fn window_start(&self) -> Instant {
        self.started
    }

    fn has_load(&self, name: &str) -> bool {
        self.loads.iter().any(|l| l.stats.config.name == name)
    }

    fn push_load(&mut self, report: LoadReport) {
        self.loads.push(report);
    }

    /// The reports of the loads the body ran, for the runner to put into the results.
    pub(crate) fn take_loads(&mut self) -> Vec<LoadReport> {
        std::mem::take(&mut self.loads)
    }

    pub(crate) fn into_parts(
        self,
    ) -> (
        Connection,
        Vec<Lap>,
        BTreeMap<String, i64>,
        BTreeMap<String, f64>,
    ) {
        (self.conn, self.laps, self.counts, self.values)
    }
}

impl std::ops::Deref for Session {
    type Target = Connection;
    fn deref(&self) -> &Connection {
        &self.conn
    }
}

impl std::ops::DerefMut for Session {
    fn deref_mut(&mut self) -> &mut Connection {
        &mut self.conn
    }
}

/// A load ready to run on a session's database; see [`Session::load`].
#[must_use = "a load does nothing until `run` is awaited"]
pub struct LoadRun<'s> {
    session: &'s mut Session,
    load: Load,
}

impl<'s> LoadRun<'s> {
    fn new(session: &'s mut Session, load: Load) -> LoadRun<'s> {
        LoadRun { session, load }
    }

    /// Runs the load with `statement` as the statement closure, records the report in the
    /// session's results and returns it. The first transaction that fails for good (an error
    /// that is not retried, or more than `max_retries` retries) stops every worker, and its error
    /// is returned.
    pub async fn run<F>(self, statement: F) -> Result<LoadReport>
    where
        F: AsyncFn(&mut Connection, Op) -> Result<u64> + Send + Sync + 'static,
    {
        let name = self.load.name.clone();
        if self.session.has_load(&name) {
            return Err(Error::Config(format!(
                "a load named `{name}` already ran in this repetition; give each load its own \
                 name with `Load::name` so their counts and series stay apart"
            )));
        }
        let database = self.session.database();
        let origin = self.session.window_start();
        let report = run_load(database, origin, self.load, statement).await?;
        self.session.push_load(report.clone());
        Ok(report)
    }
}
