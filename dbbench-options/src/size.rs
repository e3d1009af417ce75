//! The text forms of sizes (`"64MB"`), growths (`"10%"`, `"none"`) and durations (`"30s"`).
//!
//! Parsed at compile time so that a typo in a unit is a compile error at the literal instead of
//! a benchmark that fails after its fixture has loaded. Units are binary, as in SQL Server's
//! `SIZE = 64MB`: 1KB = 1024 bytes. No whitespace is allowed inside a literal, which keeps the
//! written text usable as-is in reports and in cell names.

/// One kibibyte.
pub const KB: u64 = 1024;
/// One mebibyte.
pub const MB: u64 = 1024 * KB;
/// One gibibyte.
pub const GB: u64 = 1024 * MB;
/// One tebibyte.
pub const TB: u64 = 1024 * GB;
/// The largest size an option accepts; SQL Server's limit for a log or data file is 16TB to
/// 64TB depending on the edition, so anything above is certainly a typo.
pub const MAX_SIZE: u64 = 64 * TB;
/// One extent: SQL Server's allocation unit, and the step in which the embedded storage layer
/// grows a file.
pub const EXTENT: u64 = 64 * KB;
/// The smallest fixed growth: one extent.
pub const MIN_GROWTH: u64 = EXTENT;
/// The largest fixed growth.
pub const MAX_GROWTH: u64 = TB;
/// The smallest size of one data file: one extent.
pub const MIN_FILE: u64 = EXTENT;
/// The smallest percent growth.
pub const MIN_PERCENT: u32 = 1;
/// The largest percent growth.
pub const MAX_PERCENT: u32 = 1000;

/// Why a size literal was rejected.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SizeError {
    /// Not digits followed by KB, MB, GB or TB.
    Syntax,
    /// Zero bytes.
    Zero,
    /// More than [`MAX_SIZE`].
    TooLarge,
}

/// Parses `"64MB"` into bytes.
pub fn parse_size(text: &str) -> Result<u64, SizeError> {
    let digits = text
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(text.len());
    if digits == 0 {
        return Err(SizeError::Syntax);
    }
    let factor = match text[digits..].to_ascii_uppercase().as_str() {
        "KB" => KB,
        "MB" => MB,
        "GB" => GB,
        "TB" => TB,
        _ => return Err(SizeError::Syntax),
    };
    // A number too long for u64 is certainly above the maximum.
    let number: u64 = text[..digits].parse().map_err(|_| SizeError::TooLarge)?;
    let bytes = number.checked_mul(factor).ok_or(SizeError::TooLarge)?;
    match bytes {
        0 => Err(SizeError::Zero),
        b if b > MAX_SIZE => Err(SizeError::TooLarge),
        b => Ok(b),
    }
}

/// How a file grows when it is full: the one type an autogrowth option has from the attribute to
/// the file system.
///
/// `S` is how a fixed growth is held. Parsing gives bytes (`u64`, the default), and the embedded
/// storage layer plans in bytes; a declaration holds the runtime's `Size`, the bytes together with
/// the literal as written, so reports and cell names show `1024MB` and not `1GB`. The parameter
/// keeps one type for both (the runtime re-exports `Growth<Size>` as its `Growth`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Growth<S = u64> {
    /// Grow by a fixed number of bytes.
    Fixed(S),
    /// Grow by this percent of the file's current size.
    Percent(u32),
    /// Never grow: a write past the end fails with a "file is full" error.
    None,
}

/// What a fixed growth is held as: its bytes and how it is written in reports.
pub trait FixedSize {
    /// The growth in bytes.
    fn bytes(&self) -> u64;
    /// The growth as written in reports.
    fn text(&self) -> String;
}

/// Bytes without a literal (a default, or a size scaled down): whole mebibytes as `64MB`,
/// anything else as `1048577 bytes`, so that no rounding hides what the file really does.
impl FixedSize for u64 {
    fn bytes(&self) -> u64 {
        *self
    }

    fn text(&self) -> String {
        if self.is_multiple_of(MB) {
            format!("{}MB", self / MB)
        } else {
            format!("{self} bytes")
        }
    }
}

impl<S: FixedSize> Growth<S> {
    /// Bytes to add to a file of `current` bytes, rounded up to whole extents (at least one, so
    /// that a tiny file or a growth below an extent still makes progress); `None` when the file
    /// may not grow.
    pub fn increment(&self, current: u64) -> Option<u64> {
        let raw = match self {
            Growth::Fixed(size) => size.bytes(),
            Growth::Percent(pct) => current * u64::from(*pct) / 100,
            Growth::None => return None,
        };
        Some(raw.div_ceil(EXTENT).max(1) * EXTENT)
    }

    /// The same growth with its fixed size in bytes only.
    pub fn in_bytes(&self) -> Growth {
        match self {
            Growth::Fixed(size) => Growth::Fixed(size.bytes()),
            Growth::Percent(pct) => Growth::Percent(*pct),
            Growth::None => Growth::None,
        }
    }

