//! `rec.*` of a record variable in a statement's text, written as what
//! PostgreSQL reads it as before the statement is parsed (the parser here
//! takes `x.*` only as a select-list item):
//!
//! * inside `ROW(…)` it is the record's fields one by one, so
//!   `ROW(old.*) = ROW(new.*)` compares field by field, with a row
//!   comparison's NULL rules;
//! * as an operand (followed by a cast or an operator) it is the record
//!   as one value: `new.*::text`, `old.* IS DISTINCT FROM new.*`.
//!
//! Elsewhere (a select list, VALUES) it is left for the binder, which
//! expands it as a table's `t.*`.

/// `text` with each `rec.*` of a record `fields` knows rewritten; `None`
/// when nothing changed. `fields` gives a record variable's field names.
pub(super) fn rewrite(text: &str, fields: impl Fn(&str) -> Option<Vec<String>>) -> Option<String> {
    let bytes = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let mut changed = false;
    let mut i = 0;
    while i < bytes.len() {
        let c = bytes[i];
        // Quoted text and comments are copied as they are.
        if c == b'\'' || c == b'"' {
            let end = text[i + 1..].find(c as char).map_or(bytes.len(), |e| i + 1 + e + 1);
            out.push_str(&text[i..end]);
            i = end;
            continue;
        }
        if c == b'-' && bytes.get(i + 1) == Some(&b'-') {
            let end = text[i..].find('\n').map_or(bytes.len(), |e| i + e);
            out.push_str(&text[i..end]);
            i = end;
            continue;
        }
        let word_start = c.is_ascii_alphabetic() || c == b'_';
        let after_word =
            i > 0 && (bytes[i - 1].is_ascii_alphanumeric() || matches!(bytes[i - 1], b'_' | b'.' | b'$'));
        if !word_start || after_word {
            out.push(c as char);
            i += 1;
            continue;
        }
        let mut end = i;
        while end < bytes.len() && (bytes[end].is_ascii_alphanumeric() || matches!(bytes[end], b'_' | b'$')) {
            end += 1;
        }
        let word = &text[i..end];
        let star_end = star_after(bytes, end);
        let found = star_end.and_then(|_| fields(&word.to_lowercase()));
        let (Some(star_end), Some(names)) = (star_end, found) else {
            out.push_str(word);
            i = end;
            continue;
        };
        if in_row_constructor(&out) {
            let parts: Vec<String> =
                names.iter().map(|f| format!("{word}.\"{}\"", f.replace('"', "\"\""))).collect();
            out.push_str(&parts.join(", "));
            changed = true;
        } else if is_operand(&text[star_end..]) || follows_operator(&out) {
            out.push_str(word);
            changed = true;
        } else {
            out.push_str(&text[i..star_end]);
        }
        i = star_end;
    }
    changed.then_some(out)
}

/// Where `.*` following a word at `from` ends, if it does.
fn star_after(bytes: &[u8], from: usize) -> Option<usize> {
    let skip = |mut k: usize| {
        while k < bytes.len() && bytes[k].is_ascii_whitespace() {
            k += 1;
        }
        k
    };
    let dot = skip(from);
    if bytes.get(dot) != Some(&b'.') {
        return None;
    }
    let star = skip(dot + 1);
    (bytes.get(star) == Some(&b'*')).then_some(star + 1)
}

/// Whether what was written so far ends inside `ROW(` or `ROW(…, `.
fn in_row_constructor(before: &str) -> bool {
    let t = before.trim_end();
    let Some(open) = t.strip_suffix('(').or_else(|| t.strip_suffix(',').map(|_| "")) else {
        return false;
    };
    if open.is_empty() {
        // After a comma: the innermost open parenthesis decides.
        let mut depth = 0i32;
        for (k, ch) in t.char_indices().rev() {
            match ch {
                ')' => depth += 1,
                '(' if depth == 0 => return ends_with_row(&t[..k]),
                '(' => depth -= 1,
                _ => {}
            }
        }
        return false;
    }
    ends_with_row(open)
}

fn ends_with_row(t: &str) -> bool {
    let t = t.trim_end();
    t.len() >= 3
        && t[t.len() - 3..].eq_ignore_ascii_case("row")
        && !t[..t.len() - 3].ends_with(|c: char| c.is_ascii_alphanumeric() || c == '_')
}

/// Whether `rest` (what follows `rec.*`) makes it an operand: a cast or an
/// operator, not the end of a list item.
fn is_operand(rest: &str) -> bool {
    let r = rest.trim_start();
    let word = r.split(|c: char| !c.is_ascii_alphanumeric() && c != '_').next().unwrap_or("");
    r.starts_with("::")
        || r.starts_with(['=', '<', '>', '!', '|'])
        || ["is", "in"].iter().any(|w| word.eq_ignore_ascii_case(w))
}

/// Whether what was written so far ends with an operator `rec.*` is the
/// right operand of.
fn follows_operator(before: &str) -> bool {
    let t = before.trim_end().to_ascii_lowercase();
    t.ends_with(['=', '<', '>', '|']) || t.ends_with("distinct from") || t.ends_with(" is")
}

#[cfg(test)]
mod tests {
    use super::rewrite;

    fn fields(name: &str) -> Option<Vec<String>> {
        ["old", "new"].contains(&name).then(|| vec!["a".to_owned(), "b".to_owned()])
    }

    #[test]
    fn rows_expand_and_operands_are_whole() {
        assert_eq!(
            rewrite("row(old.*) = row(NEW.*)", fields).as_deref(),
            Some("row(old.\"a\", old.\"b\") = row(NEW.\"a\", NEW.\"b\")")
        );
        assert_eq!(rewrite("new.*::text", fields).as_deref(), Some("new::text"));
        assert_eq!(
            rewrite("old.* IS DISTINCT FROM new.*", fields).as_deref(),
            Some("old IS DISTINCT FROM new")
        );
        assert_eq!(rewrite("select new.* from t", fields), None);
        assert_eq!(rewrite("'new.*::text' || x.new.*", fields), None);
    }
}
