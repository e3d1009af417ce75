//! The typed values of options, as the later stages see them.
//!
//! Every value keeps the text the user wrote next to its meaning: sizes are reported and
//! named by their literal (`"1MB"`), and the runtime's `Size` stores the text too.

use crate::parse::ValueId;
use crate::symbol::{self, Key};
use dbbench_options::keyword::BACKENDS;
use dbbench_options::size::FixedSize;
use proc_macro2::Span;

/// A size together with the text the user wrote.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SizeValue {
    /// Bytes.
    pub bytes: u64,
    /// The literal as written (`"1MB"`), kept for reports and cell names.
    pub text: String,
}

/// An autogrowth setting: the options crate's growth type, its fixed size held with its
/// literal as the macro needs it to emit the runtime's `Size`.
pub type GrowthValue = dbbench_options::size::Growth<SizeValue>;

impl FixedSize for SizeValue {
    fn bytes(&self) -> u64 {
        self.bytes
    }

    fn text(&self) -> String {
        self.text.clone()
    }
}

/// A recovery model.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Recovery {
    /// `"simple"`
    Simple,
    /// `"full"`
    Full,
    /// `"bulk_logged"`
    BulkLogged,
}

/// The data set loaded before each repetition.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fixture {
    /// `"none"`
    None,
    /// `"credit"`
    Credit,
}

/// The order of repetitions across cells.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Order {
    /// `"interleaved"`
    Interleaved,
    /// `"blocked"`
    Blocked,
}

/// The page cache a measured window starts with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cache {
    /// `"warm"`
    Warm,
    /// `"cold"`
    Cold,
}

/// A backend, as one of [`BACKENDS`](dbbench_options::keyword::BACKENDS): adding a backend there
/// is all the macro needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Backend(usize);

#[allow(non_upper_case_globals)]
impl Backend {
    /// `"embedded"`
    pub const Embedded: Backend = Backend::named(symbol::EMBEDDED);
    /// `"mssql"`
    #[cfg(test)]
    pub const Mssql: Backend = Backend::named(symbol::MSSQL);

    /// The backend whose keyword is `keyword`; a keyword not in the table is a bug of the macro,
    /// caught at compile time where this is used in a constant.
    const fn named(keyword: &str) -> Backend {
        let mut i = 0;
        while i < BACKENDS.len() {
            if str_eq(BACKENDS[i].keyword, keyword) {
                return Backend(i);
            }
            i += 1;
        }
        panic!("not a backend keyword");
    }

    /// Every backend, with its keyword.
    pub fn all() -> impl Iterator<Item = (&'static str, Backend)> {
        BACKENDS
            .iter()
            .enumerate()
            .map(|(i, name)| (name.keyword, Backend(i)))
    }

    /// The keyword as written in `backends = [...]`.
    pub fn keyword(self) -> &'static str {
        BACKENDS[self.0].keyword
    }
}

const fn str_eq(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    if a.len() != b.len() {
        return false;
    }
    let mut i = 0;
    while i < a.len() {
        if a[i] != b[i] {
            return false;
        }
        i += 1;
    }
    true
}

/// The value of a storage option.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StorageValue {
    /// `data_files`, `maxdop`, `tempdb_files`.
    Count(u32),
    /// `data_size`, `log_size`, `log_pregrow`, `tempdb_size`.
    Size(SizeValue),
    /// `growth`, `log_growth`, `tempdb_growth`.
    Growth(GrowthValue),
    /// `ifi`.
    Bool(bool),
    /// `recovery`.
    Recovery(Recovery),
    /// `data_on`: volume names in order.
    Volumes(Vec<String>),
    /// `log_on`.
    Volume(String),
}

impl StorageValue {
    /// The value as text, before slugging, for cell names: `8`, `1MB`, `10%`, `fast,slow`.
    pub fn name_text(&self) -> String {
        match self {
            StorageValue::Count(n) => n.to_string(),
            StorageValue::Size(size) => size.text.clone(),
            StorageValue::Growth(growth) => growth.describe(),
            StorageValue::Bool(b) => b.to_string(),
            StorageValue::Recovery(Recovery::Simple) => symbol::SIMPLE.to_string(),
            StorageValue::Recovery(Recovery::Full) => symbol::FULL.to_string(),
            StorageValue::Recovery(Recovery::BulkLogged) => symbol::BULK_LOGGED.to_string(),
            StorageValue::Volumes(names) => names.join(","),
            StorageValue::Volume(name) => name.clone(),
        }
    }
}

/// One storage value as declared: what it is, which option, and where it was written.
#[derive(Debug, Clone)]
pub struct Setting {
    /// The option.
    pub key: Key,
    /// The value.
    pub value: StorageValue,
    /// The value's span.
    pub span: Span,
    /// The value's identity, for reporting a mistake once however many cells share it.
    pub id: ValueId,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn name_text_is_the_value_as_written_or_as_a_keyword() {
        let size = SizeValue {
            bytes: 1 << 20,
            text: "1MB".into(),
        };
        let cases = [
            (StorageValue::Count(8), "8"),
            (StorageValue::Size(size.clone()), "1MB"),
            (StorageValue::Growth(GrowthValue::Fixed(size)), "1MB"),
            (StorageValue::Growth(GrowthValue::Percent(10)), "10%"),
            (StorageValue::Growth(GrowthValue::None), "none"),
            (StorageValue::Bool(true), "true"),
            (StorageValue::Recovery(Recovery::BulkLogged), "bulk_logged"),
            (
                StorageValue::Volumes(vec!["fast".into(), "slow".into()]),
                "fast,slow",
            ),
            (StorageValue::Volume("slow".into()), "slow"),
        ];
        for (value, text) in cases {
            assert_eq!(value.name_text(), text);
        }
    }
}
