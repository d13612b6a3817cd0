//! COPY: the statement's forms and options, and its three data formats
//! (`text.rs`, `csv.rs`, `binary.rs`).
//!
//! `COPY table [(columns)] FROM STDIN | TO STDOUT` and `COPY (query) TO
//! STDOUT`, with options in either syntax PostgreSQL accepts: the list
//! `WITH (FORMAT csv, HEADER, DELIMITER ',', NULL '', QUOTE '"', ESCAPE '"',
//! FREEZE)`, or the older words `[WITH] [BINARY] [DELIMITER [AS] 'd'] [NULL
//! [AS] 'n'] [CSV [HEADER] [QUOTE [AS] 'q'] [ESCAPE [AS] 'e']]`. Files and
//! programs are refused (0A000): the data moves over the connection only.

pub(crate) mod binary;
pub(crate) mod csv;
pub(crate) mod text;

use snapscale_sqlstate::SqlState;
use snapscale_values::SqlError;

use crate::statement::Ast;

/// The data format.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CopyFormat {
    Text,
    Csv,
    Binary,
}

/// COPY's options, with PostgreSQL's defaults for the format.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CopyOptions {
    pub format: CopyFormat,
    pub delimiter: char,
    /// The text that stands for NULL.
    pub null: String,
    /// CSV: a first line of column names (written; skipped when read).
    pub header: bool,
    pub quote: char,
    pub escape: char,
}

impl Default for CopyOptions {
    fn default() -> Self {
        CopyOptions {
            format: CopyFormat::Text,
            delimiter: '\t',
            null: "\\N".into(),
            header: false,
            quote: '"',
            escape: '"',
        }
    }
}

/// What a COPY reads or writes.
#[derive(Debug)]
pub enum CopySource {
    /// A table, and the columns named (all if empty).
    Table { table: String, columns: Vec<String> },
    /// `COPY (query) TO STDOUT`.
    Query(Ast),
}

/// Direction of a COPY.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum CopyDirection {
    FromStdin,
    ToStdout,
}

fn syntax(near: &str) -> SqlError {
    SqlError::new(SqlState::SYNTAX_ERROR, format!("syntax error at or near \"{near}\""))
}

fn not_supported(what: impl std::fmt::Display) -> SqlError {
    SqlError::new(SqlState::FEATURE_NOT_SUPPORTED, format!("{what} is not supported"))
}

/// A token of a COPY statement: a word (folded to lower case), a quoted
/// identifier or string (as written), or punctuation.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Tok {
    Word(String),
    Ident(String),
    Str(String),
    Punct(char),
}

fn tokens(s: &str) -> Result<Vec<Tok>, SqlError> {
    let mut out = Vec::new();
    let mut chars = s.chars().peekable();
    while let Some(&c) = chars.peek() {
        if c.is_whitespace() {
            chars.next();
        } else if matches!(c, '(' | ')' | ',' | '.' | ';') {
            out.push(Tok::Punct(c));
            chars.next();
        } else if c == '"' || c == '\'' {
            chars.next();
            let text = quoted(&mut chars, c, false)?;
            out.push(if c == '"' { Tok::Ident(text) } else { Tok::Str(text) });
        } else {
            let mut word = String::new();
            while let Some(&ch) = chars.peek() {
                if ch.is_whitespace() || matches!(ch, '(' | ')' | ',' | '.' | ';' | '"' | '\'') {
                    break;
                }
                word.push(ch.to_ascii_lowercase());
                chars.next();
            }
            // E'…': a string with backslash escapes.
            if word == "e" && chars.peek() == Some(&'\'') {
                chars.next();
                out.push(Tok::Str(quoted(&mut chars, '\'', true)?));
            } else {
                out.push(Tok::Word(word));
            }
        }
    }
    Ok(out)
}

fn quoted(
    chars: &mut std::iter::Peekable<std::str::Chars<'_>>,
    q: char,
    escapes: bool,
) -> Result<String, SqlError> {
    let mut text = String::new();
    loop {
        match chars.next() {
            Some(c) if c == q && chars.peek() == Some(&q) => {
                chars.next();
                text.push(q);
            }
            Some(c) if c == q => return Ok(text),
            Some('\\') if escapes => match chars.next() {
                Some('t') => text.push('\t'),
                Some('n') => text.push('\n'),
                Some('r') => text.push('\r'),
                Some('b') => text.push('\u{8}'),
                Some('f') => text.push('\u{c}'),
                Some(other) => text.push(other),
                None => return Err(SqlError::new(SqlState::SYNTAX_ERROR, "unterminated quoted string")),
            },
            Some(c) => text.push(c),
            None if q == '"' => {
                return Err(SqlError::new(SqlState::SYNTAX_ERROR, "unterminated quoted identifier"))
            }
            None => return Err(SqlError::new(SqlState::SYNTAX_ERROR, "unterminated quoted string")),
        }
    }
}

