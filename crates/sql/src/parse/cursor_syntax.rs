//! SQL's cursor statements, which sqlparser reads only in other dialects'
//! forms: `DECLARE name [options] CURSOR [WITH[OUT] HOLD] FOR query`,
//! whose header is blanked out of the text (positions stay) and kept for
//! the session while sqlparser reads the query, and `FETCH` / `MOVE`,
//! read whole (the session's cursors run them).

use sqlparser::keywords::Keyword;
use sqlparser::tokenizer::{Token, TokenWithSpan};

use super::lock_syntax::{blank, keyword, may_start_with, significant_tokens, statement_tokens, word};
use super::syntax;
use crate::statement::DeclareCursor;
use crate::statement::{Count, CursorOptions, Direction, FetchStatement};
use snapscale_values::SqlError;

/// `sql` with a DECLARE CURSOR's header blanked, and the header; `None`
/// for any other statement.
pub(crate) fn read_declare(sql: &str) -> Option<Result<(String, DeclareCursor), SqlError>> {
    if !may_start_with(sql, "declare") {
        return None;
    }
    let tokens = significant_tokens(sql)?;
    if tokens.first().and_then(|t| keyword(&t.token)) != Some(Keyword::DECLARE) {
        return None;
    }
    Some(declare_header(sql, &tokens))
}

fn declare_header(sql: &str, tokens: &[TokenWithSpan]) -> Result<(String, DeclareCursor), SqlError> {
    let near =
        |i: usize| syntax(&tokens.get(i).map_or_else(|| "end of input".into(), |t| t.token.to_string()));
    let kw = |i: usize| tokens.get(i).and_then(|t| keyword(&t.token));
    let name = tokens.get(1).and_then(word).ok_or_else(|| near(1))?.0;
    let mut options = CursorOptions::default();
    let mut i = 2;
    loop {
        match kw(i) {
            Some(Keyword::BINARY) => options.binary = true,
            Some(Keyword::INSENSITIVE | Keyword::ASENSITIVE) => {}
            Some(Keyword::SCROLL) => options.scroll = Some(true),
            Some(Keyword::NO) if kw(i + 1) == Some(Keyword::SCROLL) => {
                options.scroll = Some(false);
                i += 1;
            }
            Some(Keyword::CURSOR) => break,
            _ => return Err(near(i)),
        }
        i += 1;
    }
    i += 1;
    match (kw(i), kw(i + 1)) {
        (Some(Keyword::WITH), Some(Keyword::HOLD)) => {
            options.hold = true;
            i += 2;
        }
        (Some(Keyword::WITHOUT), Some(Keyword::HOLD)) => i += 2,
        _ => {}
    }
    if kw(i) != Some(Keyword::FOR) {
        return Err(near(i));
    }
    // What follows must be a query (PostgreSQL's SelectStmt).
    let starts_query =
        matches!(kw(i + 1), Some(Keyword::SELECT | Keyword::VALUES | Keyword::TABLE | Keyword::WITH))
            || matches!(tokens.get(i + 1).map(|t| &t.token), Some(Token::LParen));
    if !starts_query {
        return Err(near(i + 1));
    }
    let text = blank(sql, tokens[0].span.start, tokens[i].span.end);
    Ok((text, DeclareCursor { name, options }))
}

