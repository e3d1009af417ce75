//! Cases written as changes of other cases, as the articles describe their tests ("test 4: test 3
//! with the log pre-grown"): `#[case(name = "test_4", like = "test_3", log_pregrow = "4000MB")]`
//! starts from every option `test_3` ends up with, then applies its own.
//!
//! A case made by `#[cases(like = [...], prefix = "pg_", ...)]` is resolved the same way, from
//! the case it is named after. Chains may be as long as the article's; an unknown name, a cycle,
//! a `without` that removes nothing and a case identical to the one it starts from are errors at
//! the token that causes them, and a case that cannot be resolved is left out, so that no error
//! about its cells follows.

use crate::errors::Errors;
use crate::options::Spanned;
use crate::setting::{Backend, Setting};
use crate::suggest::{self, Quote};
use crate::symbol::Key;
use std::collections::{BTreeMap, HashMap, HashSet};

/// A case as written: its own options and the case it starts from.
#[derive(Debug, Clone)]
pub struct Written {
    /// The case's name.
    pub name: Spanned<String>,
    /// `like`: the case it starts from.
    pub like: Option<Spanned<String>>,
    /// The storage values it sets itself.
    pub storage: Vec<Setting>,
    /// `backends` as it sets them itself.
    pub backends: Option<Spanned<Vec<Backend>>>,
    /// `without`: options it leaves unset though the case it starts from sets them.
    pub without: Vec<Spanned<Key>>,
    /// For a case of `#[cases]`: the case it was made from, whose article figures it shares.
    pub mirrors: Option<String>,
    /// Whether every option of its attribute was valid: a case with a rejected option may look
    /// like the case it starts from only because that option is missing.
    pub complete: bool,
}

/// A case with everything it inherits resolved.
#[derive(Debug, Clone)]
pub struct Case {
    /// The case's name, which starts the names of its cells.
    pub name: Spanned<String>,
    /// Every storage value the case sets, inherited or its own, overriding `#[db_bench]`'s.
    pub storage: Vec<Setting>,
    /// The values written in this case's own attribute (or its `#[cases]`).
    pub own: Vec<Setting>,
    /// The backends this case's cells run on, replacing `#[db_bench]`'s `backends`.
    pub backends: Option<Spanned<Vec<Backend>>>,
    /// Whether `backends` is written in this case's own attribute rather than inherited.
    pub own_backends: bool,
    /// Options `#[db_bench]` sets that this case leaves unset (from a `without`).
    pub without: Vec<Spanned<Key>>,
    /// For a case of `#[cases]`: the case it was made from.
    pub mirrors: Option<String>,
}

/// What a case ends up with, for the cases that start from it.
#[derive(Debug, Clone, Default)]
struct Resolved {
    storage: BTreeMap<Key, Setting>,
    backends: Option<Spanned<Vec<Backend>>>,
    without: BTreeMap<Key, Spanned<Key>>,
}

impl Resolved {
    /// Whether `other` configures the same cells.
    fn same_as(&self, other: &Resolved) -> bool {
        let values = |r: &Resolved| {
            r.storage
                .values()
                .map(|s| (s.key, s.value.clone()))
                .collect::<Vec<_>>()
        };
        values(self) == values(other)
            && self.backends.as_ref().map(|b| &b.value) == other.backends.as_ref().map(|b| &b.value)
            && self.without.keys().eq(other.without.keys())
    }
}

#[derive(Clone)]
enum State {
    Pending,
    Visiting,
    Done(Option<Resolved>),
}

/// Resolves every case in order; `bench_keys` are the storage options `#[db_bench]` sets, which
/// a `without` may also remove.
pub fn resolve(written: &[Written], bench_keys: &HashSet<Key>, errors: &mut Errors) -> Vec<Case> {
    let index: HashMap<&str, usize> = written
        .iter()
        .enumerate()
        .map(|(i, w)| (w.name.value.as_str(), i))
        .collect();
    let mut resolver = Resolver {
        written,
        index,
        bench_keys,
        states: vec![State::Pending; written.len()],
        stack: Vec::new(),
    };
    (0..written.len())
        .filter_map(|i| {
            let resolved = resolver.resolve(i, errors)?;
            let w = &written[i];
            Some(Case {
                name: w.name.clone(),
                storage: resolved.storage.into_values().collect(),
                own: w.storage.clone(),
                backends: resolved.backends,
                own_backends: w.backends.is_some(),
                without: resolved.without.into_values().collect(),
                mirrors: w.mirrors.clone(),
            })
        })
        .collect()
}

struct Resolver<'w> {
    written: &'w [Written],
    index: HashMap<&'w str, usize>,
    bench_keys: &'w HashSet<Key>,
    states: Vec<State>,
    stack: Vec<usize>,
}

