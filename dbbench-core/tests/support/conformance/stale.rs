//! Stale sweep: what a killed run left is removed; what is alive or not dbbench's is left. And
//! the claim of a name a run wants: another live run's database of that name is never taken.

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

/// A database of the name a run wants, marked by another process of this host that runs (PID
/// 1, its start time unknown), is refused with the reason and left as it is, rows included;
/// marked by one that is gone, it is taken over: dropped and made anew (security finding 6).
pub fn stale_claim<T: Target>(target: &T, name: &str) {
    let ctx = context(name, "claim");
    let wanted = own_name("claimed");
    if target.remark(&wanted, 1, None).is_none() {
        eprintln!("{name}: the backend's claim is tested beside its code; skipped here");
        return;
    }
    let Some(((), left)) = on_backend(target, &ctx, async |backend: &mut Backend| {
        let admin_db = backend
            .create(&plan(&ctx, &own_name("claimadm")))
            .await
            .unwrap();
        let mut admin = admin_db.connect().await.unwrap();
        let theirs = backend.create(&plan(&ctx, &wanted)).await.unwrap();
        let mut their_conn = theirs.connect().await.unwrap();
        their_conn
            .batch("CREATE TABLE t (x integer); INSERT INTO t VALUES (7)")
            .await
            .unwrap();
        let live = target.remark(&wanted, 1, None).unwrap();
        admin.batch(&live).await.unwrap();
        let refused = match backend.create(&plan(&ctx, &wanted)).await {
            Ok(_) => panic!("{wanted}: a live owner's database was claimed"),
            Err(e) => e.to_string(),
        };
        assert!(
            refused.contains(&wanted) && refused.contains("may still be running"),
            "{refused}"
        );
        let kept: i64 = their_conn.query_scalar("SELECT x FROM t").await.unwrap();
        assert_eq!(kept, 7, "the live owner's rows");
        drop(their_conn);
        // Left by a run that is gone: taken over.
        let gone = target
            .remark(&wanted, super::super::no_such_pid(), Some(1))
            .unwrap();
        admin.batch(&gone).await.unwrap();
        let mine = backend.create(&plan(&ctx, &wanted)).await.unwrap();
        let mut conn = mine.connect().await.unwrap();
        // A fresh database: the old one's table is not there.
        conn.batch("CREATE TABLE t (x integer)").await.unwrap();
        drop(conn);
        drop(theirs);
        mine.drop_database().await.unwrap();
        drop(admin);
        admin_db.drop_database().await.unwrap();
    }) else {
        return;
    };
    assert_nothing_left(&left);
}
