//! The probe on the scripted server: another application's session works and another database
//! writes on the cell's volume while the window is open; a login without VIEW SERVER STATE, and
//! Babelfish, which does not answer `sys.dm_os_volume_stats`, give unavailable figures, not a
//! failed cell.

use super::*;
use crate::engine::mssql::connect::ConnectSettings;
use crate::engine::mssql::double::{Reply, ScriptedServer};
use crate::model::interference::{Interference, Thresholds};
use crate::model::value::Value;

fn connection(server: &ScriptedServer) -> MssqlConnection {
    let ado = "server=tcp:sql2022,1433;user id=bench;password=Pr0be!Secret";
    let settings = ConnectSettings::scripted(ado, server).unwrap();
    MssqlConnection::scripted_in(server.clone(), settings, "dbbench_cell")
}

/// Other databases' bytes on the cell's volumes: database 9's data file, as
/// `sys.dm_io_virtual_file_stats` gives `num_of_bytes_read + num_of_bytes_written` (cumulative
/// since the database came online).
fn volume_bytes(bytes: i64) -> Reply {
    Reply::rows(
        &["database_id", "file_id", "bytes"],
        vec![vec![Value::Int(9), Value::Int(1), Value::Int(bytes)]],
    )
}

#[tokio::test]
async fn another_application_s_work_in_the_window_is_read_and_judged_busy() {
    let server = ScriptedServer::new().with_sessions();
    let app = server.open_session("OrdersApp", "orders").unwrap();
    // Idle all along: seen by the views, no work, not counted.
    server.open_session("ReportsApp", "reports").unwrap();
    server.session_worked(&app, 90_000, 4_000_000, 20_000);
    server.on("sys.dm_os_volume_stats", volume_bytes(9_000_000));
    server.times("sys.dm_os_volume_stats", 1, volume_bytes(1_000_000));
    let mut conn = connection(&server);
    let opened = Reading::open(&mut conn, &Product::SqlServer).await;
    server.session_worked(&app, 1_500, 30_000, 400);
    let activity = opened.close(&mut conn, &Product::SqlServer).await;
    assert_eq!(activity.other_sessions, Some(1));
    assert_eq!(activity.other_cpu_s, Some(1.5));
    assert_eq!(activity.other_reads, Some(30_000));
    assert_eq!(activity.other_writes, Some(400));
    assert_eq!(activity.other_io_bytes, Some(8_000_000));
    assert!(
        activity.unavailable.is_empty(),
        "{:?}",
        activity.unavailable
    );
    let window = Interference {
        window_s: 2.0,
        server: Some(activity),
        ..Interference::default()
    }
    .judge(&Thresholds::DEFAULT);
    assert!(window.server_busy(), "{:?}", window.disturbed_by);
    assert!(
        window.disturbed_by[0].contains("other sessions used 0.75 cores"),
        "{:?}",
        window.disturbed_by
    );
    let sent: Vec<String> = server
        .calls()
        .iter()
        .map(|c| format!("{:?}: {}", c.api, c.sql))
        .collect();
    insta::assert_snapshot!(sent.join("\n"));
}

#[tokio::test]
async fn a_quiet_server_reads_as_nothing_done() {
    let server = ScriptedServer::new().with_sessions();
    server.open_session("OrdersApp", "orders").unwrap();
    let mut conn = connection(&server);
    let opened = Reading::open(&mut conn, &Product::SqlServer).await;
    let activity = opened.close(&mut conn, &Product::SqlServer).await;
    assert_eq!(activity.other_sessions, Some(0));
    assert_eq!(activity.other_cpu_s, Some(0.0));
    assert_eq!(activity.other_io_bytes, Some(0));
    assert!(activity.busy(2.0, &Thresholds::DEFAULT.server).is_empty());
}

#[tokio::test]
async fn without_view_server_state_or_a_view_the_figures_are_unavailable_with_the_reason() {
    let server = ScriptedServer::new().with_sessions();
    server.deny_view_server_state();
    let mut conn = connection(&server);
    let opened = Reading::open(&mut conn, &Product::SqlServer).await;
    let activity = opened.close(&mut conn, &Product::SqlServer).await;
    assert_eq!(activity.other_sessions, None);
    assert!(activity.unavailable["other_sessions"].contains("VIEW SERVER STATE"));
    assert!(activity.unavailable["other_io_bytes"].contains("VIEW SERVER STATE"));

    // A product that lacks a view answers with an error (here a made-up one in the shape of a
    // missing function): the figure is unavailable, said as that product's.
    let server = ScriptedServer::new().with_sessions();
    server.on(
        "sys.dm_os_volume_stats",
        Reply::error(
            33557097,
            "function sys.dm_os_volume_stats(integer, integer) does not exist",
        ),
    );
    let mut conn = connection(&server);
    let opened = Reading::open(&mut conn, &Product::Babelfish).await;
    let activity = opened.close(&mut conn, &Product::Babelfish).await;
    assert_eq!(activity.other_sessions, Some(0));
    let why = &activity.unavailable["other_io_bytes"];
    assert!(
        why.starts_with("Babelfish for PostgreSQL did not answer sys.dm_io_virtual_file_stats"),
        "{why}"
    );
}
