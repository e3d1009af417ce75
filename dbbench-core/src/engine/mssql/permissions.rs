//! The one table of what each statement the run sends needs: the permission Microsoft documents
//! for it, where that is written, and when the run sends it. The preflight's verdicts and the
//! run's own admission ([`super::MssqlBackend::check`]) both come from [`blockers`], so a cell
//! the preflight says "can run" is not refused by the run for a permission (findings A1, A3, A5
//! and B5 of the third review); `docs/sql-server.md`'s permission table is [`markdown`] (a test
//! keeps the two equal), and a test runs cells against the scripted server and checks that every
//! statement they send is in this table.

use super::preflight::Permissions;
use crate::model::config::StorageSpec;

/// When the run sends a statement.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum When {
    /// For every cell.
    Always,
    /// For a cell with `ifi = false` (TF 1805/1806 for the repetition, 3004/3605 around CREATE).
    IfiOff,
    /// For a cell with `ifi` declared (reading the state, proving zeroing).
    IfiDeclared,
    /// For a cell with `cache = "cold"`, or every cell with `DBBENCH_MSSQL_COLD_CACHE=1`.
    ColdCache,
    /// For a cell with tempdb options.
    Tempdb,
    /// Only when a statement overruns its time limit or Ctrl-C arrives.
    Stop,
    /// For a FULL or BULK_LOGGED cell (the log chain's first backup).
    FullRecovery,
    /// While waiting for the server-wide lock another process holds (naming its holders).
    LockWait,
}

/// What one statement needs.
#[derive(Debug, Clone, Copy)]
pub struct Need {
    /// The statement as the run sends it (a text every sent statement of this kind contains).
    pub statement: &'static str,
    /// When it is sent.
    pub when: When,
    /// The documented permission.
    pub permission: &'static str,
    /// Where that is documented.
    pub source: &'static str,
    /// Whether the login has it, from the preflight's permission answers (`None`: unknown).
    pub held: fn(&Permissions) -> Option<bool>,
    /// Whether a cell cannot run without it (otherwise the metric is recorded as unavailable).
    pub blocks: bool,
}

fn sysadmin(p: &Permissions) -> Option<bool> {
    p.sysadmin
}

/// Whether the login may create databases: `CREATE DATABASE` in master is enough (finding A5).
pub fn may_create(p: &Permissions) -> Option<bool> {
    create(p).or(p.alter_any_database.filter(|a| *a))
}

fn create(p: &Permissions) -> Option<bool> {
    match (
        p.create_any_database,
        p.create_database_in_master,
        p.sysadmin,
    ) {
        (Some(true), ..) | (_, Some(true), _) | (.., Some(true)) => Some(true),
        (Some(false), Some(false), _) => Some(false),
        _ => None,
    }
}

fn server_state(p: &Permissions) -> Option<bool> {
    p.view_server_state.or(p.sysadmin)
}

fn connection(p: &Permissions) -> Option<bool> {
    p.alter_any_connection.or(p.sysadmin)
}

fn alter_tempdb(p: &Permissions) -> Option<bool> {
    p.alter_any_database.or(p.sysadmin)
}

fn event_session(p: &Permissions) -> Option<bool> {
    p.alter_any_event_session.or(p.sysadmin)
}

fn anyone(_: &Permissions) -> Option<bool> {
    Some(true)
}

