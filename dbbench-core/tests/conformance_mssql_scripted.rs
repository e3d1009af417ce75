//! The conformance suite on the scripted SQL Server (`support::conformance`): recorded answers
//! of SQL Server 2022, behind the private `_mssql_scripted` feature.

mod support;

support::backend_conformance!(
    mssql_scripted,
    support::conformance::mssql::Scripted::default()
);
