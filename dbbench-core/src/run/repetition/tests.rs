use super::*;

fn short() -> Duration {
    Duration::from_millis(100)
}

#[tokio::test]
async fn a_body_that_ignores_its_cancel_is_abandoned_after_the_grace() {
    // A server that answers nothing: the body waits forever, the cancel changes nothing.
    let cancel = Cancel::new();
    let started = Instant::now();
    let body = async { Ok(std::future::pending::<Result<()>>().await) };
    let raced = race(body, &cancel, Some(Duration::from_millis(50)), short).await;
    assert!(matches!(raced, Raced::Abandoned(g) if g == short()));
    let took = started.elapsed();
    assert!(took >= Duration::from_millis(150), "{took:?}");
    assert!(took < Duration::from_secs(3), "{took:?}");
    assert_eq!(
        cancel.fired(),
        Some(Stop::Timeout(Duration::from_millis(50)))
    );
    let err = unanswered(
        &cancel,
        Duration::from_secs(5),
        Some("INSERT INTO t SELECT"),
        1,
    );
    // The runner's conversion of a fired switch's error keeps it as it is.
    assert_eq!(
        stopped(&cancel, err, 1).to_string(),
        "the server stopped answering: no reply to the cancel request within 5 s after the \
             50 ms timeout (statement: INSERT INTO t SELECT) in repetition 1; its connection was \
             closed"
    );
}

#[tokio::test]
async fn a_signal_stops_a_body_without_a_timeout_and_one_that_answers_returns() {
    let cancel = Cancel::new();
    let fired = cancel.clone();
    let thread = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(30));
        fired.fire(Stop::Signal("SIGINT"));
    });
    let body = async { Ok(std::future::pending::<Result<()>>().await) };
    let raced = race(body, &cancel, None, short).await;
    thread.join().unwrap();
    assert!(matches!(raced, Raced::Abandoned(_)));
    let err = unanswered(&cancel, short(), Some("SELECT 1"), 3);
    // The runner's conversion of a fired switch's error keeps it as it is.
    let err = stopped(&cancel, err, 3);
    assert!(matches!(err, Error::Interrupted { .. }), "{err}");
    assert_eq!(
        err.to_string(),
        "interrupted by SIGINT: in repetition 3 (statement: SELECT 1); the server stopped \
             answering: no reply to the cancel request within 100 ms"
    );
    // Waiting on no statement says nothing about the server.
    let err = stopped(&cancel, unanswered(&cancel, short(), None, 3), 3);
    assert_eq!(err.to_string(), "interrupted by SIGINT: in repetition 3");
    let timed = Cancel::new();
    timed.fire(Stop::Timeout(Duration::from_millis(200)));
    let err = stopped(&timed, unanswered(&timed, short(), None, 1), 1);
    assert_eq!(err.to_string(), "timed out after 200ms in repetition 1");

    // A server that answers the cancel: the body returns its cancelled statement's error.
    let cancel = Cancel::new();
    let watched = cancel.clone();
    let body = async move {
        watched.wait().await;
        Ok(Err(Error::Cancelled {
            statement: "SELECT pg_sleep(60)".into(),
        }))
    };
    let raced = race(body, &cancel, Some(Duration::from_millis(20)), short).await;
    assert!(matches!(
        raced,
        Raced::Returned(Ok(Err(Error::Cancelled { .. })))
    ));
    // A body that finishes first is never stopped.
    let calm = Cancel::new();
    let raced = race(
        async { Ok(Ok(())) },
        &calm,
        Some(Duration::from_secs(5)),
        short,
    )
    .await;
    assert!(matches!(raced, Raced::Returned(Ok(Ok(())))));
    assert_eq!(calm.fired(), None);
}

#[test]
fn a_fired_switch_names_the_reason_and_the_statement() {
    let cancel = Cancel::new();
    let cancelled = || Error::Cancelled {
        statement: "WITH RECURSIVE r(n)".into(),
    };
    assert!(matches!(
        stopped(&cancel, cancelled(), 2),
        Error::Cancelled { .. }
    ));
    cancel.fire(Stop::Timeout(Duration::from_millis(500)));
    assert_eq!(
        stopped(&cancel, cancelled(), 2).to_string(),
        "timed out after 500ms in repetition 2 (statement: WITH RECURSIVE r(n))"
    );
    let wrapped = Error::msg(
        "transaction 3 failed (timeout) after 0 retries: cancelled (statement: INSERT x)",
    );
    assert_eq!(
        stopped(&cancel, wrapped, 1).to_string(),
        "timed out after 500ms in repetition 1 (statement: INSERT x)"
    );
    let signalled = Cancel::new();
    signalled.fire(Stop::Signal("SIGINT"));
    assert_eq!(
        stopped(&signalled, cancelled(), 3).to_string(),
        "interrupted by SIGINT: in repetition 3 (statement: WITH RECURSIVE r(n))"
    );
}
