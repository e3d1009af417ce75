//! The configuration a benchmark declares: storage options per cell and run options per benchmark.
//!
//! These types are built by the `#[db_bench]` macro as `static` data, so every field is
//! const-constructible (`&'static` slices and strings, no heap). Sizes are already parsed into
//! bytes at compile time; the text the user wrote is kept beside them for reports.

use dbbench_options::size::FixedSize;
use dbbench_options::{defaults, keyword, Key};
use serde::Serialize;
use std::time::Duration;

mod backend_kind;

pub use backend_kind::BackendKind;

/// A size in bytes together with the text the user wrote (`"1MB"`).
///
/// Units are binary, as in SQL Server: `1KB` = 1024 bytes, `1MB` = 1024 KB.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Size {
    /// The size in bytes.
    pub bytes: u64,
    /// The literal as written in the attribute.
    #[serde(skip)]
    pub text: &'static str,
}

impl Size {
    /// A size of `bytes` bytes written as `text`.
    pub const fn new(bytes: u64, text: &'static str) -> Self {
        Size { bytes, text }
    }

    /// The size in mebibytes, for reports.
    pub fn mib(&self) -> f64 {
        self.bytes as f64 / (1024.0 * 1024.0)
    }
}

/// How a file grows when it is full: the options crate's one growth type, with a fixed growth
/// held as a [`Size`] so that reports show the literal as written. `increment` and `describe`
/// come with it ([`dbbench_options::size::Growth`]).
pub type Growth = dbbench_options::size::Growth<Size>;

impl FixedSize for Size {
    fn bytes(&self) -> u64 {
        self.bytes
    }

    fn text(&self) -> String {
        self.text.to_string()
    }
}

/// How a [`Growth`] is serialized (`{"fixed":{"bytes":…}}`, `{"percent":10}`, `"none"`): the
/// type is the options crate's, which has no serde, so its form is declared here.
#[derive(Serialize)]
#[serde(remote = "Growth", rename_all = "snake_case")]
enum GrowthForm {
    Fixed(Size),
    Percent(u32),
    None,
}

/// Serializes an optional [`Growth`] in [`GrowthForm`], for the fields of [`StorageSpec`].
fn serialize_growth<S: serde::Serializer>(
    growth: &Option<Growth>,
    serializer: S,
) -> std::result::Result<S::Ok, S::Error> {
    #[derive(Serialize)]
    struct Form(#[serde(with = "GrowthForm")] Growth);
    growth.map(Form).serialize(serializer)
}

/// The recovery model of the database.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Recovery {
    /// Log space is reused after each checkpoint.
    Simple,
    /// The log keeps every record until it is backed up.
    Full,
    /// As full, with minimal logging of bulk operations (SQL Server only).
    BulkLogged,
}

impl Recovery {
    /// The keyword as written in the attribute.
    pub fn keyword(&self) -> &'static str {
        match self {
            Recovery::Simple => keyword::SIMPLE,
            Recovery::Full => keyword::FULL,
            Recovery::BulkLogged => keyword::BULK_LOGGED,
        }
    }
}

/// The storage configuration of one cell. `None` means "the backend's default".
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct StorageSpec {
    /// Number of data files (at least 1).
    pub data_files: u32,
    /// Total initial data size, split equally over the data files.
    pub data_size: Option<Size>,
    /// Autogrowth of each data file.
    #[serde(serialize_with = "serialize_growth")]
    pub growth: Option<Growth>,
    /// Initial (or pre-grown) size of the log.
    pub log_size: Option<Size>,
    /// Autogrowth of the log.
    #[serde(serialize_with = "serialize_growth")]
    pub log_growth: Option<Growth>,
    /// Grow the log to `log_size` in steps of this size.
    pub log_pregrow: Option<Size>,
    /// Instant file initialization for data files.
    pub ifi: Option<bool>,
    /// Recovery model.
    pub recovery: Option<Recovery>,
    /// Maximum degree of parallelism.
    pub maxdop: Option<u32>,
    /// Number of tempdb data files (an instance-level change on SQL Server).
    pub tempdb_files: Option<u32>,
    /// Initial size of each tempdb data file.
    pub tempdb_size: Option<Size>,
    /// Autogrowth of each tempdb data file.
    #[serde(serialize_with = "serialize_growth")]
    pub tempdb_growth: Option<Growth>,
    /// Named volumes the data files are spread over, round robin.
    pub data_on: &'static [&'static str],
    /// Named volume of the log.
    pub log_on: Option<&'static str>,
}

