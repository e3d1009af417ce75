//! The conformance suite on an existing MariaDB server (`DBBENCH_MARIADB`'s kind: dbbench did
//! not make it), here an instance the target starts for each test; skipped without MariaDB's
//! programs unless `DBBENCH_REQUIRE_MARIADB=1`.

mod support;

support::backend_conformance!(
    mariadb_existing,
    support::conformance::mariadb::Existing::default()
);
