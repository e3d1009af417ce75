//! Settings read-back: every window reads the settings in force, for the confounder check.

use super::*;

fn once<'a>(db: &'a mut Session) -> BodyFuture<'a> {
    Box::pin(async move { double(db, 1).await })
}

super::super::benchmark! {
    static ALIKE = once,
    module: "conformance",
    title: "",
    run: RunSpec {
        repeat: 2,
        warmup: 0,
        fixture: FixtureKind::Credit,
        ..RunSpec::DEFAULT
    },
    cells: [cell("a", StorageSpec::DEFAULT), cell("b", StorageSpec::DEFAULT)],
}

/// Every window reads the settings in force back, and two cells that declare the same differ
/// in none of them (the confounder check finds nothing).
pub fn settings_read_back<T: Target>(target: &T, name: &str) {
    let ctx = context(name, "settings");
    let Some((result, left)) = on_backend(target, &ctx, async |backend: &mut Backend| {
        run_on(backend, &ALIKE, &ctx).await
    }) else {
        return;
    };
    assert_nothing_left(&left);
    let mut names = None;
    for cell in &result.cells {
        assert_eq!(
            cell.status,
            CellStatus::Ok,
            "{}: {:?}",
            cell.name,
            cell.status
        );
        let runs: Vec<_> = cell.measured().collect();
        assert_eq!(runs.len(), 2);
        for run in runs {
            assert!(!run.settings.is_empty(), "{}: no settings", cell.name);
            for name in target.settings() {
                assert!(
                    run.settings.contains_key(*name),
                    "{}: `{name}` not read back; read: {:?}",
                    cell.name,
                    run.settings.keys().collect::<Vec<_>>()
                );
            }
            // Every window reads the same settings.
            let these: Vec<&String> = run.settings.keys().collect();
            let first = names.get_or_insert_with(|| these.clone());
            assert_eq!(*first, these);
        }
    }
    let found = confounders(&result);
    assert!(found.is_empty(), "{found:#?}");
}
