use super::*;
use crate::engine::mssql::double::{Reply, ScriptedServer};
use crate::engine::mssql::marker::marker_text;
use crate::model::value::Value;
use crate::util::owner::Owner;

fn server_with(name: &str, owner: &Owner) -> ScriptedServer {
    let server = ScriptedServer::new();
    server
        .on(
            "DB_ID(",
            Reply::rows(&["database_id"], vec![vec![Value::Int(7)]]),
        )
        .on_in(
            name,
            "sys.extended_properties",
            Reply::rows(
                &["marker"],
                vec![vec![Value::Text(marker_text(&owner.host, 1, owner))]],
            ),
        );
    server
}

async fn claimed(server: &ScriptedServer, name: &str) -> Result<()> {
    let ado = "server=tcp:sql2022,1433;user id=bench;password=Cl4im!Secret";
    let settings = ConnectSettings::scripted(ado, server).unwrap();
    let mut conn = MssqlConnection::scripted(server.clone(), settings);
    claim(
        &mut conn,
        name,
        &crate::engine::mssql::identity::Product::SqlServer,
    )
    .await
}

#[tokio::test]
async fn a_same_named_database_of_a_live_run_elsewhere_is_refused() {
    let name = "dbbench_s_vlf_test_1_r0_4242";
    let elsewhere = Owner {
        host: format!("{}-other", Owner::this().host),
        ..Owner::this()
    };
    let server = server_with(name, &elsewhere);
    let err = claimed(&server, name).await.unwrap_err().to_string();
    assert!(
        err.contains("already exists and belongs to") && err.contains("-other"),
        "{err}"
    );
    assert!(
        !server
            .calls()
            .iter()
            .any(|c| c.sql.contains("DROP DATABASE")),
        "nothing dropped"
    );
    // This process's own leftover (an earlier teardown that failed) is dropped.
    let server = server_with(name, &Owner::this());
    let _ = claimed(&server, name).await;
    assert!(server
        .calls()
        .iter()
        .any(|c| c.sql.contains("DROP DATABASE")));
}
