//! "Did you mean …?" hints for misspelt names.
//!
//! Used for option names, keyword values and cell names. The distance is Damerau–Levenshtein
//! (optimal string alignment) because swapped letters (`gorwth`) are the commonest typo and
//! plain Levenshtein counts them twice.

/// The candidate nearest to `word`, if it is near enough to be a plausible typo.
pub fn nearest<'a>(word: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    let word = word.to_lowercase();
    candidates
        .into_iter()
        .map(|candidate| (distance(&word, &candidate.to_lowercase()), candidate))
        // Allow roughly one edit per three letters: `grwth` → `growth`, but `x` → nothing.
        .filter(|(d, candidate)| *d <= (candidate.chars().count() / 3).max(1))
        .min_by_key(|(d, _)| *d)
        .map(|(_, candidate)| candidate)
}

/// `"; did you mean `x`?"`, or nothing when no candidate is near, to append to a message.
pub fn did_you_mean<'a>(
    word: &str,
    candidates: impl IntoIterator<Item = &'a str>,
    quote: Quote,
) -> String {
    match nearest(word, candidates) {
        Some(near) => format!("; did you mean {}?", quote.apply(near)),
        None => String::new(),
    }
}

/// How a name is quoted in a message: option names as code, values as string literals.
#[derive(Clone, Copy)]
pub enum Quote {
    /// `` `growth` ``
    Code,
    /// `"full"`
    Str,
}

impl Quote {
    /// `text` quoted.
    pub fn apply(self, text: &str) -> String {
        match self {
            Quote::Code => format!("`{text}`"),
            Quote::Str => format!("{text:?}"),
        }
    }
}

/// `a, b or c` with each item quoted, for "valid values are …".
pub fn one_of<'a>(items: impl IntoIterator<Item = &'a str>, quote: Quote) -> String {
    let items: Vec<String> = items.into_iter().map(|item| quote.apply(item)).collect();
    match items.split_last() {
        None => String::new(),
        Some((last, [])) => last.clone(),
        Some((last, rest)) => format!("{} or {last}", rest.join(", ")),
    }
}

/// The optimal string alignment distance between `a` and `b` (strsim's, as clap uses).
pub fn distance(a: &str, b: &str) -> usize {
    strsim::osa_distance(a, b)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn distance_counts_edits_and_transpositions_once() {
        assert_eq!(distance("growth", "growth"), 0);
        assert_eq!(distance("grwth", "growth"), 1);
        assert_eq!(distance("gorwth", "growth"), 1);
        assert_eq!(distance("", "abc"), 3);
        assert_eq!(distance("kitten", "sitting"), 3);
    }

    #[test]
    fn nearest_finds_plausible_typos_only() {
        let options = ["growth", "log_growth", "ifi", "data_files"];
        assert_eq!(nearest("grwth", options), Some("growth"));
        assert_eq!(nearest("log_grwth", options), Some("log_growth"));
        assert_eq!(nearest("data_file", options), Some("data_files"));
        assert_eq!(nearest("Growth", options), Some("growth"));
        assert_eq!(nearest("xyz", options), None);
        assert_eq!(nearest("speed", options), None);
    }

    #[test]
    fn did_you_mean_quotes_the_suggestion() {
        assert_eq!(
            did_you_mean("fulll", ["simple", "full"], Quote::Str),
            "; did you mean \"full\"?"
        );
        assert_eq!(did_you_mean("zzz", ["full"], Quote::Code), "");
    }

    #[test]
    fn one_of_joins_with_or() {
        assert_eq!(one_of(["a"], Quote::Code), "`a`");
        assert_eq!(one_of(["a", "b", "c"], Quote::Str), "\"a\", \"b\" or \"c\"");
    }
}
