//! # VLF, autogrowth and IFI
//!
//! Reproduces Glenn Berry, *Experiments with SQL Server VLFs, Part 1* (SQLskills, 2013; a copy is
//! in `shared/seeds/vlf-autogrowth-ifi-experiments.md`).
//!
//! **What the article measured.** The Credit database (1000 MB data file, 400 MB log, FULL
//! recovery) grows its `charge` table from 1.6 million rows by 49.4 million rows, doubling it five
//! times with `INSERT … SELECT`, under six configurations: 1 MB autogrowth without and with instant
//! file initialization (tests 1 and 2), 1024 MB autogrowth (test 3), the log pre-grown to 32000 MB
//! in 4000 MB steps (test 4), plus MAXDOP 4 (test 5), plus four 2048 MB tempdb files (test 6). It
//! reported elapsed time, the VLF count and the top waits: 1074 s and 126,399 VLFs for test 1,
//! 1069 s for test 2, 771 s and 246 VLFs for test 3, 711 s and 127 VLFs for tests 4 to 6.
//!
//! **What this suite measures.** The same five loops with a lap per loop, in the same six
//! configurations as named cases (`vlf::doubling::test_1` … `test_6`), recording elapsed time and
//! laps, log growths and segments (VLFs on SQL Server), data-file growth events with their zero
//! fill, file sizes, and the top waits where the backend has them, in the article's Table 7 layout.
//!
//! **Scales.** Every size scales with the data (`scale_storage`), so growth stays the same fraction
//! of the data volume: at `full` the article's sizes (1.6 million rows, 1000 MB data, 400 MB log,
//! 1 MB and 1024 MB growth, 32000 MB log in 4000 MB steps); at the default scale 1/16 (100,000 rows
//! grown to 3.2 million, 62.5 MB data, 25 MB log, 64 KB and 64 MB growth, a 2000 MB log in 250 MB
//! steps); at `smoke` 1/512 (3,125 rows; sizes never below one 64 KB extent).
//!
//! **What differs on the embedded engine.** SQLite writes its log (the WAL) sequentially and has no
//! VLFs; dbbench's storage layer counts log *segments* with SQL Server's VLF creation rule so the
//! counts are comparable in kind. IFI applies to data files only, as in SQL Server before 2022.
//! `maxdop` maps to SQLite's auxiliary sorting threads. SQLite has no tempdb, so test 6 runs on SQL
//! Server only and is reported as skipped on the embedded engine. There are no wait statistics.
//!
//! **On PostgreSQL** the same questions are asked of its WAL in five cases of its own,
//! `pg_test_1` … `pg_test_5` (run with `DBBENCH_BACKEND=postgres`; tests 1–6 are for the embedded
//! engine and SQL Server and are left out there). PostgreSQL never zero-fills or pre-sizes data
//! files, so the data-file half of each test has no counterpart; the log half does: `log_growth`
//! is the WAL segment size (1 MB in tests 1 and 2, the scaled 1024MB in tests 3–5: 64 MB at the
//! default scale), `ifi = false` is `wal_init_zero = on` (test 1 zero-fills every segment it
//! creates, as SQL Server zero-fills its log), test 4 makes the WAL ahead of the window to the
//! declared 32000MB (scaled) in 4000MB steps with a checkpoint after each, and test 5 adds four
//! parallel workers (`max_parallel_workers_per_gather = 3`). All five allow the declared 32000MB
//! of WAL (scaled), more than the load writes, so no checkpoint recycles segments in the window and
//! tests 1–3 create every segment their WAL needs (test 4 differs from test 3 only in having made
//! them ahead); all use `recovery = "simple"` (`wal_level = minimal`), since segments made ahead
//! are reused only where checkpoints may recycle them. The table adds PostgreSQL's evidence: segments created and recycled, bytes
//! zero-filled, WAL written, checkpoints requested and WAL sync time. The article's columns are
//! SQL Server's figures, labelled so.
//!
//! **pg_test_5 is an A/A check.** PostgreSQL never uses a parallel plan for a statement that
//! writes data, except `CREATE TABLE … AS`, `SELECT INTO` and `CREATE MATERIALIZED VIEW` (its
//! manual, "When Can Parallel Query Be Used?"), so `INSERT … SELECT` runs serially whatever
//! `max_parallel_workers_per_gather` says: pg_test_5 runs exactly what pg_test_4 runs, and its
//! ratio to pg_test_4 is expected to read "equivalent". The summary and the report say so under
//! the table ([`PG_TEST_5_NOTE`]); any other verdict is a finding about the method (a confounder
//! left, or noise wider than the interval says), to be reported, not hidden. What every
//! PostgreSQL cell pins alike (`wal_buffers`, autovacuum, JIT) and how WAL segments made ahead
//! are removed before the windows of tests 1–3 is in `docs/postgres.md`.
//!
//! **On MariaDB** (`DBBENCH_BACKEND=mariadb`) tests 1, 3 and 4 are asked of InnoDB as
//! `mdb_test_1`, `mdb_test_3` and `mdb_test_4`: the system tablespace's autoextend increment (1MB
//! or 1024MB, scaled) and a redo log of 400MB or 32000MB (scaled), with the binary log on (full
//! recovery). Tests 2 and 5 differ from 1 and 4 only in IFI and MAXDOP, which MariaDB does not
//! have, and its redo log never grows; `docs/mariadb.md` says how each option maps.
//!
//! **How to read the results.** Compare each test with test 1 (the baseline): the article found
//! tests 1 and 2 slowest and within noise of each other, test 3 clearly faster with far fewer log
//! growths, and test 4 a little faster again with no log growth at all.

