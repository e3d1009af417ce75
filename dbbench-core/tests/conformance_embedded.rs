//! The conformance suite on the embedded engine (`support::conformance`).

mod support;

support::backend_conformance!(embedded, support::conformance::embedded::Embedded);
