use super::*;

#[test]
fn the_table_leads_with_configuration_and_result() {
    let grid = BenchmarkTable::of(&crate::model::sample::vlf()).to_grid();
    let text = grid.to_text("");
    let header = text.lines().next().unwrap();
    let order = [
        "cell",
        "configuration",
        "elapsed",
        "ratio to",
        "verdict",
        "data growths",
    ];
    let at: Vec<usize> = order.iter().map(|t| header.find(t).unwrap()).collect();
    assert!(at.windows(2).all(|w| w[0] < w[1]), "{header}");
    // One column for the configuration, not one per option.
    assert!(
        !header.contains("log_pregrow") && !header.contains("ifi"),
        "{header}"
    );
    assert!(text.contains("1MB growth · IFI off"), "{text}");
}

#[test]
fn the_article_sits_beside_ours() {
    use crate::model::reference::{Reference, ReferenceCase};
    let mut result = crate::model::sample::vlf();
    result.reference = Some(
        Reference::new("vlf::doubling", "Berry 2013, Table 7", "test_1")
            .case(
                ReferenceCase::cell("test_1")
                    .elapsed_s(1074.0)
                    .log_segments(126_399),
            )
            .case(
                ReferenceCase::cell("test_3")
                    .elapsed_s(771.0)
                    .log_segments(246),
            ),
    );
    let text = BenchmarkTable::of(&result).to_grid().to_text("");
    let header = text.lines().next().unwrap();
    let at = |t: &str| header.find(t).unwrap_or_else(|| panic!("{t}: {header}"));
    assert!(at("verdict") < at("article elapsed"), "{header}");
    assert!(at("log segments") < at("article VLFs"), "{header}");
    let row = |cell: &str| {
        text.lines()
            .find(|l| l.starts_with(cell))
            .unwrap()
            .to_string()
    };
    assert!(row("test_1").contains("1074 s") && row("test_1").contains("126,399"));
    assert!(row("test_3").contains("0.72") && row("test_3").contains("246"));
    assert!(row("test_4").matches('–').count() >= 3, "{}", row("test_4"));
}

// A result stored before results recorded their presentation (the sample records none) takes
// the columns from the PostgreSQL backend's profile, which a build without it lacks.
#[cfg(feature = "postgres")]
#[test]
fn postgres_shows_its_wal_evidence_and_names_the_articles_engine() {
    use crate::model::reference::{Reference, ReferenceCase};
    let mut result = crate::model::sample::vlf();
    assert!(!BenchmarkTable::of(&result)
        .to_grid()
        .to_text("")
        .contains("segments created"));
    result.backend.kind = "postgres".into();
    for (i, cell) in result.cells.iter_mut().enumerate() {
        for run in &mut cell.runs {
            run.values
                .insert("pg_wal_segments_created".into(), 10.0 * i as f64);
            run.values
                .insert("pg_wal_zero_fill_bytes".into(), (i as f64) * 1048576.0);
        }
    }
    result.reference = Some(
        Reference::new("vlf::doubling", "Berry 2013", "test_1")
            .measured_on("SQL Server")
            .case(ReferenceCase::cell("test_1").elapsed_s(1074.0)),
    );
    let text = BenchmarkTable::of(&result).to_grid().to_text("");
    let header = text.lines().next().unwrap();
    assert!(header.contains("segments created"), "{header}");
    assert!(header.contains("zero-filled"), "{header}");
    // Values the runs did not have get no column.
    assert!(!header.contains("WAL sync time"), "{header}");
    assert!(header.contains("article (SQL Server) elapsed"), "{header}");
    let row = text.lines().find(|l| l.starts_with("test_3")).unwrap();
    assert!(row.contains("1.0 MiB"), "{row}");
}

#[test]
fn load_cells_show_throughput_and_latency_percentiles() {
    let mut result = crate::model::sample::load(&[1500.0, 1800.0]);
    let loads = result.cells.iter_mut().flat_map(|c| &mut c.runs);
    loads.flat_map(|r| &mut r.loads).for_each(|l| l.retries = 0);
    let text = BenchmarkTable::of(&result).to_grid().to_text("");
    let header = text.lines().next().unwrap();
    assert!(
        header.contains("tx/s") && header.contains("p99 (ms)"),
        "{header}"
    );
    assert!(!header.contains("retries"), "no load retried: {header}");
    let row = text
        .lines()
        .find(|l| l.starts_with("separate_volumes"))
        .unwrap();
    assert!(
        row.contains("1800") && row.contains("1.00 / 2.50 / 4.00"),
        "{row}"
    );
    result.cells[1].runs[1].loads[0].retries = 7;
    let text = BenchmarkTable::of(&result).to_grid().to_text("");
    assert!(text.lines().next().unwrap().contains("retries"), "{text}");
}

#[test]
fn a_single_cell_has_no_configuration_column() {
    let mut result = crate::model::sample::vlf();
    result.cells.truncate(1);
    let text = BenchmarkTable::of(&result).to_grid().to_text("");
    assert!(!text.contains("configuration"), "{text}");
}

#[test]
fn enough_earlier_runs_pool_the_verdict_and_the_note_says_so() {
    use crate::model::earlier::{EarlierRatio, EarlierRun};
    let mut result = crate::model::sample::vlf();
    let own = BenchmarkTable::of(&result);
    // Earlier run `id` started `id` hours before this one: each counts as apart.
    let run = |id: i64| EarlierRun {
        invocation: id,
        started_at_unix_s: result.started_at_unix_s - 3600 * id as u64,
        ratios: own
            .rows
            .iter()
            .filter(|r| r.name != own.baseline)
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
            .collect(),
    };
    result.earlier = (1..=4).map(run).collect();
    let four = BenchmarkTable::of(&result);
    assert_eq!(
        four.rows, own.rows,
        "four earlier runs: this run's forks alone"
    );
    assert!(
        four.pooling
            .as_deref()
            .is_some_and(|n| n.contains("(4 so far;")),
        "{:?}",
        four.pooling
    );
    result.earlier = (1..=5).map(run).collect();
    let five = BenchmarkTable::of(&result);
    let test_3 = five.rows.iter().find(|r| r.name == "test_3").unwrap();
    let pooled = test_3.ratio.as_ref().unwrap();
    assert_eq!(pooled.method, Method::Pooled);
    assert_eq!(pooled.pooled.unwrap().runs, 6);
    let alone = own.rows.iter().find(|r| r.name == "test_3").unwrap();
    let (p, a) = (
        pooled.ci.unwrap(),
        alone.ratio.as_ref().unwrap().ci.unwrap(),
    );
    assert!(
        p.high / p.low < a.high / a.low,
        "six agreeing runs: narrower"
    );
    assert!(
        five.pooling
            .as_deref()
            .is_some_and(|n| n.contains("pooled over this run and the 5 earlier runs")),
        "{:?}",
        five.pooling
    );
    assert!(five.method_line().contains("random-effects"));
}
