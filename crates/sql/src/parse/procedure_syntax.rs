//! What sqlparser lacks of PostgreSQL's routine DDL:
//!
//! * `CREATE [OR REPLACE] PROCEDURE`, which sqlparser reads only in other
//!   dialects' forms: read as the CREATE FUNCTION it is shaped like, its
//!   word replaced in place (positions stay), and marked a procedure for
//!   the binder (`PreParsed::procedure`);
//! * `ALTER {PROCEDURE | ROUTINE}` and `DROP {PROCEDURE | ROUTINE}`, read
//!   as ALTER / DROP FUNCTION with the word written kept
//!   (`PreParsed::routine_word`): it decides which routines the names
//!   find and how errors name them;
//! * a CREATE's `WINDOW` and `[NOT] LEAKPROOF`, blanked out and kept, and
//!   where the first attribute a procedure may not have stands (PostgreSQL
//!   places "invalid attribute in procedure definition" there);
//! * a SQL-standard body `BEGIN ATOMIC … END`, blanked out (lines kept)
//!   and kept as the text of its statements.

use sqlparser::keywords::Keyword;
use sqlparser::tokenizer::{Location, Token};

use super::lock_syntax::{blank, keyword, may_start_with, significant_tokens};
pub(crate) use crate::statement::{RoutineAttributes, RoutineWord};

/// The expression of a statement `RETURN expr` (of a BEGIN ATOMIC body).
pub(crate) fn return_expr(statement: &str) -> Option<&str> {
    let head = statement.get(..6)?;
    let rest = &statement[6..];
    (head.eq_ignore_ascii_case("return") && rest.starts_with(|c: char| c.is_whitespace() || c == '('))
        .then(|| rest.trim())
}

/// `sql` with PROCEDURE read as FUNCTION, if it is a CREATE PROCEDURE.
pub(crate) fn procedure_as_function(sql: &str) -> Option<String> {
    if !may_start_with(sql, "create") {
        return None;
    }
    let tokens = significant_tokens(sql)?;
    let kw = |i: usize| tokens.get(i).and_then(|t| keyword(&t.token));
    let mut i = 1;
    if kw(i) == Some(Keyword::OR) && kw(i + 1) == Some(Keyword::REPLACE) {
        i += 2;
    }
    if kw(i) != Some(Keyword::PROCEDURE) {
        return None;
    }
    let from = byte_of(sql, tokens[i].span.start)?;
    // "PROCEDURE" and "FUNCTION " are as long.
    Some(format!("{}FUNCTION {}", &sql[..from], &sql[from + "procedure".len()..]))
}

/// `ALTER {PROCEDURE | ROUTINE}` or `DROP {PROCEDURE | ROUTINE}` read as
/// the FUNCTION form: the text, the word, and how many characters the text
/// grew by before everything after the word (ROUTINE is one shorter than
/// FUNCTION).
pub(crate) fn routine_word_as_function(sql: &str) -> Option<(String, RoutineWord, usize)> {
    if !may_start_with(sql, "alter") && !may_start_with(sql, "drop") {
        return None;
    }
    let tokens = significant_tokens(sql)?;
    let kw = |i: usize| tokens.get(i).and_then(|t| keyword(&t.token));
    if !matches!(kw(0), Some(Keyword::ALTER | Keyword::DROP)) {
        return None;
    }
    // sqlparser has no keyword ROUTINE: the word is compared.
    let routine = matches!(tokens.get(1).map(|t| &t.token),
        Some(Token::Word(w)) if w.quote_style.is_none() && w.value.eq_ignore_ascii_case("routine"));
    let (word, len) = match kw(1) {
        Some(Keyword::PROCEDURE) => (RoutineWord::Procedure, "procedure".len()),
        _ if routine => (RoutineWord::Routine, "routine".len()),
        _ => return None,
    };
    let from = byte_of(sql, tokens[1].span.start)?;
    let rest = &sql[from + len..];
    // FUNCTION, then a blank where PROCEDURE's ninth letter was.
    let text = match word {
        RoutineWord::Procedure => format!("{}FUNCTION {rest}", &sql[..from]),
        RoutineWord::Routine => format!("{}FUNCTION{rest}", &sql[..from]),
    };
    Some((text, word, if word == RoutineWord::Routine { 1 } else { 0 }))
}

