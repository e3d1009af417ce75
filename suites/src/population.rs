//! # 1-TB table population: data and log on one volume or two
//!
//! Reproduces Paul Randal, *Benchmarking: 1-TB table population (part 3: separating data and log
//! files)* (SQLskills, 2010; a copy is in `shared/seeds/one-tb-table-population-data-log-separation.md`).
//!
//! **What the article measured.** 128 connections each insert rows of about 4.1 KB in
//! transactions of ten until the table holds 1 TB; the data file is pre-sized to 1 TB and the log
//! to 250 MB with 50 MB autogrowth. Data and log shared one RAID array (21,167 s at best), then
//! were separated (20,842 s with the log moved off): "no real performance gain" from moving the
//! log, while the log grew to 5.5–19 GB depending on how fast the data array was.
//!
//! **What this suite measures.** The same load through dbbench's concurrent driver, in two cases:
//! `same_volume` and `separate_volumes` (`data_on = "data"`, `log_on = "log"`). It records elapsed
//! time, log growths, the final log size, and throughput per second over the run (a chart in the
//! report), plus the driver's latency percentiles.
//!
//! **Scales.** Sizes scale together (`scale_storage`): at `full` the article's 1 TB table, 1 TB
//! data file, 250 MB log with 50 MB growth and 128 connections; at the default scale 1/2048 (a
//! 512 MB table of 65,536 rows, 512 MB data file, 128 KB log with 64 KB growth, 16 connections;
//! half the 1/1024 of earlier releases, so that enough paired rounds fit the main job's budget); at
//! `smoke` 1/65536 (16 MB, 2,048 rows, 4 connections). Sizes never go below one 64 KB extent.
//!
//! **What differs on the embedded engine.** SQLite has one writer at a time, so the connections
//! queue for the write lock rather than write in parallel; the log is the WAL, which SQLite
//! checkpoints every 1000 pages. Volumes not bound with `DBBENCH_VOLUMES` (for example
//! `DBBENCH_VOLUMES="data=/mnt/a,log=/mnt/b"`) are directories under `target/dbbench/volumes/` on
//! the same disk, which the results record: the separation only means something when the
//! volumes are different devices.
//!
//! **On PostgreSQL** (`DBBENCH_BACKEND=postgres`) the cases are `pg_same_volume` and
//! `pg_separate_volumes`: the managed cluster's data directory on the `data` volume and its WAL
//! (`initdb --waldir`) on the `log` volume, bound with `DBBENCH_VOLUMES` as above. PostgreSQL does
//! not pre-size data files and its WAL is not a file that grows by a setting, so these cases set
//! only the volumes and keep the cluster's WAL defaults (16 MB segments, zero-filled); the
//! connections write in parallel, each row filling a page (`char(4100)`, stored plain).
//!
//! **On MariaDB** (`DBBENCH_BACKEND=mariadb`) the cases are `mdb_same_volume` and
//! `mdb_separate_volumes`: InnoDB's redo log beside the data or on the `log` volume, with the
//! system tablespace sized and grown as the article's data file (scaled); the payload is a
//! 4100-byte blob (MariaDB's `char` stops at 255), three rows to InnoDB's 16 KB page.
//!
//! **How to read the results.** Compare `separate_volumes` with `same_volume`: the article found
//! the separation helped little once the log array was fast enough; the log growth count and
//! final log size show how far the log outgrew its 250 MB.

use crate::big_rows::{populate, rows_for, workers_at};
use dbbench_core::{db_bench, Result, Session};

/// Bytes of the table at `full` scale: 1 TB.
const FULL_TABLE_BYTES: u64 = 1 << 40;

/// 1-TB table population: concurrent 4.1 KB inserts in transactions of ten (Randal 2010).
#[db_bench(
    scale_storage = true,
    smoke_divisor = 65536,
    default_divisor = 2048,
    precision = "5%",
    min_repeat = 3,
    max_repeat = 10,
    budget = "100s",
    // On the embedded engine, forks of one round (docs/statistics.md, "Rounds per fork"): a fork
    // there costs 0.1 s beyond its round, so Kalibera and Jones's n* was 0.1. Six pilot forks of
    // one round cost what three of two did and give the interval's t five degrees of freedom
    // instead of two. The servers' forks start a server, so they keep two rounds.
    embedded(fork_rounds = 1, min_repeat = 6, max_repeat = 16, budget = "150s")
)]
#[case(
    name = "same_volume",
    data_size = "1TB", growth = "1024MB", ifi = true,
    log_size = "250MB", log_growth = "50MB",
    backends = ["embedded", "mssql"]
)]
#[case(
    name = "separate_volumes",
    like = "same_volume",
    data_on = "data",
    log_on = "log"
)]
// PostgreSQL: the cluster's data directory and its WAL (`initdb --waldir`) on one volume or on
// two. Its data files are not pre-sized and its WAL keeps the cluster's defaults (16 MB
// segments, zero-filled), so the volumes are the only difference.
#[cases(
    like = ["same_volume", "separate_volumes"],
    prefix = "pg_",
    backends = "postgres",
    without = ["data_size", "growth", "ifi", "log_size", "log_growth"]
)]
// MariaDB: the redo log (`innodb_log_group_home_dir`) on the `log` volume or beside the data.
// InnoDB allocates with fallocate() whatever IFI says and its redo log never grows, so IFI and
// log growth are left out; the data directory stays where the managed instance makes it.
#[cases(
    like = ["same_volume"],
    prefix = "mdb_",
    backends = "mariadb",
    without = ["ifi", "log_growth"]
)]
#[cases(
    like = ["separate_volumes"],
    prefix = "mdb_",
    backends = "mariadb",
    without = ["ifi", "log_growth", "data_on"]
)]
pub async fn population(db: &mut Session) -> Result<()> {
    let workers = workers_at(db.scale(), 128);
    let rows = rows_for(db.scale().count(FULL_TABLE_BYTES));
    populate(db, workers, rows).await?;
    Ok(())
}

/// The article's best times with data and log sharing an array and with the log moved off.
pub fn article() -> dbbench_core::cli::Reference {
    use dbbench_core::cli::{Reference, ReferenceCase};
    Reference::new(
        "population::population",
        "Paul Randal, Benchmarking: 1-TB table population, part 3 (SQLskills 2010)",
        "same_volume",
    )
    .measured_on("SQL Server")
    .case(
        ReferenceCase::cell("same_volume")
            .elapsed_s(21_167.0)
            .note("best time of the previous tests, data and log on one SCSI RAID-10 array"),
    )
    .case(
        ReferenceCase::cell("separate_volumes")
            .elapsed_s(20_842.0)
            .note("log moved to an 8-drive SATA RAID-10 array, the best case"),
    )
    .mirrors(population::BENCHMARK.run.mirrors)
}