impl StorageSpec {
    /// A configuration with one data file and every other option left to the backend.
    pub const DEFAULT: StorageSpec = StorageSpec {
        data_files: defaults::DATA_FILES,
        data_size: None,
        growth: None,
        log_size: None,
        log_growth: None,
        log_pregrow: None,
        ifi: None,
        recovery: None,
        maxdop: None,
        tempdb_files: None,
        tempdb_size: None,
        tempdb_growth: None,
        data_on: &[],
        log_on: None,
    };

    /// Whether the storage option `key` is set: given a value other than [`StorageSpec::DEFAULT`]'s
    /// (which the expansion leaves every option the attribute does not write). Not a storage
    /// option: false.
    pub fn sets(&self, key: Key) -> bool {
        match key {
            Key::DataFiles => self.data_files != StorageSpec::DEFAULT.data_files,
            Key::DataSize => self.data_size.is_some(),
            Key::Growth => self.growth.is_some(),
            Key::LogSize => self.log_size.is_some(),
            Key::LogGrowth => self.log_growth.is_some(),
            Key::LogPregrow => self.log_pregrow.is_some(),
            Key::Ifi => self.ifi.is_some(),
            Key::Recovery => self.recovery.is_some(),
            Key::Maxdop => self.maxdop.is_some(),
            Key::TempdbFiles => self.tempdb_files.is_some(),
            Key::TempdbSize => self.tempdb_size.is_some(),
            Key::TempdbGrowth => self.tempdb_growth.is_some(),
            Key::DataOn => !self.data_on.is_empty(),
            Key::LogOn => self.log_on.is_some(),
            _ => false,
        }
    }

    /// The storage options that are set ([`StorageSpec::sets`]), in [`Key::STORAGE`]'s order.
    pub fn set_options(&self) -> impl Iterator<Item = Key> + '_ {
        Key::STORAGE.into_iter().filter(|key| self.sets(*key))
    }

    /// The options that are set, as `(name, value)` pairs in a stable order, for reports.
    pub fn describe(&self) -> Vec<(&'static str, String)> {
        let mut out = Vec::new();
        out.push(("data_files", self.data_files.to_string()));
        let mut put = |name: &'static str, value: Option<String>| {
            if let Some(value) = value {
                out.push((name, value));
            }
        };
        put("data_size", self.data_size.map(|s| s.text.to_string()));
        put("growth", self.growth.map(|g| g.describe()));
        put("log_size", self.log_size.map(|s| s.text.to_string()));
        put("log_growth", self.log_growth.map(|g| g.describe()));
        put("log_pregrow", self.log_pregrow.map(|s| s.text.to_string()));
        put("ifi", self.ifi.map(|b| b.to_string()));
        put("recovery", self.recovery.map(|r| r.keyword().to_string()));
        put("maxdop", self.maxdop.map(|m| m.to_string()));
        put("tempdb_files", self.tempdb_files.map(|m| m.to_string()));
        put("tempdb_size", self.tempdb_size.map(|s| s.text.to_string()));
        put("tempdb_growth", self.tempdb_growth.map(|g| g.describe()));
        put(
            "data_on",
            (!self.data_on.is_empty()).then(|| self.data_on.join(",")),
        );
        put("log_on", self.log_on.map(str::to_string));
        out
    }
}

/// The baseline data set loaded before the measured window.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum FixtureKind {
    /// No data: the body starts from an empty database.
    None,
    /// The `charge` table of the SQLskills Credit sample database.
    Credit,
}

impl FixtureKind {
    /// The keyword as written in the attribute and the results.
    pub fn keyword(&self) -> &'static str {
        match self {
            FixtureKind::None => keyword::FIXTURE_NONE,
            FixtureKind::Credit => keyword::CREDIT,
        }
    }
}

/// The order in which the repetitions of a benchmark's cells run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Order {
    /// A B C A B C …: machine drift does not favour one configuration.
    Interleaved,
    /// A A A B B B …
    Blocked,
}

impl Order {
    /// The keyword as written in the attribute and the results.
    pub fn keyword(&self) -> &'static str {
        match self {
            Order::Interleaved => keyword::INTERLEAVED,
            Order::Blocked => keyword::BLOCKED,
        }
    }
}

