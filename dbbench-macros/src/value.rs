//! What one written value means for the option it is given to.
//!
//! Each function here takes one [`Value`] and either returns the typed value or records an
//! error at the value's token and returns `None`. Checks that involve more than one option
//! live in `check.rs`; this module only knows about one option at a time.

use crate::errors::Errors;
use crate::parse::{Value, ValueKind};
use crate::setting::{Backend, GrowthValue, Recovery, Setting, SizeValue, StorageValue};
use crate::suggest::{self, Quote};
use crate::symbol::{self, Key};
use dbbench_options::size::{self, DurationError, GrowthError, PercentError, SizeError};

/// Converts `value` for storage option `key`, recording any error.
pub fn storage(key: Key, value: &Value, errors: &mut Errors) -> Option<Setting> {
    let typed = match key {
        Key::DataFiles | Key::TempdbFiles => StorageValue::Count(int(key, value, 1, 64, errors)?),
        Key::Maxdop => StorageValue::Count(int(key, value, 0, 64, errors)?),
        Key::DataSize | Key::LogSize | Key::LogPregrow | Key::TempdbSize => {
            StorageValue::Size(size(key, value, errors)?)
        }
        Key::Growth | Key::LogGrowth | Key::TempdbGrowth => {
            StorageValue::Growth(growth(key, value, errors)?)
        }
        Key::Ifi => StorageValue::Bool(boolean(key, value, errors)?),
        Key::Recovery => StorageValue::Recovery(keyword(
            key,
            value,
            &[
                (symbol::SIMPLE, Recovery::Simple),
                (symbol::FULL, Recovery::Full),
                (symbol::BULK_LOGGED, Recovery::BulkLogged),
            ],
            errors,
        )?),
        Key::DataOn => StorageValue::Volumes(volumes(key, value, errors)?),
        Key::LogOn => StorageValue::Volume(volume(key, value, errors)?),
        _ => unreachable!("`{key}` is not a storage option"),
    };
    Some(Setting {
        key,
        value: typed,
        span: value.span,
        id: value.id,
    })
}

/// Records `message` under the whole of `value`.
pub fn report(value: &Value, errors: &mut Errors, message: impl std::fmt::Display) {
    errors.range(value.span, value.end, message);
}

