//! `TABLE name`, PostgreSQL's shorthand for `SELECT * FROM name`, where a
//! query may start: a statement, after `(`, a set operation or `AS`.
//! sqlparser reads it only inside a query, and there reads one token too
//! many, so it is written out before sqlparser sees it (the text grows:
//! the statement's later positions are not the user's).

use sqlparser::keywords::Keyword;
use sqlparser::tokenizer::Token;

use super::lock_syntax::{keyword, offset, significant_tokens};

/// `sql` with each such `TABLE` written `SELECT * FROM`; `None` if there
/// is none.
pub(crate) fn rewrite_table_queries(sql: &str) -> Option<String> {
    if !sql.as_bytes().windows(5).any(|w| w.eq_ignore_ascii_case(b"table")) {
        return None;
    }
    let tokens = significant_tokens(sql)?;
    let kw = |i: usize| tokens.get(i).and_then(|t| keyword(&t.token));
    let line_starts: Vec<usize> =
        std::iter::once(0).chain(sql.match_indices('\n').map(|(k, _)| k + 1)).collect();
    let mut at = Vec::new();
    for i in 0..tokens.len() {
        if kw(i) != Some(Keyword::TABLE) {
            continue;
        }
        let starts_query = i == 0
            || matches!(tokens[i - 1].token, Token::LParen)
            || matches!(
                kw(i - 1),
                Some(Keyword::UNION | Keyword::INTERSECT | Keyword::EXCEPT | Keyword::ALL | Keyword::AS)
            )
            || (kw(i - 1) == Some(Keyword::DISTINCT)
                && matches!(
                    i.checked_sub(2).and_then(kw),
                    Some(Keyword::UNION | Keyword::INTERSECT | Keyword::EXCEPT)
                ));
        // A name must follow (not `TABLE (`, not the end).
        let named = matches!(tokens.get(i + 1).map(|t| &t.token), Some(Token::Word(_)));
        if starts_query && named {
            at.push(offset(&line_starts, sql, tokens[i].span.start));
        }
    }
    if at.is_empty() {
        return None;
    }
    let mut out = String::with_capacity(sql.len() + 8 * at.len());
    let mut from = 0;
    for a in at {
        out.push_str(&sql[from..a]);
        out.push_str("SELECT * FROM");
        from = a + "TABLE".len();
    }
    out.push_str(&sql[from..]);
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_queries_are_written_out() {
        assert_eq!(rewrite_table_queries("TABLE t").unwrap(), "SELECT * FROM t");
        assert_eq!(
            rewrite_table_queries("table a union all (TABLE b) order by 1").unwrap(),
            "SELECT * FROM a union all (SELECT * FROM b) order by 1"
        );
        assert_eq!(
            rewrite_table_queries("create table t as table s").unwrap(),
            "create table t as SELECT * FROM s"
        );
        assert!(rewrite_table_queries("create table t (a int)").is_none());
        assert!(rewrite_table_queries("lock table t").is_none());
        assert!(rewrite_table_queries("select 'table x'").is_none());
    }
}
