//! Statements sqlparser does not read the way PostgreSQL does: VACUUM and
//! ANALYZE (its grammar is another dialect's, and it reads `vacuum
//! analyze` as a table named "analyze"), and COPY, whose options
//! (`with (freeze on)`, pgbench's form) it rejects. They are recognised
//! here by their first word and parsed by hand; everything else goes to
//! sqlparser.

use sqlparser::dialect::PostgreSqlDialect;
use sqlparser::parser::{Parser, ParserError};

use crate::error::SqlError;
use crate::sqlstate::SqlState;
use crate::stack::{parser_depth, too_deep, BigStack};

pub use crate::statement::Ast;

/// One parsed statement.
#[derive(Debug)]
pub enum Parsed {
    Sql(Ast),
    Vacuum { tables: Vec<String>, analyze: bool, freeze: bool },
    Analyze,
    Checkpoint,
    Copy(crate::copy::CopyStatement),
}

fn syntax(near: &str) -> SqlError {
    SqlError::new(SqlState::SYNTAX_ERROR, format!("syntax error at or near \"{near}\""))
}

/// Parses one expression as stored in the catalog (a column's DEFAULT,
/// written by sqlparser from an expression it parsed).
pub(crate) fn parse_expr(text: &str, max_stack_depth: usize) -> Result<sqlparser::ast::Expr, SqlError> {
    Parser::new(&PostgreSqlDialect {})
        .with_recursion_limit(parser_depth(max_stack_depth))
        .try_with_sql(text)
        .and_then(|mut p| p.parse_expr())
        .map_err(|e| {
            SqlError::new(SqlState::INTERNAL_ERROR, format!("a stored expression does not parse: {e}"))
        })
}

/// Parses the query of `COPY (query) TO STDOUT`: one statement, or `None`.
pub(crate) fn copy_query(max_stack_depth: usize) -> impl FnOnce(&str) -> Result<Option<Ast>, SqlError> {
    move |text| {
        let mut parsed = parse(text, max_stack_depth)?;
        Ok(match (parsed.pop(), parsed.is_empty()) {
            (Some(Parsed::Sql(ast)), true) => Some(ast),
            _ => None,
        })
    }
}

/// Splits `sql` into statements. sqlparser's recursion stops at a depth
/// derived from `max_stack_depth`, with 54001.
pub fn parse(sql: &str, max_stack_depth: usize) -> Result<Vec<Parsed>, SqlError> {
    let mut out = Vec::new();
    for piece in split(sql) {
        let trimmed = piece.trim();
        let first =
            trimmed.split(|c: char| !c.is_ascii_alphabetic()).next().unwrap_or("").to_ascii_lowercase();
        if first == "copy" {
            out.push(Parsed::Copy(crate::copy::parse_statement(trimmed, copy_query(max_stack_depth))?));
            continue;
        }
        if matches!(first.as_str(), "vacuum" | "analyze" | "analyse" | "checkpoint") {
            out.push(hand_parse(trimmed)?);
            continue;
        }
        // CREATE SEQUENCE's options in the order sqlparser reads them.
        let reordered = crate::sequence_syntax::canonical_create_sequence(piece);
        let piece = reordered.as_deref().unwrap_or(piece);
        // FOR KEY SHARE / FOR NO KEY UPDATE, which sqlparser lacks.
        let (rewritten, lock_strengths) = match crate::lock_syntax::read_lock_strengths(piece) {
            Some((text, strengths)) => (Some(text), Some(strengths)),
            None => (None, None),
        };
        let piece = rewritten.as_deref().unwrap_or(piece);
        // sqlparser drops what it built when it fails; a long chain needs
        // the big stack then too.
        let stack = BigStack::for_source(piece.len());
        let statements = stack.run(|| {
            let parsed = Parser::new(&PostgreSqlDialect {})
                .with_recursion_limit(parser_depth(max_stack_depth))
                .try_with_sql(piece)
                .and_then(|mut p| p.parse_statements());
            parsed.map(|statements| {
                statements
                    .into_iter()
                    .map(|s| {
                        let lock_strengths = lock_strengths.clone();
                        Parsed::Sql(Ast { statement: Some(Box::new(s)), stack, lock_strengths })
                    })
                    .collect::<Vec<_>>()
            })
        });
        match statements {
            Ok(statements) => out.extend(statements),
            Err(ParserError::RecursionLimitExceeded) => return Err(too_deep(max_stack_depth)),
            Err(e) => {
                let message = e.to_string();
                let message = message.strip_prefix("sql parser error: ").unwrap_or(&message).to_owned();
                return Err(SqlError::new(SqlState::SYNTAX_ERROR, format!("syntax error: {message}")));
            }
        }
    }
    Ok(out)
}