/// `sql` without an UPDATE's or DELETE's `WHERE CURRENT OF name` (blanked:
/// positions stay), and the cursor's name; `None` for any other text.
pub(crate) fn read_current_of(sql: &str) -> Option<(String, String)> {
    if !(may_start_with(sql, "update") || may_start_with(sql, "delete")) {
        return None;
    }
    if !sql.as_bytes().windows(7).any(|w| w.eq_ignore_ascii_case(b"current")) {
        return None;
    }
    let tokens = significant_tokens(sql)?;
    if !matches!(tokens.first().and_then(|t| keyword(&t.token)), Some(Keyword::UPDATE | Keyword::DELETE)) {
        return None;
    }
    let kw = |i: usize| tokens.get(i).and_then(|t| keyword(&t.token));
    let mut depth = 0usize;
    for i in 0..tokens.len() {
        match tokens[i].token {
            Token::LParen => depth += 1,
            Token::RParen => depth = depth.saturating_sub(1),
            _ if depth == 0
                && kw(i) == Some(Keyword::WHERE)
                && kw(i + 1) == Some(Keyword::CURRENT)
                && kw(i + 2) == Some(Keyword::OF) =>
            {
                let name = tokens.get(i + 3).and_then(word)?.0;
                return Some((blank(sql, tokens[i].span.start, tokens[i + 3].span.end), name));
            }
            _ => {}
        }
    }
    None
}

/// `FETCH` or `MOVE` (`is_move`), read whole; `None` for another statement.
pub(crate) fn read_fetch(sql: &str) -> Option<Result<FetchStatement, SqlError>> {
    let is_move = may_start_with(sql, "move");
    if !is_move && !may_start_with(sql, "fetch") {
        return None;
    }
    let tokens = statement_tokens(sql)?;
    let first = tokens.first().and_then(word)?.0;
    if first != "fetch" && first != "move" {
        return None;
    }
    Some(fetch_args(&tokens[1..]).map(|(name, direction)| FetchStatement {
        name,
        direction,
        is_move: first == "move",
    }))
}

/// PostgreSQL's fetch_args: a direction, FROM or IN, and the cursor's name.
fn fetch_args(tokens: &[TokenWithSpan]) -> Result<(String, Direction), SqlError> {
    let near =
        |i: usize| syntax(&tokens.get(i).map_or_else(|| "end of input".into(), |t| t.token.to_string()));
    let kw = |i: usize| tokens.get(i).and_then(|t| keyword(&t.token));
    let (direction, mut i, needs_from) = match kw(0) {
        Some(Keyword::NEXT) => (Direction::Forward(Count::Rows(1)), 1, false),
        Some(Keyword::PRIOR) => (Direction::Backward(Count::Rows(1)), 1, false),
        Some(Keyword::FIRST) => (Direction::Absolute(1), 1, false),
        Some(Keyword::LAST) => (Direction::Absolute(-1), 1, false),
        Some(Keyword::ALL) => (Direction::Forward(Count::All), 1, false),
        Some(Keyword::ABSOLUTE | Keyword::RELATIVE) => {
            let (n, next) = signed_int(tokens, 1).ok_or_else(|| near(1))?;
            let d = if kw(0) == Some(Keyword::ABSOLUTE) {
                Direction::Absolute(n)
            } else {
                Direction::Relative(n)
            };
            (d, next, false)
        }
        Some(Keyword::FORWARD | Keyword::BACKWARD) => {
            let forward = kw(0) == Some(Keyword::FORWARD);
            let (count, next) = if kw(1) == Some(Keyword::ALL) {
                (Count::All, 2)
            } else if let Some((n, next)) = signed_int(tokens, 1) {
                (Count::Rows(n), next)
            } else {
                (Count::Rows(1), 1)
            };
            (if forward { Direction::Forward(count) } else { Direction::Backward(count) }, next, false)
        }
        Some(Keyword::FROM | Keyword::IN) => (Direction::Forward(Count::Rows(1)), 0, true),
        _ => match signed_int(tokens, 0) {
            Some((n, next)) => (Direction::Forward(Count::Rows(n)), next, false),
            // The name alone.
            None => (Direction::Forward(Count::Rows(1)), 0, false),
        },
    };
    if matches!(kw(i), Some(Keyword::FROM | Keyword::IN)) {
        i += 1;
    } else if needs_from {
        return Err(near(i));
    }
    let name = tokens.get(i).and_then(word).ok_or_else(|| near(i))?.0;
    if i + 1 < tokens.len() {
        return Err(near(i + 1));
    }
    Ok((name, direction))
}

