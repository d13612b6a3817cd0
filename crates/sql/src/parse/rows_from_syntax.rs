//! Functions in FROM that sqlparser does not read:
//!
//! * `ROWS FROM (f(…) [AS (col type, …)], g(…), …)`, several functions
//!   whose rows are zipped, written as a call of [`ROWS_FROM`] whose
//!   arguments are the functions' calls; a call with a column definition
//!   list is wrapped in a call of [`COLUMN_DEFS`] whose second argument is
//!   the list's text, as a string.
//! * `f(…) AS (col type, …)`, a column definition list without an alias,
//!   given the function's name as its alias (PostgreSQL's own default).
//!
//! The binder reads both back (bind/rows_from.rs). Positions after a
//! rewrite move.

use sqlparser::tokenizer::{Token, TokenWithSpan};

use super::lock_syntax::{offset, significant_tokens};

/// The name of the call that stands for ROWS FROM.
pub(crate) const ROWS_FROM: &str = "$rows_from";
/// The name of the call that gives a ROWS FROM item its column
/// definition list.
pub(crate) const COLUMN_DEFS: &str = "$column_defs";

/// `sql` with its ROWS FROM items and alias-less column definition lists
/// rewritten; `None` if it has none.
pub(crate) fn rewrite_rows_from(sql: &str) -> Option<String> {
    let lower = sql.to_ascii_lowercase();
    let mut out: Option<String> = None;
    if lower.contains("rows") {
        out = rewrite_items(sql);
    }
    let text = out.as_deref().unwrap_or(sql);
    if may_have_definition_list(text) {
        if let Some(named) = name_definition_lists(text) {
            out = Some(named);
        }
    }
    out
}

/// Whether `sql` has `AS` followed by an opening parenthesis (most
/// statements do not, and skip the tokenizer).
fn may_have_definition_list(sql: &str) -> bool {
    let b = sql.as_bytes();
    (0..b.len().saturating_sub(2)).any(|i| {
        b[i..i + 2].eq_ignore_ascii_case(b"as")
            && b[i + 2..].iter().find(|c| !c.is_ascii_whitespace()) == Some(&b'(')
    })
}

fn word(t: Option<&TokenWithSpan>) -> Option<String> {
    match t.map(|t| &t.token) {
        Some(Token::Word(w)) if w.quote_style.is_none() => Some(w.value.to_ascii_lowercase()),
        _ => None,
    }
}

/// The index of the parenthesis that closes the one at `open`.
fn closing(tokens: &[TokenWithSpan], open: usize) -> Option<usize> {
    let mut depth = 0usize;
    for (i, t) in tokens.iter().enumerate().skip(open) {
        match t.token {
            Token::LParen | Token::LBracket => depth += 1,
            Token::RParen | Token::RBracket => {
                depth = depth.checked_sub(1)?;
                if depth == 0 {
                    return Some(i);
                }
            }
            _ => {}
        }
    }
    None
}

/// Whether a FROM item may start after token `i` (`FROM`, `JOIN`,
/// `LATERAL` or a comma).
fn item_starts_after(tokens: &[TokenWithSpan], i: usize) -> bool {
    matches!(tokens[i].token, Token::Comma)
        || matches!(word(tokens.get(i)).as_deref(), Some("from" | "join" | "lateral"))
}

struct Spans<'a> {
    sql: &'a str,
    line_starts: Vec<usize>,
}

impl Spans<'_> {
    fn start(&self, t: &TokenWithSpan) -> usize {
        offset(&self.line_starts, self.sql, t.span.start)
    }
    fn end(&self, t: &TokenWithSpan) -> usize {
        offset(&self.line_starts, self.sql, t.span.end)
    }
}

fn spans(sql: &str) -> Spans<'_> {
    Spans {
        sql,
        line_starts: std::iter::once(0).chain(sql.match_indices('\n').map(|(k, _)| k + 1)).collect(),
    }
}