/// How to write `key` correctly, for messages: `` `ifi = true` or `ifi = false` ``.
///
/// When the user wrote a size without quotes (`growth = 1MB`), the example quotes what they
/// wrote, which is the fix they need.
pub fn example(key: Key, written: Option<&Value>) -> String {
    if let Some(ValueKind::Int { suffix, .. }) = written.map(|v| &v.kind) {
        let sized = matches!(
            key,
            Key::DataSize
                | Key::LogSize
                | Key::LogPregrow
                | Key::TempdbSize
                | Key::Timeout
                | Key::Budget
                | Key::Precision
        ) || is_growth(key);
        if sized && !suffix.is_empty() {
            return format!("`{key} = \"{}\"`", written.map_or("", |v| &v.text));
        }
    }
    // `recovery = full`: the word is right, only the quotes are missing.
    if let Some(written) = written.filter(|v| v.kind == ValueKind::Other) {
        let word = &written.text;
        let takes_word = match key {
            Key::Recovery => {
                [symbol::SIMPLE, symbol::FULL, symbol::BULK_LOGGED].contains(&word.as_str())
            }
            Key::Fixture => [symbol::FIXTURE_NONE, symbol::CREDIT].contains(&word.as_str()),
            Key::Order => [symbol::INTERLEAVED, symbol::BLOCKED].contains(&word.as_str()),
            Key::Cache => [symbol::WARM, symbol::COLD].contains(&word.as_str()),
            Key::Backends => Backend::all().any(|(keyword, _)| keyword == word),
            Key::Growth | Key::LogGrowth | Key::TempdbGrowth => word == symbol::GROWTH_NONE,
            Key::Baseline | Key::Name | Key::Like | Key::Prefix | Key::DataOn | Key::LogOn => true,
            _ => false,
        };
        if takes_word && syn::parse_str::<syn::Ident>(word).is_ok() {
            return format!("`{key} = \"{word}\"`");
        }
    }
    let values: &[&str] = match key {
        Key::DataFiles | Key::TempdbFiles => &["4"],
        Key::Maxdop => &["8"],
        Key::Repeat => &["3"],
        Key::Warmup => &["1"],
        Key::SmokeDivisor => &["4096"],
        Key::DefaultDivisor => &["64"],
        Key::DataSize => &["\"1000MB\""],
        Key::LogSize => &["\"8GB\""],
        Key::LogPregrow | Key::TempdbSize => &["\"1GB\""],
        Key::Growth | Key::LogGrowth | Key::TempdbGrowth => &["\"64MB\"", "\"10%\"", "\"none\""],
        Key::Ifi | Key::ScaleStorage => &["true", "false"],
        Key::Recovery => &["\"simple\"", "\"full\"", "\"bulk_logged\""],
        Key::DataOn => &["\"fast\"", "\"fast,slow\""],
        Key::LogOn => &["\"slow\""],
        Key::Fixture => &["\"none\"", "\"credit\""],
        Key::Backends => &["[\"mssql\"]", "[\"embedded\", \"mssql\"]"],
        Key::Timeout => &["\"30s\"", "\"10m\""],
        Key::Order => &["\"interleaved\"", "\"blocked\""],
        Key::Precision => &["\"5%\"", "\"2.5%\""],
        Key::MinRepeat => &["3"],
        Key::MaxRepeat => &["20"],
        Key::ForkRounds => &["1", "2"],
        Key::Budget => &["\"2m\"", "\"90s\""],
        Key::Cache => &["\"warm\"", "\"cold\""],
        Key::Baseline => &["\"data_files_1\""],
        Key::Name => &["\"test_3\""],
        Key::Like => &["\"test_3\""],
        Key::Prefix => &["\"pg_\""],
        Key::Without => &["[\"data_size\", \"growth\"]"],
    };
    let forms: Vec<String> = values.iter().map(|v| format!("{key} = {v}")).collect();
    suggest::one_of(forms.iter().map(String::as_str), Quote::Code)
}

/// The error for a value of the wrong kind: "`ifi` takes a boolean: write …".
pub fn wrong_type(key: Key, value: &Value, errors: &mut Errors) {
    let what = match key {
        Key::DataFiles
        | Key::TempdbFiles
        | Key::Maxdop
        | Key::Repeat
        | Key::Warmup
        | Key::SmokeDivisor
        | Key::DefaultDivisor
        | Key::MinRepeat
        | Key::MaxRepeat
        | Key::ForkRounds => "an integer",
        Key::Ifi | Key::ScaleStorage => "a boolean",
        Key::DataSize | Key::LogSize | Key::LogPregrow | Key::TempdbSize => {
            "a size string with a unit"
        }
        Key::Timeout | Key::Budget => "a duration string with a unit",
        Key::Precision => "a percentage string",
        Key::Backends => "a list of backend names",
        _ => "a string",
    };
    let message = format!("`{key}` takes {what}: write {}", example(key, Some(value)));
    report(value, errors, message);
}

/// An integer in `min..=max`.
pub fn int(key: Key, value: &Value, min: u32, max: u32, errors: &mut Errors) -> Option<u32> {
    let ValueKind::Int { value: n, suffix } = &value.kind else {
        wrong_type(key, value, errors);
        return None;
    };
    const INT_SUFFIXES: [&str; 12] = [
        "u8", "u16", "u32", "u64", "u128", "usize", "i8", "i16", "i32", "i64", "i128", "isize",
    ];
    if !suffix.is_empty() && !INT_SUFFIXES.contains(&suffix.as_str()) {
        wrong_type(key, value, errors);
        return None;
    }
    match u32::try_from(*n) {
        Ok(n) if (min..=max).contains(&n) => Some(n),
        _ => {
            let note = if key == Key::Maxdop {
                " (0 means the server's default)"
            } else {
                ""
            };
            let message = format!(
                "`{key}` must be between {min} and {max}{note}; found {}",
                value.text
            );
            report(value, errors, message);
            None
        }
    }
}

/// `true` or `false`.
pub fn boolean(key: Key, value: &Value, errors: &mut Errors) -> Option<bool> {
    match value.kind {
        ValueKind::Bool(b) => Some(b),
        _ => {
            wrong_type(key, value, errors);
            None
        }
    }
}

