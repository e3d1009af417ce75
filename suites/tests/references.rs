//! The articles' numbers each suite declares belong to a benchmark of the suites and name its
//! cells, so a renamed cell cannot silently drop a column of the report.

#[test]
fn every_reference_names_a_benchmark_and_its_cells() {
    let all = dbbench_suites::all();
    let references = dbbench_suites::references();
    assert_eq!(references.len(), all.len(), "one reference per seed suite");
    for reference in &references {
        let bench = all
            .iter()
            .find(|b| b.test_path() == reference.benchmark)
            .unwrap_or_else(|| panic!("no benchmark `{}`", reference.benchmark));
        assert!(
            bench.cell(&reference.baseline).is_some(),
            "{}",
            reference.baseline
        );
        for case in &reference.cases {
            assert!(bench.cell(&case.cell).is_some(), "no cell `{}`", case.cell);
        }
        assert!(!reference.source.is_empty());
    }
}

#[test]
fn the_vlf_article_ratios_are_its_table_7() {
    let vlf = dbbench_suites::vlf::article();
    let ratio = |cell: &str| vlf.ratio(cell).unwrap();
    assert!((ratio("test_3") - 771.0 / 1074.0).abs() < 1e-9);
    assert_eq!(vlf.of("test_1").and_then(|c| c.log_segments), Some(126_399));
    assert_eq!(vlf.of("test_4").and_then(|c| c.log_segments), Some(127));
}