    /// The growth as text: its fixed size's text, `10%` or `none`.
    pub fn describe(&self) -> String {
        match self {
            Growth::Fixed(size) => size.text(),
            Growth::Percent(pct) => format!("{pct}%"),
            Growth::None => crate::keyword::GROWTH_NONE.to_string(),
        }
    }
}

/// Why a growth literal was rejected.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GrowthError {
    /// Neither a size, a percent nor `none`.
    Syntax,
    /// A fixed growth below [`MIN_GROWTH`].
    TooSmall,
    /// A fixed growth above [`MAX_GROWTH`].
    TooLarge,
    /// A percent outside [`MIN_PERCENT`]..=[`MAX_PERCENT`].
    Percent,
}

/// Parses `"1MB"`, `"10%"` or `"none"`.
pub fn parse_growth(text: &str) -> Result<Growth, GrowthError> {
    if text == crate::keyword::GROWTH_NONE {
        return Ok(Growth::None);
    }
    if let Some(number) = text.strip_suffix('%') {
        if number.is_empty() || !number.bytes().all(|b| b.is_ascii_digit()) {
            return Err(GrowthError::Syntax);
        }
        return match number.parse::<u32>() {
            Ok(pct) if (MIN_PERCENT..=MAX_PERCENT).contains(&pct) => Ok(Growth::Percent(pct)),
            _ => Err(GrowthError::Percent),
        };
    }
    match parse_size(text) {
        Ok(bytes) if bytes < MIN_GROWTH => Err(GrowthError::TooSmall),
        Ok(bytes) if bytes > MAX_GROWTH => Err(GrowthError::TooLarge),
        Ok(bytes) => Ok(Growth::Fixed(bytes)),
        Err(SizeError::Syntax) => Err(GrowthError::Syntax),
        Err(SizeError::Zero) => Err(GrowthError::TooSmall),
        Err(SizeError::TooLarge) => Err(GrowthError::TooLarge),
    }
}

/// Why a duration literal was rejected.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DurationError {
    /// Not digits followed by ms, s, m or h.
    Syntax,
    /// Zero.
    Zero,
    /// Too many milliseconds for a `u64`.
    TooLarge,
}

/// Parses `"500ms"`, `"30s"`, `"10m"` or `"2h"` into milliseconds.
pub fn parse_duration(text: &str) -> Result<u64, DurationError> {
    let digits = text
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(text.len());
    if digits == 0 {
        return Err(DurationError::Syntax);
    }
    let factor: u64 = match &text[digits..] {
        "ms" => 1,
        "s" => 1000,
        "m" => 60 * 1000,
        "h" => 60 * 60 * 1000,
        _ => return Err(DurationError::Syntax),
    };
    let number: u64 = text[..digits]
        .parse()
        .map_err(|_| DurationError::TooLarge)?;
    match number.checked_mul(factor) {
        Some(0) => Err(DurationError::Zero),
        Some(ms) => Ok(ms),
        None => Err(DurationError::TooLarge),
    }
}

/// Why a precision literal was rejected.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PercentError {
    /// Not a number with at most two decimals followed by `%`.
    Syntax,
    /// Zero, or above [`crate::defaults::MAX_PRECISION_PERCENT`].
    Range,
}

/// Parses `"5%"` or `"2.5%"` into hundredths of a percent (`500`, `250`), for `precision`.
pub fn parse_percent(text: &str) -> Result<u32, PercentError> {
    let number = text.strip_suffix('%').ok_or(PercentError::Syntax)?;
    let (whole, fraction) = number.split_once('.').unwrap_or((number, ""));
    let digits = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
    if whole.is_empty() || !digits(whole) || !digits(fraction) || fraction.len() > 2 {
        return Err(PercentError::Syntax);
    }
    if number.ends_with('.') {
        return Err(PercentError::Syntax);
    }
    let whole: u32 = whole.parse().map_err(|_| PercentError::Range)?;
    let fraction: u32 = format!("{fraction:0<2}").parse().unwrap_or(0);
    let hundredths = whole.checked_mul(100).ok_or(PercentError::Range)? + fraction;
    let max = (crate::defaults::MAX_PRECISION_PERCENT * 100.0) as u32;
    if hundredths == 0 || hundredths > max {
        return Err(PercentError::Range);
    }
    Ok(hundredths)
}

