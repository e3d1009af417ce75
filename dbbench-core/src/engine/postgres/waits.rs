//! Wait events sampled from `pg_stat_activity` at a fixed interval during the window, PostgreSQL
//! having no cumulative wait statistics. Each sample counts, per `type:event`, the sessions of the
//! benchmark's database that are active and waiting, and the server's background processes
//! (WAL writer, checkpointer, background writer, autovacuum) that wait on anything but their idle
//! loop (`Activity`). Time per event is samples × interval: an estimate whose resolution is the
//! interval. The sampler also reads the WAL position every second for a "WAL bytes/s" series.

use super::settings::PgSettings;
use crate::model::evidence::{Series, WaitStat};
use crate::model::value::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

/// Seconds between samples.
pub const INTERVAL: Duration = Duration::from_millis(100);
/// Samples between two readings of the WAL position (one second).
const WAL_EVERY: u64 = 10;

const SAMPLE_SQL: &str = "SELECT pid, coalesce(wait_event_type, ''), coalesce(wait_event, ''), \
    coalesce(backend_type, ''), coalesce(state, '') FROM pg_stat_activity \
    WHERE pid <> pg_backend_pid() AND (datname = $1 OR backend_type <> 'client backend')";

/// What the sampler counted.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct Samples {
    /// Samples taken.
    pub taken: u64,
    /// Per `type:event`: samples in which a session waited on it, and the sessions that did.
    pub waits: BTreeMap<String, (u64, BTreeSet<i64>)>,
    /// Session-samples of active client sessions with no wait event: running on a CPU.
    pub on_cpu: u64,
    /// WAL position in bytes, once a second.
    pub wal_positions: Vec<f64>,
}

impl Samples {
    /// Adds one row of the sample query.
    pub fn add(&mut self, pid: i64, wait_type: &str, event: &str, backend_type: &str, state: &str) {
        let client = backend_type == "client backend";
        if client && state != "active" {
            return;
        }
        if event.is_empty() {
            if client {
                self.on_cpu += 1;
            }
            return;
        }
        if !client && wait_type == "Activity" {
            return;
        }
        let entry = self
            .waits
            .entry(format!("{wait_type}:{event}"))
            .or_default();
        entry.0 += 1;
        entry.1.insert(pid);
    }

    /// The waits as the SQL Server wait table shows them: by time, descending, with percentage
    /// and running percentage.
    pub fn table(&self) -> Vec<WaitStat> {
        let interval = INTERVAL.as_secs_f64();
        let total: u64 = self.waits.values().map(|w| w.0).sum();
        let mut rows: Vec<(&String, &(u64, BTreeSet<i64>))> = self.waits.iter().collect();
        rows.sort_by(|a, b| b.1 .0.cmp(&a.1 .0).then(a.0.cmp(b.0)));
        let mut running = 0.0;
        rows.into_iter()
            .map(|(name, (samples, pids))| {
                let pct = 100.0 * *samples as f64 / total.max(1) as f64;
                running += pct;
                WaitStat {
                    wait_type: name.clone(),
                    wait_time_s: *samples as f64 * interval,
                    waiting_tasks: pids.len() as u64,
                    pct,
                    running_pct: running.min(100.0),
                }
            })
            .collect()
    }

    /// WAL written per second, from the positions.
    pub fn wal_series(&self) -> Option<Series> {
        if self.wal_positions.len() < 2 {
            return None;
        }
        let values = self
            .wal_positions
            .windows(2)
            .map(|w| (w[1] - w[0]).max(0.0))
            .collect();
        Some(Series {
            name: "WAL bytes/s".into(),
            unit: "B/s".into(),
            interval_s: (INTERVAL * WAL_EVERY as u32).as_secs_f64(),
            values,
        })
    }
}

/// The running sampler.
pub struct Sampler {
    stop: oneshot::Sender<()>,
    task: JoinHandle<Result<Samples, String>>,
}

impl Sampler {
    /// Starts sampling database `db` on a connection of its own.
    pub async fn start(settings: &PgSettings, db: &str) -> Result<Sampler, String> {
        let mut conn = settings
            .connect(db)
            .await
            .map_err(|e| format!("cannot open the sampling connection: {e}"))?;
        let (stop, mut stopped) = oneshot::channel();
        let name = Value::Text(db.to_string());
        let task = tokio::spawn(async move {
            let mut samples = Samples::default();
            let mut ticks = tokio::time::interval(INTERVAL);
            ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
            loop {
                tokio::select! {
                    _ = &mut stopped => return Ok(samples),
                    _ = ticks.tick() => {}
                }
                if samples.taken % WAL_EVERY == 0 {
                    let lsn = conn
                        .query("SELECT (pg_current_wal_lsn() - '0/0'::pg_lsn)::float8", &[])
                        .await
                        .map_err(|e| e.to_string())?;
                    if let Some(row) = lsn.first() {
                        samples
                            .wal_positions
                            .push(row.get(0).map_err(|e| e.to_string())?);
                    }
                }
                let rows = conn
                    .query(SAMPLE_SQL, std::slice::from_ref(&name))
                    .await
                    .map_err(|e| e.to_string())?;
                samples.taken += 1;
                for row in rows {
                    let text = |i| row.get::<String>(i).unwrap_or_default();
                    let pid = row.get::<i64>(0).unwrap_or(0);
                    samples.add(pid, &text(1), &text(2), &text(3), &text(4));
                }
            }
        });
        Ok(Sampler { stop, task })
    }

    /// Stops sampling and returns what was counted, or why sampling failed.
    pub async fn finish(self) -> Result<Samples, String> {
        let _ = self.stop.send(());
        match self.task.await {
            Ok(outcome) => outcome,
            Err(e) => Err(format!("the wait sampler ended abnormally: {e}")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn waits_are_tabulated_like_the_sql_server_table() {
        let mut s = Samples::default();
        for _ in 0..3 {
            s.add(1, "IO", "WALSync", "client backend", "active");
        }
        s.add(2, "LWLock", "WALWrite", "client backend", "active");
        s.add(2, "Client", "ClientRead", "client backend", "idle");
        s.add(3, "Activity", "WalWriterMain", "walwriter", "");
        s.add(4, "IO", "DataFileSync", "checkpointer", "");
        s.add(1, "", "", "client backend", "active");
        let table = s.table();
        let names: Vec<&str> = table.iter().map(|w| w.wait_type.as_str()).collect();
        assert_eq!(names, ["IO:WALSync", "IO:DataFileSync", "LWLock:WALWrite"]);
        assert_eq!(table[0].pct, 60.0);
        assert!((table[2].running_pct - 100.0).abs() < 1e-9);
        assert!((table[0].wait_time_s - 0.3).abs() < 1e-9);
        assert_eq!(s.on_cpu, 1);
        s.wal_positions = vec![100.0, 350.0, 350.0];
        assert_eq!(s.wal_series().unwrap().values, [250.0, 0.0]);
    }
}
