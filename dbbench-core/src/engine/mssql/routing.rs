//! Which tiberius API a statement must take. tiberius sends `execute` and parameterised `query`
//! as an RPC call of `sp_executesql`, and two kinds of statement cannot go that way:
//!
//! - Transaction control. SQL Server requires the transaction count to be the same before and
//!   after an EXECUTE, so `BEGIN TRANSACTION`, `COMMIT` and `ROLLBACK` sent that way fail with
//!   error 266 ("Transaction count after EXECUTE indicates a mismatching number of BEGIN and
//!   COMMIT statements"; tedious #891, rbatis #473).
//! - Session settings. "If a SET statement is specified in a dynamic SQL string that is run by
//!   using either sp_executesql or EXECUTE, the value of the SET option is restored after control
//!   is returned from the batch" (SET Statements (Transact-SQL), SQL Server 2008 to 2022), and a
//!   `USE` inside it lasts only until it ends (sp_executesql docs): `SET TRANSACTION ISOLATION
//!   LEVEL SERIALIZABLE` sent as an RPC would be silently undone before the next statement.
//!
//! Both go as a plain batch (`simple_query`), which is not wrapped in an EXECUTE, so its settings
//! last for the session.

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

/// The session options of `SET` (SET Statements (Transact-SQL): date and time, locking,
/// miscellaneous, query execution, ISO settings, statistics and transaction statements).
const SESSION_OPTIONS: &[&str] = &[
    "DATEFIRST",
    "DATEFORMAT",
    "DEADLOCK_PRIORITY",
    "LOCK_TIMEOUT",
    "CONCAT_NULL_YIELDS_NULL",
    "CURSOR_CLOSE_ON_COMMIT",
    "FIPS_FLAGGER",
    "IDENTITY_INSERT",
    "LANGUAGE",
    "OFFSETS",
    "QUOTED_IDENTIFIER",
    "ARITHABORT",
    "ARITHIGNORE",
    "FMTONLY",
    "NOCOUNT",
    "NOEXEC",
    "NUMERIC_ROUNDABORT",
    "PARSEONLY",
    "QUERY_GOVERNOR_COST_LIMIT",
    "RESULT_SET_CACHING",
    "ROWCOUNT",
    "TEXTSIZE",
    "ANSI_DEFAULTS",
    "ANSI_NULL_DFLT_OFF",
    "ANSI_NULL_DFLT_ON",
    "ANSI_NULLS",
    "ANSI_PADDING",
    "ANSI_WARNINGS",
    "FORCEPLAN",
    "SHOWPLAN_ALL",
    "SHOWPLAN_TEXT",
    "SHOWPLAN_XML",
    "STATISTICS",
    "IMPLICIT_TRANSACTIONS",
    "REMOTE_PROC_TRANSACTIONS",
    "TRANSACTION",
    "XACT_ABORT",
    "CONTEXT_INFO",
    "NO_BROWSETABLE",
];

/// Whether `sql` changes a setting of the session: a `SET` of a session option (not `SET
/// @variable`, not an `UPDATE … SET column =`) or `USE <database>` (not the `USE HINT` / `USE
/// PLAN` query hints). Such a statement must go as a plain batch to last beyond itself.
pub fn changes_session(sql: &str) -> bool {
    let words = words(sql);
    words.iter().enumerate().any(|(i, w)| {
        let next = words.get(i + 1).map(String::as_str);
        let after = words.get(i + 2).map(String::as_str);
        match w.as_str() {
            "SET" => next.is_some_and(|n| SESSION_OPTIONS.contains(&n)) && after != Some("="),
            "USE" => next.is_some_and(|n| n != "HINT" && n != "PLAN" && n != "="),
            _ => false,
        }
    })
}

/// The upper-cased words of `sql` outside comments, literals and quoted identifiers, with every
/// `=` as a word of its own (so `SET a = 1` is told from `SET NOCOUNT ON`). A quoted name is one
/// word `[]`, so `USE [db]` still has a word after `USE`.
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
            out.push("[]".to_string());
        } else if c == '=' {
            flush(&mut word, &mut out);
            out.push("=".to_string());
            i += 1;
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

    #[test]
    fn session_settings_are_recognised() {
        for sql in [
            "SET TRANSACTION ISOLATION LEVEL SERIALIZABLE",
            "set transaction isolation level read uncommitted;",
            "SET NOCOUNT ON",
            "SET XACT_ABORT ON; INSERT INTO t VALUES (1)",
            "SET LOCK_TIMEOUT 250",
            "SET DEADLOCK_PRIORITY LOW",
            "SET STATISTICS IO ON",
            "SET ANSI_NULLS, QUOTED_IDENTIFIER ON",
            "SET IDENTITY_INSERT dbo.t ON",
            "SET IMPLICIT_TRANSACTIONS OFF",
            "USE [dbbench_x]",
            "USE tempdb; SELECT 1",
            "-- a comment\nSET DATEFORMAT ymd",
        ] {
            assert!(changes_session(sql), "{sql}");
        }
    }

    #[test]
    fn other_sets_and_uses_are_not_session_settings() {
        for sql in [
            "UPDATE t SET a = 1",
            "UPDATE t SET nocount = 1",
            "UPDATE t SET [transaction] = 1",
            "SET @x = 1",
            "DECLARE @n int; SET @n = 5; SELECT @n",
            "SELECT a FROM t OPTION (USE HINT ('DISABLE_OPTIMIZED_PLAN_FORCING'))",
            "SELECT a FROM t OPTION (USE PLAN N'<xml/>')",
            "INSERT INTO t VALUES (N'SET NOCOUNT ON')",
            "/* USE master */ SELECT 1",
            "ALTER DATABASE [x] SET RECOVERY SIMPLE",
            "SELECT @@OPTIONS",
        ] {
            assert!(!changes_session(sql), "{sql}");
        }
    }
}