/// A CREATE or ALTER FUNCTION's attributes, with the text sqlparser is to
/// read (WINDOW and [NOT] LEAKPROOF of a CREATE blanked, when there).
pub(crate) fn read_attributes(sql: &str) -> Option<(Option<String>, RoutineAttributes)> {
    if !may_start_with(sql, "create") && !may_start_with(sql, "alter") {
        return None;
    }
    let tokens = significant_tokens(sql)?;
    let kw = |i: usize| tokens.get(i).and_then(|t| keyword(&t.token));
    let create = match kw(0) {
        Some(Keyword::CREATE) => true,
        Some(Keyword::ALTER) => false,
        _ => return None,
    };
    let mut i = 1;
    if create && kw(i) == Some(Keyword::OR) && kw(i + 1) == Some(Keyword::REPLACE) {
        i += 2;
    }
    if kw(i) != Some(Keyword::FUNCTION) {
        return None;
    }
    // The name, dotted.
    i += 2;
    while matches!(tokens.get(i).map(|t| &t.token), Some(Token::Period)) {
        i += 2;
    }
    let mut attrs = RoutineAttributes::default();
    let mut blanked: Vec<(Location, Location)> = Vec::new();
    let mut depth = 0usize;
    while let Some(t) = tokens.get(i) {
        match &t.token {
            Token::LParen => depth += 1,
            Token::RParen => depth = depth.saturating_sub(1),
            _ if depth > 0 => {}
            // The body that follows RETURN is an expression.
            _ if kw(i) == Some(Keyword::RETURN) => break,
            _ => {
                let next = kw(i + 1);
                let only_function = match kw(i) {
                    Some(
                        Keyword::STRICT
                        | Keyword::IMMUTABLE
                        | Keyword::STABLE
                        | Keyword::VOLATILE
                        | Keyword::LEAKPROOF
                        | Keyword::WINDOW
                        | Keyword::COST
                        | Keyword::ROWS
                        | Keyword::PARALLEL
                        | Keyword::SUPPORT,
                    ) => true,
                    Some(Keyword::CALLED) => next == Some(Keyword::ON),
                    Some(Keyword::RETURNS) => next == Some(Keyword::NULL),
                    Some(Keyword::NOT) => next == Some(Keyword::LEAKPROOF),
                    _ => false,
                };
                if only_function && attrs.function_only.is_none() {
                    attrs.function_only = Some(t.span.start);
                }
                if create {
                    match kw(i) {
                        Some(Keyword::WINDOW) => {
                            attrs.window = true;
                            blanked.push((t.span.start, t.span.end));
                        }
                        Some(Keyword::LEAKPROOF) => {
                            attrs.leakproof = Some(true);
                            blanked.push((t.span.start, t.span.end));
                        }
                        Some(Keyword::NOT) if next == Some(Keyword::LEAKPROOF) => {
                            attrs.leakproof = Some(false);
                            blanked.push((t.span.start, t.span.end));
                            blanked.push((tokens[i + 1].span.start, tokens[i + 1].span.end));
                            i += 1;
                        }
                        _ => {}
                    }
                }
            }
        }
        i += 1;
    }
    // Blanked from the last, so the locations before stay right.
    let text = (!blanked.is_empty())
        .then(|| blanked.iter().rev().fold(sql.to_owned(), |text, (from, to)| blank(&text, *from, *to)));
    Some((text, attrs))
}

/// A CREATE FUNCTION's (or PROCEDURE's, read as one) `BEGIN ATOMIC … END`
/// body: the text with it blanked (its lines kept), and the text of its
/// statements between ATOMIC and END.
pub(crate) fn read_atomic_body(sql: &str) -> Option<(String, String)> {
    if !may_start_with(sql, "create") {
        return None;
    }
    let tokens = significant_tokens(sql)?;
    let kw = |i: usize| tokens.get(i).and_then(|t| keyword(&t.token));
    let mut i = 1;
    if kw(i) == Some(Keyword::OR) && kw(i + 1) == Some(Keyword::REPLACE) {
        i += 2;
    }
    if kw(i) != Some(Keyword::FUNCTION) {
        return None;
    }
    let mut depth = 0usize;
    let begin = loop {
        let t = tokens.get(i)?;
        match t.token {
            Token::LParen => depth += 1,
            Token::RParen => depth = depth.saturating_sub(1),
            _ if depth == 0 && kw(i) == Some(Keyword::BEGIN) && kw(i + 1) == Some(Keyword::ATOMIC) => {
                break i
            }
            _ => {}
        }
        i += 1;
    };
    // The END that closes it: BEGIN and CASE open blocks END closes (as
    // the statement's split counted them).
    let mut open = 1usize;
    let mut j = begin + 2;
    let end = loop {
        let t = tokens.get(j)?;
        match &t.token {
            Token::LParen => depth += 1,
            Token::RParen => depth = depth.saturating_sub(1),
            Token::Word(w) if depth == 0 && w.quote_style.is_none() => match w.keyword {
                Keyword::BEGIN | Keyword::CASE => open += 1,
                Keyword::END => {
                    open -= 1;
                    if open == 0 {
                        break j;
                    }
                }
                _ => {}
            },
            _ => {}
        }
        j += 1;
    };
    let body_from = byte_of(sql, tokens[begin + 1].span.end)?;
    let body_to = byte_of(sql, tokens[end].span.start)?;
    let from = byte_of(sql, tokens[begin].span.start)?;
    let to = byte_of(sql, tokens[end].span.end)?;
    let body = sql[body_from..body_to].to_owned();
    let blanked: String = sql[from..to].chars().map(|c| if c == '\n' { '\n' } else { ' ' }).collect();
    Some((format!("{}{blanked}{}", &sql[..from], &sql[to..]), body))
}

