//! Lifecycle: create → connect → fixture → window → evidence → drop, by hand and through the
//! runner; a failing or panicking body; a database dbbench did not create.

use super::*;

/// Create → connect → fixture → window → evidence → drop, by hand through the dispatcher.
pub fn lifecycle_by_hand<T: Target>(target: &T, name: &str) {
    let ctx = context(name, "by-hand");
    let Some((kind, left)) = on_backend(target, &ctx, async |backend: &mut Backend| {
        let kind = backend_name(backend);
        let info = backend.info().await.unwrap();
        assert_eq!(info.kind, kind);
        assert!(!info.version.is_empty());
        let db = backend
            .create(&plan(&ctx, &own_name("by_hand")))
            .await
            .unwrap();
        let mut conn = db.connect().await.unwrap();
        let scale = Scale::parse("0.002").unwrap();
        let rows = db
            .load_fixture(&mut conn, FixtureKind::Credit, &scale)
            .await
            .unwrap();
        assert!(rows > 0, "the fixture loaded no rows");
        if target.stores_rows() {
            let count: i64 = conn
                .query_scalar("SELECT count(*) FROM charge")
                .await
                .unwrap();
            assert_eq!(count as u64, rows);
        }
        db.open_window(&mut conn, CacheState::Warm).await.unwrap();
        let sql = dbbench_core::fixture::doubling_insert(conn.dialect(), 1);
        conn.execute(&sql).await.unwrap();
        let evidence = db.close_window(&mut conn).await.unwrap();
        assert!(
            !evidence.settings.is_empty(),
            "the window read back no settings"
        );
        if target.stores_rows() {
            let count: i64 = conn
                .query_scalar("SELECT count(*) FROM charge")
                .await
                .unwrap();
            assert_eq!(count as u64, 2 * rows);
        }
        drop(conn);
        db.drop_database().await.unwrap();
        kind
    }) else {
        return;
    };
    assert!(!kind.is_empty());
    assert_nothing_left(&left);
}

fn doubling<'a>(db: &'a mut Session) -> BodyFuture<'a> {
    Box::pin(async move {
        let before: i64 = db.query_scalar("SELECT count(*) FROM charge").await?;
        double(db, 2).await?;
        let after: i64 = db.query_scalar("SELECT count(*) FROM charge").await?;
        db.record_count("rows_before", before);
        db.record_count("rows_after", after);
        Ok(())
    })
}

super::super::benchmark! {
    static DOUBLING = doubling,
    module: "conformance",
    title: "",
    run: RunSpec {
        repeat: 2,
        warmup: 1,
        fixture: FixtureKind::Credit,
        ..RunSpec::DEFAULT
    },
    cells: [cell("a", StorageSpec::DEFAULT), cell("b", StorageSpec::DEFAULT)],
}

pub fn lifecycle_repetitions<T: Target>(target: &T, name: &str) {
    let ctx = context(name, "doubling");
    let Some(((kind, result), left)) = on_backend(target, &ctx, async |backend: &mut Backend| {
        (
            backend_name(backend),
            run_on(backend, &DOUBLING, &ctx).await,
        )
    }) else {
        return;
    };
    assert_nothing_left(&left);
    assert_eq!(result.backend.kind, kind);
    assert_eq!(result.cells.len(), 2);
    for cell in &result.cells {
        assert_eq!(cell.status, CellStatus::Ok, "{}", cell.name);
        assert_eq!(cell.runs.len(), 3, "one warm-up and two measured runs");
        assert!(cell.runs[0].warmup && !cell.runs[1].warmup);
        let run = &cell.runs[1];
        assert_eq!(
            run.laps.iter().map(|l| l.name.as_str()).collect::<Vec<_>>(),
            ["loop 1", "loop 2"]
        );
        assert_eq!(run.counts["fixture_rows"] as u64, result.run.fixture_rows);
        if target.stores_rows() {
            assert_eq!(run.counts["rows_before"], run.counts["fixture_rows"]);
            assert_eq!(run.counts["rows_after"], 4 * run.counts["fixture_rows"]);
        }
        assert!(run.elapsed_s > 0.0);
        // The window's evidence: what the engine read back is there or said to be unavailable.
        assert!(!run.settings.is_empty(), "no settings read back");
    }
    // Interleaved, in a balanced order: the warm-up round and round 1 a, b; round 2 b, a.
    let mut order: Vec<(u32, &str)> = result
        .cells
        .iter()
        .flat_map(|c| c.runs.iter().map(move |r| (r.sequence, c.name.as_str())))
        .collect();
    order.sort();
    assert_eq!(order.iter().map(|o| o.1).collect::<String>(), "ababba");
    let file = paths::results_file(&ctx.work_dir, &DOUBLING.file_stem());
    assert_eq!(json::read(&file).unwrap(), result);
}

