//! `FOR KEY SHARE` and `FOR NO KEY UPDATE`, which sqlparser's grammar
//! lacks (its lock clause knows only UPDATE and SHARE). Before sqlparser
//! reads a statement, the words `KEY` and `NO KEY` of these clauses are
//! blanked out (so every other position in the text stays where it was),
//! and the strength of every locking clause is recorded in the order the
//! clauses are written. The binder then takes each clause's strength from
//! that list by position (`Binder::locking`), refusing the one case where
//! position cannot tell: clauses of several queries in one statement.

use snapscale_engine::RowLockMode;
use sqlparser::dialect::PostgreSqlDialect;
use sqlparser::keywords::Keyword;
use sqlparser::tokenizer::{Location, Token, TokenWithSpan, Tokenizer};

/// `sql`'s tokens with their places, whitespace and comments left out;
/// `None` if it does not tokenize (sqlparser then reports the error).
pub(super) fn significant_tokens(sql: &str) -> Option<Vec<TokenWithSpan>> {
    let tokens = Tokenizer::new(&PostgreSqlDialect {}, sql).tokenize_with_location().ok()?;
    Some(tokens.into_iter().filter(|t| !matches!(t.token, Token::Whitespace(_))).collect())
}

/// A whole statement's significant tokens, without its trailing `;`.
pub(super) fn statement_tokens(sql: &str) -> Option<Vec<TokenWithSpan>> {
    let mut tokens = significant_tokens(sql)?;
    while matches!(tokens.last().map(|t| &t.token), Some(Token::SemiColon | Token::EOF)) {
        tokens.pop();
    }
    Some(tokens)
}

/// An ALTER statement's target from token `i`: `[IF EXISTS] [ONLY] name
/// [*]` (ONLY and `*` where `inherits` allows them), the name dotted and
/// each part quoted as written; with IF EXISTS and the next token's index.
pub(super) fn alter_target(
    tokens: &[TokenWithSpan],
    mut i: usize,
    inherits: bool,
) -> Option<(sqlparser::ast::ObjectName, bool, usize)> {
    let kw = |i: usize| tokens.get(i).and_then(|t| keyword(&t.token));
    let if_exists = kw(i) == Some(Keyword::IF) && kw(i + 1) == Some(Keyword::EXISTS);
    if if_exists {
        i += 2;
    }
    if inherits && kw(i) == Some(Keyword::ONLY) {
        i += 1;
    }
    let mut parts = Vec::new();
    loop {
        let Token::Word(w) = &tokens.get(i)?.token else { return None };
        parts.push(match w.quote_style {
            Some(_) => sqlparser::ast::Ident::with_quote('"', w.value.clone()),
            None => sqlparser::ast::Ident::new(w.value.clone()),
        });
        i += 1;
        if !matches!(tokens.get(i).map(|t| &t.token), Some(Token::Period)) {
            break;
        }
        i += 1;
    }
    if inherits && matches!(tokens.get(i).map(|t| &t.token), Some(Token::Mul)) {
        i += 1;
    }
    Some((sqlparser::ast::ObjectName::from(parts), if_exists, i))
}

/// An `ALTER TABLE [IF EXISTS] [ONLY] name [*] …` statement's tokens, its
/// target and IF EXISTS, and the index of the token after the target;
/// `None` for any other text.
pub(super) fn alter_table_statement(
    sql: &str,
) -> Option<(Vec<TokenWithSpan>, sqlparser::ast::ObjectName, bool, usize)> {
    if !may_start_with(sql, "alter") {
        return None;
    }
    let tokens = statement_tokens(sql)?;
    let kw = |i: usize| tokens.get(i).and_then(|t| keyword(&t.token));
    if kw(0) != Some(Keyword::ALTER) || kw(1) != Some(Keyword::TABLE) {
        return None;
    }
    let (table, if_exists, i) = alter_target(&tokens, 2, true)?;
    Some((tokens, table, if_exists, i))
}

/// A word's text (folded unless quoted) and whether it was quoted.
pub(super) fn word(t: &TokenWithSpan) -> Option<(String, bool)> {
    match &t.token {
        Token::Word(w) if w.quote_style.is_some() => Some((w.value.clone(), true)),
        Token::Word(w) => Some((w.value.to_lowercase(), false)),
        _ => None,
    }
}

/// Whether `sql` may begin with the keyword `word` (ASCII, any case),
/// comments before it allowed: the cheap test before tokenizing. A caller
/// confirms with [`starts_with`] on the tokens.
/// What an `ALTER` statement's tokens alter: the object's kind (its one
/// or two keywords, MATERIALIZED VIEW being the two) and the index of the
/// token after them; `None` unless `tokens` start with ALTER.
pub(super) fn altered_kind(tokens: &[TokenWithSpan]) -> Option<(Keyword, usize)> {
    let kw = |i: usize| tokens.get(i).and_then(|t| keyword(&t.token));
    if kw(0) != Some(Keyword::ALTER) {
        return None;
    }
    match (kw(1)?, kw(2)) {
        (Keyword::MATERIALIZED, Some(Keyword::VIEW)) => Some((Keyword::MATERIALIZED, 3)),
        (kind, _) => Some((kind, 2)),
    }
}

