use super::*;

#[test]
fn the_catalog_models_databases_and_markers() {
    let server = ScriptedServer::new().with_catalog(Recorded::SqlServer2022);
    let id = |server: &ScriptedServer| match server.answer(
        Api::Batch,
        "SELECT CAST(DB_ID(N'dbbench_a') AS int) AS database_id;",
    ) {
        Reply::Sets(s) => s[0][0].get::<Option<i64>>(0).unwrap(),
        other => panic!("{other:?}"),
    };
    assert_eq!(id(&server), None);
    server.answer(
        Api::Batch,
        "CREATE DATABASE [dbbench_a]\nON PRIMARY (NAME = N'data_1')",
    );
    assert_eq!(id(&server), Some(7));
    server.answer(Api::Batch, "EXEC [dbbench_a].sys.sp_addextendedproperty @name = N'dbbench_owner', @value = N'it''s me';");
    match server.answer(Api::Batch, "SELECT CAST(value AS nvarchar(4000)) AS marker FROM [dbbench_a].sys.extended_properties WHERE class = 0;") {
        Reply::Sets(s) => assert_eq!(s[0][0].get::<String>(0).unwrap(), "it's me"),
        other => panic!("{other:?}"),
    }
    // The same, from a connection to the database itself.
    match server.answer_in(Api::Batch, "dbbench_a", "SELECT CAST(value AS nvarchar(4000)) AS marker FROM sys.extended_properties WHERE class = 0;") {
        Reply::Sets(s) => assert_eq!(s[0][0].get::<String>(0).unwrap(), "it's me"),
        other => panic!("{other:?}"),
    }
    server.answer(
        Api::Batch,
        "ALTER DATABASE [dbbench_a] SET SINGLE_USER;\nDROP DATABASE [dbbench_a];",
    );
    assert_eq!(id(&server), None);
    assert!(server.databases().is_empty());
}

#[test]
fn newest_rule_wins_and_counted_rules_run_out() {
    let server = ScriptedServer::new();
    server.on("SELECT", Reply::Affected(1));
    server.times("SELECT 2", 1, Reply::error(208, "Invalid object name"));
    assert!(matches!(
        server.answer(Api::Rpc, "SELECT 2"),
        Reply::Error { code: 208, .. }
    ));
    assert!(matches!(
        server.answer(Api::Rpc, "SELECT 2"),
        Reply::Affected(1)
    ));
    assert!(matches!(server.answer(Api::Batch, "DROP x"), Reply::Sets(s) if s.is_empty()));
    assert_eq!(
        server.calls().iter().map(|c| c.api).collect::<Vec<_>>(),
        vec![Api::Rpc, Api::Rpc, Api::Batch]
    );
}
