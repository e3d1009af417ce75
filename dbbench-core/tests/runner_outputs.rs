//! A real benchmark on the embedded backend, built by hand as the macro would emit it: the runner
//! keeps every run (warm-ups flagged), interleaves the cells, and leaves JSON, CSV, charts and a
//! report behind whose numbers are the measured ones.

mod support;

use dbbench_core::__internals::config::{Order, RunSpec, StorageSpec};
use dbbench_core::__internals::BodyFuture;
use dbbench_core::__internals::Volumes;
use dbbench_core::{Recovery, Scale, Session};
use support::{cell, context, run};

fn inserts(db: &mut Session) -> BodyFuture<'_> {
    Box::pin(async move {
        db.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, pad TEXT)")
            .await?;
        for round in 0..3 {
            db.execute(
                "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 500) \
                 INSERT INTO t (pad) SELECT printf('%0200d', i) FROM n",
            )
            .await?;
            db.lap(format!("round {round}"));
        }
        let rows: i64 = db.query_scalar("SELECT count(*) FROM t").await?;
        db.record_count("rows", rows);
        Ok(())
    })
}

support::benchmark! {
    static BENCH = inserts,
    title: "Inserting rows",
    run: RunSpec {
        repeat: 3,
        warmup: 1,
        order: Order::Interleaved,
        ..RunSpec::DEFAULT
    },
    cells: [
        cell(
            "simple",
            StorageSpec {
                recovery: Some(Recovery::Simple),
                ..StorageSpec::DEFAULT
            }
        ),
        cell(
            "full",
            StorageSpec {
                recovery: Some(Recovery::Full),
                ..StorageSpec::DEFAULT
            }
        ),
    ],
}

#[test]
fn a_run_leaves_json_csv_charts_and_a_report_of_measured_values() {
    let ctx = context("runner-outputs", Scale::smoke(), Volumes::default());
    let dir = &ctx.work_dir;
    let result = run(&BENCH, &ctx);
    let stem = "runner_outputs.inserts";

    // Every repetition is kept, warm-ups first and flagged; cells alternate.
    for cell in &result.cells {
        assert_eq!(cell.runs.len(), 4, "{}: {:?}", cell.name, cell.status);
        assert!(cell.runs[0].warmup && cell.runs[1..].iter().all(|r| !r.warmup));
        assert!(cell.runs.iter().all(|r| r.elapsed_s > 0.0));
        assert_eq!(cell.runs[3].counts["rows"], 1500);
    }
    let order: Vec<u32> = result.cells[0].runs.iter().map(|r| r.sequence).collect();
    // Interleaved with the other cell in a balanced order: a b, a b, b a, a b.
    assert_eq!(order, [0, 2, 5, 6], "interleaved with the other cell");
    assert!(!result.run.build_profile.is_empty());

    let json =
        dbbench_core::__internals::json::read(&dir.join(format!("results/{stem}.json"))).unwrap();
    assert_eq!(json, result);
    let csv = std::fs::read_to_string(dir.join(format!("results/{stem}.csv"))).unwrap();
    assert_eq!(csv.lines().count(), 1 + 8);
    let first_measured = result.cells[0].runs[1].elapsed_s.to_string();
    assert!(
        csv.contains(&first_measured),
        "the CSV holds the measured time"
    );
    assert!(dir.join(format!("report/{stem}/elapsed.svg")).exists());

    let summary = dbbench_core::__internals::summary::render(&result);
    let row = summary
        .lines()
        .find(|l| l.trim_start().starts_with("full"))
        .unwrap();
    assert!(row.contains(" 3 "), "three measured runs: {row}");
    assert!(row.contains('['), "a ratio interval: {row}");

    let index = dbbench_core::__internals::rewrite(dir).unwrap();
    let html = std::fs::read_to_string(index).unwrap();
    assert!(html.contains("Inserting rows") && html.contains("<td class=\"l\">full</td>"));
}
