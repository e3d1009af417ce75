//! The name of every option, and which group it belongs to: storage options (per cell, may be
//! lists), run options (per benchmark), and the case's `name`.
//!
//! Option names are the [`Key`] enum so that a typo in dbbench's own code is a compile error
//! rather than an option that silently never matches.

use std::fmt;

/// The name of an option, in `#[db_bench(...)]` or `#[case(...)]`.
///
/// The declaration order here is the order in which options are listed in error messages,
/// storage options first.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Key {
    /// `data_files`: number of data files.
    DataFiles,
    /// `data_size`: total initial data size.
    DataSize,
    /// `growth`: data file autogrowth.
    Growth,
    /// `log_size`: log size.
    LogSize,
    /// `log_growth`: log autogrowth.
    LogGrowth,
    /// `log_pregrow`: step in which the log is grown to `log_size`.
    LogPregrow,
    /// `ifi`: instant file initialization.
    Ifi,
    /// `recovery`: recovery model.
    Recovery,
    /// `maxdop`: maximum degree of parallelism.
    Maxdop,
    /// `tempdb_files`: number of tempdb data files.
    TempdbFiles,
    /// `tempdb_size`: size of each tempdb data file.
    TempdbSize,
    /// `tempdb_growth`: autogrowth of each tempdb data file.
    TempdbGrowth,
    /// `data_on`: volumes of the data files.
    DataOn,
    /// `log_on`: volume of the log.
    LogOn,
    /// `repeat`: measured repetitions.
    Repeat,
    /// `warmup`: unmeasured repetitions.
    Warmup,
    /// `fixture`: data set loaded first.
    Fixture,
    /// `backends`: backends the benchmark (or, in a `#[case]`, that case) may run on.
    Backends,
    /// `timeout`: longest time of one repetition.
    Timeout,
    /// `order`: order of repetitions across cells.
    Order,
    /// `baseline`: the cell the others are compared with.
    Baseline,
    /// `scale_storage`: multiply sizes by the scale factor.
    ScaleStorage,
    /// `smoke_divisor`: the articles' sizes are divided by this at `DBBENCH_SCALE=smoke`.
    SmokeDivisor,
    /// `default_divisor`: the articles' sizes are divided by this at the default scale.
    DefaultDivisor,
    /// `precision`: repeat until every ratio's 95% interval is within this many percent.
    Precision,
    /// `min_repeat`: the pilot forks a benchmark with `precision` runs (the fewest).
    MinRepeat,
    /// `max_repeat`: the most forks a benchmark with `precision` runs.
    MaxRepeat,
    /// `budget`: the longest a benchmark with `precision` keeps starting forks.
    Budget,
    /// `fork_rounds`: the rounds in each pilot fork of a benchmark with `precision`.
    ForkRounds,
    /// `cache`: the page cache a measured window starts with (`warm` or `cold`).
    Cache,
    /// `name`: the name of a `#[case]`.
    Name,
    /// `like`: the case (or, in `#[cases]`, the cases) a case starts from.
    Like,
    /// `prefix`: in `#[cases]`, what the name of each case made from another starts with.
    Prefix,
    /// `without`: in `#[cases]`, options the cases made from others leave unset.
    Without,
}

impl Key {
    /// Options that configure storage: allowed in `#[db_bench]` and `#[case]`, and as lists.
    pub const STORAGE: [Key; 14] = [
        Key::DataFiles,
        Key::DataSize,
        Key::Growth,
        Key::LogSize,
        Key::LogGrowth,
        Key::LogPregrow,
        Key::Ifi,
        Key::Recovery,
        Key::Maxdop,
        Key::TempdbFiles,
        Key::TempdbSize,
        Key::TempdbGrowth,
        Key::DataOn,
        Key::LogOn,
    ];

    /// Options that apply to the whole benchmark: allowed in `#[db_bench]`, and in `#[case]`
    /// only if they are also in [`Key::PER_CASE`].
    pub const RUN: [Key; 16] = [
        Key::Repeat,
        Key::Warmup,
        Key::Fixture,
        Key::Backends,
        Key::Timeout,
        Key::Order,
        Key::Baseline,
        Key::ScaleStorage,
        Key::SmokeDivisor,
        Key::DefaultDivisor,
        Key::Precision,
        Key::MinRepeat,
        Key::MaxRepeat,
        Key::Budget,
        Key::ForkRounds,
        Key::Cache,
    ];

    /// Run options that a `#[case]` may set for its own cells, replacing the benchmark's value.
    pub const PER_CASE: [Key; 1] = [Key::Backends];

