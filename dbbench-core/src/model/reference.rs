//! The values a benchmark's source (an article, a vendor's paper) reported for its cases, so a
//! report can set the reproduction beside them.
//!
//! A suite declares them ([`Reference::new`] and [`ReferenceCase`]) and hands them to the command
//! line (`dbbench_core::cli::main_with_references`), which puts them into the results' header
//! (`BenchmarkResult::reference`, absent from older files). The absolute seconds of a 2010 RAID
//! array are not comparable with a laptop's; the ratios to the baseline are, and the report shows
//! both.

use serde::{Deserialize, Serialize};

/// What the source of one benchmark reported.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Reference {
    /// The benchmark these values belong to, as its test path (`vlf::doubling`).
    pub benchmark: String,
    /// Where the values come from: author, title, year and table.
    pub source: String,
    /// The cell the source compared with; its ratio is 1.
    pub baseline: String,
    /// The source's values, one entry per case it reported.
    pub cases: Vec<ReferenceCase>,
    /// The engine the source measured (`SQL Server`), named in the article columns' titles so
    /// that nobody reads its figures as the backend's; empty where not declared.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub engine: String,
}

/// The source's values for one case, each `None` where the source does not give it.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default)]
pub struct ReferenceCase {
    /// The cell of this benchmark that reproduces the case.
    pub cell: String,
    /// Elapsed time the source reported.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub elapsed_s: Option<f64>,
    /// The ratio to the baseline as the source stated it, where it gave a ratio or percentage
    /// but no seconds ("just over 6% faster" is 0.94).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stated_ratio: Option<f64>,
    /// VLFs (log segments) at the end of the case.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub log_segments: Option<u64>,
    /// What the value means where that is not obvious.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub note: String,
    /// The cell this one is expected to equal (an A/A check: nothing that runs differs between
    /// them); the report measures the pair and says whether it reads "equivalent". Empty where
    /// the suite expects nothing of the kind.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub equivalent_to: String,
}

impl Reference {
    /// The values `source` reported for `benchmark`, compared with `baseline`.
    pub fn new(benchmark: &str, source: &str, baseline: &str) -> Reference {
        Reference {
            benchmark: benchmark.into(),
            source: source.into(),
            baseline: baseline.into(),
            cases: Vec::new(),
            engine: String::new(),
        }
    }

    /// With the engine the source measured, for the article columns' titles.
    pub fn measured_on(mut self, engine: &str) -> Reference {
        self.engine = engine.into();
        self
    }

    /// Adds `case`'s values again for `cell`: another cell (a case of another backend) that
    /// reproduces the same case of the source.
    pub fn same_as(mut self, cell: &str, case: &str) -> Reference {
        if let Some(found) = self.of(case).cloned() {
            self.cases.push(ReferenceCase {
                cell: cell.into(),
                ..found
            });
        }
        self
    }

    /// [`Reference::same_as`] for each `(cell, case)` pair: the cells `#[cases]` made from the
    /// article's cases, as the benchmark lists them (`doubling::BENCHMARK.run.mirrors`), so the
    /// pairing is declared once, in the attribute.
    pub fn mirrors(self, pairs: &[(&str, &str)]) -> Reference {
        pairs.iter().fold(self, |reference, (cell, case)| {
            reference.same_as(cell, case)
        })
    }

    /// With `note` on `cell`'s case, replacing any it inherited through [`Reference::same_as`]:
    /// what a reader should expect of that cell where the source does not say (an A/A pair).
    pub fn note(mut self, cell: &str, note: &str) -> Reference {
        for case in self.cases.iter_mut().filter(|c| c.cell == cell) {
            case.note = note.into();
        }
        self
    }

    /// [`Reference::note`], and `cell` is expected to read "equivalent" against `control`: an
    /// A/A pair whose measured ratio the report shows beside the note
    /// (`analysis::control`), so a verdict other than "equivalent" is seen.
    pub fn expect_equivalent(mut self, cell: &str, control: &str, note: &str) -> Reference {
        self = self.note(cell, note);
        for case in self.cases.iter_mut().filter(|c| c.cell == cell) {
            case.equivalent_to = control.into();
        }
        self
    }

    /// Adds a case.
    pub fn case(mut self, case: ReferenceCase) -> Reference {
        self.cases.push(case);
        self
    }

    /// The case of `cell`.
    pub fn of(&self, cell: &str) -> Option<&ReferenceCase> {
        self.cases.iter().find(|c| c.cell == cell)
    }

    /// The ratio of `cell` to the baseline in the source: its elapsed time over the baseline's,
    /// or the ratio the source stated.
    pub fn ratio(&self, cell: &str) -> Option<f64> {
        let case = self.of(cell)?;
        if cell == self.baseline {
            return Some(1.0);
        }
        let base = self.of(&self.baseline).and_then(|b| b.elapsed_s);
        match (case.elapsed_s, base) {
            (Some(e), Some(b)) if b > 0.0 => Some(e / b),
            _ => case.stated_ratio,
        }
    }
}

impl ReferenceCase {
    /// A case for `cell` with no values yet.
    pub fn cell(cell: &str) -> ReferenceCase {
        ReferenceCase {
            cell: cell.into(),
            ..ReferenceCase::default()
        }
    }

    /// With the elapsed time the source reported.
    pub fn elapsed_s(mut self, seconds: f64) -> ReferenceCase {
        self.elapsed_s = Some(seconds);
        self
    }

    /// With the ratio to the baseline the source stated.
    pub fn stated_ratio(mut self, ratio: f64) -> ReferenceCase {
        self.stated_ratio = Some(ratio);
        self
    }

    /// With the VLF (log segment) count the source reported.
    pub fn log_segments(mut self, count: u64) -> ReferenceCase {
        self.log_segments = Some(count);
        self
    }

    /// With a note on what the values mean.
    pub fn note(mut self, note: &str) -> ReferenceCase {
        self.note = note.into();
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn article() -> Reference {
        Reference::new("vlf::doubling", "Berry 2013, Table 7", "test_1")
            .case(ReferenceCase::cell("test_1").elapsed_s(1074.0))
            .case(ReferenceCase::cell("test_3").elapsed_s(771.0))
            .case(ReferenceCase::cell("test_8").stated_ratio(0.94))
    }

    #[test]
    fn ratios_come_from_seconds_or_as_stated() {
        let r = article();
        assert_eq!(r.ratio("test_1"), Some(1.0));
        assert!((r.ratio("test_3").unwrap() - 771.0 / 1074.0).abs() < 1e-12);
        assert_eq!(r.ratio("test_8"), Some(0.94));
        assert_eq!(r.ratio("test_9"), None);
    }

    #[test]
    fn absent_values_are_left_out_of_the_json() {
        let json = serde_json::to_string(&article()).unwrap();
        assert!(
            !json.contains("log_segments") && !json.contains("note"),
            "{json}"
        );
        let back: Reference = serde_json::from_str(&json).unwrap();
        assert_eq!(back, article());
    }
}