/// The contents of a string literal.
pub fn string<'v>(key: Key, value: &'v Value, errors: &mut Errors) -> Option<&'v str> {
    match &value.kind {
        ValueKind::Str(text) => Some(text),
        _ => {
            wrong_type(key, value, errors);
            None
        }
    }
}

/// A size such as `"64MB"`.
pub fn size(key: Key, value: &Value, errors: &mut Errors) -> Option<SizeValue> {
    let text = string(key, value, errors)?;
    let problem = match size::parse_size(text) {
        Ok(bytes) => {
            return Some(SizeValue {
                bytes,
                text: text.to_string(),
            })
        }
        Err(SizeError::Syntax) => {
            "must be a size such as \"64MB\": a whole number followed by KB, MB, GB or TB"
                .to_string()
        }
        Err(SizeError::Zero) => "must be greater than zero".to_string(),
        Err(SizeError::TooLarge) => {
            format!("must be at most \"{}\"", size::format_size(size::MAX_SIZE))
        }
    };
    report(value, errors, format!("`{key}` {problem}; found {text:?}"));
    None
}

fn is_growth(key: Key) -> bool {
    matches!(key, Key::Growth | Key::LogGrowth | Key::TempdbGrowth)
}

/// A growth: `"64MB"`, `"10%"` or `"none"`.
pub fn growth(key: Key, value: &Value, errors: &mut Errors) -> Option<GrowthValue> {
    let text = string(key, value, errors)?;
    let problem = match size::parse_growth(text) {
        Ok(size::Growth::Fixed(bytes)) => {
            return Some(GrowthValue::Fixed(SizeValue {
                bytes,
                text: text.to_string(),
            }))
        }
        Ok(size::Growth::Percent(pct)) => return Some(GrowthValue::Percent(pct)),
        Ok(size::Growth::None) => return Some(GrowthValue::None),
        Err(GrowthError::Syntax) => {
            "must be a size such as \"64MB\", a percent such as \"10%\", or \"none\"".to_string()
        }
        Err(GrowthError::TooSmall) => format!(
            "must grow by at least \"{}\", one extent",
            size::format_size(size::MIN_GROWTH)
        ),
        Err(GrowthError::TooLarge) => format!(
            "must grow by at most \"{}\"",
            size::format_size(size::MAX_GROWTH)
        ),
        Err(GrowthError::Percent) => format!(
            "must be a percent between \"{}%\" and \"{}%\"",
            size::MIN_PERCENT,
            size::MAX_PERCENT
        ),
    };
    report(value, errors, format!("`{key}` {problem}; found {text:?}"));
    None
}

/// A duration such as `"30s"`, in milliseconds.
pub fn duration(key: Key, value: &Value, errors: &mut Errors) -> Option<u64> {
    let text = string(key, value, errors)?;
    let problem = match size::parse_duration(text) {
        Ok(ms) => return Some(ms),
        Err(DurationError::Syntax) => {
            "must be a duration such as \"500ms\", \"30s\", \"10m\" or \"2h\""
        }
        Err(DurationError::Zero) => "must be longer than zero",
        Err(DurationError::TooLarge) => "is too long to be represented",
    };
    report(value, errors, format!("`{key}` {problem}; found {text:?}"));
    None
}

/// A precision such as `"5%"`, in hundredths of a percent.
pub fn percent(key: Key, value: &Value, errors: &mut Errors) -> Option<u32> {
    let text = string(key, value, errors)?;
    let problem = match size::parse_percent(text) {
        Ok(hundredths) => return Some(hundredths),
        Err(PercentError::Syntax) => {
            "must be a percentage such as \"5%\" or \"2.5%\" (the half-width of every ratio's \
             95% interval)"
                .to_string()
        }
        Err(PercentError::Range) => format!(
            "must be more than 0% and at most {}%",
            dbbench_options::defaults::MAX_PRECISION_PERCENT
        ),
    };
    report(value, errors, format!("`{key}` {problem}; found {text:?}"));
    None
}

