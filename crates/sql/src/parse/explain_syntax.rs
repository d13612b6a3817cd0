//! EXPLAIN's header, read by hand: `EXPLAIN [ANALYZE] [VERBOSE]` or
//! `EXPLAIN (option [value], …)`, PostgreSQL's two forms. The statement
//! after it is parsed as any statement is (the pre-parser's rewrites
//! included), which sqlparser's own EXPLAIN would not do.

use snapscale_sqlstate::SqlState;
use snapscale_values::SqlError;
use sqlparser::tokenizer::{Token, TokenWithSpan};

use super::lock_syntax::{offset, significant_tokens};
use super::token_walk::{char_position, near};

/// One `name [value]` of the parenthesised list, as written.
struct Elem {
    name: String,
    /// `None`: no value; `Some(Ok(n))` a number, `Some(Err(s))` a word or
    /// a string.
    value: Option<Result<String, String>>,
    /// The name's 1-based character position in the statement.
    at: usize,
}

/// EXPLAIN's options and where the explained statement starts in `sql`
/// (a byte offset); `sql` starts with the word EXPLAIN.
pub(crate) fn read_explain(sql: &str) -> Result<(ExplainOptions, usize), SqlError> {
    let tokens = significant_tokens(sql).ok_or_else(|| {
        SqlError::new(SqlState::SYNTAX_ERROR, "syntax error at or near \"EXPLAIN\"").at_position(1)
    })?;
    let tokens: Vec<TokenWithSpan> =
        tokens.into_iter().filter(|t| !matches!(t.token, Token::EOF | Token::SemiColon)).collect();
    let word = |i: usize| match tokens.get(i).map(|t| &t.token) {
        Some(Token::Word(w)) if w.quote_style.is_none() => Some(w.value.to_ascii_lowercase()),
        _ => None,
    };
    let mut options = ExplainOptions::default();
    let mut i = 1;
    if matches!(tokens.get(i).map(|t| &t.token), Some(Token::LParen)) {
        i += 1;
        let mut elems = Vec::new();
        loop {
            let at = match tokens.get(i) {
                Some(t) => char_position(sql, t.span.start),
                None => return Err(near(sql, &tokens, i)),
            };
            let name = match tokens.get(i).map(|t| &t.token) {
                Some(Token::Word(w)) if w.quote_style.is_none() => w.value.to_ascii_lowercase(),
                _ => return Err(near(sql, &tokens, i)),
            };
            i += 1;
            let value = match tokens.get(i).map(|t| &t.token) {
                Some(Token::Word(w)) if w.quote_style.is_none() => Some(Err(w.value.to_ascii_lowercase())),
                Some(Token::SingleQuotedString(s)) => Some(Err(s.clone())),
                Some(Token::Number(n, _)) => Some(Ok(n.clone())),
                Some(Token::Minus) => match tokens.get(i + 1).map(|t| &t.token) {
                    Some(Token::Number(n, _)) => {
                        i += 1;
                        Some(Ok(format!("-{n}")))
                    }
                    _ => return Err(near(sql, &tokens, i + 1)),
                },
                _ => None,
            };
            if value.is_some() {
                i += 1;
            }
            elems.push(Elem { name, value, at });
            match tokens.get(i).map(|t| &t.token) {
                Some(Token::Comma) => i += 1,
                Some(Token::RParen) => {
                    i += 1;
                    break;
                }
                _ => return Err(near(sql, &tokens, i)),
            }
        }
        options = checked(elems)?;
    } else {
        if matches!(word(i).as_deref(), Some("analyze" | "analyse")) {
            options.analyze = true;
            i += 1;
        }
        if word(i).as_deref() == Some("verbose") {
            options.verbose = true;
            i += 1;
        }
        options.timing = options.analyze;
        options.summary = options.analyze;
    }
    let Some(first) = tokens.get(i) else {
        return Err(near(sql, &tokens, i));
    };
    let starts: Vec<usize> = std::iter::once(0).chain(sql.match_indices('\n').map(|(k, _)| k + 1)).collect();
    Ok((options, offset(&starts, sql, first.span.start)))
}