/// A COPY statement.
#[derive(Debug)]
pub struct CopyStatement {
    pub source: CopySource,
    pub direction: CopyDirection,
    pub options: CopyOptions,
}

/// Parses a COPY statement (`text` starts with the word COPY); a query in
/// parentheses is parsed by `query`.
pub(crate) fn parse_statement(
    text: &str,
    query: impl FnOnce(&str) -> Result<Option<Ast>, SqlError>,
) -> Result<CopyStatement, SqlError> {
    let body = text.trim_start()[4..].trim_start();
    let (source, rest) = if let Some(inner) = body.strip_prefix('(') {
        let end = matching_paren(inner).ok_or_else(|| syntax("end of input"))?;
        let query = match query(&inner[..end])? {
            Some(ast) if matches!(&*ast, sqlparser::ast::Statement::Query(_)) => ast,
            Some(ast) if matches!(&*ast, sqlparser::ast::Statement::Merge(_)) => {
                return Err(SqlError::new(SqlState::FEATURE_NOT_SUPPORTED, "MERGE not supported in COPY"))
            }
            _ => return Err(not_supported("COPY of a statement other than a query")),
        };
        (Some(CopySource::Query(query)), &inner[end + 1..])
    } else {
        (None, body)
    };
    let toks = tokens(rest)?;
    let mut t = toks.into_iter().peekable();
    let source = match source {
        Some(s) => s,
        None => {
            // [schema.]table, as identifiers.
            let mut parts = Vec::new();
            loop {
                match t.next() {
                    Some(Tok::Word(w)) => parts.push(w),
                    Some(Tok::Ident(i)) => parts.push(i),
                    other => return Err(syntax(&describe(other.as_ref()))),
                }
                if t.peek() == Some(&Tok::Punct('.')) {
                    t.next();
                } else {
                    break;
                }
            }
            let table = match parts.as_slice() {
                [table] => table.clone(),
                [schema, table] if schema == "public" || schema == "pg_temp" => table.clone(),
                _ => {
                    return Err(SqlError::new(
                        SqlState::UNDEFINED_TABLE,
                        format!("relation \"{}\" does not exist", parts.join(".")),
                    ))
                }
            };
            let mut columns = Vec::new();
            if t.peek() == Some(&Tok::Punct('(')) {
                t.next();
                loop {
                    match t.next() {
                        Some(Tok::Punct(')')) => break,
                        Some(Tok::Punct(',')) => {}
                        Some(Tok::Word(c) | Tok::Ident(c)) => columns.push(c),
                        other => return Err(syntax(&describe(other.as_ref()))),
                    }
                }
            }
            CopySource::Table { table, columns }
        }
    };
    let direction = match (t.next(), t.next()) {
        (Some(Tok::Word(d)), Some(Tok::Word(w))) if d == "from" && w == "stdin" => CopyDirection::FromStdin,
        (Some(Tok::Word(d)), Some(Tok::Word(w))) if d == "to" && w == "stdout" => CopyDirection::ToStdout,
        (Some(Tok::Word(d)), Some(_)) if d == "from" || d == "to" => {
            return Err(SqlError::new(
                SqlState::FEATURE_NOT_SUPPORTED,
                "COPY with a file or program is not supported; use COPY FROM STDIN or TO STDOUT",
            ))
        }
        (w, _) => return Err(syntax(&describe(w.as_ref()))),
    };
    if matches!(source, CopySource::Query(_)) && direction == CopyDirection::FromStdin {
        return Err(syntax("FROM"));
    }
    // The delimiter's default depends on the format: '\0' until decided.
    let mut options = CopyOptions { delimiter: '\0', ..CopyOptions::default() };
    let mut csv_quote = None;
    let mut csv_escape = None;
    let mut null_given = None;
    if matches!(t.peek(), Some(Tok::Word(w)) if w == "with") {
        t.next();
    }
    if t.peek() == Some(&Tok::Punct('(')) {
        t.next();
        loop {
            let name = match t.next() {
                Some(Tok::Punct(')')) => break,
                Some(Tok::Punct(',')) => continue,
                Some(Tok::Word(w)) => w,
                other => return Err(syntax(&describe(other.as_ref()))),
            };
            // An option's value: a word or string, absent for booleans.
            let value = match t.peek() {
                Some(Tok::Word(_) | Tok::Str(_) | Tok::Ident(_)) => match t.next() {
                    Some(Tok::Word(v) | Tok::Str(v) | Tok::Ident(v)) => Some(v),
                    _ => unreachable!("peeked"),
                },
                _ => None,
            };
            apply(&mut options, (&mut csv_quote, &mut csv_escape, &mut null_given), &name, value.as_deref())?;
        }
    } else {
        // The older syntax: words, each with its value.
        while let Some(tok) = t.next() {
            let Tok::Word(w) = tok else { return Err(syntax(&describe(Some(&tok)))) };
            match w.as_str() {
                "binary" => options.format = CopyFormat::Binary,
                "csv" => options.format = CopyFormat::Csv,
                "header" => options.header = true,
                "delimiter" | "null" | "quote" | "escape" => {
                    if matches!(t.peek(), Some(Tok::Word(a)) if a == "as") {
                        t.next();
                    }
                    let Some(Tok::Str(v)) = t.next() else { return Err(syntax(&w)) };
                    apply(&mut options, (&mut csv_quote, &mut csv_escape, &mut null_given), &w, Some(&v))?;
                }
                "force" => return Err(not_supported("COPY FORCE QUOTE / FORCE NOT NULL")),
                "freeze" | "oids" => {}
                other => return Err(syntax(other)),
            }
        }
    }
    if let Some(extra) = t.next() {
        return Err(syntax(&describe(Some(&extra))));
    }
    let delimiter_given = options.delimiter != '\0';
    if !delimiter_given {
        options.delimiter = if options.format == CopyFormat::Csv { ',' } else { '\t' };
    }
    if options.format == CopyFormat::Csv {
        options.quote = csv_quote.unwrap_or('"');
        options.escape = csv_escape.unwrap_or(options.quote);
        // CSV's NULL is the unquoted empty string unless given.
        options.null = null_given.clone().unwrap_or_default();
    } else if csv_quote.is_some() || csv_escape.is_some() {
        return Err(SqlError::new(SqlState::FEATURE_NOT_SUPPORTED, "COPY quote available only in CSV mode"));
    } else if options.header {
        return Err(SqlError::new(SqlState::FEATURE_NOT_SUPPORTED, "COPY HEADER available only in CSV mode"));
    }
    if let (Some(n), false) = (&null_given, options.format == CopyFormat::Csv) {
        options.null = n.clone();
    }
    if options.format == CopyFormat::Binary && (delimiter_given || null_given.is_some()) {
        return Err(SqlError::new(SqlState::SYNTAX_ERROR, "cannot specify DELIMITER or NULL in BINARY mode"));
    }
    if options.format != CopyFormat::Binary && options.null.contains(options.delimiter) {
        return Err(SqlError::new(
            SqlState::FEATURE_NOT_SUPPORTED,
            "COPY delimiter must not appear in the NULL specification",
        ));
    }
    Ok(CopyStatement { source, direction, options })
}

