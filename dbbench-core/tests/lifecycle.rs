//! The embedded engine refuses, by name, an option it cannot honour: the cell is skipped and says
//! which backends have it. (Create, fixture, body, evidence and teardown, also after a failing,
//! panicking or timed-out body, are the conformance suite's: `conformance_embedded.rs`.)

mod support;

use dbbench_core::__internals::Volumes;
use dbbench_core::__private::{BodyFuture, RunSpec, StorageSpec};
use dbbench_core::results::CellStatus;
use dbbench_core::{Scale, Session};
use support::{cell, run};

fn nothing<'a>(_db: &'a mut Session) -> BodyFuture<'a> {
    Box::pin(async move { Ok(()) })
}

support::benchmark! {
    static TEMPDB = nothing,
    title: "",
    run: RunSpec::DEFAULT,
    cells: [cell(
        "only",
        StorageSpec {
            tempdb_files: Some(4),
            ..StorageSpec::DEFAULT
        }
    )],
}

#[test]
fn an_option_the_backend_cannot_honour_skips_the_cell_by_name() {
    let ctx = support::context(
        "lifecycle-tempdb",
        Scale::parse("0.002").unwrap(),
        Volumes::default(),
    );
    let result = run(&TEMPDB, &ctx);
    match &result.cells[0].status {
        CellStatus::Skipped(e) => {
            assert!(
                e.contains("option `tempdb_files` is not supported by the embedded backend")
                    && e.contains("backends = [\"mssql\"]"),
                "{e}"
            )
        }
        other => panic!("expected a skip with the reason, got {other:?}"),
    }
    assert!(result.cells[0].runs.is_empty(), "nothing ran");
}
