//! `INSERT … ON CONFLICT (elements) [WHERE predicate] DO …` where an
//! element is an expression (`lower(key)`, `(a + 1)`), carries a COLLATE
//! or an operator class, or the target has a WHERE: sqlparser's grammar
//! takes only a list of column names. The target is blanked out of the
//! text (positions stay; sqlparser then reads `ON CONFLICT DO …`) and
//! kept for the binder, which infers the arbiter indexes from it. A
//! target of plain column names is left to sqlparser.

use sqlparser::keywords::Keyword;
use sqlparser::tokenizer::{Token, TokenWithSpan};

use super::lock_syntax::{blank, keyword, may_start_with, offset, significant_tokens, starts_with};
pub(crate) use crate::statement::ConflictTarget;

/// `sql` without its ON CONFLICT inference target, and the target; `None`
/// for any other text, or a target sqlparser reads itself.
pub(crate) fn read_conflict_target(sql: &str) -> Option<(String, ConflictTarget)> {
    if !may_start_with(sql, "insert") {
        return None;
    }
    if !sql.as_bytes().windows(8).any(|w| w.eq_ignore_ascii_case(b"conflict")) {
        return None;
    }
    let tokens = significant_tokens(sql)?;
    if !starts_with(&tokens, Keyword::INSERT) {
        return None;
    }
    let kw = |i: usize| tokens.get(i).and_then(|t| keyword(&t.token));
    // ON CONFLICT ( at the statement's own level.
    let mut depth = 0usize;
    let mut open = None;
    for (i, t) in tokens.iter().enumerate() {
        match t.token {
            Token::LParen => depth += 1,
            Token::RParen => depth = depth.saturating_sub(1),
            _ if depth == 0 && kw(i) == Some(Keyword::ON) && kw(i + 1) == Some(Keyword::CONFLICT) => {
                if matches!(tokens.get(i + 2).map(|t| &t.token), Some(Token::LParen)) {
                    open = Some(i + 2);
                }
                break;
            }
            _ => {}
        }
    }
    let open = open?;
    // The elements, split at commas inside the target's parentheses.
    let mut elements: Vec<&[TokenWithSpan]> = Vec::new();
    let (mut depth, mut start, mut close) = (0usize, open + 1, None);
    for (i, t) in tokens.iter().enumerate().skip(open) {
        match t.token {
            Token::LParen => depth += 1,
            Token::RParen => {
                depth -= 1;
                if depth == 0 {
                    elements.push(&tokens[start..i]);
                    close = Some(i);
                    break;
                }
            }
            Token::Comma if depth == 1 => {
                elements.push(&tokens[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    let close = close?;
    // WHERE predicate, up to DO at this level.
    let (mut predicate, mut end) = (None, close);
    if kw(close + 1) == Some(Keyword::WHERE) {
        let mut depth = 0usize;
        let mut stop = None;
        for (i, t) in tokens.iter().enumerate().skip(close + 2) {
            match t.token {
                Token::LParen => depth += 1,
                Token::RParen => depth = depth.saturating_sub(1),
                _ if depth == 0 && kw(i) == Some(Keyword::DO) => {
                    stop = Some(i);
                    break;
                }
                _ => {}
            }
        }
        let stop = stop?;
        predicate = Some(text_of(sql, &tokens[close + 2..stop])?);
        end = stop - 1;
    }
    let plain = |e: &&[TokenWithSpan]| matches!(e, [t] if matches!(t.token, Token::Word(_)));
    if predicate.is_none() && elements.iter().all(plain) {
        return None;
    }
    let exact = elements.iter().all(|e| element_expression(e).len() == e.len() || default_decoration(e));
    let elements =
        elements.into_iter().map(|e| text_of(sql, element_expression(e))).collect::<Option<_>>()?;
    let text = blank(sql, tokens[open].span.start, tokens[end].span.end);
    Some((text, ConflictTarget { elements, predicate, other_decoration: !exact }))
}

/// An element's expression: without its `COLLATE name` and operator
/// class (a name after the expression), which select nothing here (every
/// column has one collation and one btree operator class).
fn element_expression(e: &[TokenWithSpan]) -> &[TokenWithSpan] {
    let mut depth = 0usize;
    for (i, t) in e.iter().enumerate() {
        match t.token {
            Token::LParen => depth += 1,
            Token::RParen => depth = depth.saturating_sub(1),
            _ if depth == 0 && i > 0 && keyword(&t.token) == Some(Keyword::COLLATE) => return &e[..i],
            _ => {}
        }
    }
    // `expr opclass`: a name (not a keyword) right after a name or a
    // closing parenthesis.
    let n = e.len();
    let opclass = n >= 2
        && matches!(&e[n - 1].token, Token::Word(w) if w.keyword == Keyword::NoKeyword)
        && matches!(e[n - 2].token, Token::Word(_) | Token::RParen);
    if opclass {
        &e[..n - 1]
    } else {
        e
    }
}

/// Whether the COLLATE and operator class an element names are the
/// defaults every index here has: `COLLATE "default"`, a type's own
/// `…_ops` (not a pattern class).
fn default_decoration(e: &[TokenWithSpan]) -> bool {
    let rest = &e[element_expression(e).len()..];
    let mut words = rest.iter().filter_map(|t| match &t.token {
        Token::Word(w) if w.keyword != Keyword::COLLATE => Some(w.value.to_lowercase()),
        _ => None,
    });
    let has_collate = rest.iter().any(|t| keyword(&t.token) == Some(Keyword::COLLATE));
    let collation_ok = !has_collate || words.next().is_some_and(|c| c == "default");
    collation_ok && words.all(|o| o.ends_with("_ops") && !o.ends_with("_pattern_ops"))
}

/// The source text the tokens `t` span.
fn text_of(sql: &str, t: &[TokenWithSpan]) -> Option<String> {
    let (first, last) = (t.first()?, t.last()?);
    let line_starts: Vec<usize> =
        std::iter::once(0).chain(sql.match_indices('\n').map(|(k, _)| k + 1)).collect();
    let from = offset(&line_starts, sql, first.span.start);
    let to = offset(&line_starts, sql, last.span.end);
    Some(sql[from..to].to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn expression_targets_are_read_and_blanked() {
        let sql = "INSERT INTO t VALUES (1) ON CONFLICT (lower(k), (a + 1) COLLATE \"C\", b text_pattern_ops) WHERE a > 0 DO NOTHING";
        let (text, target) = read_conflict_target(sql).unwrap();
        assert_eq!(target.elements, ["lower(k)", "(a + 1)", "b"]);
        assert_eq!(target.predicate.as_deref(), Some("a > 0"));
        assert!(target.other_decoration);
        assert_eq!(text.len(), sql.len());
        assert!(text.contains("ON CONFLICT ") && text.ends_with(" DO NOTHING"));
        assert!(!text.contains("lower"));
        let (_, t) =
            read_conflict_target("insert into t values (1) on conflict (a) where a > 0 do nothing").unwrap();
        assert_eq!((t.elements, t.predicate.as_deref()), (vec!["a".to_owned()], Some("a > 0")));
        assert!(!t.other_decoration);
        let (_, t) = read_conflict_target(
            "insert into t values (1) on conflict (lower(a) collate \"default\" text_ops) do nothing",
        )
        .unwrap();
        assert!(!t.other_decoration);
    }

    #[test]
    fn plain_targets_and_other_text_are_left_alone() {
        assert!(read_conflict_target("INSERT INTO t VALUES (1) ON CONFLICT (a, b) DO NOTHING").is_none());
        assert!(read_conflict_target("INSERT INTO t VALUES (1) ON CONFLICT DO NOTHING").is_none());
        assert!(read_conflict_target("SELECT 'on conflict (lower(a))'").is_none());
    }
}
