//! Text output of jsonb: `jsonb_out`'s compact form (`{"a": 1, "b": [1,
//! 2]}`) and `jsonb_pretty`'s four-space layout, plus the string quoting
//! (`escape_json`) every json producer shares.
//!
//! Both forms follow PostgreSQL's token-driven writer, whose quirks (empty
//! containers in pretty output spread over two lines, no indent before a
//! container that is an object's value) are part of the format.

use std::fmt::Write;

use super::value::{Jsonb, Token, Tokens};

/// Appends `s` as a json string literal, quoting as PostgreSQL does:
/// `\"`, `\\`, `\b`, `\f`, `\n`, `\r`, `\t`, other control characters as
/// `\u00XX`; everything else (including `/` and non-ASCII) as is.
pub fn escape_json(out: &mut String, s: &str) {
    out.push('"');
    let mut run = 0;
    for (i, b) in s.bytes().enumerate() {
        let rep: &str = match b {
            b'"' => "\\\"",
            b'\\' => "\\\\",
            b'\n' => "\\n",
            b'\r' => "\\r",
            b'\t' => "\\t",
            8 => "\\b",
            12 => "\\f",
            0..=31 => "",
            _ => continue,
        };
        out.push_str(&s[run..i]);
        if rep.is_empty() {
            let _ = write!(out, "\\u{:04x}", b);
        } else {
            out.push_str(rep);
        }
        run = i + 1;
    }
    out.push_str(&s[run..]);
    out.push('"');
}

/// Appends a scalar's json text.
pub(crate) fn put_scalar(out: &mut String, v: &Jsonb) {
    match v {
        Jsonb::Null => out.push_str("null"),
        Jsonb::Bool(true) => out.push_str("true"),
        Jsonb::Bool(false) => out.push_str("false"),
        Jsonb::Number(n) => {
            let _ = write!(out, "{n}");
        }
        Jsonb::String(s) => escape_json(out, s),
        // Containers come through the token walk, never here.
        Jsonb::Array(_) | Jsonb::Object(_) => {}
    }
}

fn add_indent(out: &mut String, indent: bool, level: usize) {
    if indent {
        out.push('\n');
        for _ in 0..level {
            out.push_str("    ");
        }
    }
}

/// Writes `v` compactly (jsonb_out) or indented (jsonb_pretty).
pub(crate) fn write_jsonb(out: &mut String, v: &Jsonb, indent: bool) {
    let sep = if indent { "," } else { ", " };
    let mut first = true;
    let mut level = 0usize;
    let mut use_indent = false;
    let mut raw_scalar = false;
    let mut last_was_key = false;
    let mut it = Tokens::new(v);
    let mut pending: Option<Token<'_>> = None;
    while let Some(tok) = pending.take().or_else(|| it.next()) {
        match tok {
            Token::BeginArray { raw, .. } => {
                if !first {
                    out.push_str(sep);
                }
                if !raw {
                    add_indent(out, use_indent && !last_was_key, level);
                    out.push('[');
                } else {
                    raw_scalar = true;
                }
                first = true;
                level += 1;
            }
            Token::BeginObject { .. } => {
                if !first {
                    out.push_str(sep);
                }
                add_indent(out, use_indent && !last_was_key, level);
                out.push('{');
                first = true;
                level += 1;
            }
            Token::Key(k) => {
                if !first {
                    out.push_str(sep);
                }
                first = true;
                add_indent(out, use_indent, level);
                escape_json(out, k);
                out.push_str(": ");
                match it.next() {
                    Some(Token::Value(v)) => {
                        first = false;
                        put_scalar(out, v);
                    }
                    other => pending = other,
                }
            }
            Token::Elem(v) | Token::Value(v) => {
                if !first {
                    out.push_str(sep);
                }
                first = false;
                if !raw_scalar {
                    add_indent(out, use_indent, level);
                }
                put_scalar(out, v);
            }
            Token::EndArray { raw } => {
                level -= 1;
                if !raw {
                    add_indent(out, use_indent, level);
                    out.push(']');
                }
                first = false;
            }
            Token::EndObject => {
                level -= 1;
                add_indent(out, use_indent, level);
                out.push('}');
                first = false;
            }
        }
        use_indent = indent;
        last_was_key = pending.is_some();
    }
}

impl Jsonb {
    /// jsonb_out: the compact text form.
    pub fn to_text(&self) -> String {
        let mut s = String::new();
        write_jsonb(&mut s, self, false);
        s
    }

    /// jsonb_pretty: the indented text form.
    pub fn pretty(&self) -> String {
        let mut s = String::new();
        write_jsonb(&mut s, self, true);
        s
    }
}

impl std::fmt::Display for Jsonb {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.to_text())
    }
}
