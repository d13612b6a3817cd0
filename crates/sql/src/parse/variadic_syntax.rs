//! A call's `VARIADIC array` argument (`f(1, VARIADIC ARRAY[2, 3])`),
//! which sqlparser does not read: written as a named argument of a name
//! no parameter can be given by accident, [`VARIADIC_ARG`], which the
//! binder reads back as the call's last positional argument passed whole
//! to the VARIADIC parameter. The marker `"$var"=>` is as long as
//! `variadic`, so positions after it do not move.
//!
//! The parameter list of CREATE / ALTER / DROP / COMMENT ON a routine
//! (its first parenthesized list) declares VARIADIC parameters and is
//! left alone.

use sqlparser::tokenizer::Token;

use super::lock_syntax::{offset, significant_tokens};

/// The argument name that marks a call's VARIADIC argument.
pub(crate) const VARIADIC_ARG: &str = "$var";

/// `sql` with each call argument's VARIADIC rewritten; `None` if it has
/// none.
pub(crate) fn rewrite_variadic_args(sql: &str) -> Option<String> {
    if !sql.to_ascii_lowercase().contains("variadic") {
        return None;
    }
    let tokens = significant_tokens(sql)?;
    let word = |i: usize| match tokens.get(i).map(|t| &t.token) {
        Some(Token::Word(w)) if w.quote_style.is_none() => Some(w.value.to_ascii_lowercase()),
        _ => None,
    };
    // A routine's DDL: its parameter list is declarations.
    let declares = matches!(word(0).as_deref(), Some("create" | "alter" | "drop" | "comment"));
    let mut declared = (usize::MAX, usize::MAX);
    if declares {
        if let Some(open) = tokens.iter().position(|t| t.token == Token::LParen) {
            let mut depth = 0usize;
            for (i, t) in tokens.iter().enumerate().skip(open) {
                match t.token {
                    Token::LParen => depth += 1,
                    Token::RParen => {
                        depth -= 1;
                        if depth == 0 {
                            declared = (open, i);
                            break;
                        }
                    }
                    _ => {}
                }
            }
            if declared.0 == usize::MAX {
                declared = (open, tokens.len());
            }
        }
    }
    let line_starts: Vec<usize> =
        std::iter::once(0).chain(sql.match_indices('\n').map(|(k, _)| k + 1)).collect();
    let mut edits = Vec::new();
    for (i, t) in tokens.iter().enumerate() {
        if word(i).as_deref() != Some("variadic") || (declared.0..=declared.1).contains(&i) {
            continue;
        }
        let opens_argument = i > 0 && matches!(tokens[i - 1].token, Token::LParen | Token::Comma);
        if !opens_argument {
            continue;
        }
        let from = offset(&line_starts, sql, t.span.start);
        let to = offset(&line_starts, sql, t.span.end);
        edits.push((from, to));
    }
    if edits.is_empty() {
        return None;
    }
    let marker = format!("\"{VARIADIC_ARG}\"=>");
    let mut out = String::with_capacity(sql.len());
    let mut at = 0;
    for (from, to) in edits {
        out.push_str(&sql[at..from]);
        out.push_str(&marker);
        at = to;
    }
    out.push_str(&sql[at..]);
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::rewrite_variadic_args;

    #[test]
    fn call_arguments_are_rewritten() {
        assert_eq!(
            rewrite_variadic_args("select f(1, variadic array[2])").unwrap(),
            "select f(1, \"$var\"=> array[2])"
        );
        assert_eq!(rewrite_variadic_args("create function f(variadic int[]) returns int"), None);
        assert_eq!(rewrite_variadic_args("drop function f(a variadic int[])"), None);
        assert_eq!(rewrite_variadic_args("select 'variadic'"), None);
    }
}