/// Splits at semicolons outside quotes, comments and dollar quotes;
/// pieces that are only blanks and comments are dropped.
fn split(sql: &str) -> Vec<&str> {
    let b = sql.as_bytes();
    let mut pieces = Vec::new();
    let (mut start, mut i) = (0, 0);
    let mut meaningful = false;
    while i < b.len() {
        match b[i] {
            b'\'' | b'"' => {
                let q = b[i];
                i += 1;
                while i < b.len() {
                    if b[i] == q {
                        if b.get(i + 1) == Some(&q) {
                            i += 2;
                            continue;
                        }
                        break;
                    }
                    i += 1;
                }
                meaningful = true;
            }
            b'-' if b.get(i + 1) == Some(&b'-') => {
                while i < b.len() && b[i] != b'\n' {
                    i += 1;
                }
            }
            b'/' if b.get(i + 1) == Some(&b'*') => {
                i += 2;
                while i + 1 < b.len() && !(b[i] == b'*' && b[i + 1] == b'/') {
                    i += 1;
                }
                i += 1;
            }
            b'$' => {
                // $tag$ ... $tag$ (a $1 parameter has no closing dollar).
                let tag_end = b[i + 1..].iter().position(|&c| !(c.is_ascii_alphanumeric() || c == b'_'));
                match tag_end.map(|n| i + 1 + n) {
                    Some(end) if b[end] == b'$' && !b[i + 1].is_ascii_digit() => {
                        let tag = &sql[i..=end];
                        match sql[end + 1..].find(tag) {
                            Some(close) => i = end + 1 + close + tag.len() - 1,
                            None => i = b.len(),
                        }
                    }
                    _ => {}
                }
                meaningful = true;
            }
            b';' => {
                if meaningful {
                    pieces.push(&sql[start..i]);
                }
                start = i + 1;
                meaningful = false;
            }
            c if !c.is_ascii_whitespace() => meaningful = true,
            _ => {}
        }
        i += 1;
    }
    if meaningful && start < b.len() {
        pieces.push(&sql[start..]);
    }
    pieces
}

/// A quoted token after its opening quote `q`, the quote kept in front
/// (so names and literals stay distinguishable); a doubled quote is one.
fn quoted(chars: &mut std::iter::Peekable<std::str::Chars<'_>>, q: char) -> Result<String, SqlError> {
    let mut word = String::from(q);
    loop {
        match chars.next() {
            Some(ch) if ch == q && chars.peek() == Some(&q) => {
                chars.next();
                word.push(q);
            }
            Some(ch) if ch == q => return Ok(word),
            Some(ch) => word.push(ch),
            None if q == '"' => {
                return Err(SqlError::new(SqlState::SYNTAX_ERROR, "unterminated quoted identifier"))
            }
            None => return Err(SqlError::new(SqlState::SYNTAX_ERROR, "unterminated quoted string")),
        }
    }
}

/// Words, parentheses and commas; quoted identifiers keep their case.
fn tokens(s: &str) -> Result<Vec<String>, SqlError> {
    let mut out = Vec::new();
    let mut chars = s.chars().peekable();
    while let Some(&c) = chars.peek() {
        if c.is_whitespace() {
            chars.next();
        } else if c == '(' || c == ')' || c == ',' {
            out.push(c.to_string());
            chars.next();
        } else if c == '"' || c == '\'' {
            chars.next();
            out.push(quoted(&mut chars, c)?);
        } else {
            let mut word = String::new();
            while let Some(&ch) = chars.peek() {
                if ch.is_whitespace() || ch == '(' || ch == ')' || ch == ',' {
                    break;
                }
                word.push(ch.to_ascii_lowercase());
                chars.next();
            }
            out.push(word);
        }
    }
    Ok(out)
}

/// A (possibly qualified) name token as the binder expects it.
fn name(tok: &str) -> String {
    tok.split('.')
        .map(|p| p.strip_prefix('"').unwrap_or(p).to_owned())
        .collect::<Vec<_>>()
        .last()
        .cloned()
        .unwrap_or_default()
}

