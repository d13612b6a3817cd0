//! TEXT-SIZE: how long a composite value's text form would be, found
//! without writing it.
//!
//! A record inside a record is quoted, and quoting doubles every quote
//! already there, so `ROW(ROW(…(1)…))` nested n deep prints about 2ⁿ
//! bytes: thirty levels need a gigabyte, sixty an exabyte, while the value
//! itself is a few hundred bytes. PostgreSQL writes the text and fails when
//! a buffer would pass MaxAllocSize; writing it here first would take the
//! time and the memory of the whole text before failing. So the text of a
//! value that nests records or arrays is measured before it is written, by
//! the same quoting rules as `record::format_record` and
//! `array::format_array` (a change to one is a change to the other), and
//! fails where PostgreSQL's would:
//!
//! - a record's text longer than 1 073 741 822 bytes: record_out appends
//!   byte by byte to a StringInfo, whose last byte is kept for the
//!   terminator, so it fails with 54000 "out of memory", "Cannot enlarge
//!   string buffer containing 1073741822 bytes by 1 more bytes.";
//! - an array's text of MaxAllocSize bytes or more: array_out sizes its
//!   result first (the text and a terminator) and asks for it at once, so
//!   it fails with XX000 "invalid memory alloc request size N".
//!
//! The measure visits fields and elements in the order the output
//! functions do, so the first failure is PostgreSQL's first failure.

use snapscale_sqlstate::SqlState;

use crate::array::{Array, Dim};
use crate::{SqlError, Style, Value};

/// PostgreSQL's MaxAllocSize.
const MAX_ALLOC_SIZE: usize = 0x3fff_ffff;

/// The longest text a StringInfo holds: MaxAllocSize less the terminator's
/// byte and the byte enlargeStringInfo keeps free.
const MAX_STRING_INFO: usize = MAX_ALLOC_SIZE - 1;

/// What the quoting decisions about a text depend on, and its length.
#[derive(Clone, Copy, Default)]
struct Shape {
    len: usize,
    /// Double quotes and backslashes: each is doubled (record) or escaped
    /// (array) when the text is quoted.
    escapes: usize,
    flags: u8,
}

/// `(` or `)`: quoted in a record.
const PAREN: u8 = 1;
/// `{` or `}`: quoted in an array.
const BRACE: u8 = 2;
/// `,`: quoted in both.
const COMMA: u8 = 4;
/// Whitespace as `char::is_whitespace` has it: quoted in a record.
const WIDE_SPACE: u8 = 8;
/// ASCII whitespace: quoted in an array.
const ASCII_SPACE: u8 = 16;
/// The empty text: quoted in both.
const EMPTY: u8 = 32;
/// `null` in any case: quoted in an array.
const NULL_WORD: u8 = 64;

impl Shape {
    fn of_text(text: &str) -> Shape {
        let mut s = Shape { len: text.len(), ..Shape::default() };
        if text.is_empty() {
            s.flags |= EMPTY;
        }
        if text.eq_ignore_ascii_case("null") {
            s.flags |= NULL_WORD;
        }
        for c in text.chars() {
            match c {
                '"' | '\\' => s.escapes += 1,
                '(' | ')' => s.flags |= PAREN,
                '{' | '}' => s.flags |= BRACE,
                ',' => s.flags |= COMMA,
                c if c.is_whitespace() => {
                    s.flags |= WIDE_SPACE;
                    if matches!(c, ' ' | '\t' | '\n' | '\r' | '\x0b' | '\x0c') {
                        s.flags |= ASCII_SPACE;
                    }
                }
                _ => {}
            }
        }
        s
    }

    /// The shape once written as a field (`quote`: inside double quotes,
    /// each quote and backslash doubled or escaped; both double them).
    fn quoted_if(self, quote: bool) -> Shape {
        if !quote {
            return self;
        }
        Shape {
            len: self.len.saturating_add(self.escapes).saturating_add(2),
            escapes: self.escapes.saturating_mul(2).saturating_add(2),
            flags: self.flags & !(EMPTY | NULL_WORD),
        }
    }

    fn in_record(self) -> Shape {
        let quote = self.escapes > 0 || self.flags & (EMPTY | PAREN | COMMA | WIDE_SPACE) != 0;
        self.quoted_if(quote)
    }

    fn in_array(self) -> Shape {
        let quote = self.escapes > 0 || self.flags & (EMPTY | NULL_WORD | BRACE | COMMA | ASCII_SPACE) != 0;
        self.quoted_if(quote)
    }

    fn append(&mut self, part: Shape) {
        self.len = self.len.saturating_add(part.len);
        self.escapes = self.escapes.saturating_add(part.escapes);
        self.flags |= part.flags & !(EMPTY | NULL_WORD);
    }
}

/// Whether `v` holds a record or an array inside a record or an array:
/// only then can its text be much longer than the value.
pub(crate) fn nests_composites(v: &Value) -> bool {
    let composite = |v: &Value| matches!(v, Value::Record(_) | Value::Array(_));
    match v {
        Value::Record(fields) => fields.iter().any(composite),
        Value::Array(a) => a.items().iter().any(composite),
        _ => false,
    }
}

/// Fails as PostgreSQL's output function would if `v`'s text form is too
/// long to write (see the module comment); `Ok` for every other value.
pub(crate) fn check(v: &Value, style: Style) -> Result<(), SqlError> {
    if nests_composites(v) {
        shape(v, style)?;
    }
    Ok(())
}

