use super::*;
use crate::engine::mssql::double::ScriptedServer;
use crate::engine::mssql::ConnectSettings;

/// Finding 10: without ALTER ANY CONNECTION, `KILL` fails with 6102; the failure reaches the
/// caller (and the console) naming the permission, instead of being dropped.
#[tokio::test]
async fn a_refused_kill_is_said_with_the_permission_it_needs() {
    let mut model = InstanceModel::sql_server_2022_linux();
    model.may_kill = false;
    let server = ScriptedServer::new().with_instance(model);
    let settings =
        ConnectSettings::scripted("Server=tcp:h,1433;User Id=u;Password=p", &server).unwrap();
    let session = crate::engine::mssql::cancel::SessionId {
        spid: 57,
        login_time: "2026-12-01T10:00:00.000".into(),
        host_process_id: Some(0),
    };
    let err = crate::engine::mssql::cancel::kill(&settings, &session)
        .await
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("6102") && err.contains("ALTER ANY CONNECTION"),
        "{err}"
    );
}

#[test]
fn zeroing_lines_follow_the_flags_and_the_privilege() {
    let mut model = InstanceModel::sql_server_2019_windows();
    let create = "CREATE DATABASE [d]\nON PRIMARY\n    (NAME = N'data_1', FILENAME = N'D:\\d_1.mdf')\nLOG ON\n    (NAME = N'log', FILENAME = N'D:\\d_log.ldf');";
    model.answer("DBCC TRACEON(3004, 3605, -1) WITH NO_INFOMSGS;");
    model.answer(create);
    // IFI in effect: only the log is zeroed.
    assert_eq!(model.errorlog.len(), 1, "{:?}", model.errorlog);
    model.answer("DBCC TRACEON(1806, -1) WITH NO_INFOMSGS;");
    model.answer(create);
    assert_eq!(model.errorlog.len(), 3, "{:?}", model.errorlog);
    match model.answer("EXEC sys.xp_readerrorlog 0, 1, N'Zeroing', N'd_1';") {
        Some(Reply::Sets(s)) => assert_eq!(s[0].len(), 1),
        other => panic!("{other:?}"),
    }
    // Bounded by a start time: only lines logged at or after it.
    let count = |model: &mut InstanceModel, sql: &str| match model.answer(sql) {
        Some(Reply::Sets(s)) => s[0].len(),
        other => panic!("{other:?}"),
    };
    let now = match model.answer(crate::engine::mssql::ifi::NOW_SQL) {
        Some(Reply::Sets(s)) => s[0][0].get::<String>(0).unwrap(),
        other => panic!("{other:?}"),
    };
    let bounded = crate::engine::mssql::ifi::zeroing_log_sql("d", &now);
    assert_eq!(count(&mut model, &bounded), 0, "{bounded}");
    model.answer(create);
    assert_eq!(count(&mut model, &bounded), 2);
}
