//! # Do multiple data files make a difference?
//!
//! Reproduces Paul Randal, *Benchmarking: do multiple data files make a difference?* (SQLskills,
//! 2010; a copy is in `shared/seeds/multiple-data-files.md`).
//!
//! **What the article measured.** A 160 GB database as 1, 2, 4, 8 or 16 equal data files, the log
//! pre-sized to 8 GB so it never grows, and 16 connections inserting 100/16 GB each; five runs per
//! configuration, averaged. Performance rose up to eight files and fell again at sixteen; the best
//! case was about 6% faster than one file.
//!
//! **What this suite measures.** The same matrix (`data_files = [1, 2, 4, 8, 16]`, cells
//! `data_files_1` … `data_files_16`), five repetitions each in interleaved order, 16 connections
//! inserting equal shares of 4.1 KB rows through dbbench's driver; the report's chart shows mean
//! elapsed time per file count with 95% intervals, like the article's.
//!
//! **Scales.** Sizes scale together (`scale_storage`): at `full` 160 GB of data files, an 8 GB log
//! and 100 GB inserted; at the default scale 1/256 (640 MB of files, a 32 MB log, 400 MB inserted:
//! 51,200 rows); at `smoke` 1/16384 (10 MB, 512 KB, 800 rows, 4 connections).
//!
//! **What differs on the embedded engine.** The storage layer spreads extents over the files by
//! proportional fill as SQL Server does, but SQLite has a single writer and no allocation-page
//! contention (the PFS/GAM/SGAM latches that multiple files relieve on SQL Server), so on one disk
//! the embedded engine can only show the cost or benefit of the file layout itself. Bind a volume
//! list with `data_on` and `DBBENCH_VOLUMES` to spread the files over devices (the article's
//! second test).
//!
//! **On PostgreSQL** the question does not apply: every table lives in files of its own, with no
//! filegroup of several files to spread it over. `#[not_on]` says so in one line instead of
//! running (or skipping) any cell.
//!
//! **How to read the results.** Compare each file count with `data_files_1`; the verdict column
//! says whether the difference is larger than the run-to-run noise.

use crate::big_rows::{populate, rows_for, workers_at};
use dbbench_core::{db_bench, Result, Session};

/// Bytes inserted at `full` scale: 100 GB.
const FULL_INSERT_BYTES: u64 = 100 << 30;

/// Multiple data files: 16 connections inserting equal shares (Randal 2010).
#[db_bench(
    data_files = [1, 2, 4, 8, 16],
    data_size = "160GB",
    growth = "1024MB",
    ifi = true,
    log_size = "8GB",
    log_growth = "1024MB",
    scale_storage = true,
    smoke_divisor = 16384,
    default_divisor = 256,
    precision = "5%",
    min_repeat = 3,
    max_repeat = 10,
    budget = "120s",
    // On the embedded engine, forks of one round, as in the population suite (docs/statistics.md,
    // "Rounds per fork"): six pilot forks of one round cost what three of two did.
    embedded(fork_rounds = 1, min_repeat = 6, max_repeat = 12, budget = "180s")
)]
#[not_on(
    postgres = "PostgreSQL keeps every table in files of its own and has no filegroup of several data files to spread a table over, so the number of data files is not a setting there"
)]
pub async fn equal_shares(db: &mut Session) -> Result<()> {
    let workers = workers_at(db.scale(), 16);
    let rows = rows_for(db.scale().count(FULL_INSERT_BYTES));
    populate(db, workers, rows).await?;
    Ok(())
}

/// The one number the article states in its text (the rest are in a chart): eight files were
/// "just over 6% faster" than one.
pub fn article() -> dbbench_core::cli::Reference {
    use dbbench_core::cli::{Reference, ReferenceCase};
    Reference::new(
        "data_files::equal_shares",
        "Paul Randal, Benchmarking: do multiple data files make a difference? (SQLskills 2010)",
        "data_files_1",
    )
    .measured_on("SQL Server")
    .case(ReferenceCase::cell("data_files_1"))
    .case(
        ReferenceCase::cell("data_files_8")
            .stated_ratio(0.94)
            .note("eight files on two arrays vs one file on one array: just over 6% faster"),
    )
}
