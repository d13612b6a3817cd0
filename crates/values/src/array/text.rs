//! Arrays' text form: `{{1,2},{3,NULL}}`, with an optional dimension
//! decoration (`[0:1]={a,b}`) when a lower bound is not 1. Elements are
//! quoted on output when they are empty, read as NULL, or hold a brace, a
//! comma, a quote, a backslash or white space.
//!
//! Input is checked as PostgreSQL 15 checks it, by a state machine over the
//! characters whose errors name the character that broke the grammar
//! (22P02 "malformed array literal" with PostgreSQL's DETAIL lines).

use snapscale_sqlstate::SqlState;

use super::{too_many_dims, Array, Dim, MAX_DIMS};
use crate::error::SqlError;
use crate::{SqlType, Style, Value};

fn malformed(input: &str, detail: &str) -> SqlError {
    SqlError::new(SqlState::INVALID_TEXT_REPRESENTATION, format!("malformed array literal: \"{input}\""))
        .with_detail(detail.to_owned())
}

/// PostgreSQL's array_isspace: ASCII white space only.
fn is_space(c: char) -> bool {
    matches!(c, ' ' | '\t' | '\n' | '\r' | '\x0b' | '\x0c')
}

/// Where the scan stands, as in PostgreSQL's ArrayCount.
#[derive(Clone, Copy, PartialEq, Eq)]
enum State {
    NoLevel,
    LevelStarted,
    ElemStarted,
    QuotedElemStarted,
    QuotedElemCompleted,
    ElemDelimited,
    LevelCompleted,
    LevelDelimited,
}

/// One element as written: its text, whether any of it was quoted or
/// escaped (then it is never NULL), and how deep it sat.
struct Item {
    text: String,
    quoted: bool,
    depth: usize,
}

/// Reads an array of `elem` from its text form.
pub fn parse_array(elem: SqlType, input: &str, zone: impl Into<Style> + Copy) -> Result<Value, SqlError> {
    let mut rest = input.trim_start_matches(is_space);
    let mut given: Vec<Dim> = Vec::new();
    // `[lo:hi]` or `[hi]`, once per dimension, then `=`.
    while let Some(after) = rest.trim_start_matches(is_space).strip_prefix('[') {
        if given.len() >= MAX_DIMS {
            return Err(too_many_dims(given.len() + 1));
        }
        let number_end =
            |s: &str| s.find(|c: char| !(c.is_ascii_digit() || c == '-' || c == '+')).unwrap_or(s.len());
        let n = number_end(after);
        if n == 0 {
            return Err(malformed(input, "\"[\" must introduce explicitly-specified array dimensions."));
        }
        let first = after[..n].parse::<i32>();
        let mut after = &after[n..];
        let (lower, upper) = if let Some(tail) = after.strip_prefix(':') {
            let m = number_end(tail);
            if m == 0 {
                return Err(malformed(input, "Missing array dimension value."));
            }
            let upper = tail[..m].parse::<i32>();
            after = &tail[m..];
            (first, upper)
        } else {
            (Ok(1), first)
        };
        let (Ok(lower), Ok(upper)) = (lower, upper) else {
            return Err(malformed(input, "\"[\" must introduce explicitly-specified array dimensions."));
        };
        let Some(after) = after.strip_prefix(']') else {
            return Err(malformed(input, "Missing \"]\" after array dimensions."));
        };
        if upper < lower {
            return Err(SqlError::new(
                SqlState::ARRAY_SUBSCRIPT_ERROR,
                "upper bound cannot be less than lower bound",
            ));
        }
        let len =
            i32::try_from(i64::from(upper) - i64::from(lower) + 1).map_err(|_| super::too_many_items())?;
        given.push(Dim { lower, len });
        rest = after;
    }
    rest = rest.trim_start_matches(is_space);
    if given.is_empty() {
        if !rest.starts_with('{') {
            return Err(malformed(input, "Array value must start with \"{\" or dimension information."));
        }
    } else {
        let Some(after) = rest.strip_prefix('=') else {
            return Err(malformed(input, "Missing \"=\" after array dimensions."));
        };
        rest = after.trim_start_matches(is_space);
        if !rest.starts_with('{') {
            return Err(malformed(input, "Array contents must start with \"{\"."));
        }
    }
    let (lens, items) = scan(input, rest)?;
    let dims = if given.is_empty() {
        lens.iter().map(|&len| Dim { lower: 1, len }).collect()
    } else {
        if given.len() != lens.len() || given.iter().zip(&lens).any(|(g, &l)| g.len != l) {
            return Err(malformed(input, "Specified array dimensions do not match array contents."));
        }
        given
    };
    let values = items
        .into_iter()
        .map(|it| {
            if !it.quoted && it.text.eq_ignore_ascii_case("null") {
                Ok(Value::Null)
            } else {
                Value::parse_in(elem, &it.text, zone)
            }
        })
        .collect::<Result<Vec<_>, _>>()?;
    Ok(Value::Array(std::sync::Arc::new(Array::from_parts(dims, values)?)))
}

