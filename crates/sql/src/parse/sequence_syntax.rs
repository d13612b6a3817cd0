//! CREATE SEQUENCE's options in any order. PostgreSQL accepts them in any
//! order (`START 5 INCREMENT 2`); sqlparser only in one. The statement's
//! tokens are regrouped into sqlparser's order before it parses them, so
//! the grammar stays sqlparser's and only the order changes.

use sqlparser::dialect::PostgreSqlDialect;
use sqlparser::keywords::Keyword;
use sqlparser::tokenizer::{Token, Tokenizer};

/// The order sqlparser reads the options in.
const ORDER: [Keyword; 8] = [
    Keyword::AS,
    Keyword::INCREMENT,
    Keyword::MINVALUE,
    Keyword::MAXVALUE,
    Keyword::START,
    Keyword::CACHE,
    Keyword::CYCLE,
    Keyword::OWNED,
];

fn keyword(t: &Token) -> Option<Keyword> {
    match t {
        Token::Word(w) if w.quote_style.is_none() => Some(w.keyword),
        _ => None,
    }
}

/// `sql` with a CREATE SEQUENCE's options in sqlparser's order, or `None`
/// if it is not a CREATE SEQUENCE (or its options are already in order).
pub(crate) fn canonical_create_sequence(sql: &str) -> Option<String> {
    let tokens: Vec<Token> = Tokenizer::new(&PostgreSqlDialect {}, sql)
        .tokenize()
        .ok()?
        .into_iter()
        .filter(|t| !matches!(t, Token::Whitespace(_)))
        .collect();
    let mut i = 0;
    let kw = |i: usize| tokens.get(i).and_then(keyword);
    if kw(i) != Some(Keyword::CREATE) {
        return None;
    }
    i += 1;
    if matches!(kw(i), Some(Keyword::TEMP | Keyword::TEMPORARY)) {
        i += 1;
    }
    if kw(i) != Some(Keyword::SEQUENCE) {
        return None;
    }
    i += 1;
    if kw(i) == Some(Keyword::IF) {
        i += 3;
    }
    // The name: words joined by periods.
    i += 1;
    while tokens.get(i) == Some(&Token::Period) {
        i += 2;
    }
    let header = &tokens[..i.min(tokens.len())];
    // Each option starts at one of the order's keywords (NO MINVALUE, NO
    // MAXVALUE and NO CYCLE at NO).
    let starts = |j: usize| -> Option<usize> {
        let k = kw(j)?;
        let k = if k == Keyword::NO { kw(j + 1)? } else { k };
        ORDER.iter().position(|&o| o == k)
    };
    let mut clauses: Vec<(usize, &[Token])> = Vec::new();
    let mut j = i;
    while j < tokens.len() {
        if tokens[j] == Token::SemiColon || tokens[j] == Token::EOF {
            break;
        }
        let rank = starts(j)?;
        let mut end = j + 1;
        if ORDER[rank] == Keyword::OWNED {
            // OWNED BY name[.name…]: its words are not options.
            end = j + 3;
            while tokens.get(end) == Some(&Token::Period) {
                end += 2;
            }
            end = end.min(tokens.len());
        } else {
            while end < tokens.len()
                && starts(end).is_none()
                && !matches!(tokens[end], Token::SemiColon | Token::EOF)
            {
                end += 1;
            }
        }
        clauses.push((rank, &tokens[j..end]));
        j = end;
    }
    if clauses.windows(2).all(|w| w[0].0 <= w[1].0) {
        return None;
    }
    clauses.sort_by_key(|(rank, _)| *rank);
    let mut out = String::new();
    for t in header.iter().chain(clauses.iter().flat_map(|(_, c)| c.iter())) {
        if !out.is_empty() && *t != Token::Period && !out.ends_with('.') {
            out.push(' ');
        }
        out.push_str(&t.to_string());
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn options_come_out_in_sqlparsers_order() {
        assert_eq!(
            canonical_create_sequence("create sequence s start 5 increment 2").as_deref(),
            Some("create sequence s increment 2 start 5")
        );
        assert_eq!(
            canonical_create_sequence(
                "CREATE TEMP SEQUENCE IF NOT EXISTS public.s CYCLE START WITH 3 NO MAXVALUE AS int"
            )
            .as_deref(),
            Some("CREATE TEMP SEQUENCE IF NOT EXISTS public.s AS int NO MAXVALUE START WITH 3 CYCLE")
        );
        assert_eq!(
            canonical_create_sequence("create sequence s owned by t.a start 1").as_deref(),
            Some("create sequence s start 1 owned by t.a")
        );
        assert_eq!(canonical_create_sequence("create sequence s increment 2 start 5"), None);
        assert_eq!(canonical_create_sequence("create table t (a int)"), None);
    }
}
