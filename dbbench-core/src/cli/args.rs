//! The command line's grammar: [`Args`] and its [`Command`]s, as clap parses them. Apart from
//! the commands' execution because it is only their declaration (and `--help`'s text).

use clap::{Parser, Subcommand};
use std::path::PathBuf;

/// Runs dbbench benchmarks and works with their results.
#[derive(Debug, Parser)]
#[command(name = "dbbench", about, long_about = None)]
pub(super) struct Args {
    /// The work dir (default: `DBBENCH_DIR`, else `target/dbbench` of the workspace).
    #[arg(long, global = true)]
    pub(super) dir: Option<PathBuf>,
    #[command(subcommand)]
    pub(super) command: Option<Command>,
}

#[derive(Debug, Subcommand)]
pub(super) enum Command {
    /// Run benchmarks (all, or those whose path contains one of the filters); the default.
    Run {
        /// Substrings of `module::benchmark::cell` to select.
        filters: Vec<String>,
        /// `smoke`, `default`, `full` or a factor; overrides DBBENCH_SCALE.
        #[arg(long)]
        scale: Option<String>,
        /// Save this invocation as the baseline NAME when it completes.
        #[arg(long, value_name = "NAME")]
        save_baseline: Option<String>,
        /// Continue the newest interrupted invocation of the work dir's store: its finished
        /// repetitions are kept and only the missing ones run.
        #[arg(long)]
        resume: bool,
    },
    /// List the benchmarks and their cells.
    List,
    /// Rewrite the CSVs, charts and `report/index.html` from the results in the work dir.
    Report,
    /// Compare results with a baseline: ratio, interval and verdict per cell. The baseline is
    /// a saved one (`--baseline NAME`) or a results file or directory (`compare PATH`).
    Compare {
        /// `[BASELINE_PATH] [CURRENT_PATH]`: results files or directories; the current results
        /// default to the work dir's.
        paths: Vec<PathBuf>,
        /// A baseline saved in the results store (`run --save-baseline`, `baseline save`).
        #[arg(long, value_name = "NAME")]
        baseline: Option<String>,
        /// `text` (the terminal table) or `markdown` (a table to post as a pull request comment).
        #[arg(long, default_value = "text", value_parser = ["text", "markdown"])]
        format: String,
    },
    /// Before anything is created: what the backend's server and its login allow, and which
    /// cells of these benchmarks can run there (the backend `DBBENCH_BACKEND` names, else the only
    /// one with a preflight: SQL Server's, for the server in `DBBENCH_MSSQL`: version, edition,
    /// IFI, trace flags, Extended Events, permissions, default paths, tempdb changes).
    Preflight {
        /// `smoke`, `default`, `full` or a factor (default: DBBENCH_SCALE, else `default`).
        #[arg(long)]
        scale: Option<String>,
    },
    /// List the invocations in the results store with their status.
    History,
    /// How much of an invocation's wall time (default: the newest) its measured windows took,
    /// per benchmark and overall, and where the rest went (create, fixture, checkpoint, settle,
    /// teardown, other), from the results store.
    Share {
        /// The invocation's id, as `history` shows it.
        invocation: Option<i64>,
    },
    /// Where the variance of each ratio lives, from the results store: the newest run of each
    /// benchmark and the earlier completed runs of the same experiment (a dimensioning
    /// experiment: run it several times, e.g. with `DBBENCH_FORKS=3`), split into the spread
    /// between rounds of a fork, between forks and between invocations beyond their forks.
    Components {
        /// Substrings of the benchmark paths to select (all when none).
        filters: Vec<String>,
    },
    /// Name an invocation (default: the newest completed one) as a baseline.
    Baseline {
        /// The baseline's name.
        name: String,
        /// The invocation's id, as `history` shows it.
        invocation: Option<i64>,
    },
    /// Import other results stores (from other machines or nextest partitions) into this work
    /// dir's, and rewrite the results files and the report from it.
    Merge {
        /// The `results.sqlite` files to import.
        #[arg(required = true)]
        stores: Vec<PathBuf>,
    },
    /// Check a results file against its insta snapshot with the noise-aware comparison (exit
    /// status 1 and a pending `.snap.new` when it differs).
    Snapshot {
        /// The results JSON.
        results: PathBuf,
        /// The directory of the snapshots.
        snapshot_dir: PathBuf,
        /// The snapshot's name (default: `<benchmark>__<scale>[__<backend>]`).
        name: Option<String>,
    },
}
