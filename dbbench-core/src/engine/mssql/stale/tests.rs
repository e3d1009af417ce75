//! The sweep against recorded server behaviour: which databases it reads, which it drops, every
//! statement it sends, and the line each database gets.

use super::*;
use crate::engine::mssql::double::{Api, Reply, ScriptedServer};
use crate::engine::mssql::evidence::growth_events::{drop_sql, file_name_sql, session_name};
use crate::engine::mssql::marker::{marker_text, read_property_sql, read_table_sql};
use crate::engine::mssql::provision::exists_sql;
use crate::engine::mssql::teardown::{plain_drop_sql, single_user_and_drop_sql};
use crate::engine::mssql::ConnectSettings;
use crate::model::value::Value;

const PASSWORD: &str = "St4le!Secret";

fn connection(server: &ScriptedServer) -> MssqlConnection {
    let ado = format!("server=tcp:sql2022,1433;user id=bench;password={PASSWORD}");
    MssqlConnection::scripted(
        server.clone(),
        ConnectSettings::scripted(&ado, server).unwrap(),
    )
}

/// A PID no process can have: one above the kernel's largest.
fn no_such_pid() -> u32 {
    std::fs::read_to_string("/proc/sys/kernel/pid_max")
        .ok()
        .and_then(|m| m.trim().parse::<u32>().ok())
        .unwrap_or(4_194_304)
        + 1
}

/// The listing as SQL Server answers it.
fn listing(databases: &[(&str, &str)]) -> Reply {
    Reply::rows(
        &["name", "state_desc"],
        databases
            .iter()
            .map(|(n, s)| vec![Value::Text(n.to_string()), Value::Text(s.to_string())])
            .collect(),
    )
}

fn marker_row(text: &str) -> Reply {
    Reply::rows(&["marker"], vec![vec![Value::Text(text.to_string())]])
}

/// What the server received, in order, through which connection (logins are the database's
/// name through `Api::Login`).
fn sent(server: &ScriptedServer) -> Vec<(Api, String, String)> {
    server
        .calls()
        .into_iter()
        .map(|c| (c.api, c.database, c.sql))
        .collect()
}

/// The statements that drop `db`: the growth session's clean-up, the single-user drop, the check.
fn drop_statements(db: &str) -> Vec<String> {
    let session = session_name(db);
    vec![
        file_name_sql(&session),
        drop_sql(&session),
        single_user_and_drop_sql(db),
        exists_sql(db),
    ]
}

/// A server with one leftover database of each kind the sweep tells apart: its owner gone
/// (a dead PID, a reused PID, an old marker), alive (this process, an old marker of it), on
/// another host, unmarked, unreadable, not online, with an unreadable marker, and not dbbench's
/// by case. `me` is this process, `gone` a PID no process has.
fn server_with_leftovers(me: &Owner, gone: u32) -> ScriptedServer {
    let host = me.host.clone();
    let owner = |pid: u32, start: Option<u64>| Owner {
        host: host.clone(),
        machine: None,
        pid,
        start,
        boot: None,
        pid_ns: None,
    };
    let dead = marker_text(&host, 1, &owner(gone, Some(1)));
    // This process's PID with another start: the PID was reused, the owner is gone.
    let reused = marker_text(&host, 1, &owner(me.pid, me.start.map(|s| s + 1)));
    let old_dead = format!("created by dbbench 0.1.0 on {host} (pid {gone}, started 1780000000)");
    let old_live = format!(
        "created by dbbench 0.1.0 on {host} (pid {}, started 1780000000)",
        me.pid
    );
    let other_host = Owner {
        host: format!("{host}-other"),
        ..owner(gone, Some(1))
    };
    let server = ScriptedServer::new();
    server
        .on(
            "FROM sys.databases",
            listing(&[
                ("dbbench_dead_r0_1", "ONLINE"),
                ("dbbench_reused_r0_2", "ONLINE"),
                ("dbbench_old_r0_3", "ONLINE"),
                ("dbbench_live_r0_4", "ONLINE"),
                ("dbbench_oldlive_r0_5", "ONLINE"),
                ("dbbench_elsewhere_r0_6", "ONLINE"),
                ("dbbench_unmarked_r0_7", "ONLINE"),
                ("dbbench_denied_r0_8", "ONLINE"),
                ("dbbench_restoring_r0_9", "RESTORING"),
                ("dbbench_odd_r0_10", "ONLINE"),
                ("DBBENCH_UPPER", "ONLINE"),
            ]),
        )
        .on_in(
            "dbbench_dead_r0_1",
            "sys.extended_properties",
            marker_row(&dead),
        )
        // The reused PID's marker is in the table (a server that kept no property there).
        .on_in(
            "dbbench_reused_r0_2",
            "__dbbench_owner",
            marker_row(&reused),
        )
        .on_in(
            "dbbench_old_r0_3",
            "sys.extended_properties",
            marker_row(&old_dead),
        )
        .on_in(
            "dbbench_live_r0_4",
            "sys.extended_properties",
            marker_row(&marker_text(&host, 1, me)),
        )
        .on_in(
            "dbbench_oldlive_r0_5",
            "sys.extended_properties",
            marker_row(&old_live),
        )
        .on_in(
            "dbbench_elsewhere_r0_6",
            "sys.extended_properties",
            marker_row(&marker_text("elsewhere", 1, &other_host)),
        )
        .on_in(
            "dbbench_unmarked_r0_7",
            "__dbbench_owner",
            Reply::error(
                208,
                "Invalid object name 'dbbench_unmarked_r0_7.dbo.__dbbench_owner'.",
            ),
        )
        // A login without a user in the database cannot open it (SQL Server's 4060).
        .on(
            "dbbench_denied_r0_8",
            Reply::error(
                4060,
                "Cannot open database \"dbbench_denied_r0_8\" requested by the login. The login \
                 failed.",
            ),
        )
        .on_in(
            "dbbench_odd_r0_10",
            "sys.extended_properties",
            marker_row("created by dbbench by hand"),
        );
    server
}