impl Resolver<'_> {
    fn resolve(&mut self, i: usize, errors: &mut Errors) -> Option<Resolved> {
        match &self.states[i] {
            State::Done(done) => return done.clone(),
            State::Visiting => {
                self.cycle(i, errors);
                return None;
            }
            State::Pending => {}
        }
        self.states[i] = State::Visiting;
        self.stack.push(i);
        let resolved = self.resolve_new(i, errors);
        self.stack.pop();
        // A case of a cycle is reported once, at the `like` that closes it; the others are
        // left out silently.
        if !matches!(self.states[i], State::Done(_)) {
            self.states[i] = State::Done(resolved.clone());
        }
        resolved
    }

    fn resolve_new(&mut self, i: usize, errors: &mut Errors) -> Option<Resolved> {
        let w = &self.written[i];
        let base = match &w.like {
            None => Resolved::default(),
            Some(like) => {
                let Some(&j) = self.index.get(like.value.as_str()) else {
                    self.unknown(w, like, errors);
                    return None;
                };
                if j == i {
                    let message = format!(
                        "case `{}` cannot be like itself: name the case it starts from, or remove \
                         `like` to start from `#[db_bench]`'s options",
                        w.name.value
                    );
                    errors.error(like.span, message);
                    self.states[i] = State::Done(None);
                    return None;
                }
                self.resolve(j, errors)?
            }
        };
        if matches!(self.states[i], State::Done(None)) {
            return None;
        }
        let mut out = base.clone();
        let mut ok = true;
        for key in &w.without {
            let source = w.like.as_ref().map_or("", |l| l.value.as_str());
            let removed = out.storage.remove(&key.value).is_some();
            // Unset means unset: a value `#[db_bench]` gives is left out of these cells too.
            let in_bench =
                self.bench_keys.contains(&key.value) && !out.without.contains_key(&key.value);
            if in_bench {
                out.without.insert(key.value, key.clone());
            }
            if !removed && !in_bench {
                let message = format!(
                    "`without` removes `{k}`, but neither `{source}` nor `#[db_bench]` sets \
                     `{k}`, so it changes nothing: remove {k:?} from `without`",
                    k = key.value.as_str()
                );
                errors.error(key.span, message);
                ok = false;
            }
        }
        for setting in &w.storage {
            out.without.remove(&setting.key);
            out.storage.insert(setting.key, setting.clone());
        }
        if let Some(backends) = &w.backends {
            out.backends = Some(backends.clone());
        }
        if let Some(like) = w
            .like
            .as_ref()
            .filter(|_| ok && w.complete && out.same_as(&base))
        {
            let message = if w.storage.is_empty() && w.backends.is_none() {
                format!(
                    "case `{}` is `{}` with nothing changed, so it would measure the same \
                     configuration twice: add the options this case changes after `like`",
                    w.name.value, like.value
                )
            } else {
                format!(
                    "case `{}` sets only values `{}` already has, so it would measure the same \
                     configuration twice: change at least one option, or remove this case",
                    w.name.value, like.value
                )
            };
            errors.error(like.span, message);
            return None;
        }
        ok.then_some(out)
    }

    fn unknown(&self, w: &Written, like: &Spanned<String>, errors: &mut Errors) {
        let names = self
            .written
            .iter()
            .map(|c| c.name.value.as_str())
            .filter(|n| *n != w.name.value);
        let hint = suggest::did_you_mean(&like.value, names.clone(), Quote::Str);
        let list: Vec<String> = names.map(|n| format!("`{n}`")).collect();
        let cases = if list.is_empty() {
            "there is no other case".to_string()
        } else {
            format!("the cases are {}", list.join(", "))
        };
        let message = format!(
            "`like` names {:?}, which is not a case of this benchmark{hint} ({cases}); `like` \
             starts a case from another `#[case]` of the same function",
            like.value
        );
        errors.error(like.span, message);
    }

    /// Reports the cycle that reaches case `i` again, at the `like` of the case that closes it.
    fn cycle(&mut self, i: usize, errors: &mut Errors) {
        let Some(start) = self.stack.iter().position(|&c| c == i) else {
            return;
        };
        let members: Vec<usize> = self.stack[start..].to_vec();
        let mut path: Vec<&str> = members
            .iter()
            .map(|&c| self.written[c].name.value.as_str())
            .collect();
        path.push(self.written[i].name.value.as_str());
        let last = *members.last().unwrap_or(&i);
        if let Some(like) = &self.written[last].like {
            let message = format!(
                "these cases start from each other in a circle ({}), so none has options to \
                 start from: let one of them start from `#[db_bench]`'s options by removing its \
                 `like`",
                path.join(" → ")
            );
            errors.error(like.span, message);
        }
        for c in members {
            self.states[c] = State::Done(None);
        }
    }
}

#[cfg(test)]
mod tests;