/// The braces and elements of `body` (which starts at its `{`): each
/// dimension's length (none for `{}`) and the elements in order.
fn scan(input: &str, body: &str) -> Result<(Vec<i32>, Vec<Item>), SqlError> {
    let unexpected = |c: char| malformed(input, &format!("Unexpected \"{c}\" character."));
    let mut state = State::NoLevel;
    let mut depth = 0usize;
    // Per level: children counted in the open brace, and what the first
    // closed brace of that level counted (every later one must match).
    let mut count = [0i32; MAX_DIMS];
    let mut first: [Option<i32>; MAX_DIMS] = [None; MAX_DIMS];
    let mut items: Vec<Item> = Vec::new();
    let mut current: Option<Item> = None;
    // Unescaped white space at the end of an unquoted element, trimmed
    // when it ends.
    let mut trailing = 0usize;
    let mut chars = body.char_indices();
    let mut end = body.len();
    let finish = |current: &mut Option<Item>, trailing: &mut usize, items: &mut Vec<Item>| {
        if let Some(mut it) = current.take() {
            let keep = it.text.len() - *trailing;
            it.text.truncate(keep);
            items.push(it);
        }
        *trailing = 0;
    };
    while let Some((at, c)) = chars.next() {
        let in_quotes = state == State::QuotedElemStarted;
        match c {
            '\\' => {
                if !matches!(
                    state,
                    State::LevelStarted
                        | State::ElemStarted
                        | State::QuotedElemStarted
                        | State::ElemDelimited
                ) {
                    return Err(unexpected('\\'));
                }
                let Some((_, escaped)) = chars.next() else {
                    return Err(malformed(input, "Unexpected end of input."));
                };
                if state != State::QuotedElemStarted {
                    state = State::ElemStarted;
                }
                let it = current.get_or_insert_with(|| Item { text: String::new(), quoted: false, depth });
                it.text.push(escaped);
                it.quoted = true;
                trailing = 0;
            }
            '"' => {
                if !matches!(state, State::LevelStarted | State::QuotedElemStarted | State::ElemDelimited) {
                    return Err(malformed(input, "Unexpected array element."));
                }
                if in_quotes {
                    state = State::QuotedElemCompleted;
                } else {
                    state = State::QuotedElemStarted;
                    current = Some(Item { text: String::new(), quoted: true, depth });
                }
            }
            _ if in_quotes => current.as_mut().expect("inside quotes").text.push(c),
            '{' => {
                if !matches!(state, State::NoLevel | State::LevelStarted | State::LevelDelimited) {
                    return Err(unexpected('{'));
                }
                if depth >= MAX_DIMS {
                    return Err(too_many_dims(depth + 1));
                }
                state = State::LevelStarted;
                count[depth] = 0;
                depth += 1;
            }
            '}' => {
                let closes_empty = depth == 1 && state == State::LevelStarted;
                if !closes_empty
                    && !matches!(
                        state,
                        State::ElemStarted | State::QuotedElemCompleted | State::LevelCompleted
                    )
                {
                    return Err(unexpected('}'));
                }
                if depth == 0 {
                    return Err(malformed(input, "Unmatched \"}\" character."));
                }
                finish(&mut current, &mut trailing, &mut items);
                depth -= 1;
                let n = count[depth] + i32::from(!closes_empty);
                match first[depth] {
                    Some(f) if f != n => {
                        return Err(malformed(
                            input,
                            "Multidimensional arrays must have sub-arrays with matching dimensions.",
                        ))
                    }
                    _ => first[depth] = Some(n),
                }
                state = State::LevelCompleted;
                if depth == 0 {
                    end = at + 1;
                    break;
                }
            }
            ',' => {
                if !matches!(state, State::ElemStarted | State::QuotedElemCompleted | State::LevelCompleted) {
                    return Err(unexpected(','));
                }
                finish(&mut current, &mut trailing, &mut items);
                state =
                    if state == State::LevelCompleted { State::LevelDelimited } else { State::ElemDelimited };
                count[depth - 1] += 1;
            }
            c if is_space(c) => {
                if state == State::ElemStarted {
                    if let Some(it) = current.as_mut() {
                        it.text.push(c);
                        trailing += c.len_utf8();
                    }
                }
            }
            c => {
                if !matches!(state, State::LevelStarted | State::ElemStarted | State::ElemDelimited) {
                    return Err(malformed(input, "Unexpected array element."));
                }
                state = State::ElemStarted;
                current
                    .get_or_insert_with(|| Item { text: String::new(), quoted: false, depth })
                    .text
                    .push(c);
                trailing = 0;
            }
        }
    }
    if depth != 0 || state != State::LevelCompleted {
        return Err(malformed(input, "Unexpected end of input."));
    }
    if !body[end..].chars().all(is_space) {
        return Err(malformed(input, "Junk after closing right brace."));
    }
    if items.is_empty() {
        return Ok((Vec::new(), items));
    }
    let ndims = first.iter().take_while(|f| f.is_some()).count();
    if items.iter().any(|it| it.depth != ndims) {
        return Err(malformed(
            input,
            "Multidimensional arrays must have sub-arrays with matching dimensions.",
        ));
    }
    Ok((first[..ndims].iter().map(|f| f.expect("counted")).collect(), items))
}