/// The shape of a non-NULL value's text.
fn shape(v: &Value, style: Style) -> Result<Shape, SqlError> {
    match v {
        Value::Record(fields) => record(fields, style),
        Value::Array(a) => array(a, style),
        v => Ok(Shape::of_text(&v.to_text_in(style).unwrap_or_default())),
    }
}

fn record(fields: &[Value], style: Style) -> Result<Shape, SqlError> {
    let mut out = Shape { len: 2, escapes: 0, flags: PAREN };
    for (i, f) in fields.iter().enumerate() {
        if i > 0 {
            out.append(Shape { len: 1, escapes: 0, flags: COMMA });
        }
        if !matches!(f, Value::Null) {
            out.append(shape(f, style)?.in_record());
        }
        if out.len > MAX_STRING_INFO {
            return Err(SqlError::new(SqlState::PROGRAM_LIMIT_EXCEEDED, "out of memory").with_detail(
                format!("Cannot enlarge string buffer containing {MAX_STRING_INFO} bytes by 1 more bytes."),
            ));
        }
    }
    Ok(out)
}

fn array(a: &Array, style: Style) -> Result<Shape, SqlError> {
    if a.ndims() == 0 {
        return Ok(Shape::of_text("{}"));
    }
    let mut out = Shape { len: 0, escapes: 0, flags: BRACE };
    if !a.default_bounds() {
        out.len = a.dims_text().map_or(0, |d| d.len() + 1);
    }
    for v in a.items() {
        let element = match v {
            Value::Null => Shape::of_text("NULL"),
            v => shape(v, style)?.in_array(),
        };
        out.append(element);
    }
    let (braces, commas) = punctuation(a.dims());
    out.len = out.len.saturating_add(braces).saturating_add(commas);
    if commas > 0 {
        out.flags |= COMMA;
    }
    // array_out's request: the text and its terminator.
    let request = out.len.saturating_add(1);
    if request > MAX_ALLOC_SIZE {
        return Err(SqlError::new(
            SqlState::INTERNAL_ERROR,
            format!("invalid memory alloc request size {request}"),
        ));
    }
    Ok(out)
}

/// How many braces and commas an array of `dims` prints: a pair of braces
/// around every sub-array and the whole, a comma between neighbours.
fn punctuation(dims: &[Dim]) -> (usize, usize) {
    let (mut braces, mut commas, mut groups) = (0usize, 0usize, 1usize);
    for d in dims {
        let len = usize::try_from(d.len).unwrap_or(0);
        braces = braces.saturating_add(groups.saturating_mul(2));
        commas = commas.saturating_add(groups.saturating_mul(len.saturating_sub(1)));
        groups = groups.saturating_mul(len);
    }
    (braces, commas)
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::Zone;

    fn text(v: &Value) -> String {
        v.to_text_in(Zone::UTC).unwrap()
    }

    fn measured(v: &Value) -> Shape {
        shape(v, Zone::UTC.into()).unwrap()
    }

    fn nest(depth: usize, inner: Value) -> Value {
        (0..depth).fold(inner, |v, _| Value::Record(vec![v].into()))
    }

    /// The measure is the written length, for values that exercise every
    /// quoting rule of both output functions.
    #[test]
    fn the_measure_is_the_written_length() {
        let arr = |items: Vec<Value>| Value::Array(Arc::new(Array::new(items)));
        let grid = Array::from_parts(
            vec![Dim { lower: 0, len: 2 }, Dim { lower: 1, len: 3 }],
            (0..6).map(|i| if i == 4 { Value::Null } else { nest(i % 3, Value::Int(i as i64)) }).collect(),
        )
        .unwrap();
        let samples = vec![
            nest(5, Value::Int(1)),
            nest(3, Value::Text("a \"b\" \\c".into())),
            Value::Record(vec![Value::Null, Value::Text(String::new()), Value::Text("x,y".into())].into()),
            arr(vec![nest(2, Value::Text("{}".into())), Value::Null, Value::Text("NuLL".into())]),
            Value::Record(
                vec![arr(vec![Value::Text("a b".into()), nest(2, Value::Text("q\"".into()))])].into(),
            ),
            nest(2, arr(vec![arr(vec![Value::Int(1)]), Value::Text("\u{a0}".into())])),
            arr(vec![]),
            Value::Array(Arc::new(grid)),
            nest(2, Value::Array(Arc::new(Array::empty()))),
            Value::Record(vec![].into()),
        ];
        for v in samples {
            assert_eq!(measured(&v).len, text(&v).len(), "{}", text(&v));
        }
    }

    /// Thirty levels of records need more than a gigabyte: the check fails
    /// as record_out does, without writing anything.
    #[test]
    fn deep_records_fail_as_record_out_does() {
        let v = nest(30, Value::Int(1));
        let e = check(&v, Zone::UTC.into()).unwrap_err();
        assert_eq!(e.code, SqlState::PROGRAM_LIMIT_EXCEEDED);
        assert_eq!(
            e.detail.as_deref(),
            Some("Cannot enlarge string buffer containing 1073741822 bytes by 1 more bytes.")
        );
        assert!(check(&nest(64, Value::Int(1)), Zone::UTC.into()).is_err());
        assert!(check(&nest(20, Value::Int(1)), Zone::UTC.into()).is_ok());
    }
}