/// Every statement the run sends that needs more than connecting, in the order a repetition
/// sends them.
pub const TABLE: &[Need] = &[
    Need { statement: "sp_getapplock", when: When::Always, permission: "public role", source: "https://learn.microsoft.com/sql/relational-databases/system-stored-procedures/sp-getapplock-transact-sql", held: anyone, blocks: true },
    Need { statement: "sys.dm_tran_locks", when: When::LockWait, permission: "VIEW SERVER STATE (2022: VIEW SERVER PERFORMANCE STATE)", source: "https://learn.microsoft.com/sql/relational-databases/system-dynamic-management-views/sys-dm-tran-locks-transact-sql", held: server_state, blocks: false },
    Need { statement: "CREATE DATABASE", when: When::Always, permission: "CREATE DATABASE in master, CREATE ANY DATABASE or ALTER ANY DATABASE", source: "https://learn.microsoft.com/sql/t-sql/statements/create-database-transact-sql#permissions", held: create, blocks: true },
    Need { statement: "DROP DATABASE", when: When::Always, permission: "CONTROL on the database (its creator owns it)", source: "https://learn.microsoft.com/sql/t-sql/statements/drop-database-transact-sql#permissions", held: create, blocks: true },
    Need { statement: "sys.dm_server_services", when: When::IfiDeclared, permission: "VIEW SERVER STATE", source: "https://learn.microsoft.com/sql/relational-databases/system-dynamic-management-views/sys-dm-server-services-transact-sql", held: server_state, blocks: false },
    Need { statement: "xp_readerrorlog", when: When::IfiDeclared, permission: "sysadmin (sp_readerrorlog's page); EXECUTE on xp_readerrorlog can also be granted alone (community sources)", source: "https://learn.microsoft.com/sql/relational-databases/system-stored-procedures/sp-readerrorlog-transact-sql", held: sysadmin, blocks: false },
    Need { statement: "DBCC TRACESTATUS(", when: When::IfiDeclared, permission: "public role", source: "https://learn.microsoft.com/sql/t-sql/database-console-commands/dbcc-tracestatus-transact-sql", held: anyone, blocks: true },
    Need { statement: "DBCC TRACEON(", when: When::IfiOff, permission: "sysadmin", source: "https://learn.microsoft.com/sql/t-sql/database-console-commands/dbcc-traceon-transact-sql", held: sysadmin, blocks: true },
    Need { statement: "DBCC TRACEOFF(", when: When::IfiOff, permission: "sysadmin", source: "https://learn.microsoft.com/sql/t-sql/database-console-commands/dbcc-traceoff-transact-sql", held: sysadmin, blocks: true },
    Need { statement: "sp_addextendedproperty", when: When::IfiOff, permission: "db_owner of master (sysadmin): the server's record of owed undo", source: "https://learn.microsoft.com/sql/relational-databases/system-stored-procedures/sp-addextendedproperty-transact-sql", held: sysadmin, blocks: true },
    Need { statement: "ALTER DATABASE tempdb", when: When::Tempdb, permission: "ALTER on tempdb (ALTER ANY DATABASE)", source: "https://learn.microsoft.com/sql/t-sql/statements/alter-database-transact-sql-file-and-filegroup-options", held: alter_tempdb, blocks: true },
    Need { statement: "DBCC SHRINKFILE", when: When::Tempdb, permission: "sysadmin or db_owner in tempdb", source: "https://learn.microsoft.com/sql/t-sql/database-console-commands/dbcc-shrinkfile-transact-sql", held: sysadmin, blocks: true },
    Need { statement: "sp_addextendedproperty", when: When::Tempdb, permission: "db_owner of master (sysadmin): the server's record of owed undo", source: "https://learn.microsoft.com/sql/relational-databases/system-stored-procedures/sp-addextendedproperty-transact-sql", held: sysadmin, blocks: true },
    Need { statement: "BACKUP DATABASE", when: When::FullRecovery, permission: "BACKUP DATABASE (db_owner: its creator owns it)", source: "https://learn.microsoft.com/sql/t-sql/statements/backup-transact-sql#permissions", held: create, blocks: true },
    Need { statement: "sp_delete_database_backuphistory", when: When::FullRecovery, permission: "sysadmin (run from msdb)", source: "https://learn.microsoft.com/sql/relational-databases/system-stored-procedures/sp-delete-database-backuphistory-transact-sql", held: sysadmin, blocks: false },
    Need { statement: "EVENT SESSION", when: When::Always, permission: "ALTER ANY EVENT SESSION (CREATE, ALTER, DROP EVENT SESSION … ON SERVER)", source: "https://learn.microsoft.com/sql/t-sql/statements/create-event-session-transact-sql", held: event_session, blocks: false },
    Need { statement: "xp_delete_files", when: When::Always, permission: "sysadmin (undocumented procedure, 2019+)", source: "none from Microsoft (sql-server-review-3.md, permissions table)", held: sysadmin, blocks: false },
    Need { statement: "sys.dm_os_wait_stats", when: When::Always, permission: "VIEW SERVER STATE (2022: VIEW SERVER PERFORMANCE STATE)", source: "https://learn.microsoft.com/sql/relational-databases/system-dynamic-management-views/sys-dm-os-wait-stats-transact-sql", held: server_state, blocks: false },
    Need { statement: "sys.dm_exec_session_wait_stats", when: When::Always, permission: "none for the login's own session (VIEW SERVER STATE for others')", source: "https://learn.microsoft.com/sql/relational-databases/system-dynamic-management-views/sys-dm-exec-session-wait-stats-transact-sql", held: anyone, blocks: false },
    Need { statement: "DBCC DROPCLEANBUFFERS", when: When::ColdCache, permission: "sysadmin", source: "https://learn.microsoft.com/sql/t-sql/database-console-commands/dbcc-dropcleanbuffers-transact-sql", held: sysadmin, blocks: true },
    Need { statement: "KILL", when: When::Stop, permission: "ALTER ANY CONNECTION", source: "https://learn.microsoft.com/sql/t-sql/language-elements/kill-transact-sql", held: connection, blocks: false },
    Need { statement: "sys.dm_exec_sessions", when: When::Stop, permission: "none for the login's own row (read when a connection opens); VIEW SERVER STATE to see another session (the KILL's guard, the wait after it)", source: "https://learn.microsoft.com/sql/relational-databases/system-dynamic-management-views/sys-dm-exec-sessions-transact-sql", held: server_state, blocks: false },
];

