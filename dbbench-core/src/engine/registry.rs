//! The backends this build of dbbench has: one [`Registration`] each, in [`REGISTERED`]. Adding a
//! backend is its folder under `engine/`, its Cargo feature, and its entry here (with its
//! `pub mod` line in `engine/mod.rs`); `docs/architecture.md` shows the steps.

use super::plugin::{EngineBackend, Registration};
use super::profile::Profile;
use crate::model::config::BackendKind;
use crate::model::error::{Error, Result};

/// Every backend compiled in, each behind its feature: one line per backend.
pub const REGISTERED: &[&Registration] = &[
    #[cfg(feature = "embedded")]
    &super::embedded::REGISTRATION,
    #[cfg(feature = "mssql")]
    &super::mssql::REGISTRATION,
    #[cfg(feature = "postgres")]
    &super::postgres::REGISTRATION,
];

/// The registration of the backend `kind`, when this build has it.
pub fn registration(kind: BackendKind) -> Option<&'static Registration> {
    REGISTERED.iter().copied().find(|r| r.profile.kind == kind)
}

/// The profile of the backend `kind`, when this build has it.
pub fn profile(kind: BackendKind) -> Option<&'static Profile> {
    registration(kind).map(|r| r.profile)
}

/// Whether this build has the backend `kind` (its feature was on).
pub fn is_built(kind: BackendKind) -> bool {
    registration(kind).is_some()
}

/// Why `kind` cannot run in this build, for `what` asked for it (`DBBENCH_BACKEND=mssql`, a
/// command): the feature it needs and how to turn it on.
pub fn not_built(kind: BackendKind, what: &str) -> Error {
    let feature = kind.keyword();
    Error::Config(format!(
        "{what}: this dbbench-core was built without the `{feature}` backend: enable its feature, \
         `dbbench-core = {{ version = \"0.1\", features = [\"{feature}\"] }}` in Cargo.toml \
         (or `cargo test --features dbbench-core/{feature}`)"
    ))
}

/// Starts the backend `kind` from the environment.
pub async fn open(kind: BackendKind) -> Result<Box<dyn EngineBackend>> {
    let registration = registration(kind)
        .ok_or_else(|| not_built(kind, &format!("DBBENCH_BACKEND={}", kind.keyword())))?;
    (registration.from_env)().await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_registered_backend_is_found_by_its_kind_once() {
        for r in REGISTERED {
            let same: Vec<_> = REGISTERED
                .iter()
                .filter(|o| o.profile.kind == r.profile.kind)
                .collect();
            assert_eq!(same.len(), 1, "{:?} registered twice", r.profile.kind);
            assert!(std::ptr::eq(profile(r.profile.kind).unwrap(), r.profile));
        }
    }

    #[test]
    fn a_backend_left_out_names_its_feature() {
        let text = not_built(BackendKind::Mssql, "DBBENCH_BACKEND=mssql").to_string();
        assert!(
            text.starts_with("configuration error: DBBENCH_BACKEND=mssql: ")
                && text.contains("without the `mssql` backend")
                && text.contains("features = [\"mssql\"]"),
            "{text}"
        );
    }
}
