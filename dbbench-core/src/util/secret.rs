//! The secrets this process was given (the passwords of `DBBENCH_POSTGRES`, `DBBENCH_MARIADB` and
//! `DBBENCH_MSSQL`), and the one scrubber every sink passes its text through: the console, the
//! errors printed at exit, every file written under the work dir (results JSON, CSV, report,
//! charts, snapshots) and the results store.
//!
//! Why a registry of values rather than redaction by shape: a password can hold any character a
//! connection string can carry, and each driver reads its string by rules of its own (where a
//! URL's user information ends, which quotes and escapes a key/value string takes), so editing
//! the text to hide the password missed whatever the editor read differently. What is *shown* of
//! a connection is built from its parsed parts (host, port, user, database), never from the
//! string; and in case a driver's message or a user's error quotes the password anyway, each
//! backend keeps the values here when it parses its settings ([`keep`]), in every form they
//! were written in (as decoded and as written), and [`scrub`] replaces them wherever they
//! appear.

/// Shown instead of a secret.
pub const REDACTED: &str = "***";

/// The secrets known so far, longest first (so a secret that contains another is replaced whole).
#[cfg(not(test))]
static KNOWN: std::sync::RwLock<Vec<String>> = std::sync::RwLock::new(Vec::new());

#[cfg(test)]
thread_local! {
    /// In the library's unit tests, the secrets of this thread only: the tests run in threads of
    /// one process and parse passwords such as `p`, which must not scrub another test's output.
    static KNOWN_HERE: std::cell::RefCell<Vec<String>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// `f` of the secrets known so far.
fn with_known<R>(f: impl FnOnce(&mut Vec<String>) -> R) -> R {
    #[cfg(not(test))]
    {
        f(&mut KNOWN.write().unwrap_or_else(|e| e.into_inner()))
    }
    #[cfg(test)]
    {
        KNOWN_HERE.with(|known| f(&mut known.borrow_mut()))
    }
}

/// Remembers `secret` for [`scrub`]; an empty one is ignored (only server backends have any).
// Called by server backends only: a build with none of them leaves it unused.
#[allow(dead_code)]
pub fn keep(secret: &str) {
    if secret.is_empty() {
        return;
    }
    with_known(|known| {
        if !known.iter().any(|k| k == secret) {
            known.push(secret.to_string());
            known.sort_by_key(|k| std::cmp::Reverse(k.len()));
        }
    });
}

/// The forms a URL's password may be quoted in: as written between the user name and the `@`
/// (wherever a parser may end the user information: the first `@`, as tokio-postgres does, or
/// the last one, as the `url` crate does), percent-decoded, and `decoded`, the password the
/// driver read when it parsed.
// Called by server backends only: a build with none of them leaves it unused.
#[allow(dead_code)]
pub fn url_password_forms(url: &str, decoded: Option<&str>) -> Vec<String> {
    let mut forms: Vec<String> = decoded.into_iter().map(str::to_string).collect();
    if let Some((_, rest)) = url.trim().split_once("://") {
        for end in [rest.find('@'), rest.rfind('@')].into_iter().flatten() {
            if let Some((_, raw)) = rest[..end].split_once(':') {
                forms.push(raw.to_string());
                forms.push(percent_decoded(raw));
                // An `@` left unencoded: what a parser takes for the host starts with the rest.
                forms.extend(raw.split('@').map(str::to_string));
            }
        }
    }
    forms.retain(|f| !f.is_empty());
    forms
}

/// `text` with every known secret replaced by [`REDACTED`].
pub fn scrub(text: &str) -> String {
    with_known(|known| scrub_with(known, text))
}

/// `text` with every one of `known` (longest first) replaced by [`REDACTED`].
pub fn scrub_with(known: &[String], text: &str) -> String {
    let mut known: Vec<&String> = known.iter().filter(|k| !k.is_empty()).collect();
    known.sort_by_key(|k| std::cmp::Reverse(k.len()));
    let mut out = text.to_string();
    for secret in known {
        if out.contains(secret.as_str()) {
            out = out.replace(secret.as_str(), REDACTED);
        }
    }
    out
}

/// `bytes` scrubbed when they are text (every file dbbench writes is, but charts and reports go
/// through the same writer as bytes); other bytes as they are.
pub fn scrub_bytes(bytes: &[u8]) -> std::borrow::Cow<'_, [u8]> {
    match std::str::from_utf8(bytes) {
        Ok(text) if with_known(|known| known.iter().any(|k| text.contains(k.as_str()))) => {
            std::borrow::Cow::Owned(scrub(text).into_bytes())
        }
        Ok(_) => std::borrow::Cow::Borrowed(bytes),
        Err(_) => std::borrow::Cow::Borrowed(bytes),
    }
}

/// `%XX` sequences decoded (invalid ones kept as written), for the decoded form of a URL part.
// Called by server backends only: a build with none of them leaves it unused.
#[allow(dead_code)]
pub fn percent_decoded(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = |b: u8| (b as char).to_digit(16);
        if bytes[i] == b'%' && i + 2 < bytes.len() {
            if let (Some(h), Some(l)) = (hex(bytes[i + 1]), hex(bytes[i + 2])) {
                out.push((h * 16 + l) as u8);
                i += 3;
                continue;
            }
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Every password the property tests of the backends' settings try: each printable ASCII
/// character alone and between two letters, each pair of the characters connection strings give
/// a meaning to, and one with all of them and a space. Each starts and ends with `Zq`, so that
/// it is found in a message only where the password itself was quoted.
#[cfg(test)]
// Called by server backends only: a build with none of them leaves it unused.
#[allow(dead_code)]
pub(crate) fn printable_passwords() -> Vec<String> {
    const MEANINGFUL: &str = "/?@;'\" {}=:%&#+,";
    let mut out: Vec<String> = (b' '..=b'~')
        .map(|c| format!("Zq{}Zq", c as char))
        .collect();
    for a in MEANINGFUL.chars() {
        for b in MEANINGFUL.chars() {
            out.push(format!("Zq{a}x{b}Zq"));
        }
    }
    out.push("Zqs/e?c@r;e't xZq".to_string());
    out.push(format!(
        "Zq{}Zq",
        (b' '..=b'~').map(char::from).collect::<String>()
    ));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kept_secret_is_scrubbed_longest_first() {
        keep("zz-secret-one");
        keep("zz-secret-one-and-more");
        keep("");
        assert_eq!(
            scrub("a zz-secret-one-and-more b zz-secret-one c"),
            "a *** b *** c"
        );
        assert_eq!(scrub("nothing here"), "nothing here");
        assert_eq!(
            scrub_bytes(b"x zz-secret-one").as_ref(),
            b"x ***".as_slice()
        );
        assert_eq!(scrub_bytes(&[0xff, 0x00]).as_ref(), &[0xff, 0x00]);
    }

    #[test]
    fn a_url_password_is_kept_as_written_and_decoded() {
        let forms = url_password_forms("postgres://u:zz%2Fp%40w@h:5432/d", Some("zz/p@w"));
        for form in ["zz%2Fp%40w", "zz/p@w"] {
            assert!(forms.iter().any(|f| f == form), "{form}: {forms:?}");
        }
        // A raw `@` in the password: either parser's reading is kept.
        let forms = url_password_forms("mysql://u:zq@raw/x@h:3306/", None);
        assert!(forms.iter().any(|f| f == "zq@raw/x"), "{forms:?}");
        assert!(forms.iter().any(|f| f == "zq"), "{forms:?}");
        assert_eq!(percent_decoded("a%20b%zz%4"), "a b%zz%4");
    }
}
