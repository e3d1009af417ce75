//! One invocation of dbbench as both front ends run it: open the work dir's results store, start
//! (or join, under nextest) an invocation, run a benchmark with the store recording every
//! repetition as it finishes, mark how it ended, and read back the benchmark's current results,
//! which the outputs are then made from.

use crate::engine::Backend;
use crate::model::error::{Error, Result};
use crate::model::results::{BenchmarkResult, CellStatus};
use crate::output::store::{InvocationStart, InvocationStatus, Store};
use crate::run::context::RunContext;
use crate::run::runner::run_recorded;
use crate::run::spec::BenchmarkSpec;

/// An invocation in progress.
#[derive(Debug)]
pub struct Invocation {
    /// The work dir's store.
    pub store: Store,
    /// The invocation's id in it.
    pub id: i64,
    /// Continuing an interrupted invocation (`--resume`, `DBBENCH_RESUME=1`): repetitions it
    /// kept are not run again.
    pub resuming: bool,
}

/// What running one benchmark produced.
#[derive(Debug, Clone)]
pub struct Ran {
    /// The cells this run ran, as they came out.
    pub fresh: BenchmarkResult,
    /// The benchmark's current results in the store: every cell, the ones not run now from
    /// earlier invocations.
    pub current: BenchmarkResult,
}

impl Invocation {
    /// Opens the store of `ctx`'s work dir and starts an invocation. Processes of one nextest run
    /// (`NEXTEST_RUN_ID`) share one.
    pub fn start(ctx: &RunContext, backend: &Backend, manifest_dir: &str) -> Result<Invocation> {
        let store = Store::open(&ctx.work_dir)?;
        let id = store.begin(&InvocationStart {
            command_line: std::env::args().collect::<Vec<_>>().join(" "),
            git_commit: crate::model::host::git_commit(std::path::Path::new(manifest_dir)),
            host: crate::model::host::hostname(),
            backend: backend.kind().keyword().to_string(),
            scale: ctx.scale.name.clone(),
            run_key: std::env::var("NEXTEST_RUN_ID")
                .ok()
                .filter(|k| !k.is_empty()),
        })?;
        Ok(Invocation {
            store,
            id,
            resuming: false,
        })
    }

    /// Continues the newest interrupted invocation of the store in `work_dir`: it is marked
    /// running again, and its benchmarks run only the repetitions it did not finish.
    pub fn resume_interrupted(work_dir: &std::path::Path) -> Result<Invocation> {
        let store = Store::open(work_dir)?;
        let id = store.newest_interrupted()?.ok_or_else(|| {
            Error::Config(format!(
                "nothing to resume: `{}` has no interrupted invocation",
                store.path().display()
            ))
        })?;
        store.reopen(id)?;
        crate::util::console::say(&format!(
            "dbbench › resuming interrupted invocation {id} of {}",
            store.path().display()
        ));
        Ok(Invocation {
            store,
            id,
            resuming: true,
        })
    }

    /// Continues invocation `id` of the store in `work_dir` (a later benchmark of the same
    /// process).
    pub fn resume(work_dir: &std::path::Path, id: i64) -> Result<Invocation> {
        Ok(Invocation {
            store: Store::open(work_dir)?,
            id,
            resuming: false,
        })
    }

    /// Runs the `selected` cells of `bench`, recording them, and returns them with the
    /// benchmark's current results. A benchmark that could not run marks the invocation failed.
    pub async fn run(
        &self,
        bench: &'static BenchmarkSpec,
        selected: &[&str],
        ctx: &RunContext,
        backend: &mut Backend,
    ) -> Result<Ran> {
        let outcome = {
            let store_recorder = if self.resuming {
                self.store.resuming_recorder(self.id)
            } else {
                self.store.recorder(self.id)
            };
            let mut recorder = super::console::Echo::new(store_recorder);
            run_recorded(
                bench,
                Some(selected),
                ctx,
                backend,
                &mut recorder,
                &crate::analysis::precision::IntervalJudge::default(),
            )
            .await
        };
        let fresh = match outcome {
            Ok(fresh) => fresh,
            Err(Error::Interrupted { signal, detail }) => {
                self.store
                    .finish(self.id, InvocationStatus::Interrupted, Some(&detail))?;
                return Err(Error::Interrupted {
                    signal,
                    detail: format!(
                        "{detail} ({}, invocation {} in {}); continue it with `run --resume` \
                         (suite binary, `dbbench`) or `DBBENCH_RESUME=1 cargo test`",
                        bench.test_path(),
                        self.id,
                        self.store.path().display()
                    ),
                });
            }
            Err(e) => {
                self.store
                    .finish(self.id, InvocationStatus::Failed, Some(&e.to_string()))?;
                return Err(e);
            }
        };
        let failed = fresh
            .cells
            .iter()
            .any(|c| matches!(c.status, CellStatus::Failed(_)));
        let status = if failed {
            InvocationStatus::Failed
        } else {
            InvocationStatus::Completed
        };
        self.store.finish(self.id, status, None)?;
        let mut fresh = fresh;
        let mut current = self
            .store
            .current(&bench.test_path(), &fresh.host.hostname)?
            .unwrap_or_else(|| fresh.clone());
        let key = crate::output::earlier::Key::of(&current);
        current.earlier = crate::output::earlier::earlier_runs(&self.store, self.id, &key)?;
        fresh.earlier.clone_from(&current.earlier);
        Ok(Ran { fresh, current })
    }
}
