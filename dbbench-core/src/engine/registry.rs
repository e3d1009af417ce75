//! The backends this build of dbbench has: one [`Registration`] each, in [`REGISTERED`]. Adding a
//! backend is its folder under `engine/`, its Cargo feature, and its entry here (with its
//! `pub mod` line in `engine/mod.rs`); `docs/architecture.md` shows the steps.

use super::plugin::{EngineBackend, Registration};
use super::profile::Profile;
use crate::model::config::BackendKind;
use crate::model::error::{Error, Result};

/// Every backend compiled in, each behind its feature.
pub const REGISTERED: &[&Registration] = &[
    &super::embedded::REGISTRATION,
    &super::mssql::REGISTRATION,
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

/// Why `kind` cannot run in this build: the feature it needs and how to turn it on.
pub fn not_built(kind: BackendKind) -> Error {
    let feature = kind.keyword();
    Error::Config(format!(
        "DBBENCH_BACKEND={feature}: this build of dbbench-core does not have the `{feature}` \
         backend; enable its feature: dbbench-core = {{ version = \"0.1\", features = [\"{feature}\"] }}"
    ))
}

/// Starts the backend `kind` from the environment.
pub async fn open(kind: BackendKind) -> Result<Box<dyn EngineBackend>> {
    let registration = registration(kind).ok_or_else(|| not_built(kind))?;
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
        let text = not_built(BackendKind::Mssql).to_string();
        assert!(
            text.contains("`mssql`") && text.contains("features = [\"mssql\"]"),
            "{text}"
        );
    }
}
