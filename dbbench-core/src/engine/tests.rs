//! The dispatcher's check, with a backend of the tests' own that honours few options and refuses
//! no value itself: what the dispatcher refuses is then its doing alone.

use super::plugin::{EngineBackend, EngineConnection, EngineDatabase, Pending};
use super::profile::{Control, DriverSql, FixtureSql, Profile};
use super::Backend;
use crate::model::config::{BackendKind, FixtureKind, Recovery, Size, StorageSpec};
use crate::model::dialect::Dialect;
use crate::model::error::{Error, Result};
use crate::model::evidence::BackendInfo;
use crate::model::evidence::Evidence;
use crate::model::load::{ErrorKind, Execution};
use crate::model::plan::DatabasePlan;
use crate::model::presentation::Presentation;
use crate::model::scale::Scale;
use crate::model::start::CacheState;
use crate::model::value::{Row, Value};
use crate::util::cancel::Cancel;
use crate::util::space::Shortfall;
use dbbench_options::Key;
use std::sync::Arc;

static FIXTURE: FixtureSql = FixtureSql {
    credit_schema: "",
    doubling_insert: |_| String::new(),
};

/// Honours `data_files` and `maxdop` only, with a reason of its own for refusing `recovery`.
static NARROW: Profile = Profile {
    kind: BackendKind::named("narrow"),
    dialect: Dialect::named("narrow"),
    fixture: &FIXTURE,
    execution: Execution::Threads,
    driver_sql: DriverSql {
        begin: "",
        commit: "",
        rollback: "",
        warm_up: "",
        control: Control::Batch,
    },
    lock_timeout: |_| String::new(),
    classify: |_| ErrorKind::Other,
    defaults_unbound_volumes: false,
    local_page_cache: false,
    presentation: Presentation::PLAIN,
    options: &[Key::DataFiles, Key::Maxdop],
    refusals: &[(Key::Recovery, "it keeps no log")],
};

/// A backend whose own check accepts everything.
struct Narrow;

/// The database `Narrow` never creates (it has none), and so never a connection either.
enum Nothing {}

impl EngineDatabase for Nothing {
    type Connection = Nothing;
    fn profile(&self) -> &'static Profile {
        match *self {}
    }
    fn cancel(&self) -> &Arc<Cancel> {
        match *self {}
    }
    async fn connect(&self) -> Result<Nothing> {
        match *self {}
    }
    async fn load_fixture(&self, _: &mut Nothing, _: FixtureKind, _: &Scale) -> Result<u64> {
        match *self {}
    }
    async fn open_window(&self, _: &mut Nothing, _: CacheState) -> Result<()> {
        match *self {}
    }
    async fn close_window(&self, _: &mut Nothing) -> Result<Evidence> {
        match *self {}
    }
    async fn drop_database(self) -> Result<()> {
        match self {}
    }
}

impl EngineConnection for Nothing {
    fn dialect(&self) -> Dialect {
        match *self {}
    }
    fn cancel(&self) -> Option<&Arc<Cancel>> {
        match *self {}
    }
    fn execute<'a>(&'a mut self, _: &'a str, _: &'a [Value]) -> Pending<'a, u64> {
        match *self {}
    }
    fn batch<'a>(&'a mut self, _: &'a str) -> Pending<'a, ()> {
        match *self {}
    }
    fn query<'a>(&'a mut self, _: &'a str, _: &'a [Value]) -> Pending<'a, Vec<Row>> {
        match *self {}
    }
}

impl EngineBackend for Narrow {
    type Database = Nothing;

    fn profile(&self) -> &'static Profile {
        &NARROW
    }

    fn info(&self) -> BackendInfo {
        BackendInfo::default()
    }

    fn check(&self, _: &StorageSpec) -> Result<()> {
        Ok(())
    }

    fn files_are_local(&self) -> bool {
        false
    }

    async fn space_shortfalls(&mut self, _: &DatabasePlan, _: u64) -> Vec<Shortfall> {
        Vec::new()
    }

    async fn create(&mut self, _: &DatabasePlan) -> Result<Nothing> {
        Err(Error::Config("the tests' backend creates nothing".into()))
    }
}

#[test]
fn an_option_the_profile_does_not_list_is_refused_by_the_dispatcher() {
    let backend = Backend::new(Narrow);
    let listed = StorageSpec {
        data_files: 4,
        maxdop: Some(2),
        ..StorageSpec::DEFAULT
    };
    backend.check(&listed).unwrap();
    // An option no backend's check knows of (as one added after the backend was written).
    let log = StorageSpec {
        log_size: Some(Size::new(1 << 20, "1MB")),
        ..listed
    };
    match backend.check(&log) {
        Err(Error::Unsupported {
            option,
            backend,
            reason,
        }) => {
            assert_eq!((option, backend), ("log_size", "narrow"));
            assert_eq!(
                reason,
                "this backend (narrow) has no equivalent of it; remove it, or limit the case to \
                 backends that have one with `backends = [...]`"
            );
        }
        other => panic!("expected the dispatcher's refusal, got {other:?}"),
    }
    // The profile's own reason, where it gives one.
    let recovery = StorageSpec {
        recovery: Some(Recovery::Full),
        ..listed
    };
    assert_eq!(
        backend.check(&recovery).unwrap_err().to_string(),
        "option `recovery` is not supported by the narrow backend: it keeps no log"
    );
}
