//! The data scale: how big fixtures and (with `scale_storage`) storage sizes are.
//!
//! `DBBENCH_SCALE` selects it: `smoke` (seconds, for tests and CI), `default` (the Quick start),
//! `full` (the articles' sizes), or a factor such as `0.25`. Tests use `smoke` when the variable is
//! unset; the main job uses `default`.

use crate::model::error::{Error, Result};
use crate::model::units::EXTENT;
use serde::Serialize;

/// Rows of the Credit database's `charge` table in the articles.
pub const CREDIT_FULL_ROWS: u64 = 1_600_000;

/// Which scale a [`Scale`] is: one of the three named ones, or a factor written out. What
/// depends on the scale (a precision target, smoke snapshots' timings, a suite's worker count)
/// asks this, never the name's text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ScaleKind {
    /// `smoke`: windows of milliseconds, for tests and CI; their timings are scheduler noise.
    Smoke,
    /// `default`: the Quick start's few minutes.
    Default,
    /// `full`: the articles' sizes.
    Full,
    /// A factor such as `0.25`.
    Factor,
}

impl ScaleKind {
    /// The named scales and their names, the one place names map to kinds.
    const NAMED: [(&'static str, ScaleKind); 3] = [
        ("smoke", ScaleKind::Smoke),
        ("default", ScaleKind::Default),
        ("full", ScaleKind::Full),
    ];

    /// The kind of the scale a result names (`BenchmarkResult::scale` keeps the name): a name
    /// that is none of the three is a factor.
    pub fn of_name(name: &str) -> ScaleKind {
        ScaleKind::NAMED
            .iter()
            .find(|(n, _)| *n == name.trim())
            .map_or(ScaleKind::Factor, |(_, kind)| *kind)
    }
}

/// A data scale: a name and a factor relative to the articles' sizes.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Scale {
    /// `smoke`, `default`, `full`, or the factor as written.
    pub name: String,
    /// Multiplier applied to the articles' sizes (`full` = 1).
    pub factor: f64,
    /// Which scale this is (the name says the same in words; results keep the name).
    #[serde(skip)]
    kind: ScaleKind,
}

impl Scale {
    /// 1/512 of the articles' sizes: seconds per suite.
    pub fn smoke() -> Scale {
        Scale {
            name: "smoke".into(),
            factor: 1.0 / 512.0,
            kind: ScaleKind::Smoke,
        }
    }

    /// 1/16 of the articles' sizes: the Quick start's few minutes.
    pub fn default_scale() -> Scale {
        Scale {
            name: "default".into(),
            factor: 1.0 / 16.0,
            kind: ScaleKind::Default,
        }
    }

    /// The articles' sizes.
    pub fn full() -> Scale {
        Scale {
            name: "full".into(),
            factor: 1.0,
            kind: ScaleKind::Full,
        }
    }

    /// Which scale this is.
    pub fn kind(&self) -> ScaleKind {
        self.kind
    }

    /// Whether this is the `smoke` scale, whose windows last milliseconds.
    pub fn is_smoke(&self) -> bool {
        self.kind == ScaleKind::Smoke
    }

    /// Parses `smoke`, `default`, `full` or a factor in (0, 1].
    pub fn parse(text: &str) -> Result<Scale> {
        match ScaleKind::of_name(text) {
            ScaleKind::Smoke => Ok(Scale::smoke()),
            ScaleKind::Default => Ok(Scale::default_scale()),
            ScaleKind::Full => Ok(Scale::full()),
            ScaleKind::Factor => {
                let other = text.trim();
                match other.parse::<f64>() {
                    Ok(f) if f > 0.0 && f <= 1.0 => Ok(Scale {
                        name: other.to_string(),
                        factor: f,
                        kind: ScaleKind::Factor,
                    }),
                    _ => Err(Error::Config(format!(
                        "DBBENCH_SCALE must be `smoke`, `default`, `full` or a factor in (0, 1] such as `0.25`; found `{other}`"
                    ))),
                }
            }
        }
    }