/// Options that apply to every cell of a benchmark.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct RunSpec {
    /// Measured repetitions of each cell.
    pub repeat: u32,
    /// Unmeasured warm-up repetitions before the measured ones.
    pub warmup: u32,
    /// The data set loaded before each repetition.
    pub fixture: FixtureKind,
    /// The backends this benchmark may run on; empty means all.
    pub backends: &'static [BackendKind],
    /// Longest time one repetition of the body may take.
    pub timeout: Option<Duration>,
    /// Order of repetitions across cells.
    pub order: Order,
    /// The cell the others are compared with; `None` means the first.
    pub baseline: Option<&'static str>,
    /// Multiply every storage size by the scale's factor (see [`crate::Scale`]).
    pub scale_storage: bool,
    /// At `DBBENCH_SCALE=smoke`, sizes and work are the articles' divided by this (default 512).
    pub smoke_divisor: u32,
    /// At the default scale, sizes and work are the articles' divided by this (default 16).
    pub default_divisor: u32,
    /// Repeat until every ratio is this precise, instead of `repeat` times (`precision = "5%"`).
    pub precision: Option<Precision>,
    /// The page cache each measured window starts with.
    pub cache: crate::model::start::CacheState,
    /// Backends the benchmark's question does not apply to, each with the sentence that says why
    /// (`#[not_on(postgres = "…")]`): there it runs no cell and reports that sentence instead.
    pub not_on: &'static [(BackendKind, &'static str)],
    /// The precision target on backends whose run options differ
    /// (`#[db_bench(postgres(budget = "5m"))]`), complete with the benchmark's other bounds; on
    /// any other backend `precision` applies.
    pub precision_on: &'static [(BackendKind, Precision)],
    /// Each cell made by `#[cases]` with the cell it was made from (`("pg_test_1", "test_1")`),
    /// so that the article's figures for one are shown for the other.
    pub mirrors: &'static [(&'static str, &'static str)],
}

/// A precision target: run forks (each of rounds of every cell once, in the benchmark's order,
/// on a fresh work area) until the 95% interval of every cell's ratio to the baseline is within
/// `±hundredths_of_percent / 100` %, at least `min_rounds` and at most `max_rounds` forks (the
/// fields keep their names from when each was one round), and start no fork that would end after
/// `budget`.
/// The rule looks at the intervals' widths only, never at whether they exclude 1: stopping on
/// significance would inflate false positives (`docs/statistics.md`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Precision {
    /// The target half-width of every ratio's interval, in hundredths of a percent (500 = ±5%).
    pub hundredths_of_percent: u32,
    /// The fewest forks (the pilot's).
    pub min_rounds: u32,
    /// The most forks.
    pub max_rounds: u32,
    /// No fork starts that the measured costs say would end after this.
    pub budget: Duration,
    /// The rounds in each pilot fork (`fork_rounds`): 2 by default, so that each pilot fork
    /// measures its own round-to-round spread for the allocation of later forks' rounds; 1 where
    /// a fork costs no more than a round, so that twice the forks fit a budget and the interval's
    /// t has twice the degrees of freedom. Later forks have at least as many.
    pub fork_rounds: u32,
}

impl Precision {
    /// The target as a fraction (0.05 for ±5%).
    pub fn target(&self) -> f64 {
        f64::from(self.hundredths_of_percent) / 10_000.0
    }

    /// "±5% (3 to 20 forks, within 5m)".
    pub fn describe(&self) -> String {
        format!(
            "±{}% ({} to {} forks, within {})",
            crate::model::units::percent_text(self.target()),
            self.min_rounds,
            self.max_rounds,
            crate::model::units::duration_text(self.budget)
        )
    }
}

impl RunSpec {
    /// One repetition, no warm-up, no fixture, every backend.
    pub const DEFAULT: RunSpec = RunSpec {
        repeat: defaults::REPEAT,
        warmup: defaults::WARMUP,
        fixture: FixtureKind::None,
        backends: &[],
        timeout: None,
        order: Order::Interleaved,
        baseline: None,
        scale_storage: defaults::SCALE_STORAGE,
        smoke_divisor: defaults::SMOKE_DIVISOR,
        default_divisor: defaults::DEFAULT_DIVISOR,
        precision: None,
        cache: crate::model::start::CacheState::Warm,
        not_on: &[],
        precision_on: &[],
        mirrors: &[],
    };

    /// The precision target on `kind`: its own where the benchmark gives that backend run options
    /// of its own, else the benchmark's; with whether it is the backend's own.
    pub fn precision_on(&self, kind: BackendKind) -> (Option<Precision>, bool) {
        match self.precision_on.iter().find(|(k, _)| *k == kind) {
            Some((_, own)) => (Some(*own), true),
            None => (self.precision, false),
        }
    }

    /// The rounds that always run: `repeat`, or a precision target's minimum.
    pub fn rounds(&self) -> u32 {
        self.precision.map_or(self.repeat, |p| p.min_rounds)
    }

    /// The rounds that always run on `kind`, whose run options may be its own.
    pub fn rounds_on(&self, kind: BackendKind) -> u32 {
        self.precision_on(kind)
            .0
            .map_or(self.repeat, |p| p.min_rounds)
    }
}

#[cfg(test)]
mod tests;