/// What the sweep of [`server_with_leftovers`] sends, in order: each read is a login to the
/// database and the reads inside it; the drop is from master.
fn expected_sweep() -> Vec<(Api, String, String)> {
    let master = |sql: String| (Api::Batch, "master".to_string(), sql);
    let login = |db: &str| (Api::Login, "master".to_string(), db.to_string());
    let property = |db: &str| vec![login(db), (Api::Batch, db.to_string(), read_property_sql())];
    let both = |db: &str| {
        let mut calls = property(db);
        calls.push((Api::Batch, db.to_string(), read_table_sql()));
        calls
    };
    let drop = |db: &str| {
        drop_statements(db)
            .into_iter()
            .map(master)
            .collect::<Vec<_>>()
    };
    let mut expected = vec![master(candidates_sql())];
    // Read, judged gone, read again right before the drop, dropped.
    for db in [
        "dbbench_dead_r0_1",
        "dbbench_reused_r0_2",
        "dbbench_old_r0_3",
    ] {
        let read = if db == "dbbench_reused_r0_2" {
            both(db)
        } else {
            property(db)
        };
        expected.extend(read.clone());
        expected.extend(read);
        expected.extend(drop(db));
    }
    // Read and left alone.
    for db in [
        "dbbench_live_r0_4",
        "dbbench_oldlive_r0_5",
        "dbbench_elsewhere_r0_6",
    ] {
        expected.extend(property(db));
    }
    expected.extend(both("dbbench_unmarked_r0_7"));
    // The login to the database fails: nothing inside is tried.
    expected.push(login("dbbench_denied_r0_8"));
    expected.extend(property("dbbench_odd_r0_10"));
    // Then the growth sessions whose database is gone (none here).
    expected.push(master(growth_sessions::listing_sql()));
    expected
}

#[tokio::test]
async fn drops_only_what_this_host_left_and_whose_owner_is_gone() {
    let me = Owner::this();
    let host = me.host.clone();
    let gone = no_such_pid();
    let server = server_with_leftovers(&me, gone);
    let lines = sweep(&mut connection(&server), &me, &Product::SqlServer).await;
    assert_eq!(sent(&server), expected_sweep());

    let line = |db: &str| {
        lines
            .iter()
            .find(|l| l.contains(&format!(" {db}")))
            .unwrap_or_else(|| panic!("no line for {db}: {lines:#?}"))
            .as_str()
    };
    assert_eq!(
        lines.len(),
        10,
        "one line per database, none for DBBENCH_UPPER: {lines:#?}"
    );
    assert_eq!(
        line("dbbench_dead_r0_1"),
        format!(
            "mssql: removed database dbbench_dead_r0_1 left by pid {gone} on {host}, started at \
             tick 1, which is gone"
        )
    );
    assert!(line("dbbench_reused_r0_2").starts_with("mssql: removed database"));
    assert_eq!(
        line("dbbench_old_r0_3"),
        format!(
            "mssql: removed database dbbench_old_r0_3 left by pid {gone} on {host}, which is gone"
        )
    );
    assert!(line("dbbench_live_r0_4").ends_with("still runs"));
    assert!(line("dbbench_oldlive_r0_5").ends_with("still runs"));
    assert!(line("dbbench_elsewhere_r0_6").contains("ran on another host"));
    assert!(line("dbbench_unmarked_r0_7").contains("has no dbbench_owner marker"));
    let denied = line("dbbench_denied_r0_8");
    assert!(
        denied.contains(
            "left database dbbench_denied_r0_8: its marker could not be read: SQL Server error 4060"
        ) && denied.contains("no user in that database"),
        "{denied}"
    );
    assert!(line("dbbench_restoring_r0_9").contains("it is RESTORING, not ONLINE"));
    assert!(line("dbbench_odd_r0_10").contains("names no owner dbbench can read"));
    assert!(lines.iter().all(|l| !l.contains(PASSWORD)));
}

