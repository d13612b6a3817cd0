//! Binary forms of json and jsonb: the protocol's send/recv formats, and a
//! compact self-delimiting encoding for rows and WAL records.
//!
//! The protocol formats are PostgreSQL's: jsonb is a version byte (1) then
//! the jsonb_out text; json is its text. The storage encoding only has to
//! round-trip; it is a preorder tag stream (no re-parsing of text on
//! read), decoded without recursion.

use std::sync::Arc;

use snapscale_sqlstate::SqlState;

use super::value::Jsonb;
use crate::numeric::Numeric;
use crate::SqlError;

const T_NULL: u8 = 0;
const T_FALSE: u8 = 1;
const T_TRUE: u8 = 2;
const T_NUMBER: u8 = 3;
const T_STRING: u8 = 4;
const T_ARRAY: u8 = 5;
const T_OBJECT: u8 = 6;

fn text_of(buf: &[u8]) -> Result<&str, SqlError> {
    std::str::from_utf8(buf).map_err(|e| {
        let bad = &buf[e.valid_up_to()..];
        let n = e.error_len().unwrap_or(bad.len()).max(1).min(bad.len());
        let hex: Vec<String> = bad[..n].iter().map(|b| format!("0x{b:02x}")).collect();
        SqlError::new(
            SqlState::CHARACTER_NOT_IN_REPERTOIRE,
            format!("invalid byte sequence for encoding \"UTF8\": {}", hex.join(" ")),
        )
    })
}

impl Jsonb {
    /// jsonb_send: version 1, then the text form.
    pub fn to_wire(&self, out: &mut Vec<u8>) {
        out.push(1);
        out.extend_from_slice(self.to_text().as_bytes());
    }

    /// jsonb_recv.
    pub fn from_wire(buf: &[u8]) -> Result<Jsonb, SqlError> {
        let Some((&version, rest)) = buf.split_first() else {
            return Err(SqlError::new(SqlState::PROTOCOL_VIOLATION, "insufficient data left in message"));
        };
        if version != 1 {
            return Err(SqlError::new(
                SqlState::INTERNAL_ERROR,
                format!("unsupported jsonb version number {version}"),
            ));
        }
        Jsonb::parse(text_of(rest)?)
    }