/// When `spec` (with the cold cache in `cold`) makes the run send statements of `when`.
pub fn applies(when: When, spec: &StorageSpec, cold: bool) -> bool {
    match when {
        When::Always | When::Stop | When::LockWait => true,
        When::IfiOff => spec.ifi == Some(false),
        When::IfiDeclared => spec.ifi.is_some(),
        When::ColdCache => cold,
        When::Tempdb => super::touches_tempdb(spec),
        When::FullRecovery => matches!(
            spec.recovery,
            Some(crate::model::config::Recovery::Full | crate::model::config::Recovery::BulkLogged)
        ),
    }
}

/// One instance-wide change a cell makes: the option behind it, a short name, and the sentence
/// the preflight's shared-server warning says once.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct InstanceWide {
    /// The option (`ifi = false`).
    pub option: &'static str,
    /// A short name for a cell's note.
    pub short: &'static str,
    /// What it does to everyone else on the server.
    pub long: &'static str,
}

/// Turning IFI off.
pub const IFI_OFF: InstanceWide = InstanceWide {
    option: "`ifi`",
    short: "IFI off for the whole instance (TF 1805, 1806) for each repetition",
    long: "`ifi = false` turns instant file initialization off for the whole instance for each \
           repetition of the cell (DBCC TRACEON(1805, 1806, -1)): every database's growths and \
           restores zero-fill meanwhile, and during its CREATE DATABASE every zero-fill of the \
           instance is written to the error log (3004, 3605)",
};

/// Emptying the buffer pool.
pub const COLD: InstanceWide = InstanceWide {
    option: "`cache`",
    short: "the whole buffer pool emptied before each window (CHECKPOINT; DBCC \
            DROPCLEANBUFFERS, sysadmin)",
    long: "a cold cache runs `CHECKPOINT; DBCC DROPCLEANBUFFERS` in the cell's database before \
           each window: DBCC DROPCLEANBUFFERS empties the whole instance's buffer pool, so every \
           database on the server reads from disk again, and it needs sysadmin (DBCC \
           DROPCLEANBUFFERS docs)",
};

/// Changing tempdb.
pub const TEMPDB: InstanceWide = InstanceWide {
    option: "`tempdb_files`, `tempdb_size`, `tempdb_growth`",
    short: "tempdb changed for each repetition",
    long: "tempdb options change tempdb, which every session of the instance uses: files added \
           and sizes raised persist across restarts until undone",
};

/// Proving `ifi = true` (only with the opt-in and sysadmin; unproven otherwise).
pub const IFI_PROOF: InstanceWide = InstanceWide {
    option: "`ifi`",
    short: "every zero-fill of the instance logged during CREATE DATABASE (TF 3004, 3605)",
    long: "`ifi = true` is proven by logging every zero-fill of the instance to the error log \
           during its CREATE DATABASE (DBCC TRACEON(3004, 3605, -1), off again right after)",
};

/// The instance-wide changes a cell of `spec` makes (finding B3): each needs
/// `DBBENCH_MSSQL_ALLOW_INSTANCE_CHANGES=1`, and the preflight lists them.
pub fn instance_changes(spec: &StorageSpec, cold: bool) -> Vec<InstanceWide> {
    let mut out = Vec::new();
    if spec.ifi == Some(false) {
        out.push(IFI_OFF);
    }
    if cold {
        out.push(COLD);
    }
    if super::touches_tempdb(spec) {
        out.push(TEMPDB);
    }
    out
}