/// Options whose default depends on the format, as given: (QUOTE,
/// ESCAPE, NULL).
type Given<'a> = (&'a mut Option<char>, &'a mut Option<char>, &'a mut Option<String>);

fn apply(
    o: &mut CopyOptions,
    (quote, escape, null): Given<'_>,
    name: &str,
    value: Option<&str>,
) -> Result<(), SqlError> {
    let one_char = |what: &str, v: Option<&str>| -> Result<char, SqlError> {
        let v = v.unwrap_or_default();
        let mut chars = v.chars();
        match (chars.next(), chars.next()) {
            (Some(c), None) if c.is_ascii() => Ok(c),
            _ => Err(SqlError::new(
                SqlState::FEATURE_NOT_SUPPORTED,
                format!("COPY {what} must be a single one-byte character"),
            )),
        }
    };
    let boolean = |v: Option<&str>| -> Result<bool, SqlError> {
        match v.map(str::to_ascii_lowercase).as_deref() {
            None | Some("true" | "on" | "1") => Ok(true),
            Some("false" | "off" | "0") => Ok(false),
            Some(other) => Err(SqlError::new(
                SqlState::SYNTAX_ERROR,
                format!("{name} requires a Boolean value, not \"{other}\""),
            )),
        }
    };
    match name {
        "format" => {
            o.format = match value.map(str::to_ascii_lowercase).as_deref() {
                Some("text") => CopyFormat::Text,
                Some("csv") => CopyFormat::Csv,
                Some("binary") => CopyFormat::Binary,
                Some(other) => {
                    return Err(SqlError::new(
                        SqlState::INVALID_PARAMETER_VALUE,
                        format!("COPY format \"{other}\" not recognized"),
                    ))
                }
                None => return Err(syntax("format")),
            }
        }
        "delimiter" => o.delimiter = one_char("delimiter", value)?,
        "null" => *null = Some(value.unwrap_or_default().to_owned()),
        "header" => o.header = boolean(value)?,
        "quote" => *quote = Some(one_char("quote", value)?),
        "escape" => *escape = Some(one_char("escape", value)?),
        "freeze" => {
            // COPY FREEZE's only effect is on hint bits and visibility
            // maps; the rows are inserted normally.
            boolean(value)?;
        }
        "encoding" => {
            if !value.is_some_and(|v| v.eq_ignore_ascii_case("utf8") || v.eq_ignore_ascii_case("utf-8")) {
                return Err(not_supported(format!("COPY encoding \"{}\"", value.unwrap_or_default())));
            }
        }
        "force_quote" | "force_not_null" | "force_null" => return Err(not_supported(format!("COPY {name}"))),
        other => {
            return Err(SqlError::new(SqlState::SYNTAX_ERROR, format!("option \"{other}\" not recognized")))
        }
    }
    Ok(())
}

