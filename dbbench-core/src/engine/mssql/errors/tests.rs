use super::*;

fn settings() -> ConnectSettings {
    ConnectSettings::parse("server=tcp:h,1433;user id=bench;password=Hunter2!").unwrap()
}

#[test]
fn names_the_missing_permission() {
    assert_eq!(
        permission_named("CREATE DATABASE permission denied in database 'master'.").as_deref(),
        Some("CREATE DATABASE")
    );
    assert_eq!(
        permission_named(
            "VIEW SERVER STATE permission was denied on object 'server', database 'master'."
        )
        .as_deref(),
        Some("VIEW SERVER STATE")
    );
    assert_eq!(
        permission_named("The SELECT permission was denied on the object 'x'.").as_deref(),
        Some("SELECT")
    );
    assert_eq!(
        permission_named("User 'bench' does not have permission to run DBCC TRACEON.").as_deref(),
        Some("membership in sysadmin (to run DBCC TRACEON)")
    );
}

#[test]
fn a_database_the_login_cannot_read_or_drop_says_who_can() {
    let no_access = advice(
        NO_ACCESS,
        "The server principal \"bench\" is not able to access the database \"dbbench_x\" \
             under the current security context.",
    );
    assert!(
        no_access.contains("no user in that database"),
        "{no_access}"
    );
    let drop = advice(
        3701,
        "Cannot drop the database 'dbbench_x', because it does not exist or you do not have \
             permission.",
    );
    assert!(drop.contains("CONTROL on it, ALTER ANY DATABASE"), "{drop}");
    assert_eq!(
        advice(5011, "User does not have permission to alter database"),
        drop
    );
}

#[test]
fn classifies_the_errors_users_meet() {
    assert_eq!(
        category(18456, "Login failed for user 'bench'."),
        Category::Login
    );
    assert_eq!(
        category(262, "CREATE DATABASE permission denied"),
        Category::Permission
    );
    assert_eq!(
        category(9002, "The transaction log for database 'x' is full"),
        Category::DiskFull
    );
    assert_eq!(
        category(1105, "Could not allocate space"),
        Category::DiskFull
    );
    assert_eq!(
        category(208, "Invalid object name 'sys.dm_db_log_info'."),
        Category::Unsupported
    );
    assert_eq!(
        category(208, "Invalid object name 'dbo.charge'."),
        Category::Other
    );
    assert_eq!(
        category(40508, "USE statement is not supported"),
        Category::Unsupported
    );
    assert_eq!(
        category(5123, "CREATE FILE encountered operating system error 3"),
        Category::FilePlacement
    );
}

#[test]
fn recorded_error_numbers_have_their_documented_meaning() {
    // Recorded messages of SQL Server 2022 for each number.
    let invalid = category(
        25623,
        "The event name, \"sqlserver.no_such_event\", is invalid, or the object could not be found",
    );
    assert_eq!(invalid, Category::InvalidName);
    assert!(advice(25623, "").contains("invalid or missing"));
    assert!(
        !advice(25623, "").contains("lacks"),
        "25623 is not a permission"
    );
    assert_eq!(
        category(25704, "The event session has already been stopped."),
        Category::AlreadyStopped
    );
    assert!(!advice(25704, "").contains("does not support"));
    assert_eq!(
        category(1222, "Lock request time out period exceeded."),
        Category::LockTimeout
    );
    for code in [40501, 40613] {
        assert_eq!(category(code, ""), Category::Transient);
        assert!(is_transient(code) && advice(code, "").contains("retry"));
    }
    assert!(!is_transient(1205) && !is_transient(262));
}

#[test]
fn server_errors_carry_number_message_and_advice_without_the_password() {
    let s = settings();
    let err = server(
        &s,
        18456,
        "Login failed for user 'bench'. Hunter2! (severity 14, state 1)",
        "logging in to SQL Server at h:1433",
    );
    match server_error(&err) {
        Some((code, message)) => {
            assert_eq!(code, 18456);
            assert!(
                message.contains("Login failed for user 'bench'"),
                "{message}"
            );
            assert!(
                message.contains("check the user id and password"),
                "{message}"
            );
            assert!(!message.contains("Hunter2!"), "{message}");
        }
        None => panic!("expected a server error, got {err:?}"),
    }
    let text = server(
        &s,
        300,
        "VIEW SERVER STATE permission was denied on object 'server'.",
        "reading waits",
    )
    .to_string();
    assert!(
        text.starts_with("SQL Server error 300: reading waits: VIEW SERVER STATE"),
        "{text}"
    );
    assert!(
        text.contains("lacks the VIEW SERVER STATE permission"),
        "{text}"
    );
    assert_eq!(code_of(&server(&s, 1105, "full", "x")), Some(1105));
}

#[test]
fn a_server_error_names_the_server_that_raised_it() {
    let error = |code| raised(code, "creating the database: …".into());
    assert_eq!(
        error(1105).to_string(),
        "SQL Server error 1105: creating the database: …"
    );
    assert_eq!(
        error(BABELFISH_ERROR).to_string(),
        "Babelfish error 33557097: creating the database: …"
    );
    assert_eq!(
        server_error(&error(BABELFISH_ERROR)),
        Some((BABELFISH_ERROR, "creating the database: …"))
    );
}

#[test]
fn another_systems_error_is_no_server_error() {
    let other = Error::Database {
        system: "Other",
        code: Some("1205".into()),
        message: "deadlock".into(),
        source: None,
    };
    assert_eq!(server_error(&other), None);
    assert_eq!(code_of(&Error::msg("1205")), None);
}

#[test]
fn driver_errors_are_scrubbed() {
    let s = settings();
    let err = map(
        &s,
        tiberius::error::Error::Tls("certificate for Hunter2! rejected".into()),
        "connecting",
    )
    .to_string();
    assert!(
        err.contains("TrustServerCertificate=true") && !err.contains("Hunter2!"),
        "{err}"
    );
    let timeout = map(
        &s,
        tiberius::error::Error::Io {
            kind: std::io::ErrorKind::TimedOut,
            message: "deadline".into(),
        },
        "growing the log",
    )
    .to_string();
    assert!(timeout.contains("Command Timeout"), "{timeout}");
}