/// One of a fixed set of string keywords.
pub fn keyword<T: Copy>(
    key: Key,
    value: &Value,
    choices: &[(&'static str, T)],
    errors: &mut Errors,
) -> Option<T> {
    let text = string(key, value, errors)?;
    if let Some((_, found)) = choices.iter().find(|(word, _)| *word == text) {
        return Some(*found);
    }
    let words = choices.iter().map(|(word, _)| *word);
    let message = format!(
        "`{key}` must be {}; found {text:?}{}",
        suggest::one_of(words.clone(), Quote::Str),
        suggest::did_you_mean(text, words, Quote::Str),
    );
    report(value, errors, message);
    None
}

/// `data_on`: comma-separated volume names, in order.
pub fn volumes(key: Key, value: &Value, errors: &mut Errors) -> Option<Vec<String>> {
    let text = string(key, value, errors)?;
    let names: Vec<String> = text
        .split(',')
        .map(|name| name.trim().to_string())
        .collect();
    if names.iter().any(String::is_empty) {
        let message = format!(
            "`{key}` names volumes separated by commas, such as \"fast\" or \"fast,slow\"; \
             found an empty volume name in {text:?}"
        );
        report(value, errors, message);
        return None;
    }
    let mut ok = true;
    for name in &names {
        ok &= volume_name(key, name, value, errors);
    }
    ok.then_some(names)
}

/// `log_on`: one volume name.
pub fn volume(key: Key, value: &Value, errors: &mut Errors) -> Option<String> {
    let text = string(key, value, errors)?;
    if text.contains(',') {
        let message =
            format!("`{key}` takes a single volume because the log is one file; found {text:?}");
        report(value, errors, message);
        return None;
    }
    if text.is_empty() {
        let message = format!("`{key}` needs a volume name such as \"slow\"");
        report(value, errors, message);
        return None;
    }
    volume_name(key, text, value, errors).then(|| text.to_string())
}

/// Whether `name` is a valid volume name, recording an error if not.
fn volume_name(key: Key, name: &str, value: &Value, errors: &mut Errors) -> bool {
    let valid = name
        .bytes()
        .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_');
    if !valid {
        let message = format!(
            "`{key}` has the volume name {name:?}; volume names may only contain lowercase \
             letters, digits and `_`, such as \"fast\""
        );
        report(value, errors, message);
    }
    valid
}

/// A backend name.
pub fn backend(value: &Value, errors: &mut Errors) -> Option<Backend> {
    let choices: Vec<(&'static str, Backend)> = Backend::all().collect();
    keyword(Key::Backends, value, &choices, errors)
}

/// The name of a `#[case]`: a snake_case identifier, since it becomes a test function's name.
pub fn case_name(value: &Value, errors: &mut Errors) -> Option<String> {
    let name = string(Key::Name, value, errors)?;
    let mut chars = name.chars();
    let snake = chars.next().is_some_and(|c| c.is_ascii_lowercase())
        && chars.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_');
    if !snake {
        let message = format!(
            "case name {name:?} is not a snake_case identifier: use lowercase letters, digits \
             and `_`, starting with a letter, such as {:?}",
            snake_case(name)
        );
        report(value, errors, message);
        return None;
    }
    // syn refuses keywords as identifiers, which is exactly the set a test cannot be named.
    if syn::parse_str::<syn::Ident>(name).is_err() {
        let message = format!(
            "case name {name:?} is a Rust keyword and cannot name a test; choose another name, such as \"{name}_case\""
        );
        report(value, errors, message);
        return None;
    }
    Some(name.to_string())
}

/// A snake_case spelling of `name`, to suggest in place of an invalid case name.
fn snake_case(name: &str) -> String {
    let mut out = String::new();
    for c in name.chars() {
        if c.is_ascii_uppercase() && !out.is_empty() && !out.ends_with('_') {
            out.push('_');
        }
        match c {
            'a'..='z' | '0'..='9' | '_' => out.push(c),
            'A'..='Z' => out.push(c.to_ascii_lowercase()),
            _ if !out.ends_with('_') => out.push('_'),
            _ => {}
        }
    }
    let out = out.trim_matches('_').to_string();
    match out.chars().next() {
        Some(c) if c.is_ascii_lowercase() => out,
        _ => format!("case_{out}"),
    }
}

#[cfg(test)]
mod tests;