/// `bytes` in the largest unit that divides it (`"256KB"`), for messages that suggest a value.
pub fn format_size(bytes: u64) -> String {
    let units = [(TB, "TB"), (GB, "GB"), (MB, "MB"), (KB, "KB")];
    for (factor, unit) in units {
        if bytes >= factor && bytes.is_multiple_of(factor) {
            return format!("{}{unit}", bytes / factor);
        }
    }
    // Every size the options accept is a whole number of KB; round up for anything else.
    format!("{}KB", bytes.div_ceil(KB))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_use_binary_units_in_any_case() {
        assert_eq!(parse_size("64KB"), Ok(64 * 1024));
        assert_eq!(parse_size("1MB"), Ok(1024 * 1024));
        assert_eq!(parse_size("1mb"), Ok(MB));
        assert_eq!(parse_size("2Gb"), Ok(2 * GB));
        assert_eq!(parse_size("64TB"), Ok(MAX_SIZE));
    }

    #[test]
    fn sizes_reject_bad_text() {
        for text in [
            "", "MB", "1", "1 MB", "1MX", "1B", "1.5MB", "-1MB", " 1MB", "1MB ",
        ] {
            assert_eq!(parse_size(text), Err(SizeError::Syntax), "{text:?}");
        }
        assert_eq!(parse_size("0MB"), Err(SizeError::Zero));
        assert_eq!(parse_size("65TB"), Err(SizeError::TooLarge));
        assert_eq!(
            parse_size("99999999999999999999KB"),
            Err(SizeError::TooLarge)
        );
        assert_eq!(
            parse_size("18446744073709551615TB"),
            Err(SizeError::TooLarge)
        );
    }

    #[test]
    fn precision_takes_percents_with_up_to_two_decimals() {
        assert_eq!(parse_percent("5%"), Ok(500));
        assert_eq!(parse_percent("2.5%"), Ok(250));
        assert_eq!(parse_percent("0.25%"), Ok(25));
        assert_eq!(parse_percent("50%"), Ok(5000));
        for bad in ["5", "%", "5.%", ".5%", "5 %", "1.234%", "-5%", "five%"] {
            assert_eq!(parse_percent(bad), Err(PercentError::Syntax), "{bad}");
        }
        assert_eq!(parse_percent("0%"), Err(PercentError::Range));
        assert_eq!(parse_percent("51%"), Err(PercentError::Range));
    }

    #[test]
    fn growth_takes_sizes_percents_and_none() {
        assert_eq!(parse_growth("64KB"), Ok(Growth::Fixed(MIN_GROWTH)));
        assert_eq!(parse_growth("1TB"), Ok(Growth::Fixed(TB)));
        assert_eq!(parse_growth("1%"), Ok(Growth::Percent(1)));
        assert_eq!(parse_growth("1000%"), Ok(Growth::Percent(1000)));
        assert_eq!(parse_growth("none"), Ok(Growth::None));
    }

    #[test]
    fn growth_rejects_out_of_range_and_bad_text() {
        assert_eq!(parse_growth("63KB"), Err(GrowthError::TooSmall));
        assert_eq!(parse_growth("0MB"), Err(GrowthError::TooSmall));
        assert_eq!(parse_growth("1025GB"), Err(GrowthError::TooLarge));
        assert_eq!(parse_growth("100TB"), Err(GrowthError::TooLarge));
        assert_eq!(parse_growth("0%"), Err(GrowthError::Percent));
        assert_eq!(parse_growth("1001%"), Err(GrowthError::Percent));
        assert_eq!(parse_growth("99999999999%"), Err(GrowthError::Percent));
        for text in ["%", "1.5%", "x%", "None", "1 MX", ""] {
            assert_eq!(parse_growth(text), Err(GrowthError::Syntax), "{text:?}");
        }
    }

    #[test]
    fn growth_increments_round_up_to_whole_extents() {
        assert_eq!(Growth::Fixed(1).increment(0), Some(EXTENT));
        assert_eq!(Growth::<u64>::Percent(10).increment(10 * MB), Some(MB));
        assert_eq!(
            Growth::<u64>::Percent(10).increment(1000 * KB),
            Some(2 * EXTENT)
        );
        assert_eq!(Growth::<u64>::Percent(10).increment(0), Some(EXTENT));
        assert_eq!(Growth::<u64>::None.increment(MB), None);
    }

    #[test]
    fn growth_in_bytes_is_written_in_whole_mebibytes_or_bytes() {
        assert_eq!(Growth::Fixed(MB).describe(), "1MB");
        assert_eq!(Growth::Fixed(GB).describe(), "1024MB");
        assert_eq!(Growth::Fixed(MB + 1).describe(), "1048577 bytes");
        assert_eq!(Growth::<u64>::Percent(10).describe(), "10%");
        assert_eq!(Growth::<u64>::None.describe(), "none");
    }

    #[test]
    fn durations_are_milliseconds() {
        assert_eq!(parse_duration("500ms"), Ok(500));
        assert_eq!(parse_duration("30s"), Ok(30_000));
        assert_eq!(parse_duration("10m"), Ok(600_000));
        assert_eq!(parse_duration("2h"), Ok(7_200_000));
        assert_eq!(parse_duration("0s"), Err(DurationError::Zero));
        assert_eq!(parse_duration("30"), Err(DurationError::Syntax));
        assert_eq!(parse_duration("30 s"), Err(DurationError::Syntax));
        assert_eq!(parse_duration("1d"), Err(DurationError::Syntax));
        assert_eq!(
            parse_duration("18446744073709551615h"),
            Err(DurationError::TooLarge)
        );
    }

    #[test]
    fn format_picks_the_largest_exact_unit() {
        assert_eq!(format_size(256 * KB), "256KB");
        assert_eq!(format_size(MB), "1MB");
        assert_eq!(format_size(1536 * KB), "1536KB");
        assert_eq!(format_size(3 * TB), "3TB");
        assert_eq!(format_size(100), "1KB");
    }
}
