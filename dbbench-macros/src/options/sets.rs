//! The option sets an attribute yields: [`BenchOptions`] (storage and run options), [`CaseOptions`]
//! and [`CaseSetOptions`], with their parts. Apart from the interpretation of the attribute because
//! the rest of the macro reads them and never the rules that fill them.

use crate::setting::{Backend, Cache, Fixture, Order, Setting};
use crate::symbol::Key;
use proc_macro2::Span;
use std::collections::HashSet;

/// A value with the span of its token.
#[derive(Debug, Clone)]
pub struct Spanned<T> {
    /// The value.
    pub value: T,
    /// Where it was written.
    pub span: Span,
}

impl<T> Spanned<T> {
    /// `value` written at `span`.
    pub fn new(value: T, span: Span) -> Self {
        Spanned { value, span }
    }
}

/// A storage option of `#[db_bench]`.
#[derive(Debug, Clone)]
pub enum Declared {
    /// One value, shared by every cell.
    One(Setting),
    /// A list: one matrix axis.
    Axis(Axis),
}

/// A storage option given a list: every value makes its own cells.
#[derive(Debug, Clone)]
pub struct Axis {
    /// The option.
    pub key: Key,
    /// The span of the option's name.
    pub key_span: Span,
    /// The values, in the order written.
    pub values: Vec<Setting>,
}

pub use dbbench_options::defaults::{
    DEFAULT_DIVISOR as DEFAULT_DEFAULT_DIVISOR, MAX_DIVISOR, SMOKE_DIVISOR as DEFAULT_SMOKE_DIVISOR,
};

/// The run options of a benchmark; `None` means the runtime's default.
#[derive(Debug, Clone, Default)]
pub struct RunOptions {
    /// `repeat`
    pub repeat: Option<Spanned<u32>>,
    /// `warmup`
    pub warmup: Option<Spanned<u32>>,
    /// `fixture`
    pub fixture: Option<Spanned<Fixture>>,
    /// `backends`, without duplicates.
    pub backends: Option<Spanned<Vec<Backend>>>,
    /// `timeout`, in milliseconds.
    pub timeout: Option<Spanned<u64>>,
    /// `order`
    pub order: Option<Spanned<Order>>,
    /// `baseline`: a cell name, checked once the cells are known.
    pub baseline: Option<Spanned<String>>,
    /// `scale_storage`
    pub scale_storage: Option<Spanned<bool>>,
    /// `smoke_divisor`; [`DEFAULT_SMOKE_DIVISOR`] when not given.
    pub smoke_divisor: Option<Spanned<u32>>,
    /// `default_divisor`; [`DEFAULT_DEFAULT_DIVISOR`] when not given.
    pub default_divisor: Option<Spanned<u32>>,
    /// `precision`, in hundredths of a percent.
    pub precision: Option<Spanned<u32>>,
    /// `min_repeat`
    pub min_repeat: Option<Spanned<u32>>,
    /// `max_repeat`
    pub max_repeat: Option<Spanned<u32>>,
    /// `budget`, in milliseconds.
    pub budget: Option<Spanned<u64>>,
    /// `fork_rounds`
    pub fork_rounds: Option<Spanned<u32>>,
    /// `cache`
    pub cache: Option<Spanned<Cache>>,
    /// The run options that differ per backend: `postgres(budget = "5m", min_repeat = 3)`.
    pub per_backend: Vec<BackendRun>,
}

/// The run options of one backend, `postgres(budget = "5m", min_repeat = 3)`: each replaces the
/// benchmark's on that backend; the others keep the benchmark's.
#[derive(Debug, Clone)]
pub struct BackendRun {
    /// The backend, where its name was written.
    pub backend: Spanned<Backend>,
    /// `precision`, in hundredths of a percent.
    pub precision: Option<Spanned<u32>>,
    /// `min_repeat`
    pub min_repeat: Option<Spanned<u32>>,
    /// `max_repeat`
    pub max_repeat: Option<Spanned<u32>>,
    /// `budget`, in milliseconds.
    pub budget: Option<Spanned<u64>>,
    /// `fork_rounds`
    pub fork_rounds: Option<Spanned<u32>>,
}

/// The options of `#[db_bench(...)]`.
#[derive(Debug, Clone, Default)]
pub struct BenchOptions {
    /// Storage options in the order written; the order of axes decides the order of cells.
    pub storage: Vec<Declared>,
    /// Run options.
    pub run: RunOptions,
    /// Every known option written in the attribute, including those whose value was rejected,
    /// so that a check can tell an option left to its default from one already reported.
    pub given: HashSet<Key>,
}

impl BenchOptions {
    /// The storage options this attribute sets, as single values or lists.
    pub fn storage_keys(&self) -> HashSet<Key> {
        self.storage
            .iter()
            .map(|declared| match declared {
                Declared::One(setting) => setting.key,
                Declared::Axis(axis) => axis.key,
            })
            .collect()
    }
}

/// The options of one `#[case(...)]`.
#[derive(Debug, Clone, Default)]
pub struct CaseOptions {
    /// `name`, if given and valid.
    pub name: Option<Spanned<String>>,
    /// `like`: the case this one starts from.
    pub like: Option<Spanned<String>>,
    /// The storage overrides.
    pub storage: Vec<Setting>,
    /// `backends`: the backends this case's cells run on instead of the benchmark's.
    pub backends: Option<Spanned<Vec<Backend>>>,
}

/// The options of one `#[cases(...)]`: cases made from others.
#[derive(Debug, Clone, Default)]
pub struct CaseSetOptions {
    /// `like`: the cases to make others from, in order.
    pub like: Vec<Spanned<String>>,
    /// `prefix`: what each new case's name starts with, before the name of its case.
    pub prefix: Option<Spanned<String>>,
    /// `without`: options the new cases leave unset.
    pub without: Vec<Spanned<Key>>,
    /// The values the new cases change.
    pub storage: Vec<Setting>,
    /// `backends` of the new cases.
    pub backends: Option<Spanned<Vec<Backend>>>,
}
