//! Performance counters during the window: `sys.dm_os_performance_counters` sampled once a second
//! on a separate connection, turned into time series. Cumulative counters (the `…/sec` ones are
//! running totals on the server) become rates from the difference of consecutive samples divided
//! by the real time between them; running totals such as `Log Growths` count from the window's
//! start.
//!
//! `object_name`, `counter_name` and `instance_name` are `nchar(128)`: blank-padded, and with
//! nchar operands trailing blanks are significant in `LIKE` (the LIKE documentation's own
//! example), so `object_name LIKE N'%:Databases'` matches no row on any version. Every name is
//! compared as `RTRIM(…)`. Default instances prefix objects with `SQLServer:`, named instances
//! with `MSSQL$NAME:`; the suffix after the colon is matched, on the server and again here.

use super::super::tsql::literal;
use crate::model::error::Result;
use crate::model::evidence::Series;
use crate::model::value::Row;
use std::collections::BTreeMap;
use std::time::{Duration, Instant};

/// `cntr_type` values whose counters are cumulative: PERF_COUNTER_BULK_COUNT (272696576),
/// PERF_COUNTER_COUNTER (272696320) and the average/base pair (1073874176, 1073939712).
pub const CUMULATIVE_TYPES: [i64; 4] = [272_696_576, 272_696_320, 1_073_874_176, 1_073_939_712];

/// Raw counters that are running totals, reported as the increase since the window opened.
pub const RUNNING_TOTALS: [&str; 1] = ["Log Growths"];

/// The counters sampled: (object without instance prefix, counter, per-database).
pub const COUNTERS: [(&str, &str, bool); 8] = [
    ("Databases", "Log Bytes Flushed/sec", true),
    ("Databases", "Log Flushes/sec", true),
    ("Databases", "Log Growths", true),
    ("Databases", "Transactions/sec", true),
    ("Access Methods", "Pages Allocated/sec", false),
    ("Buffer Manager", "Checkpoint pages/sec", false),
    ("Buffer Manager", "Lazy writes/sec", false),
    ("SQL Statistics", "Batch Requests/sec", false),
];

/// The sampling query for database `db`.
pub fn sample_sql(db: &str) -> String {
    let mut by_object: BTreeMap<(&str, bool), Vec<&str>> = BTreeMap::new();
    for (object, counter, per_db) in COUNTERS {
        by_object.entry((object, per_db)).or_default().push(counter);
    }
    let clauses: Vec<String> = by_object
        .iter()
        .map(|((object, per_db), counters)| {
            let names: Vec<String> = counters.iter().map(|c| literal(c)).collect();
            format!(
                "(RTRIM(object_name) LIKE {} AND RTRIM(counter_name) IN ({}){})",
                literal(&format!("%:{object}")),
                names.join(", "),
                if *per_db {
                    format!(" AND RTRIM(instance_name) = {}", literal(db))
                } else {
                    String::new()
                }
            )
        })
        .collect();
    format!(
        "SELECT RTRIM(object_name) AS object_name, RTRIM(counter_name) AS counter_name, \
         cntr_value, CAST(cntr_type AS bigint) AS cntr_type \
         FROM sys.dm_os_performance_counters WHERE\n   {};",
        clauses.join("\n OR ")
    )
}

/// One counter's value in one sample.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CounterValue {
    /// Counter name, trimmed.
    pub counter: String,
    /// `cntr_value`.
    pub value: i64,
    /// `cntr_type`.
    pub kind: i64,
}

/// One sample: seconds since the window opened and the values.
#[derive(Debug, Clone, PartialEq)]
pub struct CounterSample {
    /// Seconds since the window opened.
    pub at_s: f64,
    /// The values read.
    pub values: Vec<CounterValue>,
}

/// The object of a counter row without its instance prefix: `Databases` from
/// `SQLServer:Databases` or `MSSQL$SQL2022:Databases`, blank padding removed.
pub fn object_of(object_name: &str) -> &str {
    let name = object_name.trim_end();
    match name.find(':') {
        Some(pos) if name.starts_with("SQLServer:") || name.starts_with("MSSQL$") => {
            &name[pos + 1..]
        }
        _ => name,
    }
}