/// Writes an array's text form.
pub fn format_array(array: &Array, zone: impl Into<Style> + Copy) -> String {
    let mut out = String::new();
    if array.ndims() == 0 {
        return "{}".to_owned();
    }
    if !array.default_bounds() {
        out.push_str(&array.dims_text().expect("dimensions"));
        out.push('=');
    }
    let mut items = array.items().iter();
    write_level(&mut out, array.dims(), &mut items, zone);
    out
}

fn write_level<'a>(
    out: &mut String,
    dims: &[Dim],
    items: &mut impl Iterator<Item = &'a Value>,
    zone: impl Into<Style> + Copy,
) {
    out.push('{');
    for i in 0..dims[0].len {
        if i > 0 {
            out.push(',');
        }
        if dims.len() > 1 {
            write_level(out, &dims[1..], items, zone);
            continue;
        }
        match items.next().expect("as many elements as the dimensions say").to_text_in(zone) {
            None => out.push_str("NULL"),
            Some(text) => {
                let quote = text.is_empty()
                    || text.eq_ignore_ascii_case("null")
                    || text.chars().any(|c| matches!(c, '{' | '}' | ',' | '"' | '\\') || is_space(c));
                if quote {
                    out.push('"');
                    crate::record::push_escaped(out, &text, false);
                    out.push('"');
                } else {
                    out.push_str(&text);
                }
            }
        }
    }
    out.push('}');
}
