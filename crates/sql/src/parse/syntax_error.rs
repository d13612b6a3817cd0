//! sqlparser's syntax errors in PostgreSQL's words: "syntax error at or
//! near "`token`"" or "syntax error at end of input", with the error's
//! position (ErrorResponse's P field: the 1-based character offset into
//! the query string, which psql turns into its `LINE 1: …` and caret).
//!
//! sqlparser reports what it expected and the token it found, with that
//! token's line and column in the statement it was given. The token's text
//! is taken from the query string at that place, as the user wrote it
//! (PostgreSQL quotes the source text, not a normalised token).

use snapscale_sqlstate::SqlState;
use snapscale_values::SqlError;

/// The statement that failed, as a slice of the whole query string.
pub(crate) struct Source<'a> {
    /// The whole query string (a Query message may hold several
    /// statements; positions count from its start).
    pub(crate) query: &'a str,
    /// Byte offset of the failed statement in `query`.
    pub(crate) start: usize,
    /// Byte length of the failed statement (its `;` excluded).
    pub(crate) len: usize,
}

/// PostgreSQL's error for sqlparser's `message` about `source`, or `None`
/// if the message does not locate a token (it is then reported as
/// sqlparser words it).
pub(crate) fn locate(message: &str, source: &Source<'_>) -> Option<SqlError> {
    // The end of the statement has no location.
    if message.ends_with("found: EOF") {
        return Some(at_end(source));
    }
    let (_, location) = message.rsplit_once(" at Line: ")?;
    let (line, column) = location.split_once(", Column: ")?;
    let (line, column): (usize, usize) = (line.trim().parse().ok()?, column.trim().parse().ok()?);
    let statement = source.query.get(source.start..source.start + source.len)?;
    let offset = byte_offset(statement, line, column)?;
    let at = source.start + offset;
    let token = token_at(&source.query[at..]);
    if token.is_empty() {
        return Some(at_end(source));
    }
    Some(at_or_near(token, source.query, at))
}

/// The end of a statement: PostgreSQL's parser sees the `;` that ends it
/// as a token, and the end of the query string as "end of input".
fn at_end(source: &Source<'_>) -> SqlError {
    let end = source.start + source.len;
    match source.query[end..].find(|c: char| !c.is_whitespace()) {
        Some(i) if source.query[end + i..].starts_with(';') => at_or_near(";", source.query, end + i),
        _ => SqlError::new(SqlState::SYNTAX_ERROR, "syntax error at end of input")
            .at_position(source.query.chars().count() + 1),
    }
}

fn at_or_near(token: &str, query: &str, at: usize) -> SqlError {
    SqlError::new(SqlState::SYNTAX_ERROR, format!("syntax error at or near \"{token}\""))
        .at_position(query[..at].chars().count() + 1)
}

/// The byte offset of 1-based (line, column), columns counted in
/// characters.
fn byte_offset(text: &str, line: usize, column: usize) -> Option<usize> {
    let mut start = 0;
    for _ in 1..line {
        start += text[start..].find('\n')? + 1;
    }
    let rest = &text[start..];
    let within = rest.char_indices().nth(column.checked_sub(1)?).map_or(rest.len(), |(i, _)| i);
    Some(start + within)
}

/// PostgreSQL's operator characters: a run of them is one token.
fn is_operator(c: char) -> bool {
    "+-*/<>=~!@#%^&|`?".contains(c)
}

fn is_word(c: char) -> bool {
    c.is_alphanumeric() || c == '_' || c == '$' || !c.is_ascii()
}

