//! `INSERT INTO t [(cols)] OVERRIDING {SYSTEM | USER} VALUE …`: the clause,
//! which sqlparser's grammar lacks. It is blanked out of the text
//! (positions stay) and kept for the binder, which lets an identity
//! column defined GENERATED ALWAYS take the statement's value (SYSTEM) or
//! has every identity column take its sequence's (USER).

use sqlparser::keywords::Keyword;

use super::lock_syntax::{blank, keyword, may_start_with, significant_tokens, starts_with};
pub(crate) use crate::statement::Overriding;

/// `sql` without its OVERRIDING clause, and the clause; `None` for any
/// other text.
pub(crate) fn read_overriding(sql: &str) -> Option<(String, Overriding)> {
    if !may_start_with(sql, "insert") {
        return None;
    }
    if !sql.as_bytes().windows(10).any(|w| w.eq_ignore_ascii_case(b"overriding")) {
        return None;
    }
    let tokens = significant_tokens(sql)?;
    if !starts_with(&tokens, Keyword::INSERT) {
        return None;
    }
    let kw = |i: usize| tokens.get(i).and_then(|t| keyword(&t.token));
    // Not one of sqlparser's keywords: matched as a plain word.
    let overriding = |t: &sqlparser::tokenizer::Token| matches!(t, sqlparser::tokenizer::Token::Word(w) if w.quote_style.is_none() && w.value.eq_ignore_ascii_case("overriding"));
    let at = tokens.iter().position(|t| overriding(&t.token))?;
    let which = match kw(at + 1) {
        Some(Keyword::SYSTEM) => Overriding::System,
        Some(Keyword::USER) => Overriding::User,
        _ => return None,
    };
    if kw(at + 2) != Some(Keyword::VALUE) {
        return None;
    }
    Some((blank(sql, tokens[at].span.start, tokens[at + 2].span.end), which))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_clause_is_blanked_and_read() {
        let (text, o) = read_overriding("INSERT INTO t (a) OVERRIDING SYSTEM VALUE VALUES (1)").unwrap();
        assert_eq!(
            text,
            format!("INSERT INTO t (a) {} VALUES (1)", " ".repeat("OVERRIDING SYSTEM VALUE".len()))
        );
        assert_eq!(o, Overriding::System);
        let (_, o) = read_overriding("insert into t overriding user value select 1").unwrap();
        assert_eq!(o, Overriding::User);
        assert!(read_overriding("insert into t values ('overriding')").is_none());
        assert!(read_overriding("select 'overriding system value'").is_none());
    }
}