    /// Every key, for looking a name up.
    pub const ALL: [Key; 34] = [
        Key::DataFiles,
        Key::DataSize,
        Key::Growth,
        Key::LogSize,
        Key::LogGrowth,
        Key::LogPregrow,
        Key::Ifi,
        Key::Recovery,
        Key::Maxdop,
        Key::TempdbFiles,
        Key::TempdbSize,
        Key::TempdbGrowth,
        Key::DataOn,
        Key::LogOn,
        Key::Repeat,
        Key::Warmup,
        Key::Fixture,
        Key::Backends,
        Key::Timeout,
        Key::Order,
        Key::Baseline,
        Key::ScaleStorage,
        Key::SmokeDivisor,
        Key::DefaultDivisor,
        Key::Precision,
        Key::MinRepeat,
        Key::MaxRepeat,
        Key::Budget,
        Key::ForkRounds,
        Key::Cache,
        Key::Name,
        Key::Like,
        Key::Prefix,
        Key::Without,
    ];

    /// The option as written in an attribute.
    pub fn as_str(self) -> &'static str {
        match self {
            Key::DataFiles => "data_files",
            Key::DataSize => "data_size",
            Key::Growth => "growth",
            Key::LogSize => "log_size",
            Key::LogGrowth => "log_growth",
            Key::LogPregrow => "log_pregrow",
            Key::Ifi => "ifi",
            Key::Recovery => "recovery",
            Key::Maxdop => "maxdop",
            Key::TempdbFiles => "tempdb_files",
            Key::TempdbSize => "tempdb_size",
            Key::TempdbGrowth => "tempdb_growth",
            Key::DataOn => "data_on",
            Key::LogOn => "log_on",
            Key::Repeat => "repeat",
            Key::Warmup => "warmup",
            Key::Fixture => "fixture",
            Key::Backends => "backends",
            Key::Timeout => "timeout",
            Key::Order => "order",
            Key::Baseline => "baseline",
            Key::ScaleStorage => "scale_storage",
            Key::SmokeDivisor => "smoke_divisor",
            Key::DefaultDivisor => "default_divisor",
            Key::Precision => "precision",
            Key::MinRepeat => "min_repeat",
            Key::MaxRepeat => "max_repeat",
            Key::Budget => "budget",
            Key::ForkRounds => "fork_rounds",
            Key::Cache => "cache",
            Key::Name => "name",
            Key::Like => "like",
            Key::Prefix => "prefix",
            Key::Without => "without",
        }
    }

    /// The key written as `name`, if there is one.
    pub fn lookup(name: &str) -> Option<Key> {
        Key::ALL.into_iter().find(|key| key.as_str() == name)
    }

    /// Whether this is a storage option (see [`Key::STORAGE`]).
    pub fn is_storage(self) -> bool {
        Key::STORAGE.contains(&self)
    }

    /// Whether this is a run option (see [`Key::RUN`]).
    pub fn is_run(self) -> bool {
        Key::RUN.contains(&self)
    }

    /// Options that say where a case comes from rather than what it configures: `name` and
    /// `like` in `#[case]`, `like`, `prefix` and `without` in `#[cases]`.
    pub const STRUCTURE: [Key; 4] = [Key::Name, Key::Like, Key::Prefix, Key::Without];

    /// Run options that may differ per backend, in `#[db_bench(postgres(budget = "5m"))]`.
    pub const PER_BACKEND: [Key; 5] = [
        Key::Precision,
        Key::MinRepeat,
        Key::MaxRepeat,
        Key::Budget,
        Key::ForkRounds,
    ];

    /// Whether this run option may differ per backend (see [`Key::PER_BACKEND`]).
    pub fn is_per_backend(self) -> bool {
        Key::PER_BACKEND.contains(&self)
    }

    /// Whether a `#[case]` may set this run option (see [`Key::PER_CASE`]).
    pub fn is_per_case(self) -> bool {
        Key::PER_CASE.contains(&self)
    }
}

impl fmt::Display for Key {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_key_round_trips_through_its_name() {
        for key in Key::ALL {
            assert_eq!(Key::lookup(key.as_str()), Some(key));
        }
        assert_eq!(Key::lookup("grwth"), None);
    }

    #[test]
    fn storage_run_and_structure_options_partition_the_keys() {
        for key in Key::ALL {
            let groups = [
                key.is_storage(),
                key.is_run(),
                Key::STRUCTURE.contains(&key),
            ];
            assert_eq!(groups.iter().filter(|g| **g).count(), 1, "{key}");
        }
    }

    #[test]
    fn options_a_case_may_set_per_case_are_run_options() {
        for key in Key::PER_CASE {
            assert!(key.is_run() && key.is_per_case(), "{key}");
        }
        assert!(!Key::Repeat.is_per_case());
        assert!(!Key::SmokeDivisor.is_per_case());
    }
}
