//! The conformance suite on a managed PostgreSQL cluster (`support::conformance`); skipped
//! without the server binaries unless `DBBENCH_REQUIRE_POSTGRES=1`.

mod support;

support::backend_conformance!(postgres, support::conformance::postgres::Managed);