/// Why a cell of `spec` cannot run with permissions `p`: one sentence per statement whose
/// documented permission the login is known to lack.
pub fn blockers(spec: &StorageSpec, cold: bool, p: &Permissions) -> Vec<String> {
    // Statements sent together that need the same permission are one sentence.
    let mut grouped: Vec<(String, Vec<&Need>)> = Vec::new();
    for need in TABLE
        .iter()
        .filter(|n| n.blocks && applies(n.when, spec, cold) && (n.held)(p) == Some(false))
    {
        match grouped
            .iter_mut()
            .find(|(permission, _)| permission == need.permission)
        {
            Some((_, needs)) => needs.push(need),
            None => grouped.push((need.permission.to_string(), vec![need])),
        }
    }
    grouped
        .into_iter()
        .map(|(permission, needs)| {
            let statements: Vec<String> = needs
                .iter()
                .map(|n| format!("`{}`", n.statement.trim_end_matches('(')))
                .collect();
            let sources: Vec<&str> = needs.iter().map(|n| n.source).collect();
            format!(
                "{} {} {permission} ({})",
                statements.join(", "),
                if needs.len() == 1 { "needs" } else { "need" },
                sources.join("; ")
            )
        })
        .collect()
}

/// The table as the Markdown `docs/sql-server.md` shows.
pub fn markdown() -> String {
    let mut out = String::from(
        "| Statement | Sent | Needs (documented) | Without it | Source |\n|---|---|---|---|---|\n",
    );
    for n in TABLE {
        let when = match n.when {
            When::Always => "every cell",
            When::IfiOff => "`ifi = false`",
            When::IfiDeclared => "`ifi` declared",
            When::ColdCache => "`cache = \"cold\"`, `DBBENCH_MSSQL_COLD_CACHE=1`",
            When::Tempdb => "tempdb options",
            When::Stop => "timeout, Ctrl-C",
            When::FullRecovery => "FULL, BULK_LOGGED",
            When::LockWait => "waiting for the server lock",
        };
        out.push_str(&format!(
            "| `{}` | {when} | {} | {} | {} |\n",
            n.statement.trim_end_matches('('),
            n.permission,
            match (n.blocks, n.when) {
                (true, _) => "the cell is refused",
                (false, When::Stop) => {
                    "the running statement goes on to its end; the body is refused at its next \
                     statement"
                }
                (false, When::LockWait) => "the wait does not name who holds the lock",
                (false, When::FullRecovery) => {
                    "msdb's backup history of the dropped database is left, and that is said"
                }
                (false, _) => "recorded as unavailable",
            },
            n.source
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Findings A1, A3, A5, B5: every `ifi = false` cell needs sysadmin (TF 3004/3605 even when
    /// IFI is already off); cold cache needs sysadmin; tempdb's undo needs sysadmin; a
    /// `CREATE DATABASE` grant in master is enough to create.
    #[test]
    fn blockers_follow_the_documented_permissions() {
        let dbcreator = Permissions {
            sysadmin: Some(false),
            create_any_database: Some(false),
            create_database_in_master: Some(true),
            alter_any_database: Some(true),
            ..Permissions::default()
        };
        assert!(blockers(&StorageSpec::DEFAULT, false, &dbcreator).is_empty());
        let ifi_off = StorageSpec {
            ifi: Some(false),
            ..StorageSpec::DEFAULT
        };
        let why = blockers(&ifi_off, false, &dbcreator);
        assert!(
            why[0].starts_with("`DBCC TRACEON`, `DBCC TRACEOFF` need sysadmin"),
            "{why:?}"
        );
        let why = blockers(&StorageSpec::DEFAULT, true, &dbcreator);
        assert!(why[0].contains("DBCC DROPCLEANBUFFERS"), "{why:?}");
        let tempdb = StorageSpec {
            tempdb_files: Some(4),
            ..StorageSpec::DEFAULT
        };
        let why = blockers(&tempdb, false, &dbcreator);
        assert!(why[0].contains("DBCC SHRINKFILE"), "{why:?}");
        let nobody = Permissions {
            sysadmin: Some(false),
            create_any_database: Some(false),
            create_database_in_master: Some(false),
            alter_any_database: Some(false),
            ..Permissions::default()
        };
        assert!(blockers(&StorageSpec::DEFAULT, false, &nobody)[0].contains("CREATE DATABASE"));
    }

    /// The permission table of `docs/sql-server.md` is this table.
    #[test]
    fn the_docs_show_this_table() {
        let docs = std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../docs/sql-server.md"
        ))
        .unwrap();
        assert!(
            docs.contains(&markdown()),
            "docs/sql-server.md must contain, verbatim:\n{}",
            markdown()
        );
    }
}