/// `ROWS FROM ( … )` rewritten as a [`ROWS_FROM`] call.
fn rewrite_items(sql: &str) -> Option<String> {
    let tokens = significant_tokens(sql)?;
    let at = spans(sql);
    let mut edits: Vec<(usize, usize, String)> = Vec::new();
    let mut i = 1;
    while i + 2 < tokens.len() {
        let starts = word(tokens.get(i)).as_deref() == Some("rows")
            && word(tokens.get(i + 1)).as_deref() == Some("from")
            && tokens[i + 2].token == Token::LParen
            && item_starts_after(&tokens, i - 1);
        if !starts {
            i += 1;
            continue;
        }
        let open = i + 2;
        let close = closing(&tokens, open)?;
        // The items, split at the commas of the parentheses' own level.
        let mut items = Vec::new();
        let mut from = open + 1;
        let mut depth = 0usize;
        for (k, t) in tokens.iter().enumerate().take(close + 1).skip(open + 1) {
            match t.token {
                Token::LParen | Token::LBracket => depth += 1,
                Token::RParen | Token::RBracket if depth > 0 => depth -= 1,
                Token::Comma if depth == 0 => {
                    items.push((from, k));
                    from = k + 1;
                }
                _ => {}
            }
            if k == close {
                items.push((from, k));
            }
        }
        let mut text = format!("\"{ROWS_FROM}\"(");
        for (n, &(a, b)) in items.iter().enumerate() {
            if a >= b {
                return None;
            }
            if n > 0 {
                text.push_str(", ");
            }
            // `call AS (definitions)`: the AS at the item's own level.
            let mut depth = 0usize;
            let mut as_at = None;
            for (k, t) in tokens.iter().enumerate().take(b).skip(a) {
                match t.token {
                    Token::LParen | Token::LBracket => depth += 1,
                    Token::RParen | Token::RBracket => depth = depth.saturating_sub(1),
                    _ if depth == 0 && word(Some(t)).as_deref() == Some("as") => {
                        as_at = Some(k);
                        break;
                    }
                    _ => {}
                }
            }
            let call_end = as_at.unwrap_or(b);
            if call_end <= a {
                return None;
            }
            let call = &sql[at.start(&tokens[a])..at.end(&tokens[call_end - 1])];
            match as_at {
                None => text.push_str(call),
                Some(k) => {
                    // AS ( definitions ) and nothing after them.
                    if tokens.get(k + 1).map(|t| &t.token) != Some(&Token::LParen) {
                        return None;
                    }
                    let defs_close = closing(&tokens, k + 1)?;
                    if defs_close + 1 != b {
                        return None;
                    }
                    let defs = &sql[at.end(&tokens[k + 1])..at.start(&tokens[defs_close])];
                    text.push_str(&format!("\"{COLUMN_DEFS}\"({call}, '{}')", defs.replace('\'', "''")));
                }
            }
        }
        text.push(')');
        edits.push((at.start(&tokens[i]), at.end(&tokens[close]), text));
        i = close + 1;
    }
    apply(sql, edits)
}

/// `f(…) AS (col type, …)` in FROM given the alias `f`.
fn name_definition_lists(sql: &str) -> Option<String> {
    let tokens = significant_tokens(sql)?;
    let at = spans(sql);
    let mut edits: Vec<(usize, usize, String)> = Vec::new();
    for k in 1..tokens.len().saturating_sub(3) {
        let is_list = tokens[k - 1].token == Token::RParen
            && word(tokens.get(k)).as_deref() == Some("as")
            && tokens[k + 1].token == Token::LParen
            && matches!(tokens[k + 2].token, Token::Word(_))
            && matches!(tokens[k + 3].token, Token::Word(_))
            && !matches!(
                word(tokens.get(k + 2)).as_deref(),
                Some("select" | "values" | "with" | "table" | "insert" | "update" | "delete" | "merge")
            );
        if !is_list {
            continue;
        }
        // The call's opening parenthesis, its name before it, and a FROM
        // item's start before that.
        let mut depth = 0usize;
        let mut open = None;
        for j in (0..k).rev() {
            match tokens[j].token {
                Token::RParen | Token::RBracket => depth += 1,
                Token::LParen | Token::LBracket => {
                    depth = depth.saturating_sub(1);
                    if depth == 0 {
                        open = Some(j);
                        break;
                    }
                }
                _ => {}
            }
        }
        let Some(open) = open else { continue };
        if open < 2 || !matches!(tokens[open - 1].token, Token::Word(_)) {
            continue;
        }
        // A qualified name: its parts back to the item's start.
        let mut first = open - 1;
        while first >= 2
            && tokens[first - 1].token == Token::Period
            && matches!(tokens[first - 2].token, Token::Word(_))
        {
            first -= 2;
        }
        if first == 0 || !item_starts_after(&tokens, first - 1) {
            continue;
        }
        let name = &sql[at.start(&tokens[open - 1])..at.end(&tokens[open - 1])];
        if name.starts_with("\"$") {
            continue;
        }
        let as_end = at.end(&tokens[k]);
        edits.push((as_end, as_end, format!(" {name}")));
    }
    apply(sql, edits)
}