fn hand_parse(s: &str) -> Result<Parsed, SqlError> {
    let toks = tokens(s)?;
    let mut t = toks.iter().map(String::as_str).peekable();
    match t.next() {
        Some("vacuum") => {
            let (mut analyze, mut freeze) = (false, false);
            if t.peek() == Some(&"(") {
                t.next();
                loop {
                    match t.next() {
                        Some(")") => break,
                        Some(",") => {}
                        Some("analyze" | "analyse") => analyze = true,
                        Some("freeze") => freeze = true,
                        Some("verbose" | "full" | "true" | "on" | "1") => {}
                        Some(other) => {
                            return Err(SqlError::new(
                                SqlState::SYNTAX_ERROR,
                                format!("unrecognized VACUUM option \"{other}\""),
                            ))
                        }
                        None => return Err(syntax("end of input")),
                    }
                }
            }
            while let Some(&w) = t.peek() {
                match w {
                    "full" | "verbose" => {}
                    "freeze" => freeze = true,
                    "analyze" | "analyse" => analyze = true,
                    _ => break,
                }
                t.next();
            }
            Ok(Parsed::Vacuum { tables: table_list(&mut t)?, analyze, freeze })
        }
        Some("checkpoint") => match t.next() {
            None => Ok(Parsed::Checkpoint),
            Some(other) => Err(syntax(other)),
        },
        Some("analyze" | "analyse") => {
            // Statistics are not used by this planner: accepted, nothing done.
            Ok(Parsed::Analyze)
        }
        _ => Err(syntax(s)),
    }
}

fn table_list<'a>(t: &mut impl Iterator<Item = &'a str>) -> Result<Vec<String>, SqlError> {
    let mut tables = Vec::new();
    for w in t {
        match w {
            "," => {}
            "(" | ")" => return Err(SyntaxNear(w).into()),
            w => tables.push(name(w)),
        }
    }
    Ok(tables)
}

struct SyntaxNear<'a>(&'a str);

impl From<SyntaxNear<'_>> for SqlError {
    fn from(s: SyntaxNear<'_>) -> SqlError {
        syntax(s.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const DEPTH: usize = crate::stack::DEFAULT_MAX_STACK_DEPTH;

    fn parse(sql: &str) -> Result<Vec<Parsed>, SqlError> {
        super::parse(sql, DEPTH)
    }

    #[test]
    fn deep_nesting_is_54001_and_long_chains_parse() {
        let deep = format!("SELECT {}1{}", "(".repeat(1_000_000), ")".repeat(1_000_000));
        assert_eq!(super::parse(&deep, DEPTH).unwrap_err().code, "54001");
        let chain = format!("SELECT {}", vec!["1"; 100_000].join("+"));
        assert_eq!(parse(&chain).unwrap().len(), 1);
        // sqlparser drops the chain it built when the statement fails.
        let broken = format!("{chain} +");
        assert_eq!(parse(&broken).unwrap_err().code, "42601");
    }

    #[test]
    fn splits_outside_quotes_and_comments() {
        assert_eq!(split("a; b;"), vec!["a", " b"]);
        assert_eq!(split("select ';' -- x;\n; ;"), vec!["select ';' -- x;\n"]);
        assert_eq!(split("select $$a;b$$, $1; /* ; */"), vec!["select $$a;b$$, $1"]);
        assert_eq!(split("  ; -- only a comment"), Vec::<&str>::new());
        assert_eq!(parse("VACUUM; SELECT 1").unwrap().len(), 2);
    }

    #[test]
    fn pgbench_statements() {
        match &parse("vacuum analyze pgbench_branches").unwrap()[0] {
            Parsed::Vacuum { tables, analyze, .. } => {
                assert_eq!(tables, &["pgbench_branches"]);
                assert!(analyze);
            }
            other => panic!("{other:?}"),
        }
        match &parse("copy pgbench_accounts from stdin with (freeze on)").unwrap()[0] {
            Parsed::Copy(c) => {
                assert!(
                    matches!(&c.source, crate::copy::CopySource::Table { table, .. } if table == "pgbench_accounts")
                );
                assert_eq!(c.direction, crate::copy::CopyDirection::FromStdin);
            }
            other => panic!("{other:?}"),
        }
        match &parse("VACUUM").unwrap()[0] {
            Parsed::Vacuum { tables, analyze, freeze } => assert!(tables.is_empty() && !analyze && !freeze),
            other => panic!("{other:?}"),
        }
        assert!(matches!(
            &parse("copy t (a, b) to stdout").unwrap()[0],
            Parsed::Copy(c) if matches!(&c.source, crate::copy::CopySource::Table { columns, .. } if columns.len() == 2)
        ));
        assert_eq!(parse("copy t from '/etc/passwd'").unwrap_err().code, "0A000");
    }
}
