//! [`BackendKind`]: a backend by its name, the options crate's table the only list of them.
//! Apart from the storage and run options because results, the registry and the command line
//! name backends without any configuration.

use dbbench_options::keyword;
use serde::Serialize;

/// A database backend, by its name: the keyword of `backends = [...]` and `DBBENCH_BACKEND`,
/// which is also its Cargo feature's name.
///
/// The backends dbbench knows are the options crate's one table
/// ([`dbbench_options::keyword::BACKENDS`]); this type lists none of them, so a new backend is a
/// row there and its folder under `engine/`, not a variant here. Every name of the table is known
/// in every build, with or without the backend's feature, so a stored result of any backend is
/// read back.
///
/// Serialized as its keyword (`"mssql"`), as the enum this once was serialized its variants;
/// a name the table does not have fails to deserialize, naming the ones it has.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct BackendKind {
    keyword: &'static str,
}

impl BackendKind {
    /// The backend used when `DBBENCH_BACKEND` is unset: needs no server.
    pub const DEFAULT: BackendKind = BackendKind::named(dbbench_options::defaults::BACKEND);

    /// Every backend of the name table, in the order they are documented.
    pub const ALL: [BackendKind; keyword::BACKENDS.len()] = {
        let mut all = [BackendKind::DEFAULT; keyword::BACKENDS.len()];
        let mut i = 0;
        while i < all.len() {
            all[i] = BackendKind::named(keyword::BACKENDS[i].keyword);
            i += 1;
        }
        all
    };

    /// The backend called `keyword` (`BackendKind::named("mssql")`), for constants: what the
    /// macro's expansion and a backend's own profile write. The macro checks the names it
    /// emits against the table; [`BackendKind::from_keyword`] checks a name read at run time.
    pub const fn named(keyword: &'static str) -> BackendKind {
        BackendKind { keyword }
    }

    /// The keyword used in `backends = [...]` and `DBBENCH_BACKEND`.
    pub fn keyword(&self) -> &'static str {
        self.keyword
    }

    /// The backend as a sentence names it (`SQL Server`), from the name table; a name the table
    /// lacks is its own title.
    pub fn title(&self) -> &'static str {
        keyword::backend(self.keyword).map_or(self.keyword, |b| b.title)
    }

    /// The backend of the name table whose keyword is `keyword`.
    pub fn from_keyword(keyword: &str) -> Option<BackendKind> {
        keyword::backend(keyword).map(|b| BackendKind::named(b.keyword))
    }

    /// Every keyword of the name table, backticked and joined by `or` (`` `embedded` or
    /// `mssql` ``), for errors that say which names there are.
    fn known() -> String {
        let known: Vec<String> = BackendKind::ALL
            .iter()
            .map(|k| format!("`{}`", k.keyword()))
            .collect();
        known.join(" or ")
    }

    /// The backend named by `DBBENCH_BACKEND`; unset or empty means [`BackendKind::DEFAULT`].
    pub fn from_env() -> crate::model::error::Result<BackendKind> {
        let name = std::env::var("DBBENCH_BACKEND").unwrap_or_default();
        let name = name.trim();
        if name.is_empty() {
            return Ok(BackendKind::DEFAULT);
        }
        BackendKind::from_keyword(name).ok_or_else(|| {
            crate::model::error::Error::Config(format!(
                "DBBENCH_BACKEND must be {}; found `{name}`",
                BackendKind::known()
            ))
        })
    }
}

/// The keyword, as a message names the backend (`mssql`).
impl std::fmt::Debug for BackendKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.keyword)
    }
}

impl Serialize for BackendKind {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.keyword)
    }
}

impl<'de> serde::Deserialize<'de> for BackendKind {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let name = std::borrow::Cow::<'de, str>::deserialize(deserializer)?;
        BackendKind::from_keyword(&name).ok_or_else(|| {
            serde::de::Error::custom(format!(
                "unknown backend `{name}`: a backend is {}",
                BackendKind::known()
            ))
        })
    }
}
