//! Which tiberius API a statement must take. tiberius sends `execute` and parameterised `query`
//! as an RPC call of `sp_executesql`; SQL Server requires the transaction count to be the same
//! before and after an EXECUTE, so `BEGIN TRANSACTION`, `COMMIT` and `ROLLBACK` sent that way
//! fail with error 266 ("Transaction count after EXECUTE indicates a mismatching number of BEGIN
//! and COMMIT statements"; tedious #891, rbatis #473). Such statements go as a plain batch
//! (`simple_query`), which is not wrapped in an EXECUTE.

/// Whether `sql` may change `@@TRANCOUNT`: it begins, commits or rolls back a transaction, or
/// turns implicit transactions on. Comments, string literals and bracketed names are ignored, so
/// `INSERT … VALUES (N'COMMIT')` stays an RPC; `WITH ROLLBACK IMMEDIATE` is an option of
/// `ALTER DATABASE`, not a rollback.
pub fn changes_trancount(sql: &str) -> bool {
    let words = words(sql);
    words.iter().enumerate().any(|(i, w)| {
        let next = words.get(i + 1).map(String::as_str);
        let previous = i.checked_sub(1).map(|p| words[p].as_str());
        match w.as_str() {
            "BEGIN" => matches!(next, Some("TRAN" | "TRANSACTION" | "DISTRIBUTED")),
            "COMMIT" => true,
            "ROLLBACK" => previous != Some("WITH"),
            "IMPLICIT_TRANSACTIONS" => next == Some("ON"),
            _ => false,
        }
    })
}

/// The upper-cased words of `sql` outside comments, literals and quoted identifiers.
fn words(sql: &str) -> Vec<String> {
    let chars: Vec<char> = sql.chars().collect();
    let mut out = Vec::new();
    let mut word = String::new();
    let mut i = 0;
    let flush = |word: &mut String, out: &mut Vec<String>| {
        if !word.is_empty() {
            out.push(std::mem::take(word).to_ascii_uppercase());
        }
    };
    while i < chars.len() {
        let c = chars[i];
        let next = chars.get(i + 1).copied();
        let skip_to = |i: usize, end: &dyn Fn(usize) -> bool| {
            let mut j = i;
            while j < chars.len() && !end(j) {
                j += 1;
            }
            j
        };
        if c == '-' && next == Some('-') {
            flush(&mut word, &mut out);
            i = skip_to(i, &|j| chars[j] == '\n');
        } else if c == '/' && next == Some('*') {
            flush(&mut word, &mut out);
            i = skip_to(i + 2, &|j| {
                chars[j] == '*' && chars.get(j + 1) == Some(&'/')
            }) + 2;
        } else if c == '\'' || c == '[' || c == '"' {
            flush(&mut word, &mut out);
            let close = if c == '[' { ']' } else { c };
            // A doubled closing character is an escaped one and does not end the literal.
            let mut j = i + 1;
            while j < chars.len() {
                if chars[j] == close {
                    if chars.get(j + 1) == Some(&close) {
                        j += 2;
                        continue;
                    }
                    break;
                }
                j += 1;
            }
            i = j + 1;
        } else if c.is_alphanumeric() || c == '_' || c == '@' {
            word.push(c);
            i += 1;
        } else {
            flush(&mut word, &mut out);
            i += 1;
        }
    }
    flush(&mut word, &mut out);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn transaction_control_is_recognised() {
        for sql in [
            "BEGIN TRANSACTION",
            "begin tran",
            "COMMIT TRANSACTION",
            "COMMIT",
            "IF @@TRANCOUNT > 0 ROLLBACK TRANSACTION",
            "BEGIN DISTRIBUTED TRANSACTION",
            "SET IMPLICIT_TRANSACTIONS ON",
            "INSERT INTO t VALUES (1); COMMIT;",
            "BEGIN TRAN; UPDATE t SET a = 1",
        ] {
            assert!(changes_trancount(sql), "{sql}");
        }
    }

    #[test]
    fn other_statements_stay_rpc() {
        for sql in [
            "INSERT INTO t (a) VALUES (@P1)",
            "INSERT INTO t VALUES (N'COMMIT'), (N'it''s BEGIN TRAN')",
            "SELECT [rollback] FROM t",
            "-- COMMIT\nSELECT 1",
            "/* BEGIN TRAN */ SELECT 1",
            "BEGIN TRY SELECT 1 END TRY BEGIN CATCH END CATCH",
            "ALTER DATABASE [x] SET SINGLE_USER WITH ROLLBACK IMMEDIATE",
            "SET IMPLICIT_TRANSACTIONS OFF",
            "SELECT @@TRANCOUNT",
        ] {
            assert!(!changes_trancount(sql), "{sql}");
        }
    }
}
