//! Equality, ordering and hashing of jsonb: PostgreSQL's btree order.
//!
//! The order walks both values token by token as PostgreSQL's
//! compareJsonbContainers does. By type, objects sort after arrays, arrays
//! after booleans, booleans after numbers, numbers after strings, strings
//! after null. A container with more elements (or pairs) sorts after one
//! with fewer, whatever they hold; equal-sized ones compare element by
//! element (objects key, value, key, value in stored key order, keys
//! compared bytewise). A top-level scalar is a one-element pseudo array, so
//! it sorts before arrays of one element and objects but after an empty
//! array. Strings compare bytewise, which is the C / C.UTF-8 collation.
//! Hashing follows the same walk, so equal values hash alike (numbers hash
//! by value: 1.0 equals 1).

use std::cmp::Ordering;
use std::hash::{Hash, Hasher};

use super::value::{Jsonb, Token, Tokens};

/// Token kinds: tokens of different kinds compare by value type.
fn kind(t: &Token<'_>) -> u8 {
    match t {
        Token::Key(_) => 1,
        Token::Value(_) => 2,
        Token::Elem(_) => 3,
        Token::BeginArray { .. } => 4,
        Token::EndArray { .. } => 5,
        Token::BeginObject { .. } => 6,
        Token::EndObject => 7,
    }
}

fn scalar_type(v: &Jsonb) -> u8 {
    match v {
        Jsonb::Null => 0,
        Jsonb::String(_) => 1,
        Jsonb::Number(_) => 2,
        Jsonb::Bool(_) => 3,
        Jsonb::Array(_) => 0x10,
        Jsonb::Object(_) => 0x11,
    }
}

fn value_type(t: &Token<'_>) -> u8 {
    match t {
        Token::Key(_) => 1,
        Token::Value(v) | Token::Elem(v) => scalar_type(v),
        Token::BeginArray { .. } | Token::EndArray { .. } => 0x10,
        Token::BeginObject { .. } | Token::EndObject => 0x11,
    }
}

fn compare_scalars(a: &Jsonb, b: &Jsonb) -> Ordering {
    match (a, b) {
        (Jsonb::String(x), Jsonb::String(y)) => x.as_bytes().cmp(y.as_bytes()),
        (Jsonb::Number(x), Jsonb::Number(y)) => x.cmp(y),
        (Jsonb::Bool(x), Jsonb::Bool(y)) => x.cmp(y),
        _ => scalar_type(a).cmp(&scalar_type(b)),
    }
}

/// PostgreSQL's jsonb comparison (jsonb_cmp).
pub fn compare(a: &Jsonb, b: &Jsonb) -> Ordering {
    let mut ia = Tokens::new(a);
    let mut ib = Tokens::new(b);
    loop {
        let (ta, tb) = match (ia.next(), ib.next()) {
            (None, None) => return Ordering::Equal,
            (Some(x), Some(y)) => (x, y),
            // Unreachable for equal-shaped walks; shorter first.
            (None, Some(_)) => return Ordering::Less,
            (Some(_), None) => return Ordering::Greater,
        };
        let mut res = Ordering::Equal;
        if kind(&ta) == kind(&tb) {
            match (&ta, &tb) {
                (Token::EndArray { .. }, _) | (Token::EndObject, _) => continue,
                (Token::BeginArray { len: la, raw: ra }, Token::BeginArray { len: lb, raw: rb }) => {
                    if ra != rb {
                        res = if *ra { Ordering::Less } else { Ordering::Greater };
                    }
                    if la != lb {
                        res = la.cmp(lb);
                    }
                }
                (Token::BeginObject { len: la }, Token::BeginObject { len: lb }) => res = la.cmp(lb),
                (Token::Key(x), Token::Key(y)) => res = x.as_bytes().cmp(y.as_bytes()),
                (Token::Value(x), Token::Value(y)) | (Token::Elem(x), Token::Elem(y)) => {
                    res = compare_scalars(x, y)
                }
                _ => {}
            }
        } else {
            res = value_type(&ta).cmp(&value_type(&tb));
        }
        if res != Ordering::Equal {
            return res;
        }
    }
}

impl PartialEq for Jsonb {
    fn eq(&self, other: &Jsonb) -> bool {
        compare(self, other) == Ordering::Equal
    }
}

impl Eq for Jsonb {}

impl PartialOrd for Jsonb {
    fn partial_cmp(&self, other: &Jsonb) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Jsonb {
    fn cmp(&self, other: &Jsonb) -> Ordering {
        compare(self, other)
    }
}

impl Hash for Jsonb {
    fn hash<H: Hasher>(&self, state: &mut H) {
        for t in Tokens::new(self) {
            state.write_u8(kind(&t));
            match t {
                Token::BeginArray { len, raw } => {
                    state.write_usize(len);
                    state.write_u8(u8::from(raw));
                }
                Token::BeginObject { len } => state.write_usize(len),
                Token::Key(k) => k.hash(state),
                Token::Value(v) | Token::Elem(v) => {
                    state.write_u8(scalar_type(v));
                    match v {
                        Jsonb::String(s) => s.hash(state),
                        Jsonb::Number(n) => n.hash(state),
                        Jsonb::Bool(b) => b.hash(state),
                        _ => {}
                    }
                }
                Token::EndArray { .. } | Token::EndObject => {}
            }
        }
    }
}