    /// The scale from `DBBENCH_SCALE`, or `fallback` when it is unset or empty.
    pub fn from_env(fallback: Scale) -> Result<Scale> {
        match std::env::var("DBBENCH_SCALE") {
            Ok(v) if !v.trim().is_empty() => Scale::parse(&v),
            _ => Ok(fallback),
        }
    }

    /// This scale as a benchmark sees it: `smoke` and `default` use the benchmark's own divisors
    /// (`smoke_divisor`, `default_divisor`), so a suite whose article is huge can pick smaller
    /// fractions; `full` and explicit factors are used as they are.
    pub fn for_benchmark(&self, run: &crate::model::config::RunSpec) -> Scale {
        let factor = match self.kind {
            ScaleKind::Smoke => 1.0 / run.smoke_divisor.max(1) as f64,
            ScaleKind::Default => 1.0 / run.default_divisor.max(1) as f64,
            ScaleKind::Full | ScaleKind::Factor => self.factor,
        };
        Scale {
            name: self.name.clone(),
            factor,
            kind: self.kind,
        }
    }

    /// Rows of the credit fixture at this scale.
    pub fn credit_rows(&self) -> u64 {
        ((CREDIT_FULL_ROWS as f64 * self.factor).round() as u64).max(1)
    }

    /// `bytes` at this scale, rounded up to whole 64 KiB extents, at least one extent.
    pub fn size(&self, bytes: u64) -> u64 {
        let scaled = (bytes as f64 * self.factor).ceil() as u64;
        scaled.div_ceil(EXTENT).max(1) * EXTENT
    }

    /// A count (rows, bytes of work) at this scale, at least 1.
    pub fn count(&self, full: u64) -> u64 {
        ((full as f64 * self.factor).round() as u64).max(1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_names_and_factors() {
        assert_eq!(Scale::parse("smoke").unwrap().factor, 1.0 / 512.0);
        assert_eq!(Scale::parse("0.5").unwrap().factor, 0.5);
        assert!(Scale::parse("2").is_err());
        assert!(Scale::parse("huge")
            .unwrap_err()
            .to_string()
            .contains("DBBENCH_SCALE"));
    }

    #[test]
    fn the_kind_follows_the_name() {
        assert!(Scale::parse(" smoke ").unwrap().is_smoke());
        assert!(!Scale::default_scale().is_smoke());
        assert_eq!(Scale::parse("0.25").unwrap().kind(), ScaleKind::Factor);
        assert_eq!(ScaleKind::of_name("full"), ScaleKind::Full);
        assert_eq!(ScaleKind::of_name("0.5"), ScaleKind::Factor);
        let run = crate::model::config::RunSpec::DEFAULT;
        assert!(Scale::smoke().for_benchmark(&run).is_smoke());
    }

    #[test]
    fn benchmarks_choose_their_own_fractions() {
        let run = crate::model::config::RunSpec {
            smoke_divisor: 65536,
            default_divisor: 1024,
            ..crate::model::config::RunSpec::DEFAULT
        };
        assert_eq!(Scale::smoke().for_benchmark(&run).factor, 1.0 / 65536.0);
        assert_eq!(
            Scale::default_scale().for_benchmark(&run).factor,
            1.0 / 1024.0
        );
        assert_eq!(Scale::full().for_benchmark(&run).factor, 1.0);
        assert_eq!(Scale::parse("0.5").unwrap().for_benchmark(&run).factor, 0.5);
        assert_eq!(
            Scale::smoke().for_benchmark(&crate::model::config::RunSpec::DEFAULT),
            Scale::smoke()
        );
    }

    #[test]
    fn sizes_round_to_extents() {
        let s = Scale::default_scale();
        assert_eq!(s.size(1024 * 1024), 64 * 1024);
        assert_eq!(s.size(1024 * 1024 * 1024), 64 * 1024 * 1024);
        assert_eq!(
            Scale::smoke().size(1024 * 1024),
            64 * 1024,
            "never below one extent"
        );
        assert_eq!(Scale::full().credit_rows(), 1_600_000);
        assert_eq!(Scale::default_scale().credit_rows(), 100_000);
    }
}
