//! Every run of a benchmark as CSV, one row per repetition (warm-ups included and flagged), for
//! spreadsheets and data-frame tools: `target/dbbench/results/<stem>.csv` beside the JSON.
//!
//! Columns: `benchmark, cell, status`, one `config.<option>` column per storage option any cell
//! sets, `repetition, sequence, warmup, elapsed_s`, one `lap.<name>.split_s` column per lap, the
//! storage metrics (`data_growth_events, log_growths, log_segments_before, log_segments_after,
//! data_size_after_bytes, log_size_after_bytes, bytes_written, flushes, growth_total_ms,
//! write_stall_ms`), `top_wait, top_wait_pct`, then one `count.<name>` and one `value.<name>`
//! column per count and value the runs recorded. Quoting follows RFC 4180.

use crate::model::error::Result;
use crate::model::results::{BenchmarkResult, CellStatus, FileKind, RunResult};
use crate::util::fs::write_file;
use crate::util::paths::csv_file;
use std::path::Path;

/// The runs of `result` as CSV text.
pub fn to_csv(result: &BenchmarkResult) -> String {
    let runs = || result.cells.iter().flat_map(|c| c.runs.iter());
    let mut config_keys: Vec<&str> = Vec::new();
    for cell in &result.cells {
        for key in cell.config.keys() {
            push_unique(&mut config_keys, key);
        }
    }
    let (mut laps, mut counts, mut values) = (Vec::new(), Vec::new(), Vec::new());
    for run in runs() {
        run.laps
            .iter()
            .for_each(|l| push_unique(&mut laps, &l.name));
        run.counts.keys().for_each(|k| push_unique(&mut counts, k));
        run.values.keys().for_each(|k| push_unique(&mut values, k));
    }

    let mut header: Vec<String> = ["benchmark", "cell", "status"].map(String::from).to_vec();
    header.extend(config_keys.iter().map(|k| format!("config.{k}")));
    header.extend(
        ["repetition", "sequence", "warmup", "elapsed_s"]
            .iter()
            .map(|s| s.to_string()),
    );
    header.extend(laps.iter().map(|l| format!("lap.{l}.split_s")));
    header.extend(METRICS.iter().map(|(name, _)| name.to_string()));
    header.extend(["top_wait".to_string(), "top_wait_pct".to_string()]);
    header.extend(counts.iter().map(|k| format!("count.{k}")));
    header.extend(values.iter().map(|k| format!("value.{k}")));

    let mut out = line(&header);
    for cell in &result.cells {
        let status = match cell.status {
            CellStatus::Ok => "ok",
            CellStatus::Failed(_) => "failed",
            CellStatus::Skipped(_) => "skipped",
        };
        for run in &cell.runs {
            let mut row = vec![result.benchmark.clone(), cell.name.clone(), status.into()];
            row.extend(
                config_keys
                    .iter()
                    .map(|k| cell.config.get(*k).cloned().unwrap_or_default()),
            );
            row.extend([
                run.index.to_string(),
                run.sequence.to_string(),
                run.warmup.to_string(),
                run.elapsed_s.to_string(),
            ]);
            row.extend(laps.iter().map(|name| {
                run.laps
                    .iter()
                    .find(|l| l.name == *name)
                    .map(|l| l.split_s.to_string())
                    .unwrap_or_default()
            }));
            row.extend(
                METRICS
                    .iter()
                    .map(|(_, get)| get(run).map(|v| v.to_string()).unwrap_or_default()),
            );
            let top = run.waits.iter().max_by(|a, b| a.pct.total_cmp(&b.pct));
            row.push(top.map(|w| w.wait_type.clone()).unwrap_or_default());
            row.push(top.map(|w| w.pct.to_string()).unwrap_or_default());
            row.extend(counts.iter().map(|k| {
                run.counts
                    .get(*k)
                    .map(|v| v.to_string())
                    .unwrap_or_default()
            }));
            row.extend(values.iter().map(|k| {
                run.values
                    .get(*k)
                    .map(|v| v.to_string())
                    .unwrap_or_default()
            }));
            out.push_str(&line(&row));
        }
    }
    out
}

type Metric = fn(&RunResult) -> Option<f64>;

