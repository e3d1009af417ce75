//! msdb's backup history of a database dbbench created (finding N13). A FULL or BULK_LOGGED cell
//! starts its log chain with a full backup to `NUL` ([`super::provision`]), and every backup adds
//! rows to msdb's `backupset`, `backupmediafamily` and friends that outlive the database. Once the
//! database is dropped and the drop verified, `msdb.dbo.sp_delete_database_backuphistory` deletes
//! exactly that database's rows (sp_delete_database_backuphistory docs: "Deletes information
//! about the specified database from the backup and restore history tables"; run in msdb;
//! "Requires membership in the sysadmin fixed server role"). dbbench's database names carry a
//! per-process nonce, so no other database's history shares the name. Without sysadmin, or when
//! the procedure does not finish within [`LIMIT`] (it deletes row by row from tables a busy
//! server's msdb may hold millions of), the history is left and that is said.

use super::tsql::literal;
use super::MssqlConnection;
use std::time::Duration;

/// How long the deletion may take: a part of the teardown deadline, which bounds the drop and
/// the undo before it.
pub const LIMIT: Duration = Duration::from_secs(20);

/// Deletes the history of `name` when this login is sysadmin, else says so, in one row
/// (`outcome`: `deleted` or `not sysadmin`).
pub fn delete_sql(name: &str) -> String {
    format!(
        "IF IS_SRVROLEMEMBER(N'sysadmin') = 1 BEGIN \
         EXEC msdb.dbo.sp_delete_database_backuphistory @database_name = {}; \
         SELECT N'deleted' AS outcome; END ELSE SELECT N'not sysadmin' AS outcome;",
        literal(name)
    )
}

/// Deletes msdb's backup history of `name`, a database dbbench created, took a backup of and has
/// just dropped (verified). `Err` says why the history was left. The connection may be left
/// busy after a timeout: call this last on it.
pub async fn delete(conn: &mut MssqlConnection, name: &str) -> Result<(), String> {
    let left = |why: String| format!("msdb's backup history of {name} was left: {why}");
    let sets = match tokio::time::timeout(LIMIT, conn.query_all(&delete_sql(name))).await {
        Err(_) => {
            return Err(left(format!(
                "sp_delete_database_backuphistory did not finish within {} s",
                LIMIT.as_secs()
            )))
        }
        Ok(Err(e)) => return Err(left(format!("sp_delete_database_backuphistory: {e}"))),
        Ok(Ok(sets)) => sets,
    };
    let outcome = sets
        .concat()
        .first()
        .and_then(|r| r.get_named::<Option<String>>("outcome").ok().flatten());
    match outcome.as_deref() {
        Some("deleted") => Ok(()),
        Some("not sysadmin") => Err(left(
            "deleting it needs sysadmin (sp_delete_database_backuphistory), which this login \
             lacks"
                .into(),
        )),
        other => Err(left(format!("the deletion gave no outcome ({other:?})"))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::mssql::double::{InstanceModel, ScriptedServer};
    use crate::engine::mssql::ConnectSettings;

    fn scripted(sysadmin: bool) -> (ScriptedServer, ConnectSettings) {
        let mut model = InstanceModel::sql_server_2022_linux();
        model.sysadmin = sysadmin;
        model.backup_history.insert("dbbench_a".into());
        model.backup_history.insert("sales".into());
        let server = ScriptedServer::new().with_instance(model);
        let settings =
            ConnectSettings::scripted("Server=tcp:h,1433;User Id=u;Password=p", &server).unwrap();
        (server, settings)
    }

    /// Only the named database's history goes, and only for sysadmin; otherwise it is said.
    #[tokio::test]
    async fn only_the_named_databases_history_is_deleted() {
        let (server, settings) = scripted(true);
        let mut conn = settings.connect(Some("master")).await.unwrap();
        delete(&mut conn, "dbbench_a").await.unwrap();
        let left = server.instance().unwrap().backup_history;
        assert_eq!(left.into_iter().collect::<Vec<_>>(), vec!["sales"]);
        let (server, settings) = scripted(false);
        let mut conn = settings.connect(Some("master")).await.unwrap();
        let why = delete(&mut conn, "dbbench_a").await.unwrap_err();
        assert!(why.contains("needs sysadmin"), "{why}");
        assert_eq!(server.instance().unwrap().backup_history.len(), 2);
    }

    #[test]
    fn its_statement() {
        assert_eq!(
            delete_sql("dbbench_a'b"),
            "IF IS_SRVROLEMEMBER(N'sysadmin') = 1 BEGIN EXEC \
             msdb.dbo.sp_delete_database_backuphistory @database_name = N'dbbench_a''b'; SELECT \
             N'deleted' AS outcome; END ELSE SELECT N'not sysadmin' AS outcome;"
        );
    }
}
