//! `like_regex`: XQuery flags mapped onto PostgreSQL's regex options, and
//! PostgreSQL's advanced regular expressions approximated with the `regex`
//! crate (the common syntax is shared; PostgreSQL's word-boundary escapes
//! are translated; back references and lookaround are not supported).

use regex::{Regex, RegexBuilder};
use snapscale_sqlstate::SqlState;

use super::ast::{FLAG_I, FLAG_M, FLAG_Q, FLAG_S, FLAG_X};
use crate::SqlError;

fn invalid(reason: &str) -> SqlError {
    SqlError::new(SqlState::INVALID_REGULAR_EXPRESSION, format!("invalid regular expression: {reason}"))
}

/// Rewrites PostgreSQL-only escapes into the `regex` crate's syntax.
fn translate(pattern: &str) -> String {
    let mut out = String::with_capacity(pattern.len());
    let mut it = pattern.chars();
    while let Some(c) = it.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match it.next() {
            Some('b') => out.push_str(r"\x08"),
            Some('B') => out.push_str(r"\\"),
            Some('m') => out.push_str(r"\b{start}"),
            Some('M') => out.push_str(r"\b{end}"),
            Some('y') => out.push_str(r"\b"),
            Some('Y') => out.push_str(r"\B"),
            Some('Z') => out.push_str(r"\z"),
            Some(o) => {
                out.push('\\');
                out.push(o);
            }
            None => out.push('\\'),
        }
    }
    out
}

/// Compiles a `like_regex` pattern with its flags, with PostgreSQL's
/// errors for the `x` flag and for invalid patterns.
pub(crate) fn compile(pattern: &str, flags: u8) -> Result<Regex, SqlError> {
    let quote = flags & FLAG_Q != 0;
    if !quote && flags & FLAG_X != 0 {
        return Err(SqlError::new(
            SqlState::FEATURE_NOT_SUPPORTED,
            "XQuery \"x\" flag (expanded regular expressions) is not implemented",
        ));
    }
    let source = if quote { regex::escape(pattern) } else { translate(pattern) };
    let mut b = RegexBuilder::new(&source);
    b.case_insensitive(flags & FLAG_I != 0);
    if !quote {
        b.dot_matches_new_line(flags & FLAG_S != 0);
        b.multi_line(flags & FLAG_M != 0);
    }
    b.build().map_err(|e| {
        let msg = e.to_string();
        if msg.contains("unclosed group") || msg.contains("unopened group") {
            invalid("parentheses () not balanced")
        } else if msg.contains("unclosed character class") {
            invalid("brackets [] not balanced")
        } else if msg.contains("repetition") && (msg.contains("invalid") || msg.contains("decreasing")) {
            invalid("invalid repetition count(s)")
        } else if msg.contains("repetition operator missing expression") {
            invalid("quantifier operand invalid")
        } else if msg.contains("size limit") {
            invalid("regular expression is too complex")
        } else {
            invalid("invalid escape \\ sequence")
        }
    })
}