#[tokio::test]
async fn a_drop_the_login_may_not_do_is_reported_and_the_sweep_goes_on() {
    let me = Owner::this();
    let dead = |pid| {
        marker_text(
            &me.host,
            1,
            &Owner {
                pid,
                start: Some(1),
                ..me.clone()
            },
        )
    };
    let server = ScriptedServer::new();
    server
        .on(
            "FROM sys.databases",
            listing(&[("dbbench_a_r0_1", "ONLINE"), ("dbbench_b_r0_1", "ONLINE")]),
        )
        .on_in(
            "dbbench_a_r0_1",
            "sys.extended_properties",
            marker_row(&dead(no_such_pid())),
        )
        .on_in(
            "dbbench_b_r0_1",
            "sys.extended_properties",
            marker_row(&dead(no_such_pid() + 1)),
        )
        // Another login created `a`: this one may neither alter nor drop it, and it stays.
        .on(
            "ALTER DATABASE [dbbench_a_r0_1]",
            Reply::error(
                5011,
                "User does not have permission to alter database 'dbbench_a_r0_1', the database \
                 does not exist, or the database is not in a state that allows access checks.",
            ),
        )
        .on(
            &plain_drop_sql("dbbench_a_r0_1"),
            Reply::error(
                3701,
                "Cannot drop the database 'dbbench_a_r0_1', because it does not exist or you do \
                 not have permission.",
            ),
        )
        .on(
            &exists_sql("dbbench_a_r0_1"),
            Reply::rows(&["database_id"], vec![vec![Value::Int(9)]]),
        );
    let lines = sweep(&mut connection(&server), &me, &Product::SqlServer).await;
    assert_eq!(lines.len(), 2, "{lines:#?}");
    assert!(
        lines[0].starts_with("mssql: could not remove database dbbench_a_r0_1 left by pid")
            && lines[0].contains("SQL Server error 5011")
            && lines[0].contains("SQL Server error 3701")
            && lines[0].contains("CONTROL on it, ALTER ANY DATABASE"),
        "{}",
        lines[0]
    );
    assert!(
        lines[1].starts_with("mssql: removed database dbbench_b_r0_1"),
        "{}",
        lines[1]
    );
    assert_eq!(server.calls_with("DROP DATABASE [dbbench_b_r0_1]").len(), 1);
}

#[tokio::test]
async fn a_marker_that_changed_before_the_drop_is_left() {
    let me = Owner::this();
    let dead = marker_text(
        &me.host,
        1,
        &Owner {
            pid: no_such_pid(),
            start: Some(1),
            ..me.clone()
        },
    );
    let server = ScriptedServer::new();
    server
        .on(
            "FROM sys.databases",
            listing(&[("dbbench_a_r0_1", "ONLINE")]),
        )
        .on_in(
            "dbbench_a_r0_1",
            "sys.extended_properties",
            marker_row(&marker_text(&me.host, 1, &me)),
        )
        // The first read sees the dead owner; by the re-read a live run has claimed the name.
        .times_in(
            "dbbench_a_r0_1",
            "sys.extended_properties",
            1,
            marker_row(&dead),
        );
    let lines = sweep(&mut connection(&server), &me, &Product::SqlServer).await;
    assert!(
        lines[0].starts_with(
            "mssql: left database dbbench_a_r0_1: its ownership marker changed to `created by"
        ),
        "{lines:?}"
    );
    assert!(server.calls_with("DROP DATABASE").is_empty());
    assert!(server.calls_with("ALTER DATABASE").is_empty());
}

#[tokio::test]
async fn without_a_start_time_or_a_listing_nothing_is_touched() {
    let server = ScriptedServer::new();
    let blind = Owner {
        start: None,
        ..Owner::this()
    };
    let lines = sweep(&mut connection(&server), &blind, &Product::SqlServer).await;
    assert!(
        lines[0].contains("cannot tell whether their owners still run"),
        "{lines:?}"
    );
    assert!(server.calls().is_empty());

    server.on(
        "FROM sys.databases",
        Reply::error(208, "Invalid object name 'sys.databases'."),
    );
    let lines = sweep(
        &mut connection(&server),
        &Owner::this(),
        &Product::SqlServer,
    )
    .await;
    assert_eq!(lines.len(), 1);
    assert!(
        lines[0].starts_with(
            "mssql: could not list databases to look for stale ones: SQL Server error 208"
        ),
        "{lines:?}"
    );
    assert_eq!(server.calls().len(), 1);
}