/// Reads the rows of [`sample_sql`], keeping only the sampled counters (names trimmed).
pub fn values_from_rows(rows: &[Row]) -> Result<Vec<CounterValue>> {
    let mut out = Vec::with_capacity(rows.len());
    for row in rows {
        let object = row.get_named::<String>("object_name")?;
        let counter = row
            .get_named::<String>("counter_name")?
            .trim_end()
            .to_string();
        let sampled = COUNTERS
            .iter()
            .any(|(o, c, _)| *o == object_of(&object) && *c == counter);
        if !sampled {
            continue;
        }
        out.push(CounterValue {
            counter,
            value: row.get_named("cntr_value")?,
            kind: row.get_named("cntr_type")?,
        });
    }
    Ok(out)
}

/// Why `samples` give no usable series, if they do not: no sample at all, or no sampled counter
/// in any sample (the server matched no row), never silently empty.
pub fn missing(samples: &[CounterSample]) -> Option<String> {
    if samples.len() < 2 {
        return Some(format!(
            "{} counter sample(s) in the window; a rate needs two",
            samples.len()
        ));
    }
    if samples.iter().all(|s| s.values.is_empty()) {
        return Some(
            "sys.dm_os_performance_counters returned none of the sampled counters \
             (SQLServer:/MSSQL$…: Databases, Access Methods, Buffer Manager, SQL Statistics)"
                .into(),
        );
    }
    None
}

/// The time series of `samples`: one value per interval between consecutive samples.
pub fn series(samples: &[CounterSample]) -> Vec<Series> {
    let Some(first) = samples.first() else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for start in &first.values {
        let value_at = |s: &CounterSample| {
            s.values
                .iter()
                .find(|v| v.counter == start.counter)
                .map(|v| v.value)
        };
        let cumulative = CUMULATIVE_TYPES.contains(&start.kind);
        let running_total = RUNNING_TOTALS.contains(&start.counter.as_str());
        let mut values = Vec::new();
        for pair in samples.windows(2) {
            let (Some(a), Some(b)) = (value_at(&pair[0]), value_at(&pair[1])) else {
                continue;
            };
            let seconds = pair[1].at_s - pair[0].at_s;
            values.push(if cumulative {
                if seconds > 0.0 {
                    (b - a).max(0) as f64 / seconds
                } else {
                    0.0
                }
            } else if running_total {
                (b - start.value) as f64
            } else {
                b as f64
            });
        }
        out.push(Series {
            name: start.counter.clone(),
            unit: unit_of(&start.counter, cumulative).to_string(),
            interval_s: 1.0,
            values,
        });
    }
    out
}

/// The increase of counter `name` from the first to the last sample.
pub fn increase(samples: &[CounterSample], name: &str) -> Option<i64> {
    let find = |s: &CounterSample| s.values.iter().find(|v| v.counter == name).map(|v| v.value);
    Some(find(samples.last()?)? - find(samples.first()?)?)
}

fn unit_of(counter: &str, cumulative: bool) -> &'static str {
    match counter {
        "Log Bytes Flushed/sec" => "bytes/s",
        "Pages Allocated/sec" | "Checkpoint pages/sec" => "pages/s",
        _ if cumulative => "per s",
        _ => "count",
    }
}

/// Samples the counters once a second on its own connection until stopped.
pub struct Sampler {
    stop: tokio::sync::oneshot::Sender<()>,
    task: tokio::task::JoinHandle<std::result::Result<Vec<CounterSample>, String>>,
}

impl Sampler {
    /// Starts sampling through `conn` (a connection used for nothing else).
    pub fn start(mut conn: super::super::MssqlConnection, db: &str) -> Sampler {
        let sql = sample_sql(db);
        let (stop, mut stopped) = tokio::sync::oneshot::channel::<()>();
        let task = tokio::spawn(async move {
            let started = Instant::now();
            let mut samples = Vec::new();
            let mut tick = tokio::time::interval(Duration::from_secs(1));
            tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            loop {
                let last = tokio::select! {
                    _ = tick.tick() => false,
                    _ = &mut stopped => true,
                };
                let rows = conn.query(&sql, &[]).await.map_err(|e| e.to_string())?;
                samples.push(CounterSample {
                    at_s: started.elapsed().as_secs_f64(),
                    values: values_from_rows(&rows).map_err(|e| e.to_string())?,
                });
                if last {
                    return Ok(samples);
                }
            }
        });
        Sampler { stop, task }
    }

