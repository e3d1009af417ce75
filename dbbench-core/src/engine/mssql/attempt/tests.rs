//! Finding N4: an undo's shrink that returns Msg 8909 but worked is done; a shrink on SQL Server
//! 2019 while snapshot transactions run is left owed, not sent; a removal that must wait for a
//! restart is owed, not failed.

use super::*;
use crate::engine::mssql::double::{InstanceModel, Reply, ScriptedServer};
use crate::engine::mssql::ConnectSettings;

async fn conn(server: &ScriptedServer) -> MssqlConnection {
    ConnectSettings::scripted("Server=tcp:h,1433;User Id=u;Password=p", server)
        .unwrap()
        .connect(Some("master"))
        .await
        .unwrap()
}

#[tokio::test]
async fn a_shrink_answered_with_8909_is_read_back_and_done() {
    let server = ScriptedServer::new().with_instance(InstanceModel::sql_server_2022_linux());
    let mut conn = conn(&server).await;
    // tempdev starts at 8 MB: the shrink's target is in effect whatever the batch answers.
    server.times(
        "DBCC SHRINKFILE",
        1,
        Reply::error(
            8909,
            "Table error: Object ID 0, index ID -1, partition ID 0 (scripted)",
        ),
    );
    let undo = Undo::ShrinkTempdbFile {
        file: "tempdev".into(),
        mb: 8,
    };
    assert_eq!(attempt(&mut conn, &undo, 16).await, Outcome::Done);
    assert!(!server.calls_with("WAIT_AT_LOW_PRIORITY").is_empty());
}

#[tokio::test]
async fn a_shrink_before_2022_waits_for_no_snapshot_transaction() {
    let mut model = InstanceModel::sql_server_2019_windows();
    model.snapshot_transactions = 2;
    let server = ScriptedServer::new().with_instance(model);
    let mut conn = conn(&server).await;
    let undo = Undo::ShrinkTempdbFile {
        file: "tempdev".into(),
        mb: 8,
    };
    match attempt(&mut conn, &undo, 15).await {
        Outcome::Owed(why) => assert!(why.contains("2 snapshot transaction"), "{why}"),
        other => panic!("{other:?}"),
    }
    assert!(server.calls_with("DBCC SHRINKFILE").is_empty(), "not sent");
}

#[tokio::test]
async fn a_removal_that_waits_for_a_restart_is_owed() {
    let server = ScriptedServer::new().with_instance(InstanceModel::sql_server_2022_linux());
    server.answer(
        crate::engine::mssql::double::Api::Batch,
        "ALTER DATABASE tempdb ADD FILE (NAME = N'dbbench_temp_1', FILENAME = N'/x.ndf', SIZE = 8192KB, FILEGROWTH = 65536KB);",
    );
    let mut conn = conn(&server).await;
    server.times(
        "REMOVE FILE",
        1,
        Reply::error(
            5042,
            "The file 'dbbench_temp_1' cannot be removed because it is not empty.",
        ),
    );
    let undo = Undo::RemoveTempdbFile {
        file: "dbbench_temp_1".into(),
    };
    assert!(matches!(
        attempt(&mut conn, &undo, 16).await,
        Outcome::Owed(_)
    ));
}