#[test]
fn the_listing_escapes_the_prefix_and_skips_snapshots() {
    assert_eq!(
        candidates_sql(),
        "SELECT name, state_desc FROM sys.databases WHERE name LIKE N'dbbench[_]%' AND \
         source_database_id IS NULL ORDER BY name;"
    );
}

/// Finding B6 of the third review: a container that shares this host's name (`--network host`)
/// but has a PID namespace of its own left a database whose owner PID this process cannot see.
/// Its marker names the other namespace, so the sweep leaves it instead of dropping a live
/// run's database.
#[tokio::test]
async fn a_marker_of_another_pid_namespace_is_left() {
    let me = Owner::this();
    let here = crate::engine::mssql::whose::Whose::this();
    let Some(ns) = here.pid_ns else {
        return; // No /proc/self/ns/pid here: nothing to compare (the sweep leaves it alike).
    };
    let neighbour = Owner {
        host: me.host.clone(),
        machine: None,
        pid: no_such_pid(),
        start: Some(1),
        boot: None,
        pid_ns: None,
    };
    let marker = format!(
        "{} owner_pidns={}",
        marker_text(&me.host, 1, &neighbour),
        ns + 1
    );
    let server = ScriptedServer::new();
    server
        .on(
            "FROM sys.databases",
            listing(&[("dbbench_neighbour_r0_11", "ONLINE")]),
        )
        .on_in(
            "dbbench_neighbour_r0_11",
            "sys.extended_properties",
            marker_row(&marker),
        );
    let lines = sweep(&mut connection(&server), &me, &Product::SqlServer).await;
    assert!(
        lines[0].contains("left database dbbench_neighbour_r0_11")
            && lines[0].contains("another host"),
        "{lines:?}"
    );
    assert!(server.calls_with("DROP DATABASE").is_empty());
}

/// The stale sweep's deadline: a server that stops answering in the middle of the sweep (here,
/// inside the second database's marker read) ends it within the bound, with the first
/// database's line and one sentence for the rest; nothing more is sent on the connection.
#[tokio::test]
async fn a_server_that_stops_answering_ends_the_sweep_within_its_bound() {
    let me = Owner::this();
    let dead = marker_text(
        &me.host,
        1,
        &Owner {
            pid: no_such_pid(),
            start: Some(1),
            ..me.clone()
        },
    );
    let server = ScriptedServer::new();
    server
        .on(
            "FROM sys.databases",
            listing(&[("dbbench_a_r0_1", "ONLINE"), ("dbbench_b_r0_1", "ONLINE")]),
        )
        .on_in(
            "dbbench_a_r0_1",
            "sys.extended_properties",
            marker_row(&dead),
        )
        .on_in("dbbench_b_r0_1", "sys.extended_properties", Reply::Silent);
    let limit = std::time::Duration::from_millis(300);
    let started = std::time::Instant::now();
    // A sweep that does not give up would wait for ever: the test's own bound ends it.
    let lines = tokio::time::timeout(
        std::time::Duration::from_secs(10),
        sweep_within(&mut connection(&server), &me, &Product::SqlServer, limit),
    )
    .await
    .expect("the sweep gives up within its bound");
    assert!(started.elapsed() < std::time::Duration::from_secs(5));
    assert_eq!(lines.len(), 2, "{lines:#?}");
    assert!(lines[0].starts_with("mssql: removed database dbbench_a_r0_1"));
    assert_eq!(
        lines[1],
        "mssql: stopped looking for stale dbbench databases and sessions: the server stopped \
         answering: no reply within 300 ms while looking at database dbbench_b_r0_1 \
         (DBBENCH_DEADLINE_TEARDOWN sets this limit); the next run looks again"
    );
    assert!(server
        .calls_with("server_event_sessions WHERE name LIKE")
        .is_empty());

    // A listing that never comes: one sentence, and nothing else is sent.
    let silent = ScriptedServer::new();
    silent.on("FROM sys.databases", Reply::Silent);
    let lines = tokio::time::timeout(
        std::time::Duration::from_secs(10),
        sweep_within(&mut connection(&silent), &me, &Product::SqlServer, limit),
    )
    .await
    .expect("the sweep gives up within its bound");
    assert_eq!(lines.len(), 1, "{lines:#?}");
    assert!(lines[0].contains("no reply within 300 ms while listing dbbench's databases"));
    assert_eq!(silent.calls().len(), 1);
}
