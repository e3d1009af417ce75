//! Stale sweep: what a killed run left is removed; what is alive or not dbbench's is left.

use super::*;

fn quick(db: &mut Session) -> BodyFuture<'_> {
    Box::pin(async move { db.execute("CREATE TABLE t (x integer)").await.map(|_| ()) })
}

super::super::benchmark! {
    static QUICK = quick,
    module: "conformance",
    title: "stale cleanup at start",
    run: RunSpec {
        repeat: 1,
        warmup: 0,
        fixture: FixtureKind::None,
        ..RunSpec::DEFAULT
    },
    cells: [cell("only", StorageSpec::DEFAULT)],
}

/// A killed run's database (its owner gone, or its PID reused) is removed by the sweep, and by
/// the next run's sweep at its start; a live process's and one without a marker are left.
pub fn stale_sweep<T: Target>(target: &T, name: &str) {
    let ctx = context(name, "stale");
    let Some(((), left)) = on_backend(target, &ctx, async |backend: &mut Backend| {
        let ours = backend
            .create(&plan(&ctx, &own_name("admin")))
            .await
            .unwrap();
        let mut admin = ours.connect().await.unwrap();
        let [dead, reused, live, unmarked, killed] =
            ["dead", "reused", "live", "unmarked", "killed"].map(own_name);
        let staged = target
            .stage_owned(&ctx, &mut admin, &dead, Owner::Gone)
            .await;
        if staged {
            target
                .stage_owned(&ctx, &mut admin, &reused, Owner::Reused)
                .await;
            target.stage_owned(&ctx, &mut admin, &live, Owner::Me).await;
            target
                .stage_foreign(&ctx, &mut admin, &unmarked, false)
                .await;
            let lines = backend.sweep_stale(&ctx.work_dir).await;
            for gone in [&dead, &reused] {
                assert!(
                    !target.exists(&ctx, &mut admin, gone).await,
                    "{gone}: {lines:?}"
                );
                assert!(lines.iter().any(|l| l.contains(gone.as_str())), "{lines:?}");
            }
            for kept in [&live, &unmarked] {
                assert!(
                    target.exists(&ctx, &mut admin, kept).await,
                    "{kept} was removed"
                );
            }
            let again = backend.sweep_stale(&ctx.work_dir).await;
            assert!(
                !again.iter().any(|l| l.contains(dead.as_str())),
                "nothing more to remove: {again:?}"
            );
            // The next run sweeps at its start.
            target
                .stage_owned(&ctx, &mut admin, &killed, Owner::Gone)
                .await;
            let result = run_on(backend, &QUICK, &ctx).await;
            assert_eq!(result.cells[0].status, CellStatus::Ok);
            assert!(!target.exists(&ctx, &mut admin, &killed).await);
            for kept in [&live, &unmarked] {
                assert!(
                    target.exists(&ctx, &mut admin, kept).await,
                    "{kept} was removed"
                );
                target.remove(&ctx, &mut admin, kept).await;
            }
        } else {
            eprintln!("{name}: the backend sweeps no single databases; stale staging skipped");
        }
        drop(admin);
        ours.drop_database().await.unwrap();
    }) else {
        return;
    };
    assert_nothing_left(&left);
}