use dbbench_core::fixture::double_charges;
use dbbench_core::{db_bench, Result, Session};

/// VLF, autogrowth and IFI: doubling the charge table five times (Berry 2013, tests 1–6).
#[db_bench(
    fixture = "credit",
    recovery = "full",
    log_size = "400MB",
    scale_storage = true,
    baseline = "test_1",
    precision = "5%",
    // Forks of two rounds (docs/statistics.md, "Forks"): seven pilot forks, so that the
    // interval over their means has 6 degrees of freedom (5 would make it 1.3 times an
    // oracle's), and more while 230 s allow: a fork takes about 30 s here, so the three suites
    // fit the main job's 7 minutes.
    min_repeat = 7,
    max_repeat = 14,
    budget = "230s",
    // A round of PostgreSQL's cases takes about a minute here: three pilot forks.
    postgres(min_repeat = 3, budget = "300s"),
    // A MariaDB fork bootstraps an instance per cell (the system tablespace keeps freed pages).
    mariadb(min_repeat = 3, budget = "300s")
)]
// Each test is the one before with one change, as the article describes them.
#[case(
    name = "test_1",
    data_size = "1000MB", growth = "1MB", ifi = false,
    log_growth = "1MB",
    backends = ["embedded", "mssql"]
)]
#[case(name = "test_2", like = "test_1", ifi = true)]
#[case(
    name = "test_3",
    like = "test_2",
    growth = "1024MB",
    log_growth = "1024MB"
)]
#[case(
    name = "test_4",
    like = "test_3",
    log_size = "32000MB",
    log_pregrow = "4000MB"
)]
#[case(name = "test_5", like = "test_4", maxdop = 4)]
// An A/A pair: test_4's options written out again, measured as a control against test_4.
#[case(
    name = "test_4_again",
    data_size = "1000MB", growth = "1024MB", ifi = true,
    log_growth = "1024MB", log_size = "32000MB", log_pregrow = "4000MB",
    backends = ["embedded", "mssql"]
)]
#[case(
    name = "test_6",
    like = "test_5",
    tempdb_files = 4,
    tempdb_size = "2048MB",
    tempdb_growth = "1024MB",
    backends = ["mssql"]
)]
// PostgreSQL: tests 1–5 asked of its WAL, `pg_test_N` from `test_N`. Small (1 MB) or large
// segments, zero-filled (`wal_init_zero`, the log's IFI) or not, WAL made ahead to the declared
// size, MAXDOP as parallel workers. PostgreSQL neither pre-sizes nor grows data files by a
// setting, so the data-file options are left out. All five allow 32000MB of WAL (scaled:
// `max_wal_size`), more than the load writes, so no checkpoint recycles segments during the
// window: in tests 1–3 the WAL grows by creating every segment, as the article's log grows, and
// test 4 differs from test 3 only in having made that WAL ahead. Recovery is simple
// (`wal_level = minimal`), since segments made ahead are reused only where checkpoints may
// recycle them (with `full` the archiver keeps all).
#[cases(
    like = ["test_1", "test_2", "test_3", "test_4", "test_5"],
    prefix = "pg_",
    backends = "postgres",
    recovery = "simple",
    log_size = "32000MB",
    without = ["data_size", "growth"]
)]
// MariaDB: tests 1, 3 and 4 asked of InnoDB, `mdb_test_N` from `test_N`. The system
// tablespace is the data file (1000MB, scaled), growing by `innodb_autoextend_increment` (1MB or
// 1024MB, scaled); the redo log is one fixed ring of `log_size` (400MB, then 32000MB in test 4:
// the InnoDB form of pre-growing the log, fewer checkpoints forced by a full ring). Recovery is
// full: the binary log on, synced at each commit. Test 2 differs from test 1 only in IFI and test
// 5 from test 4 only in MAXDOP, neither of which MariaDB has (it always allocates with
// fallocate(); it never parallelises a statement), and the redo log never grows, so IFI, log
// growth, pre-growth and MAXDOP are left out.
#[cases(
    like = ["test_1", "test_3"],
    prefix = "mdb_",
    backends = "mariadb",
    without = ["ifi", "log_growth"]
)]
#[cases(
    like = ["test_4"],
    prefix = "mdb_",
    backends = "mariadb",
    without = ["ifi", "log_growth", "log_pregrow"]
)]
pub async fn doubling(db: &mut Session) -> Result<()> {
    double_charges(db, 5).await?;
    Ok(())
}