/// A FROM clause's text as written by sqlparser with the marks read back
/// as ROWS FROM and AS (definitions), for a view's definition.
pub(crate) fn shown(text: &str) -> String {
    if !text.contains(ROWS_FROM) {
        return text.to_owned();
    }
    let Some(tokens) = significant_tokens(text) else { return text.to_owned() };
    let at = spans(text);
    let quoted = |t: &TokenWithSpan, mark: &str| matches!(&t.token, Token::Word(w) if w.quote_style.is_some() && w.value == mark);
    let mut edits: Vec<(usize, usize, String)> = Vec::new();
    for (i, t) in tokens.iter().enumerate() {
        if quoted(t, ROWS_FROM) {
            edits.push((at.start(t), at.end(t), "ROWS FROM".into()));
        }
        if quoted(t, COLUMN_DEFS) && tokens.get(i + 1).map(|t| &t.token) == Some(&Token::LParen) {
            let Some(close) = closing(&tokens, i + 1) else { continue };
            // `mark(call, 'definitions')`: the string is the last token.
            let Some(Token::SingleQuotedString(defs)) = tokens.get(close - 1).map(|t| &t.token) else {
                continue;
            };
            if close < 3 || tokens[close - 2].token != Token::Comma {
                continue;
            }
            let call = &text[at.end(&tokens[i + 1])..at.start(&tokens[close - 2])];
            edits.push((at.start(t), at.end(&tokens[close]), format!("{call} AS ({defs})")));
        }
    }
    // Edits inside a replaced call are dropped.
    let mut kept: Vec<(usize, usize, String)> = Vec::new();
    for e in edits {
        if kept.last().is_some_and(|k| e.0 < k.1) {
            continue;
        }
        kept.push(e);
    }
    apply(text, kept).unwrap_or_else(|| text.to_owned())
}

fn apply(sql: &str, edits: Vec<(usize, usize, String)>) -> Option<String> {
    if edits.is_empty() {
        return None;
    }
    let mut out = String::with_capacity(sql.len() + 32);
    let mut at = 0;
    for (from, to, text) in edits {
        out.push_str(&sql[at..from]);
        out.push_str(&text);
        at = to;
    }
    out.push_str(&sql[at..]);
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::rewrite_rows_from;

    #[test]
    fn marks_are_shown_as_written() {
        assert_eq!(
            super::shown("\"$rows_from\"(f(1), \"$column_defs\"(g(2), 'a int')) WITH ORDINALITY AS t"),
            "ROWS FROM(f(1), g(2) AS (a int)) WITH ORDINALITY AS t"
        );
    }

    #[test]
    fn items_and_definition_lists_are_rewritten() {
        assert_eq!(
            rewrite_rows_from("select * from rows from(f(1), g(2) AS (a int, b text)) with ordinality as t")
                .unwrap(),
            "select * from \"$rows_from\"(f(1), \"$column_defs\"(g(2), 'a int, b text')) with ordinality as t"
        );
        assert_eq!(
            rewrite_rows_from("SELECT * FROM f(1) AS (a int, b text)").unwrap(),
            "SELECT * FROM f(1) AS f (a int, b text)"
        );
        assert_eq!(rewrite_rows_from("with a(b) as (values (1)) select * from a"), None);
        assert_eq!(rewrite_rows_from("select * from t rows"), None);
    }
}