/// An integer constant, with an optional sign, at `i`: its value and the
/// index after it.
fn signed_int(tokens: &[TokenWithSpan], i: usize) -> Option<(i64, usize)> {
    let (negative, at) = match tokens.get(i).map(|t| &t.token) {
        Some(Token::Minus) => (true, i + 1),
        Some(Token::Plus) => (false, i + 1),
        _ => (false, i),
    };
    let Some(Token::Number(digits, _)) = tokens.get(at).map(|t| &t.token) else {
        return None;
    };
    let n: i64 = digits.parse().ok()?;
    Some((if negative { -n } else { n }, at + 1))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fetch(sql: &str) -> (String, Direction, bool) {
        let f = read_fetch(sql).unwrap().unwrap();
        (f.name, f.direction, f.is_move)
    }

    #[test]
    fn fetch_forms() {
        assert_eq!(fetch("FETCH c"), ("c".into(), Direction::Forward(Count::Rows(1)), false));
        assert_eq!(fetch("fetch 2 in foo2;"), ("foo2".into(), Direction::Forward(Count::Rows(2)), false));
        assert_eq!(fetch("FETCH backward 3 in c"), ("c".into(), Direction::Backward(Count::Rows(3)), false));
        assert_eq!(fetch("FETCH BACKWARD FROM c"), ("c".into(), Direction::Backward(Count::Rows(1)), false));
        assert_eq!(fetch("FETCH ABSOLUTE -1 FROM c"), ("c".into(), Direction::Absolute(-1), false));
        assert_eq!(fetch("FETCH RELATIVE 0 FROM c"), ("c".into(), Direction::Relative(0), false));
        assert_eq!(fetch("MOVE BACKWARD ALL IN c"), ("c".into(), Direction::Backward(Count::All), true));
        assert_eq!(fetch("FETCH ALL c"), ("c".into(), Direction::Forward(Count::All), false));
        assert_eq!(fetch("FETCH -2 FROM \"C\""), ("C".into(), Direction::Forward(Count::Rows(-2)), false));
        assert_eq!(fetch("FETCH LAST c"), ("c".into(), Direction::Absolute(-1), false));
        assert!(read_fetch("FETCH FROM").unwrap().is_err());
        assert!(read_fetch("FETCH c d").unwrap().is_err());
        assert!(read_fetch("SELECT 1").is_none());
    }

    #[test]
    fn current_of_is_blanked() {
        let sql = "UPDATE t SET a = 1 WHERE CURRENT OF c1 RETURNING a";
        let (text, name) = read_current_of(sql).unwrap();
        assert_eq!(text, format!("UPDATE t SET a = 1 {} RETURNING a", " ".repeat(19)));
        assert_eq!(name, "c1");
        assert_eq!(read_current_of("delete from t where current of \"C\"").unwrap().1, "C");
        assert!(read_current_of("UPDATE t SET current = 1 WHERE a = 2").is_none());
        assert!(read_current_of("SELECT 1 WHERE CURRENT OF c").is_none());
    }

    #[test]
    fn declare_header_is_blanked() {
        let sql = "DECLARE foo SCROLL CURSOR WITH HOLD FOR SELECT 1";
        let (text, d) = read_declare(sql).unwrap().unwrap();
        assert_eq!(text, format!("{}SELECT 1", " ".repeat(40)));
        assert_eq!(d.name, "foo");
        assert_eq!(d.options, CursorOptions { scroll: Some(true), hold: true, binary: false });
        let (_, d) = read_declare("declare c no scroll binary cursor for values (1)").unwrap().unwrap();
        assert_eq!(d.options, CursorOptions { scroll: Some(false), hold: false, binary: true });
        assert!(read_declare("DECLARE c CURSOR FOR INSERT INTO t VALUES (1)").unwrap().is_err());
    }
}