/// The article's own numbers (Table 7 and the text of each test), set beside ours in the report.
pub fn article() -> dbbench_core::cli::Reference {
    use dbbench_core::cli::{Reference, ReferenceCase};
    let case = |cell: &str, seconds: f64, vlfs: u64| {
        ReferenceCase::cell(cell)
            .elapsed_s(seconds)
            .log_segments(vlfs)
    };
    let reference = Reference::new(
        "vlf::doubling",
        "Glenn Berry, Experiments with SQL Server VLFs, Part 1 (SQLskills 2013), Table 7",
        "test_1",
    )
    .measured_on("SQL Server")
    .case(case("test_1", 1074.0, 126_399))
    .case(case("test_2", 1069.0, 126_399))
    .case(case("test_3", 771.0, 246))
    .case(case("test_4", 711.0, 127))
    .case(case("test_5", 716.0, 127))
    .case(case("test_6", 723.0, 127))
    // The A/A control has no figure of the article's; it carries the note and its check.
    .case(ReferenceCase::cell("test_4_again"));
    // PostgreSQL's cases ask tests 1–5 of its WAL: `#[cases]` pairs each with its test.
    reference
        .mirrors(doubling::BENCHMARK.run.mirrors)
        .expect_equivalent("pg_test_5", "pg_test_4", PG_TEST_5_NOTE)
        .expect_equivalent("test_4_again", "test_4", TEST_4_AGAIN_NOTE)
}

/// Why `test_4_again` against `test_4` is an A/A pair, shown under the table.
pub const TEST_4_AGAIN_NOTE: &str =
    "expected \"equivalent\" or \"inconclusive\" to test_4, never faster or slower (an A/A \
     check): it declares exactly what test_4 declares; another verdict is a finding about the \
     method, not noise to hide";

/// Why `pg_test_5` against `pg_test_4` is an A/A pair, shown under the table.
pub const PG_TEST_5_NOTE: &str =
    "expected \"equivalent\" to pg_test_4 (an A/A check): PostgreSQL 15 never plans \
     INSERT … SELECT in parallel, so max_parallel_workers_per_gather (MAXDOP 4) changes nothing \
     that runs; another verdict is a finding, not noise to hide";