fn describe(t: Option<&Tok>) -> String {
    match t {
        None => "end of input".into(),
        Some(Tok::Word(w) | Tok::Ident(w) | Tok::Str(w)) => w.clone(),
        Some(Tok::Punct(c)) => c.to_string(),
    }
}

/// The position of the `)` that closes an opening `(` just before `s`
/// (quotes and comments respected).
fn matching_paren(s: &str) -> Option<usize> {
    let b = s.as_bytes();
    let mut depth = 1usize;
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            q @ (b'\'' | b'"') => {
                i += 1;
                while i < b.len() {
                    if b[i] == q {
                        if b.get(i + 1) == Some(&q) {
                            i += 1;
                        } else {
                            break;
                        }
                    }
                    i += 1;
                }
            }
            b'-' if b.get(i + 1) == Some(&b'-') => {
                while i < b.len() && b[i] != b'\n' {
                    i += 1;
                }
            }
            b'(' => depth += 1,
            b')' => {
                depth -= 1;
                if depth == 0 {
                    return Some(i);
                }
            }
            _ => {}
        }
        i += 1;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn statement(sql: &str) -> Result<CopyStatement, SqlError> {
        let query = |text: &str| -> Result<Option<Ast>, SqlError> {
            let mut statements =
                sqlparser::parser::Parser::parse_sql(&sqlparser::dialect::PostgreSqlDialect {}, text)
                    .map_err(|e| SqlError::new(SqlState::SYNTAX_ERROR, e.to_string()))?;
            Ok(statements.pop().map(|s| Ast {
                statement: Some(Box::new(s)),
                stack: crate::stack::BigStack::for_source(0),
                lock_strengths: None,
                pre: Box::default(),
                origin: None,
            }))
        };
        parse_statement(sql, query)
    }

    fn opts(sql: &str) -> CopyOptions {
        statement(sql).unwrap().options
    }

    #[test]
    fn option_forms() {
        assert_eq!(opts("copy t from stdin").format, CopyFormat::Text);
        let o = opts("copy t from stdin with (format csv, header, delimiter ';')");
        assert_eq!((o.format, o.header, o.delimiter, o.null.as_str()), (CopyFormat::Csv, true, ';', ""));
        let o = opts("COPY \"t\"(a) FROM stdin WITH DELIMITER AS '\t' NULL AS '\\N'");
        assert_eq!((o.delimiter, o.null.as_str()), ('\t', "\\N"));
        assert_eq!(opts("copy t from stdin binary").format, CopyFormat::Binary);
        assert!(opts("copy t to stdout with csv header").header);
        assert_eq!(opts("copy t from stdin (format 'text')").format, CopyFormat::Text);
        assert_eq!(opts("copy t from stdin with (freeze on)").format, CopyFormat::Text);
        assert_eq!(opts("copy t from stdin with (format csv, null 'x')").null, "x");
        assert_eq!(opts("copy t to stdout with delimiter E'\\t'").delimiter, '\t');
        let s = statement("COPY \"public\".\"t\" (a, \"B\") TO STDOUT").unwrap();
        assert!(
            matches!(s.source, CopySource::Table { ref table, ref columns } if table == "t" && columns == &["a", "B"])
        );
        let s = statement("copy (select 1, ')') to stdout with csv").unwrap();
        assert!(matches!(s.source, CopySource::Query(_)));
    }

    #[test]
    fn bad_forms_say_why() {
        let err = |sql: &str| statement(sql).unwrap_err().code;
        assert_eq!(err("copy t from '/etc/passwd'"), SqlState::FEATURE_NOT_SUPPORTED);
        assert_eq!(err("copy t from stdin (format xml)"), SqlState::INVALID_PARAMETER_VALUE);
        assert_eq!(err("copy t from stdin (delimiter 'ab')"), SqlState::FEATURE_NOT_SUPPORTED);
        assert_eq!(err("copy t from stdin (header)"), SqlState::FEATURE_NOT_SUPPORTED);
        assert_eq!(err("copy (select 1) from stdin"), SqlState::SYNTAX_ERROR);
        assert_eq!(err("copy t from stdin (bogus)"), SqlState::SYNTAX_ERROR);
        assert_eq!(err("copy other.t from stdin"), SqlState::UNDEFINED_TABLE);
    }
}
