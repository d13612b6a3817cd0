//! jsonpath_out: the canonical text of a parsed jsonpath, with
//! PostgreSQL's parenthesisation by operator priority, its spacing and
//! its quoting of keys and strings.

use super::ast::*;
use crate::json::escape_json;

fn priority(item: &Item) -> u8 {
    match item {
        Item::Binary(op, ..) => match op {
            BinOp::Or => 0,
            BinOp::And => 1,
            BinOp::Eq | BinOp::Ne | BinOp::Lt | BinOp::Gt | BinOp::Le | BinOp::Ge | BinOp::StartsWith => 2,
            BinOp::Add | BinOp::Sub => 3,
            BinOp::Mul | BinOp::Div | BinOp::Mod => 4,
        },
        Item::Unary(UnOp::Plus | UnOp::Minus, _) => 5,
        _ => 6,
    }
}

/// Prints an argument chain under an item of priority `parent`.
fn arg(out: &mut String, c: &Chain, parent: u8) {
    let br = priority(&c.0[0]) <= parent;
    chain(out, c, false, br);
}

/// Prints a chain: the head as asked, the rest as accessors.
pub(crate) fn chain(out: &mut String, c: &Chain, in_key: bool, brackets: bool) {
    for (i, item) in c.0.iter().enumerate() {
        let has_next = i + 1 < c.0.len();
        if i == 0 {
            one(out, item, in_key, brackets, has_next);
        } else {
            one(out, item, true, true, i + 1 < c.0.len());
        }
    }
}

fn one(out: &mut String, item: &Item, in_key: bool, brackets: bool, has_next: bool) {
    match item {
        Item::Null => out.push_str("null"),
        Item::Key(k) => {
            if in_key {
                out.push('.');
            }
            escape_json(out, k);
        }
        Item::String(s) => escape_json(out, s),
        Item::Variable(v) => {
            out.push('$');
            escape_json(out, v);
        }
        Item::Numeric(n) => {
            if has_next {
                out.push('(');
            }
            out.push_str(&n.to_string());
            if has_next {
                out.push(')');
            }
        }
        Item::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Item::Binary(op, l, r) => {
            let p = priority(item);
            if brackets {
                out.push('(');
            }
            arg(out, l, p);
            out.push(' ');
            out.push_str(op.name());
            out.push(' ');
            arg(out, r, p);
            if brackets {
                out.push(')');
            }
        }
        Item::LikeRegex { expr, pattern, flags } => {
            if brackets {
                out.push('(');
            }
            arg(out, expr, priority(item));
            out.push_str(" like_regex ");
            escape_json(out, pattern);
            if *flags != 0 {
                out.push_str(" flag \"");
                for (bit, ch) in [(FLAG_I, 'i'), (FLAG_S, 's'), (FLAG_M, 'm'), (FLAG_X, 'x'), (FLAG_Q, 'q')] {
                    if flags & bit != 0 {
                        out.push(ch);
                    }
                }
                out.push('"');
            }
            if brackets {
                out.push(')');
            }
        }
        Item::Unary(op, a) => match op {
            UnOp::Plus | UnOp::Minus => {
                if brackets {
                    out.push('(');
                }
                out.push(if *op == UnOp::Plus { '+' } else { '-' });
                arg(out, a, priority(item));
                if brackets {
                    out.push(')');
                }
            }
            UnOp::Filter => {
                out.push_str("?(");
                chain(out, a, false, false);
                out.push(')');
            }
            UnOp::Not => {
                out.push_str("!(");
                chain(out, a, false, false);
                out.push(')');
            }
            UnOp::IsUnknown => {
                out.push('(');
                chain(out, a, false, false);
                out.push_str(") is unknown");
            }
            UnOp::Exists => {
                out.push_str("exists (");
                chain(out, a, false, false);
                out.push(')');
            }
        },
        Item::Current => out.push('@'),
        Item::Root => out.push('$'),
        Item::Last => out.push_str("last"),
        Item::AnyArray => out.push_str("[*]"),
        Item::AnyKey => {
            if in_key {
                out.push('.');
            }
            out.push('*');
        }
        Item::Index(subs) => {
            out.push('[');
            for (i, (from, to)) in subs.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                chain(out, from, false, false);
                if let Some(to) = to {
                    out.push_str(" to ");
                    chain(out, to, false, false);
                }
            }
            out.push(']');
        }
        Item::Any { first, last } => {
            if in_key {
                out.push('.');
            }
            let (f, l) = (*first, *last);
            if f == 0 && l == LAST_LEVEL {
                out.push_str("**");
            } else if f == l {
                if f == LAST_LEVEL {
                    out.push_str("**{last}");
                } else {
                    out.push_str(&format!("**{{{f}}}"));
                }
            } else if f == LAST_LEVEL {
                out.push_str(&format!("**{{last to {l}}}"));
            } else if l == LAST_LEVEL {
                out.push_str(&format!("**{{{f} to last}}"));
            } else {
                out.push_str(&format!("**{{{f} to {l}}}"));
            }
        }
        Item::Method(m) => {
            out.push('.');
            out.push_str(m.name());
            out.push_str("()");
        }
        Item::Datetime(arg) => {
            out.push_str(".datetime(");
            if let Some(a) = arg {
                escape_json(out, a);
            }
            out.push(')');
        }
    }
}