    /// Appends the storage encoding of this value.
    pub fn encode(&self, out: &mut Vec<u8>) {
        enum W<'a> {
            V(&'a Jsonb),
            K(&'a str),
        }
        let mut stack = vec![W::V(self)];
        while let Some(w) = stack.pop() {
            let v = match w {
                W::K(k) => {
                    put_bytes(out, k.as_bytes());
                    continue;
                }
                W::V(v) => v,
            };
            match v {
                Jsonb::Null => out.push(T_NULL),
                Jsonb::Bool(false) => out.push(T_FALSE),
                Jsonb::Bool(true) => out.push(T_TRUE),
                Jsonb::Number(n) => {
                    out.push(T_NUMBER);
                    n.encode(out);
                }
                Jsonb::String(s) => {
                    out.push(T_STRING);
                    put_bytes(out, s.as_bytes());
                }
                Jsonb::Array(a) => {
                    out.push(T_ARRAY);
                    put_len(out, a.len());
                    stack.extend(a.iter().rev().map(W::V));
                }
                Jsonb::Object(o) => {
                    out.push(T_OBJECT);
                    put_len(out, o.len());
                    for (k, v) in o.iter().rev() {
                        stack.push(W::V(v));
                        stack.push(W::K(k));
                    }
                }
            }
        }
    }

    /// Reads a value written by [`Jsonb::encode`]; returns it and the
    /// number of bytes used.
    pub fn decode(buf: &[u8]) -> Result<(Jsonb, usize), SqlError> {
        enum Open {
            A(Vec<Jsonb>, usize),
            O(Vec<(Arc<str>, Jsonb)>, usize),
        }
        let mut pos = 0usize;
        let mut stack: Vec<Open> = Vec::new();
        loop {
            // An object member starts with its key.
            let key = match stack.last() {
                Some(Open::O(..)) => Some(Arc::<str>::from(text_of(get_bytes(buf, &mut pos)?)?)),
                _ => None,
            };
            let tag = *buf.get(pos).ok_or_else(corrupt)?;
            pos += 1;
            let mut v = match tag {
                T_NULL => Jsonb::Null,
                T_FALSE => Jsonb::Bool(false),
                T_TRUE => Jsonb::Bool(true),
                T_NUMBER => {
                    let (n, used) = Numeric::decode(&buf[pos..])?;
                    pos += used;
                    Jsonb::Number(n)
                }
                T_STRING => Jsonb::String(Arc::from(text_of(get_bytes(buf, &mut pos)?)?)),
                T_ARRAY | T_OBJECT => {
                    let n = get_len(buf, &mut pos)?;
                    // Each member takes at least one byte: cap the reservation.
                    let cap = n.min(buf.len().saturating_sub(pos));
                    if n == 0 {
                        if tag == T_ARRAY {
                            Jsonb::array(Vec::new())
                        } else {
                            Jsonb::Object(Arc::new(Vec::new()))
                        }
                    } else {
                        if let (Some(k), Some(Open::O(pairs, _))) = (key, stack.last_mut()) {
                            // A placeholder the child replaces when it closes.
                            pairs.push((k, Jsonb::Null));
                        }
                        stack.push(if tag == T_ARRAY {
                            Open::A(Vec::with_capacity(cap), n)
                        } else {
                            Open::O(Vec::with_capacity(cap), n)
                        });
                        continue;
                    }
                }
                _ => return Err(corrupt()),
            };
            let mut key = key;
            // Attach v to its parent, closing every container it completes.
            loop {
                match stack.last_mut() {
                    None => return Ok((v, pos)),
                    Some(Open::A(items, n)) => {
                        items.push(v);
                        if items.len() < *n {
                            break;
                        }
                    }
                    Some(Open::O(pairs, n)) => {
                        match key.take() {
                            Some(k) => pairs.push((k, v)),
                            // The placeholder pushed when the child opened.
                            None => {
                                if let Some(last) = pairs.last_mut() {
                                    last.1 = v;
                                }
                            }
                        }
                        if pairs.len() < *n {
                            break;
                        }
                    }
                }
                v = match stack.pop() {
                    Some(Open::A(items, _)) => Jsonb::array(items),
                    Some(Open::O(pairs, _)) => Jsonb::Object(Arc::new(pairs)),
                    None => return Err(corrupt()),
                };
            }
        }
    }
}

fn corrupt() -> SqlError {
    SqlError::new(SqlState::DATA_CORRUPTED, "corrupt jsonb encoding")
}

fn put_len(out: &mut Vec<u8>, mut n: usize) {
    loop {
        let b = (n & 0x7f) as u8;
        n >>= 7;
        if n == 0 {
            out.push(b);
            return;
        }
        out.push(b | 0x80);
    }
}

fn get_len(buf: &[u8], pos: &mut usize) -> Result<usize, SqlError> {
    let mut n = 0usize;
    let mut shift = 0;
    loop {
        let b = *buf.get(*pos).ok_or_else(corrupt)?;
        *pos += 1;
        if shift > 56 {
            return Err(corrupt());
        }
        n |= usize::from(b & 0x7f) << shift;
        if b & 0x80 == 0 {
            return Ok(n);
        }
        shift += 7;
    }
}

fn put_bytes(out: &mut Vec<u8>, b: &[u8]) {
    put_len(out, b.len());
    out.extend_from_slice(b);
}

fn get_bytes<'a>(buf: &'a [u8], pos: &mut usize) -> Result<&'a [u8], SqlError> {
    let n = get_len(buf, pos)?;
    let end = pos.checked_add(n).filter(|&e| e <= buf.len()).ok_or_else(corrupt)?;
    let s = &buf[*pos..end];
    *pos = end;
    Ok(s)
}

/// json_send: the text as is.
pub fn json_to_wire(text: &str, out: &mut Vec<u8>) {
    out.extend_from_slice(text.as_bytes());
}

/// json_recv: the text, validated as json_in does.
pub fn json_from_wire(buf: &[u8]) -> Result<String, SqlError> {
    let t = text_of(buf)?;
    super::parse::validate(t)?;
    Ok(t.to_owned())
}
