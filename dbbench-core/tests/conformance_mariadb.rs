//! The conformance suite on a managed MariaDB instance (`support::conformance`); skipped
//! without MariaDB's programs unless `DBBENCH_REQUIRE_MARIADB=1`.

mod support;

support::backend_conformance!(mariadb, support::conformance::mariadb::Managed);