/// The options of the parenthesised list, checked as PostgreSQL checks
/// them: each name known, each value of its kind, then the combinations.
fn checked(elems: Vec<Elem>) -> Result<ExplainOptions, SqlError> {
    let mut o = ExplainOptions::default();
    let (mut timing, mut summary) = (None, None);
    for e in elems {
        let flag = || boolean(&e);
        match e.name.as_str() {
            "analyze" => o.analyze = flag()?,
            "verbose" => o.verbose = flag()?,
            "costs" => o.costs = flag()?,
            "buffers" => o.buffers = flag()?,
            "wal" => o.wal = flag()?,
            "settings" => o.settings = flag()?,
            "timing" => timing = Some(flag()?),
            "summary" => summary = Some(flag()?),
            "format" => {
                let value = match &e.value {
                    Some(Ok(s) | Err(s)) => s.clone(),
                    None => return Err(SqlError::new(SqlState::SYNTAX_ERROR, "format requires a parameter")),
                };
                o.format = match value.as_str() {
                    "text" => ExplainFormat::Text,
                    "json" => ExplainFormat::Json,
                    "xml" | "yaml" => {
                        return Err(SqlError::new(
                            SqlState::FEATURE_NOT_SUPPORTED,
                            format!("EXPLAIN format \"{value}\" is not supported"),
                        ))
                    }
                    _ => {
                        return Err(SqlError::new(
                            SqlState::INVALID_PARAMETER_VALUE,
                            format!("unrecognized value for EXPLAIN option \"format\": \"{value}\""),
                        )
                        .at_position(e.at))
                    }
                };
            }
            other => {
                return Err(SqlError::new(
                    SqlState::SYNTAX_ERROR,
                    format!("unrecognized EXPLAIN option \"{other}\""),
                )
                .at_position(e.at))
            }
        }
    }
    if o.wal && !o.analyze {
        return Err(SqlError::new(SqlState::INVALID_PARAMETER_VALUE, "EXPLAIN option WAL requires ANALYZE"));
    }
    o.timing = timing.unwrap_or(o.analyze);
    if o.timing && !o.analyze {
        return Err(SqlError::new(
            SqlState::INVALID_PARAMETER_VALUE,
            "EXPLAIN option TIMING requires ANALYZE",
        ));
    }
    o.summary = summary.unwrap_or(o.analyze);
    Ok(o)
}

/// A Boolean option's value: none is true; 1 and 0; true, false, on,
/// off in any case.
fn boolean(e: &Elem) -> Result<bool, SqlError> {
    let v = match &e.value {
        None => return Ok(true),
        Some(Ok(n)) if n == "1" => return Ok(true),
        Some(Ok(n)) if n == "0" => return Ok(false),
        Some(Ok(_)) => None,
        Some(Err(s)) => match s.to_ascii_lowercase().as_str() {
            "true" | "on" => Some(true),
            "false" | "off" => Some(false),
            _ => None,
        },
    };
    v.ok_or_else(|| SqlError::new(SqlState::SYNTAX_ERROR, format!("{} requires a Boolean value", e.name)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_both_forms() {
        let (o, at) = read_explain("EXPLAIN ANALYZE VERBOSE select 1").unwrap();
        assert!(o.analyze && o.verbose && o.timing && o.summary && o.costs);
        assert_eq!(&"EXPLAIN ANALYZE VERBOSE select 1"[at..], "select 1");
        let (o, at) = read_explain("explain (costs off, analyze on, timing 0) select 1").unwrap();
        assert!(!o.costs && o.analyze && !o.timing && o.summary);
        assert_eq!(at, 42);
        let (o, _) = read_explain("explain (format json) select 1").unwrap();
        assert_eq!(o.format, ExplainFormat::Json);
    }

    #[test]
    fn refuses_as_postgres_does() {
        let e = read_explain("explain (foo) select 1").unwrap_err();
        assert_eq!(
            (e.code, e.message.as_str(), e.position),
            (SqlState::SYNTAX_ERROR, "unrecognized EXPLAIN option \"foo\"", Some(10))
        );
        let e = read_explain("explain (timing on) select 1").unwrap_err();
        assert_eq!(e.code, SqlState::INVALID_PARAMETER_VALUE);
        assert_eq!(e.message, "EXPLAIN option TIMING requires ANALYZE");
        let e = read_explain("explain (analyze 2) select 1").unwrap_err();
        assert_eq!(e.message, "analyze requires a Boolean value");
        let e = read_explain("explain (format) select 1").unwrap_err();
        assert_eq!(e.message, "format requires a parameter");
        let e = read_explain("explain (format xyz) select 1").unwrap_err();
        assert_eq!(e.message, "unrecognized value for EXPLAIN option \"format\": \"xyz\"");
    }
}

/// EXPLAIN's format.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum ExplainFormat {
    #[default]
    Text,
    Json,
}

/// EXPLAIN's options, checked.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ExplainOptions {
    pub analyze: bool,
    pub verbose: bool,
    pub costs: bool,
    pub buffers: bool,
    pub wal: bool,
    pub settings: bool,
    pub timing: bool,
    pub summary: bool,
    pub format: ExplainFormat,
}

impl Default for ExplainOptions {
    fn default() -> ExplainOptions {
        ExplainOptions {
            analyze: false,
            verbose: false,
            costs: true,
            buffers: false,
            wal: false,
            settings: false,
            timing: false,
            summary: false,
            format: ExplainFormat::Text,
        }
    }
}

/// `EXPLAIN [options] statement`, parsed.
#[derive(Debug)]
pub struct Explain {
    pub options: ExplainOptions,
    pub statement: Box<super::Parsed>,
}
