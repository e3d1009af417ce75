//! The backends this build of dbbench has: one [`Registration`] each, in [`REGISTERED`], and the
//! fixture's statements of each one's dialect ([`doubling_insert`]). Adding a backend is its
//! folder under `engine/`, its Cargo feature, and its one line in `engine/mod.rs`'s `backends!`;
//! `docs/architecture.md` shows the steps.

use super::erased::ErasedBackend;
use super::plugin::Registration;
use super::profile::{FixtureSql, Profile};
use crate::model::config::BackendKind;
use crate::model::dialect::Dialect;
use crate::model::error::{Error, Result};

/// Every backend compiled in, each behind its feature, as `engine/mod.rs`'s `backends!` lists
/// them (one line per backend there).
pub const REGISTERED: &[&Registration] = super::REGISTERED;

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
pub async fn open(kind: BackendKind) -> Result<Box<dyn ErasedBackend>> {
    let registration = registration(kind)
        .ok_or_else(|| not_built(kind, &format!("DBBENCH_BACKEND={}", kind.keyword())))?;
    (registration.from_env)().await
}

/// The `credit` fixture's statements of the backend in this build that speaks `dialect`; a
/// dialect no backend of this build speaks panics, since a body's dialect is that of its
/// session, whose backend this build has.
fn fixture_sql(dialect: Dialect) -> &'static FixtureSql {
    REGISTERED
        .iter()
        .find(|r| r.profile.dialect == dialect)
        .map(|r| r.profile.fixture)
        .unwrap_or_else(|| {
            panic!(
                "no backend of this dbbench-core speaks the {dialect:?} dialect: enable the \
                 feature of the backend that does"
            )
        })
}

/// `CREATE TABLE charge` in `dialect`, as the backend that speaks it creates it.
///
/// # Panics
///
/// When no backend of this build speaks `dialect` (its feature is off).
pub fn credit_schema(dialect: Dialect) -> &'static str {
    fixture_sql(dialect).credit_schema
}

/// The article's doubling statement for loop `n` (1-based) in `dialect`: copies every row with
/// `charge_dt` moved `30 * n` days later.
///
/// # Panics
///
/// When no backend of this build speaks `dialect` (its feature is off).
pub fn doubling_insert(dialect: Dialect, loop_number: u32) -> String {
    (fixture_sql(dialect).doubling_insert)(loop_number)
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
    fn each_profile_lists_storage_options_and_gives_reasons_only_for_the_others() {
        for r in REGISTERED {
            let p = r.profile;
            assert!(
                BackendKind::from_keyword(p.kind.keyword()).is_some(),
                "{:?} is not in the name table",
                p.kind
            );
            for (i, key) in p.options.iter().enumerate() {
                assert!(key.is_storage(), "{:?}: {key} is no storage option", p.kind);
                assert!(!p.options[..i].contains(key), "{:?}: {key} twice", p.kind);
            }
            for (key, _) in p.refusals {
                assert!(
                    key.is_storage() && !p.options.contains(key),
                    "{:?}: a reason for refusing {key}, which it honours",
                    p.kind
                );
            }
        }
    }

    /// The storage options table of `docs/options.md`: its header's cells, then each row's.
    fn options_table() -> (Vec<String>, Vec<Vec<String>>) {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../docs/options.md");
        let doc = std::fs::read_to_string(path).unwrap();
        let section = doc
            .split("\n## ")
            .find(|s| s.starts_with("Storage options"))
            .unwrap();
        let cells = |line: &str| -> Vec<String> {
            let inner = line.trim().trim_start_matches('|').trim_end_matches('|');
            inner.split('|').map(|c| c.trim().to_string()).collect()
        };
        let mut lines = section.lines().filter(|l| l.starts_with('|'));
        let header = cells(lines.next().unwrap());
        let rows = lines.filter(|l| l.starts_with("| `")).map(cells).collect();
        (header, rows)
    }

    #[test]
    fn the_options_doc_says_refused_where_a_profile_leaves_an_option_out() {
        let (header, rows) = options_table();
        for r in REGISTERED {
            let p = r.profile;
            let column = header
                .iter()
                .position(|h| h.starts_with(p.kind.title()))
                .unwrap_or_else(|| panic!("no column headed {}", p.kind.title()));
            for row in &rows {
                assert_eq!(row.len(), header.len(), "{row:?}");
                let key = dbbench_options::Key::lookup(row[0].trim_matches('`')).unwrap();
                let cell = &row[column];
                if p.options.contains(&key) {
                    assert!(
                        !cell.starts_with("refused"),
                        "{:?} honours {key}: {cell}",
                        p.kind
                    );
                } else {
                    assert!(
                        cell.contains("refused"),
                        "{:?} refuses {key}: {cell}",
                        p.kind
                    );
                }
            }
        }
    }

    #[test]
    fn a_backend_left_out_names_its_feature() {
        let text = not_built(BackendKind::named("mssql"), "DBBENCH_BACKEND=mssql").to_string();
        assert!(
            text.starts_with("configuration error: DBBENCH_BACKEND=mssql: ")
                && text.contains("without the `mssql` backend")
                && text.contains("features = [\"mssql\"]"),
            "{text}"
        );
    }
}