fn failing<'a>(db: &'a mut Session) -> BodyFuture<'a> {
    Box::pin(async move {
        db.execute("CREATE TABLE t (x integer)").await?;
        db.execute("INSERT INTO no_such_table VALUES (1)").await?;
        Err(Error::msg(
            "the server accepted a table that does not exist",
        ))
    })
}

fn panicking<'a>(db: &'a mut Session) -> BodyFuture<'a> {
    Box::pin(async move {
        db.execute("CREATE TABLE t (x integer)").await?;
        panic!("the body gave up");
    })
}

super::super::benchmark! {
    static FAILING = failing,
    module: "conformance",
    title: "",
    run: RunSpec::DEFAULT,
    cells: [cell("only", StorageSpec::DEFAULT)],
}
super::super::benchmark! {
    static PANICKING = panicking,
    module: "conformance",
    title: "",
    run: RunSpec::DEFAULT,
    cells: [cell("only", StorageSpec::DEFAULT)],
}

/// The one cell's failure after running `bench`, with nothing left behind.
pub(super) fn failure<T: Target>(
    target: &T,
    name: &str,
    bench: &'static BenchmarkSpec,
) -> Option<String> {
    let ctx = context(name, bench.name);
    let (result, left) = on_backend(target, &ctx, async |backend: &mut Backend| {
        run_on(backend, bench, &ctx).await
    })?;
    assert_nothing_left(&left);
    match &result.cells[0].status {
        CellStatus::Failed(e) => Some(e.clone()),
        other => panic!("expected a failure, got {other:?}"),
    }
}

pub fn lifecycle_failing<T: Target>(target: &T, name: &str) {
    if let Some(e) = failure(target, name, &FAILING) {
        // The server's own error, naming the table.
        for words in target.missing_table_error() {
            assert!(e.contains(words), "{e}");
        }
    }
}

pub fn lifecycle_panicking<T: Target>(target: &T, name: &str) {
    if let Some(e) = failure(target, name, &PANICKING) {
        assert!(e.contains("panicked: the body gave up"), "{e}");
    }
}

/// A database of dbbench's name that dbbench did not create (none of its markers, or only part
/// of them) is refused, never dropped or reused, and still there afterwards.
pub fn lifecycle_foreign<T: Target>(target: &T, name: &str) {
    let ctx = context(name, "foreign");
    let Some(((), left)) = on_backend(target, &ctx, async |backend: &mut Backend| {
        let ours = backend
            .create(&plan(&ctx, &own_name("admin")))
            .await
            .unwrap();
        let mut admin = ours.connect().await.unwrap();
        for (what, half) in [("foreign", false), ("half", true)] {
            let foreign = own_name(what);
            target.stage_foreign(&ctx, &mut admin, &foreign, half).await;
            match backend.create(&plan(&ctx, &foreign)).await {
                Err(e) => assert!(e.to_string().contains("not created by dbbench"), "{e}"),
                Ok(_) => panic!("{foreign} was taken over"),
            }
            assert!(
                target.exists(&ctx, &mut admin, &foreign).await,
                "{foreign} must not be dropped"
            );
            target.remove(&ctx, &mut admin, &foreign).await;
        }
        drop(admin);
        ours.drop_database().await.unwrap();
    }) else {
        return;
    };
    assert_nothing_left(&left);
}