pub(super) fn may_start_with(sql: &str, word: &str) -> bool {
    let head = sql.trim_start();
    head.starts_with("--")
        || head.starts_with("/*")
        || head.get(..word.len()).is_some_and(|w| w.eq_ignore_ascii_case(word))
}

/// Whether the first significant token is the keyword `word`.
pub(super) fn starts_with(tokens: &[TokenWithSpan], word: Keyword) -> bool {
    tokens.first().and_then(|t| keyword(&t.token)) == Some(word)
}

pub(super) fn keyword(t: &Token) -> Option<Keyword> {
    match t {
        Token::Word(w) if w.quote_style.is_none() => Some(w.keyword),
        _ => None,
    }
}

/// `sql` with the text from `start` to `end` (tokenizer locations) blanked,
/// each character by a space, so every other position stays where it was.
pub(super) fn blank(sql: &str, start: Location, end: Location) -> String {
    let line_starts: Vec<usize> =
        std::iter::once(0).chain(sql.match_indices('\n').map(|(k, _)| k + 1)).collect();
    let from = offset(&line_starts, sql, start);
    let to = offset(&line_starts, sql, end);
    let spaces = " ".repeat(sql[from..to].chars().count());
    format!("{}{spaces}{}", &sql[..from], &sql[to..])
}

/// The byte offset of a tokenizer location (1-based line and column, the
/// column counted in characters).
pub(super) fn offset(line_starts: &[usize], sql: &str, at: Location) -> usize {
    let start = line_starts[at.line as usize - 1];
    sql[start..].char_indices().nth(at.column as usize - 1).map_or(sql.len(), |(i, _)| start + i)
}

/// `sql` with the clauses' extra words blanked out, and the strengths of
/// all its locking clauses in order; `None` if it has no `FOR KEY SHARE`
/// or `FOR NO KEY UPDATE` (sqlparser then reads every clause as it is).
pub(crate) fn read_lock_strengths(sql: &str) -> Option<(String, Vec<RowLockMode>)> {
    // Most statements have no word KEY at all: they skip the tokenizer
    // (a second pass over every statement's text otherwise).
    if !sql.as_bytes().windows(3).any(|w| w.eq_ignore_ascii_case(b"key")) {
        return None;
    }
    let tokens = significant_tokens(sql)?;
    let kw = |i: usize| tokens.get(i).and_then(|t| keyword(&t.token));
    let mut strengths = Vec::new();
    let mut blank = Vec::new();
    for i in 0..tokens.len() {
        if kw(i) != Some(Keyword::FOR) {
            continue;
        }
        match (kw(i + 1), kw(i + 2), kw(i + 3)) {
            (Some(Keyword::UPDATE), ..) => strengths.push(RowLockMode::Update),
            (Some(Keyword::SHARE), ..) => strengths.push(RowLockMode::Share),
            (Some(Keyword::KEY), Some(Keyword::SHARE), _) => {
                strengths.push(RowLockMode::KeyShare);
                blank.push(i + 1);
            }
            (Some(Keyword::NO), Some(Keyword::KEY), Some(Keyword::UPDATE)) => {
                strengths.push(RowLockMode::NoKeyUpdate);
                blank.extend([i + 1, i + 2]);
            }
            _ => {}
        }
    }
    if blank.is_empty() {
        return None;
    }
    let line_starts: Vec<usize> =
        std::iter::once(0).chain(sql.match_indices('\n').map(|(i, _)| i + 1)).collect();
    let mut out = sql.as_bytes().to_vec();
    for i in blank {
        let span = tokens[i].span;
        let (from, to) = (offset(&line_starts, sql, span.start), offset(&line_starts, sql, span.end));
        out[from..to].fill(b' ');
    }
    // Only ASCII keyword bytes were replaced by ASCII spaces.
    Some((String::from_utf8(out).expect("still UTF-8"), strengths))
}

#[cfg(test)]
mod tests {
    use super::*;
    use RowLockMode::*;

    #[test]
    fn key_share_and_no_key_update_are_read_in_order() {
        let (text, strengths) =
            read_lock_strengths("select * from t, u for key share of t for no key update of u nowait")
                .unwrap();
        assert_eq!(text, "select * from t, u for     share of t for        update of u nowait");
        assert_eq!(strengths, vec![KeyShare, NoKeyUpdate]);
        let (text, strengths) =
            read_lock_strengths("select 'é'\n  from t for update of t\n  FOR KEY SHARE skip locked").unwrap();
        assert_eq!(text, "select 'é'\n  from t for update of t\n  FOR     SHARE skip locked");
        assert_eq!(strengths, vec![Update, KeyShare]);
        assert_eq!(read_lock_strengths("select * from t for update"), None);
        assert_eq!(read_lock_strengths("select 'for key share' from t"), None);
    }
}
