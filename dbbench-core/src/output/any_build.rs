//! A stored result renders alike in every build of dbbench: a PostgreSQL and a SQL Server results
//! file, written and read back as `dbbench report` reads them, give the same results table and
//! the same snapshot table in a build without those backends (the default, the embedded engine
//! alone) as in one with them, because each result records how it is shown
//! ([`crate::model::evidence::BackendInfo::presentation`]). The headers, evidence cells and
//! snapshot tables expected below are what every build must give (CI runs this with each
//! backend's feature alone and with all); where the build has the backend, a result stored before
//! results recorded these facts renders exactly as one that records them.

use crate::analysis::table::BenchmarkTable;
use crate::model::presentation::{EvidenceColumn, EvidenceUnit, Presentation};
use crate::model::results::BenchmarkResult;
use crate::output::snapshot::SnapshotView;
use std::borrow::Cow;

/// PostgreSQL's presentation facts as its results record them.
fn postgres_facts() -> Presentation {
    let column = |title: &str, value: &str, unit| EvidenceColumn {
        title: Cow::Owned(title.into()),
        value: Cow::Owned(value.into()),
        unit,
    };
    Presentation {
        segments_label: "WAL segments".into(),
        evidence_columns: vec![
            column(
                "segments created",
                "pg_wal_segments_created",
                EvidenceUnit::Count,
            ),
            column(
                "segments recycled",
                "pg_wal_segments_recycled",
                EvidenceUnit::Count,
            ),
            column("zero-filled", "pg_wal_zero_fill_bytes", EvidenceUnit::Bytes),
            column("WAL written", "pg_wal_bytes", EvidenceUnit::Bytes),
            column(
                "checkpoints requested",
                "pg_checkpoints_req",
                EvidenceUnit::Count,
            ),
            column("WAL sync time", "pg_wal_sync_time_ms", EvidenceUnit::Millis),
        ]
        .into(),
    }
}

/// SQL Server's, which has no evidence columns of its own.
fn mssql_facts() -> Presentation {
    Presentation {
        segments_label: "VLFs".into(),
        evidence_columns: Vec::new().into(),
    }
}

/// The sample VLF benchmark as `kind` ran it, at smoke scale (so its snapshot is deterministic),
/// with the evidence values PostgreSQL reports.
fn ran_on(kind: &str, version: &str, facts: Presentation) -> BenchmarkResult {
    let mut result = crate::model::sample::vlf();
    result.scale = "smoke".into();
    result.backend.kind = kind.into();
    result.backend.version = version.into();
    result.backend.presentation = Some(facts);
    for (i, cell) in result.cells.iter_mut().enumerate() {
        let i = i as f64;
        for run in &mut cell.runs {
            for (name, value) in [
                ("pg_wal_segments_created", 10.0 * i),
                ("pg_wal_segments_recycled", 3.0 + i),
                ("pg_wal_zero_fill_bytes", i * 1_048_576.0),
                ("pg_wal_bytes", (40.0 + i) * 1_048_576.0),
                ("pg_checkpoints_req", i),
                ("pg_wal_sync_time_ms", 12.5 + i),
            ] {
                run.values.insert(name.into(), value);
            }
        }
    }
    result
}

/// `result` written as a results file and read back.
fn stored(result: &BenchmarkResult) -> BenchmarkResult {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("results.json");
    crate::output::json::write(result, &path).unwrap();
    crate::output::json::read(&path).unwrap()
}

/// The results table's text and the snapshot's table of `result`.
fn rendered(result: &BenchmarkResult) -> (String, Vec<String>) {
    let table = BenchmarkTable::of(result).to_grid().to_text("");
    let view = SnapshotView::of(result, std::path::Path::new("/nowhere"));
    let snapshot = serde_json::to_value(&view).unwrap()["table"]
        .as_array()
        .unwrap()
        .iter()
        .map(|line| line.as_str().unwrap().to_string())
        .collect();
    (table, snapshot)
}

/// The words of a line, for comparing a grid's lines without its column widths.
fn words(line: &str) -> String {
    line.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[test]
fn a_stored_postgres_result_shows_its_wal_evidence_in_any_build() {
    let result = stored(&ran_on("postgres", "PostgreSQL 16.4", postgres_facts()));
    let (table, snapshot) = rendered(&result);
    let lines: Vec<String> = table.lines().map(words).collect();
    assert_eq!(
        lines[0],
        "cell configuration n elapsed (mean ± 95% CI) ratio to test_1 [95% CI] verdict \
         data growths log growths WAL segments data size log size top waits \
         segments created segments recycled zero-filled WAL written checkpoints requested \
         WAL sync time",
        "{table}"
    );
    for (row, evidence) in [
        (2, "0 3 0.0 MiB 40.0 MiB 0 12.5 ms"),
        (3, "10 4 1.0 MiB 41.0 MiB 1 13.5 ms"),
        (4, "20 5 2.0 MiB 42.0 MiB 2 14.5 ms"),
    ] {
        assert!(lines[row].ends_with(evidence), "{table}");
    }
    assert_eq!(
        snapshot.iter().map(|l| words(l)).collect::<Vec<_>>(),
        [
            "cell configuration status runs data growths log growths WAL segments",
            "test_1 1MB growth · IFI off · log growth 1MB ok 3 1200 600 4800",
            "test_3 1024MB growth · IFI on · log growth 1024MB ok 3 2 1 24",
            "test_4 1024MB growth · IFI on · log pre-grown in 4000MB steps · log growth 1024MB \
             ok 3 1 0 16",
        ],
        "{snapshot:#?}"
    );
}

#[test]
fn a_stored_mssql_result_shows_its_vlfs_in_any_build() {
    let result = stored(&ran_on("mssql", "Microsoft SQL Server 2022", mssql_facts()));
    let (table, snapshot) = rendered(&result);
    assert_eq!(
        words(table.lines().next().unwrap()),
        "cell configuration n elapsed (mean ± 95% CI) ratio to test_1 [95% CI] verdict \
         data growths log growths VLFs data size log size top waits",
        "{table}"
    );
    assert_eq!(
        words(&snapshot[0]),
        "cell configuration status runs data growths log growths VLFs",
        "{snapshot:#?}"
    );
}

/// The facts the files above record are their backend's, and a result stored before results
/// recorded them renders as a new one does where this build has the backend.
#[cfg(feature = "postgres")]
#[test]
fn postgres_facts_are_its_profiles() {
    assert_eq!(
        postgres_facts(),
        crate::engine::postgres::PROFILE.presentation
    );
    let recorded = ran_on("postgres", "PostgreSQL 16.4", postgres_facts());
    let mut older = recorded.clone();
    older.backend.presentation = None;
    assert_eq!(rendered(&stored(&older)), rendered(&stored(&recorded)));
}

/// As [`postgres_facts_are_its_profiles`], for SQL Server.
#[cfg(feature = "mssql")]
#[test]
fn mssql_facts_are_its_profiles() {
    assert_eq!(mssql_facts(), crate::engine::mssql::PROFILE.presentation);
    let recorded = ran_on("mssql", "Microsoft SQL Server 2022", mssql_facts());
    let mut older = recorded.clone();
    older.backend.presentation = None;
    assert_eq!(rendered(&stored(&older)), rendered(&stored(&recorded)));
}
