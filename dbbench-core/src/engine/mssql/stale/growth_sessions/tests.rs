//! The growth-session sweep against the scripted server: which sessions it drops, which it
//! leaves, and what it sends.

use super::*;
use crate::engine::mssql::double::{Reply, ScriptedServer};
use crate::engine::mssql::ConnectSettings;
use crate::model::value::Value;

fn connection(server: &ScriptedServer) -> MssqlConnection {
    let ado = "server=tcp:sql2022,1433;user id=bench;password=Gr0wth!Secret";
    MssqlConnection::scripted(
        server.clone(),
        ConnectSettings::scripted(ado, server).unwrap(),
    )
}

/// The listing as SQL Server answers it: each session with whether its database exists.
fn listing(sessions: &[(&str, i64)]) -> Reply {
    Reply::rows(
        &["name", "database_exists"],
        sessions
            .iter()
            .map(|(n, e)| vec![Value::Text(n.to_string()), Value::Int(*e)])
            .collect(),
    )
}

#[test]
fn only_names_of_dbbench_form_name_a_database() {
    assert_eq!(
        database_of("dbbench_growth_dbbench_vlf_test_1_r0_4242abcd"),
        Some("dbbench_vlf_test_1_r0_4242abcd")
    );
    for other in [
        "DBBENCH_GROWTH_dbbench_x_r0_1abcd",
        "dbbench_growth_DBBENCH_x_r0_1abcd",
        "dbbench_growth_dbbench_",
        "dbbench_growth_sales",
        "dbbench_growthx_dbbench_x",
        "dbbench_growth_dbbench_x-y",
        "system_health",
    ] {
        assert_eq!(database_of(other), None, "{other}");
    }
}

/// Finding N7: a killed run's session whose database is gone is dropped by any later run (the
/// rule needs no host: the database's absence, checked again in the dropping batch); a session
/// whose database exists is its database's to judge, and names not of dbbench's exact form are
/// never touched.
#[tokio::test]
async fn drops_only_dbbench_sessions_whose_database_is_gone() {
    let gone = "dbbench_growth_dbbench_vlf_test_1_r0_4242abcd";
    let live = "dbbench_growth_dbbench_vlf_test_2_r0_5353efgh";
    let upper = "DBBENCH_GROWTH_DBBENCH_X_R0_1ABCD";
    let loose = "dbbench_growth_dbbench_Sales-2024";
    let server = ScriptedServer::new();
    server
        .on(
            "FROM sys.server_event_sessions WHERE name LIKE",
            listing(&[(gone, 0), (live, 1), (upper, 0), (loose, 0)]),
        )
        .on(
            "AS remains",
            Reply::rows(&["remains"], vec![vec![Value::Int(0)]]),
        );
    let lines = sweep(&mut connection(&server)).await;
    assert_eq!(
        lines,
        [format!(
            "removed Extended Events session {gone}, left by a run whose database \
             dbbench_vlf_test_1_r0_4242abcd no longer exists"
        )]
    );
    let drops = server.calls_with("DROP EVENT SESSION");
    assert_eq!(drops.len(), 1, "{drops:#?}");
    assert_eq!(
        drops[0].sql,
        drop_orphan_sql(gone, "dbbench_vlf_test_1_r0_4242abcd")
    );
    assert!(drops[0]
        .sql
        .starts_with("IF DB_ID(N'dbbench_vlf_test_1_r0_4242abcd') IS NULL AND EXISTS"));
    // The listing's LIKE escapes `_`, so only `dbbench_growth_dbbench_…` is listed at all.
    assert!(listing_sql().contains("LIKE N'dbbench[_]growth[_]dbbench[_]%'"));
}

/// A database that exists again by the time of the drop keeps its session, and that is said.
#[tokio::test]
async fn a_database_back_by_the_drop_keeps_its_session() {
    let name = "dbbench_growth_dbbench_a_r0_1abcd";
    let server = ScriptedServer::new();
    server
        .on(
            "FROM sys.server_event_sessions WHERE name LIKE",
            listing(&[(name, 0)]),
        )
        .on(
            "AS remains",
            Reply::rows(&["remains"], vec![vec![Value::Int(1)]]),
        );
    let lines = sweep(&mut connection(&server)).await;
    assert_eq!(
        lines,
        [format!(
            "left Extended Events session {name}: its database dbbench_a_r0_1abcd exists again"
        )]
    );
}