/// Storage metrics per run; empty where the backend reported no files or no log.
const METRICS: [(&str, Metric); 10] = [
    ("data_growth_events", |r| {
        sum_files(r, Some(FileKind::Data), |f| f.growth_events as f64)
    }),
    ("log_growths", |r| r.log.as_ref().map(|l| l.growths as f64)),
    ("log_segments_before", |r| {
        r.log.as_ref().map(|l| l.segments_before as f64)
    }),
    ("log_segments_after", |r| {
        r.log.as_ref().map(|l| l.segments_after as f64)
    }),
    ("data_size_after_bytes", |r| {
        sum_files(r, Some(FileKind::Data), |f| f.size_after_bytes as f64)
    }),
    ("log_size_after_bytes", |r| {
        sum_files(r, Some(FileKind::Log), |f| f.size_after_bytes as f64)
    }),
    ("bytes_written", |r| {
        sum_files(r, None, |f| f.bytes_written as f64)
    }),
    ("flushes", |r| sum_files(r, None, |f| f.flushes as f64)),
    ("growth_total_ms", |r| {
        sum_files(r, None, |f| f.growth_total_ms)
    }),
    ("write_stall_ms", |r| {
        sum_files(r, None, |f| f.write_stall_ms)
    }),
];

fn sum_files(
    run: &RunResult,
    kind: Option<FileKind>,
    get: fn(&crate::model::results::FileStats) -> f64,
) -> Option<f64> {
    let files: Vec<_> = run
        .files
        .iter()
        .filter(|f| kind.is_none_or(|k| f.kind == k))
        .collect();
    (!files.is_empty()).then(|| files.into_iter().map(get).sum())
}

fn push_unique<'a>(list: &mut Vec<&'a str>, item: &'a str) {
    if !list.contains(&item) {
        list.push(item);
    }
}

/// A field a spreadsheet would run as a formula (`=`, `+`, `-`, `@`, a tab or a carriage return
/// first: a cell or benchmark name, an error message from a server) gets a `'` in front, which
/// spreadsheets show as text; a number (`-0.5`) stays a number.
fn inert(field: &str) -> String {
    let risky = field.starts_with(['=', '+', '-', '@', '\t', '\r']);
    if risky && field.trim().parse::<f64>().is_err() {
        format!("'{field}")
    } else {
        field.to_string()
    }
}

/// One CSV record with its line break; fields with a comma, quote or line break are quoted, and
/// none starts a formula ([`inert`]).
fn line(fields: &[String]) -> String {
    let quoted: Vec<String> = fields
        .iter()
        .map(|f| inert(f))
        .map(|f| {
            if f.contains([',', '"', '\n', '\r']) {
                format!("\"{}\"", f.replace('"', "\"\""))
            } else {
                f.clone()
            }
        })
        .collect();
    format!("{}\r\n", quoted.join(","))
}

/// The CSV output: `results/<stem>.csv`, one row per run.
pub struct Csv;

impl super::Output for Csv {
    fn name(&self) -> &'static str {
        "CSV"
    }

    fn benchmark(&self, result: &BenchmarkResult, stem: &str, work_dir: &Path) -> Result<()> {
        write_file(
            &csv_file(work_dir, stem),
            to_csv(result),
            "cannot write CSV",
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_field_starts_a_formula_and_numbers_stay_numbers() {
        let fields: Vec<String> = [
            "=HYPERLINK(\"http://x\")",
            "+1+1",
            "@SUM(A1)",
            "-2+3",
            "-0.5",
            "\tx",
            "ok",
        ]
        .map(String::from)
        .to_vec();
        assert_eq!(
            line(&fields),
            "\"'=HYPERLINK(\"\"http://x\"\")\",'+1+1,'@SUM(A1),'-2+3,-0.5,'\tx,ok\r\n"
        );
    }

    #[test]
    fn one_row_per_run_with_its_columns() {
        let result = crate::model::sample::vlf();
        let text = to_csv(&result);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(
            lines.len(),
            1 + 3 * 4,
            "header plus 4 runs for each of 3 cells"
        );
        let header: Vec<&str> = lines[0].split(',').collect();
        let col = |name: &str| header.iter().position(|h| *h == name).unwrap();
        let first: Vec<&str> = lines[1].split(',').collect();
        assert_eq!(first.len(), header.len());
        assert_eq!(first[col("cell")], "test_1");
        assert_eq!(first[col("config.growth")], "1MB");
        assert_eq!(first[col("config.log_pregrow")], "");
        assert_eq!(first[col("warmup")], "true");
        let second: Vec<&str> = lines[2].split(',').collect();
        assert_eq!(second[col("warmup")], "false");
        assert_eq!(second[col("elapsed_s")], "10.74");
        assert_eq!(second[col("data_growth_events")], "1200");
        assert_eq!(second[col("log_segments_after")], "4800");
        assert_eq!(second[col("top_wait")], "WRITELOG");
        assert_eq!(second[col("count.rows_after")], "320000");
        assert!(header.contains(&"lap.loop 5.split_s"));
        assert!(header.contains(&"value.throughput_rows_per_s"));
    }

    #[test]
    fn fields_with_separators_are_quoted() {
        assert_eq!(
            line(&["a,b".into(), "say \"hi\"".into(), "plain".into()]),
            "\"a,b\",\"say \"\"hi\"\"\",plain\r\n"
        );
    }
}