/// The token that starts `text`, as written.
fn token_at(text: &str) -> &str {
    let mut chars = text.char_indices();
    let Some((_, first)) = chars.next() else { return "" };
    let end = match first {
        '\'' | '"' => quoted_end(text, first, false),
        c if c.is_ascii_digit() || (c == '.' && text[1..].starts_with(|d: char| d.is_ascii_digit())) => {
            text.find(|c: char| !(c.is_ascii_alphanumeric() || c == '.' || c == '_')).unwrap_or(text.len())
        }
        c if is_word(c) => {
            let word = text.find(|c: char| !is_word(c)).unwrap_or(text.len());
            // A prefixed string (E'…', B'…', X'…', N'…') is one token;
            // in E'…' a backslash escapes the quote.
            if text[word..].starts_with('\'') && word == 1 {
                word + quoted_end(&text[word..], '\'', first.eq_ignore_ascii_case(&'e'))
            } else {
                word
            }
        }
        ':' if text.starts_with("::") => 2,
        c if is_operator(c) => text.find(|c: char| !is_operator(c)).unwrap_or(text.len()),
        c => c.len_utf8(),
    };
    &text[..end]
}

/// The end of a quoted token starting at `text`'s first character (a
/// doubled quote is part of it, and with `escapes` one after a
/// backslash); the whole text if it is not closed.
fn quoted_end(text: &str, quote: char, escapes: bool) -> usize {
    let mut chars = text.char_indices().skip(1);
    while let Some((i, c)) = chars.next() {
        if escapes && c == '\\' {
            chars.next();
        } else if c == quote {
            if text[i + 1..].starts_with(quote) {
                chars.next();
            } else {
                return i + 1;
            }
        }
    }
    text.len()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn error(query: &str, statement: (usize, usize), message: &str) -> (String, Option<usize>) {
        let e = locate(message, &Source { query, start: statement.0, len: statement.1 }).expect("located");
        (e.message.clone(), e.position.map(|p| p as usize))
    }

    #[test]
    fn the_token_found_is_quoted_from_the_source_with_its_position() {
        let q = "SELEC 1";
        assert_eq!(
            error(q, (0, q.len()), "Expected: an SQL statement, found: SELEC at Line: 1, Column: 1"),
            ("syntax error at or near \"SELEC\"".into(), Some(1))
        );
        // Positions count characters of the whole query string, across
        // lines and statements.
        let q = "SELECT 1;\nSELECT é, 2 2";
        assert_eq!(
            error(q, (9, q.len() - 9), "Expected: end of statement, found: 2 at Line: 2, Column: 13"),
            ("syntax error at or near \"2\"".into(), Some(23))
        );
        let q = "SELECT 'abc' 'it''s' x";
        assert_eq!(
            error(q, (0, q.len()), "Expected: end of statement, found: 'it's' at Line: 1, Column: 14"),
            ("syntax error at or near \"'it''s'\"".into(), Some(14))
        );
        // `::` is one token, a `:` after it another (as PostgreSQL lexes).
        let q = "SELECT a::int ::: b";
        assert_eq!(
            error(q, (0, q.len()), "x, found: :: at Line: 1, Column: 15").0,
            "syntax error at or near \"::\""
        );
        let q = "SELECT E'a\\'b' x y";
        assert_eq!(
            error(q, (0, q.len()), "x, found: y at Line: 1, Column: 18").0,
            "syntax error at or near \"y\""
        );
        assert_eq!(
            error(q, (0, q.len()), "x, found: E'a'b' at Line: 1, Column: 8").0,
            "syntax error at or near \"E'a\\'b'\""
        );
        let q = "SELECT 1 || 'unclosed";
        assert_eq!(
            error(q, (0, q.len()), "x, found: 'unclosed at Line: 1, Column: 13").0,
            "syntax error at or near \"'unclosed\""
        );
    }

    #[test]
    fn the_end_is_the_semicolon_or_the_end_of_input() {
        let q = "SELECT 1 +   ";
        assert_eq!(
            error(q, (0, q.len()), "Expected: an expression, found: EOF"),
            ("syntax error at end of input".into(), Some(14))
        );
        let q = "SELECT 1 + ;";
        assert_eq!(
            error(q, (0, 11), "Expected: an expression, found: EOF"),
            ("syntax error at or near \";\"".into(), Some(12))
        );
    }

    #[test]
    fn a_message_without_a_location_is_left_alone() {
        assert!(locate("an outer join needs ON or USING", &Source { query: "x", start: 0, len: 1 }).is_none());
        assert!(locate("x at Line: 9, Column: 1", &Source { query: "x", start: 0, len: 1 }).is_none());
    }
}
