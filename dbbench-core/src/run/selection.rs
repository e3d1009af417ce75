//! Which cells of a benchmark this `cargo test` invocation selects, read from the test harness's
//! own arguments, so that the first cell test can run every selected cell interleaved.

/// libtest options that take a value (the value is not a filter).
const OPTIONS_WITH_VALUE: &[&str] = &[
    "--test-threads",
    "--skip",
    "--format",
    "--color",
    "--logfile",
    "--shuffle-seed",
    "-Z",
];

/// The filters of a libtest command line.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TestFilter {
    filters: Vec<String>,
    skips: Vec<String>,
    exact: bool,
}

impl TestFilter {
    /// Parses libtest arguments (without the program name).
    pub fn parse<I: IntoIterator<Item = String>>(args: I) -> TestFilter {
        let mut filter = TestFilter::default();
        let mut args = args.into_iter();
        while let Some(arg) = args.next() {
            if arg == "--exact" {
                filter.exact = true;
            } else if arg == "--skip" {
                filter.skips.extend(args.next());
            } else if let Some(skip) = arg.strip_prefix("--skip=") {
                filter.skips.push(skip.to_string());
            } else if OPTIONS_WITH_VALUE.contains(&arg.as_str()) {
                args.next();
            } else if !arg.starts_with('-') {
                filter.filters.push(arg);
            }
        }
        filter
    }

    /// The filter of this process's command line.
    pub fn from_args() -> TestFilter {
        TestFilter::parse(std::env::args().skip(1))
    }

    /// Whether libtest runs the test named `name`.
    pub fn selects(&self, name: &str) -> bool {
        let matches = |pattern: &String| {
            if self.exact {
                name == pattern
            } else {
                name.contains(pattern.as_str())
            }
        };
        (self.filters.is_empty() || self.filters.iter().any(matches))
            && !self.skips.iter().any(matches)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(args: &[&str]) -> TestFilter {
        TestFilter::parse(args.iter().map(|s| s.to_string()))
    }

    #[test]
    fn substring_and_exact_filters() {
        let f = parse(&["vlf::", "--test-threads", "1"]);
        assert!(f.selects("vlf::doubling::test_1"));
        assert!(!f.selects("files::insert::data_files_1"));
        let f = parse(&["--exact", "vlf::doubling::test_1"]);
        assert!(f.selects("vlf::doubling::test_1"));
        assert!(!f.selects("vlf::doubling::test_10"));
    }

    #[test]
    fn skips_and_no_filter() {
        let f = parse(&["--skip", "test_2", "--nocapture"]);
        assert!(f.selects("vlf::doubling::test_1"));
        assert!(!f.selects("vlf::doubling::test_2"));
        assert!(parse(&[]).selects("anything"));
    }
}