    /// Takes a last sample and returns all of them.
    pub async fn finish(self) -> std::result::Result<Vec<CounterSample>, String> {
        let _ = self.stop.send(());
        match self.task.await {
            Ok(result) => result,
            Err(e) => Err(format!("the counter sampler stopped: {e}")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(at_s: f64, flushed: i64, growths: i64, batches: i64) -> CounterSample {
        CounterSample {
            at_s,
            values: vec![
                CounterValue {
                    counter: "Log Bytes Flushed/sec".into(),
                    value: flushed,
                    kind: 272_696_576,
                },
                CounterValue {
                    counter: "Log Growths".into(),
                    value: growths,
                    kind: 65_792,
                },
                CounterValue {
                    counter: "Batch Requests/sec".into(),
                    value: batches,
                    kind: 272_696_576,
                },
            ],
        }
    }

    #[test]
    fn rates_from_cumulative_samples() {
        let samples = vec![
            sample(0.0, 1_000_000, 40, 500),
            sample(1.0, 3_000_000, 41, 510),
            sample(2.0, 3_000_000, 45, 530),
            sample(2.5, 4_000_000, 45, 531),
        ];
        let series = series(&samples);
        let flushed = &series[0];
        assert_eq!(flushed.name, "Log Bytes Flushed/sec");
        assert_eq!(flushed.unit, "bytes/s");
        assert_eq!(flushed.values, vec![2_000_000.0, 0.0, 2_000_000.0]);
        let growths = &series[1];
        assert_eq!(
            (growths.unit.as_str(), growths.values.clone()),
            ("count", vec![1.0, 5.0, 5.0])
        );
        assert_eq!(series[2].values, vec![10.0, 20.0, 2.0]);
        assert_eq!(increase(&samples, "Log Growths"), Some(5));
        assert_eq!(increase(&[], "Log Growths"), None);
    }

    #[test]
    fn a_single_sample_gives_empty_series() {
        let series = series(&[sample(0.0, 1, 1, 1)]);
        assert!(series.iter().all(|s| s.values.is_empty()));
    }

    /// Rows as SQL Server returns them: every name blank-padded to nchar(128).
    fn padded_rows(rows: &[(&str, &str, i64)]) -> Vec<Row> {
        crate::engine::mssql::double::rows(
            &["object_name", "counter_name", "cntr_value", "cntr_type"],
            rows.iter()
                .map(|(o, c, v)| {
                    vec![
                        crate::model::value::Value::Text(format!("{o:<128}")),
                        crate::model::value::Value::Text(format!("{c:<128}")),
                        crate::model::value::Value::Int(*v),
                        crate::model::value::Value::Int(272_696_576),
                    ]
                })
                .collect(),
        )
    }

    #[test]
    fn padded_names_and_instance_prefixes_match() {
        let rows = padded_rows(&[
            ("SQLServer:Databases", "Log Growths", 7),
            ("MSSQL$SQL2022:Databases", "Log Flushes/sec", 9),
            ("MSSQL$SQL2022:Buffer Manager", "Lazy writes/sec", 3),
            ("SQLServer:Databases", "Data File(s) Size (KB)", 1),
            ("SQLServer:Locks", "Log Growths", 1),
        ]);
        let values = values_from_rows(&rows).unwrap();
        let names: Vec<&str> = values.iter().map(|v| v.counter.as_str()).collect();
        assert_eq!(
            names,
            vec!["Log Growths", "Log Flushes/sec", "Lazy writes/sec"]
        );
        assert_eq!(
            object_of(&format!("{:<128}", "MSSQL$X:Databases")),
            "Databases"
        );
        assert!(
            !sample_sql("d").contains("(object_name LIKE"),
            "nchar LIKE never matches"
        );
    }

    #[test]
    fn an_empty_series_is_recorded_as_missing() {
        let empty = CounterSample {
            at_s: 0.0,
            values: Vec::new(),
        };
        let why = missing(&[empty.clone(), CounterSample { at_s: 1.0, ..empty }]).unwrap();
        assert!(
            why.contains("returned none of the sampled counters"),
            "{why}"
        );
        assert!(missing(&[sample(0.0, 1, 1, 1)])
            .unwrap()
            .contains("needs two"));
        assert_eq!(missing(&[sample(0.0, 1, 1, 1), sample(1.0, 2, 1, 2)]), None);
    }

    #[test]
    fn sampling_query() {
        insta::assert_snapshot!(sample_sql("dbbench_x_r0_4242"));
    }
}
