//! What `RunResult::absorb` does with the server's activity an engine brings back.

use super::RunResult;
use crate::model::evidence::Evidence;
use crate::model::interference::{Interference, ServerActivity};

fn quiet_window() -> RunResult {
    RunResult {
        interference: Some(Interference {
            window_s: 4.0,
            other_cpu_cores: Some(0.02),
            steal: Some(0.0),
            judged: true,
            ..Interference::default()
        }),
        ..RunResult::default()
    }
}

#[test]
fn a_busy_server_marks_a_quiet_machine_s_window_disturbed() {
    let mut run = quiet_window();
    run.absorb(Evidence {
        server: Some(ServerActivity {
            source: "pg_stat_database, pg_stat_activity".into(),
            other_sessions: Some(1),
            other_transactions: Some(4000),
            other_rows_written: Some(4000),
            ..ServerActivity::default()
        }),
        ..Evidence::default()
    });
    let window = run.interference.unwrap();
    assert!(window.server_busy(), "{:?}", window.disturbed_by);
    assert_eq!(window.server.unwrap().other_transactions, Some(4000));
}

#[test]
fn a_quiet_server_or_none_leaves_the_window_as_it_was() {
    let mut run = quiet_window();
    run.absorb(Evidence {
        server: Some(ServerActivity {
            source: "pg_stat_database, pg_stat_activity".into(),
            other_transactions: Some(2),
            ..ServerActivity::default()
        }),
        ..Evidence::default()
    });
    let window = run.interference.clone().unwrap();
    assert!(!window.disturbed());
    assert!(window.server.is_some());
    let mut managed = quiet_window();
    managed.absorb(Evidence::default());
    assert_eq!(managed.interference, quiet_window().interference);
}
