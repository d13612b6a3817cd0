//! PostgreSQL's postfix `expr ISNULL` and `expr NOTNULL`, which sqlparser
//! reads as a column alias: written as `IS NULL` and `IS NOT NULL`. The
//! words are keywords in PostgreSQL's grammar (a column alias must say AS
//! to use them), so every bare one is the test; after AS, or as a
//! function's name, it is left alone. Positions after the rewrite move by
//! the letters added (one or four).

use sqlparser::tokenizer::Token;

use super::lock_syntax::{offset, significant_tokens};

/// `sql` with each postfix ISNULL / NOTNULL rewritten; `None` if it has
/// none.
pub(crate) fn rewrite_null_tests(sql: &str) -> Option<String> {
    let lower = sql.to_ascii_lowercase();
    if !lower.contains("isnull") && !lower.contains("notnull") {
        return None;
    }
    let tokens = significant_tokens(sql)?;
    let line_starts: Vec<usize> =
        std::iter::once(0).chain(sql.match_indices('\n').map(|(k, _)| k + 1)).collect();
    let mut edits = Vec::new();
    for (i, t) in tokens.iter().enumerate() {
        let Token::Word(w) = &t.token else { continue };
        if w.quote_style.is_some() {
            continue;
        }
        let replacement = match w.value.to_ascii_lowercase().as_str() {
            "isnull" => "IS NULL",
            "notnull" => "IS NOT NULL",
            _ => continue,
        };
        let after_as = i > 0
            && matches!(&tokens[i - 1].token, Token::Word(p) if p.quote_style.is_none() && p.value.eq_ignore_ascii_case("as"));
        let called = matches!(tokens.get(i + 1).map(|t| &t.token), Some(Token::LParen));
        let follows_value = i > 0
            && !matches!(&tokens[i - 1].token, Token::Comma | Token::LParen | Token::Period)
            && !matches!(&tokens[i - 1].token, Token::Word(p) if p.quote_style.is_none() && p.value.eq_ignore_ascii_case("select"));
        if after_as || called || !follows_value {
            continue;
        }
        let from = offset(&line_starts, sql, t.span.start);
        let to = offset(&line_starts, sql, t.span.end);
        edits.push((from, to, replacement));
    }
    if edits.is_empty() {
        return None;
    }
    let mut out = String::with_capacity(sql.len() + 4 * edits.len());
    let mut at = 0;
    for (from, to, replacement) in edits {
        out.push_str(&sql[at..from]);
        out.push_str(replacement);
        at = to;
    }
    out.push_str(&sql[at..]);
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::rewrite_null_tests;

    #[test]
    fn postfix_tests_are_rewritten() {
        assert_eq!(
            rewrite_null_tests("select a isnull, b notnull from t").unwrap(),
            "select a IS NULL, b IS NOT NULL from t"
        );
        assert_eq!(rewrite_null_tests("select 1 as isnull"), None);
        assert_eq!(rewrite_null_tests("select isnull(a) from t"), None);
        assert_eq!(rewrite_null_tests("select 'isnull'"), None);
        assert_eq!(rewrite_null_tests("select \"isnull\" from t"), None);
    }
}
