//! Walking a statement's significant tokens by hand, for the statements
//! this crate reads itself (CREATE AGGREGATE, CREATE TRIGGER, …): names,
//! parentheses, the text between tokens, and syntax errors placed where
//! PostgreSQL places them.

use snapscale_sqlstate::SqlState;
use snapscale_values::SqlError;
use sqlparser::ast::{Ident, ObjectName};
use sqlparser::tokenizer::{Token, TokenWithSpan};

use super::lock_syntax::offset;

/// A syntax error at token `i` (or at the end of input), placed as
/// PostgreSQL places it.
pub(super) fn near(sql: &str, tokens: &[TokenWithSpan], i: usize) -> SqlError {
    match tokens.get(i) {
        Some(t) => SqlError::new(SqlState::SYNTAX_ERROR, format!("syntax error at or near \"{}\"", t.token))
            .at_position(char_position(sql, t.span.start)),
        None => SqlError::new(SqlState::SYNTAX_ERROR, "syntax error at end of input")
            .at_position(sql.trim_end().trim_end_matches(';').chars().count() + 1),
    }
}

fn line_starts(sql: &str) -> Vec<usize> {
    std::iter::once(0).chain(sql.match_indices('\n').map(|(k, _)| k + 1)).collect()
}

/// The 1-based character position of `at` in `sql` (an error's cursor).
pub(super) fn char_position(sql: &str, at: sqlparser::tokenizer::Location) -> usize {
    sql[..offset(&line_starts(sql), sql, at)].chars().count() + 1
}

/// The text of tokens `from..to` as written.
pub(super) fn text_of(sql: &str, tokens: &[TokenWithSpan], from: usize, to: usize) -> String {
    if from >= to {
        return String::new();
    }
    let starts = line_starts(sql);
    let a = offset(&starts, sql, tokens[from].span.start);
    let b = offset(&starts, sql, tokens[to - 1].span.end);
    sql[a..b].to_owned()
}

/// A dotted name from `i`, each part quoted as written; the index after.
pub(super) fn dotted(
    sql: &str,
    tokens: &[TokenWithSpan],
    mut i: usize,
) -> Result<(ObjectName, usize), SqlError> {
    let mut parts = Vec::new();
    loop {
        match tokens.get(i).map(|t| &t.token) {
            Some(Token::Word(w)) => parts.push(match w.quote_style {
                Some(_) => Ident::with_quote('"', w.value.clone()),
                None => Ident::new(w.value.clone()),
            }),
            _ => return Err(near(sql, tokens, i)),
        }
        i += 1;
        if !matches!(tokens.get(i).map(|t| &t.token), Some(Token::Period)) {
            return Ok((ObjectName::from(parts), i));
        }
        i += 1;
    }
}

/// One identifier at `i` (folded unless quoted).
pub(super) fn ident(sql: &str, tokens: &[TokenWithSpan], i: usize) -> Result<String, SqlError> {
    match tokens.get(i).map(|t| &t.token) {
        Some(Token::Word(w)) if w.quote_style.is_some() => Ok(w.value.clone()),
        Some(Token::Word(w)) => Ok(w.value.to_lowercase()),
        _ => Err(near(sql, tokens, i)),
    }
}

/// The index of the parenthesis closing the one at `open`.
pub(super) fn matching(tokens: &[TokenWithSpan], open: usize) -> Option<usize> {
    let mut depth = 0usize;
    for (k, t) in tokens.iter().enumerate().skip(open) {
        match t.token {
            Token::LParen => depth += 1,
            Token::RParen => {
                depth -= 1;
                if depth == 0 {
                    return Some(k);
                }
            }
            _ => {}
        }
    }
    None
}