/// A CREATE FUNCTION's parameters written `name mode type` (PostgreSQL
/// takes the mode before or after the name; sqlparser only before): the
/// text with each such name and mode swapped, the blank between them kept
/// (every other position stays).
pub(crate) fn modes_first(sql: &str) -> Option<String> {
    if !may_start_with(sql, "create") {
        return None;
    }
    let tokens = significant_tokens(sql)?;
    let kw = |i: usize| tokens.get(i).and_then(|t| keyword(&t.token));
    let mut i = 1;
    if kw(i) == Some(Keyword::OR) && kw(i + 1) == Some(Keyword::REPLACE) {
        i += 2;
    }
    if kw(i) != Some(Keyword::FUNCTION) {
        return None;
    }
    let open = i + tokens[i..].iter().position(|t| t.token == Token::LParen)?;
    let mut swaps = Vec::new();
    let mut depth = 0usize;
    let mut start = true;
    for j in open..tokens.len() {
        match &tokens[j].token {
            Token::LParen => {
                depth += 1;
                start = depth == 1;
                continue;
            }
            Token::RParen => {
                depth -= 1;
                if depth == 0 {
                    break;
                }
            }
            Token::Comma if depth == 1 => {
                start = true;
                continue;
            }
            Token::Word(w) if start && depth == 1 => {
                let mode = matches!(
                    kw(j + 1),
                    Some(Keyword::IN | Keyword::OUT | Keyword::INOUT | Keyword::VARIADIC)
                );
                let is_mode =
                    matches!(w.keyword, Keyword::IN | Keyword::OUT | Keyword::INOUT | Keyword::VARIADIC)
                        && w.quote_style.is_none();
                // `name mode type`: a third word (the type) follows.
                if mode && !is_mode && matches!(tokens.get(j + 2).map(|t| &t.token), Some(Token::Word(_))) {
                    swaps.push(j);
                }
            }
            _ => {}
        }
        start = false;
    }
    if swaps.is_empty() {
        return None;
    }
    let mut text = sql.to_owned();
    for &j in swaps.iter().rev() {
        let name_from = byte_of(&text, tokens[j].span.start)?;
        let name_to = byte_of(&text, tokens[j].span.end)?;
        let mode_from = byte_of(&text, tokens[j + 1].span.start)?;
        let mode_to = byte_of(&text, tokens[j + 1].span.end)?;
        let swapped = format!(
            "{}{}{}",
            &text[mode_from..mode_to],
            &text[name_to..mode_from],
            &text[name_from..name_to]
        );
        text = format!("{}{swapped}{}", &text[..name_from], &text[mode_to..]);
    }
    Some(text)
}

/// The byte offset of a tokenizer location (1-based line and column).
fn byte_of(sql: &str, at: Location) -> Option<usize> {
    let line_start = sql.split_inclusive('\n').take(at.line as usize - 1).map(str::len).sum::<usize>();
    let rest = &sql[line_start..];
    match rest.char_indices().nth(at.column as usize - 1) {
        Some((k, _)) => Some(line_start + k),
        None if rest.chars().count() + 1 == at.column as usize => Some(sql.len()),
        None => None,
    }
}

/// The statements of a `BEGIN ATOMIC` body's text: each without its
/// semicolon, empty ones dropped.
pub(crate) fn atomic_statements(body: &str) -> Vec<&str> {
    super::split(body).into_iter().map(str::trim).filter(|s| !s.is_empty()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_are_read_as_function() {
        let (text, word, grew) = routine_word_as_function("ALTER ROUTINE f(int) RENAME TO g").unwrap();
        assert_eq!(
            (text.as_str(), word, grew),
            ("ALTER FUNCTION f(int) RENAME TO g", RoutineWord::Routine, 1)
        );
        let (text, word, grew) = routine_word_as_function("drop procedure p").unwrap();
        assert_eq!((text.as_str(), word, grew), ("drop FUNCTION  p", RoutineWord::Procedure, 0));
        assert!(routine_word_as_function("drop function f").is_none());
    }

    #[test]
    fn attributes_and_atomic_bodies() {
        let (text, attrs) =
            read_attributes("CREATE FUNCTION f(int) RETURNS int LANGUAGE sql NOT LEAKPROOF WINDOW AS 'x'")
                .unwrap();
        assert_eq!(
            text.unwrap(),
            "CREATE FUNCTION f(int) RETURNS int LANGUAGE sql                      AS 'x'"
        );
        assert_eq!((attrs.window, attrs.leakproof), (true, Some(false)));
        assert_eq!(attrs.function_only.map(|l| l.column), Some(49));
        let sql = "CREATE FUNCTION f() RETURNS int\nBEGIN ATOMIC\n  SELECT CASE WHEN true THEN 1 END;\nEND";
        let (text, body) = read_atomic_body(sql).unwrap();
        assert_eq!(body, "\n  SELECT CASE WHEN true THEN 1 END;\n");
        assert_eq!(text.lines().count(), 4);
        assert_eq!(atomic_statements(";;RETURN false;;"), vec!["RETURN false"]);
        assert_eq!(
            modes_first("CREATE FUNCTION f(a OUT int, VARIADIC b int[], c  INOUT text)").unwrap(),
            "CREATE FUNCTION f(OUT a int, VARIADIC b int[], INOUT  c text)"
        );
    }
}
