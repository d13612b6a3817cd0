//! The [`Jsonb`] value: PostgreSQL's normalised binary json as a tree.
//!
//! Containers sit behind `Arc`, so clones are cheap and memory stays
//! proportional to the value. Objects keep their keys sorted in
//! PostgreSQL's key order (shorter first, then bytewise) without
//! duplicates, the form `jsonb_in` produces and every operator relies on.
//! Dropping is iterative so that a deeply nested value can't overflow the
//! stack. The token walk here ([`Tokens`]) replays a value the way
//! PostgreSQL's JsonbIterator does; output and ordering are built on it.

use std::cmp::Ordering;
use std::sync::Arc;

use super::lexer::Tok;
use super::parse::{self, Scalar, Sink};
use crate::numeric::Numeric;
use crate::SqlError;

/// A jsonb value.
///
/// Invariant of [`Jsonb::Object`]: pairs are sorted by [`key_order`] and
/// keys are unique. Build objects with [`Jsonb::object`] (which sorts and
/// removes duplicates, the last one winning) unless they are known sorted.
#[derive(Clone, Debug)]
pub enum Jsonb {
    Null,
    Bool(bool),
    Number(Numeric),
    String(Arc<str>),
    Array(Arc<Vec<Jsonb>>),
    Object(Arc<Vec<(Arc<str>, Jsonb)>>),
}

/// PostgreSQL's order of jsonb object keys: shorter keys first, keys of
/// equal length bytewise.
pub fn key_order(a: &str, b: &str) -> Ordering {
    a.len().cmp(&b.len()).then_with(|| a.as_bytes().cmp(b.as_bytes()))
}

impl Drop for Jsonb {
    fn drop(&mut self) {
        fn take(j: &mut Jsonb, stack: &mut Vec<Jsonb>) {
            match j {
                Jsonb::Array(a) => {
                    if let Some(v) = Arc::get_mut(a) {
                        stack.extend(v.drain(..).filter(Jsonb::is_container));
                    }
                }
                Jsonb::Object(o) => {
                    if let Some(v) = Arc::get_mut(o) {
                        stack.extend(v.drain(..).map(|(_, v)| v).filter(Jsonb::is_container));
                    }
                }
                _ => {}
            }
        }
        if !self.is_container() {
            return;
        }
        let mut stack = Vec::new();
        take(self, &mut stack);
        while let Some(mut j) = stack.pop() {
            take(&mut j, &mut stack);
        }
    }
}

impl Jsonb {
    /// A string value.
    pub fn string(s: impl Into<Arc<str>>) -> Jsonb {
        Jsonb::String(s.into())
    }

    /// An array value.
    pub fn array(items: Vec<Jsonb>) -> Jsonb {
        Jsonb::Array(Arc::new(items))
    }

    /// An object from pairs in any order; for a repeated key the last
    /// pair wins, as in PostgreSQL.
    pub fn object<K: Into<Arc<str>>>(pairs: Vec<(K, Jsonb)>) -> Jsonb {
        let mut v: Vec<(Arc<str>, Jsonb)> = pairs.into_iter().map(|(k, v)| (k.into(), v)).collect();
        normalize_pairs(&mut v);
        Jsonb::Object(Arc::new(v))
    }

    /// True for arrays and objects.
    pub fn is_container(&self) -> bool {
        matches!(self, Jsonb::Array(_) | Jsonb::Object(_))
    }

    /// True for scalars (a top-level scalar is PostgreSQL's "raw scalar").
    pub fn is_scalar(&self) -> bool {
        !self.is_container()
    }

    /// The value of `key` if this is an object that has it.
    pub fn get(&self, key: &str) -> Option<&Jsonb> {
        match self {
            Jsonb::Object(o) => o.binary_search_by(|(k, _)| key_order(k, key)).ok().map(|i| &o[i].1),
            _ => None,
        }
    }

    /// jsonb_in: parses json text into a jsonb value.
    pub fn parse(input: &str) -> Result<Jsonb, SqlError> {
        let mut b = Builder::default();
        parse::parse(input, true, &mut b)?;
        Ok(b.root.unwrap_or(Jsonb::Null))
    }
}

/// Sorts pairs into key order; of equal keys the last given stays.
pub(crate) fn normalize_pairs(v: &mut Vec<(Arc<str>, Jsonb)>) {
    if v.len() < 2 {
        return;
    }
    if v.windows(2).all(|w| key_order(&w[0].0, &w[1].0) == Ordering::Less) {
        return;
    }
    // Stable sort keeps equal keys in input order; keep the last of each.
    v.sort_by(|a, b| key_order(&a.0, &b.0));
    let mut out: Vec<(Arc<str>, Jsonb)> = Vec::with_capacity(v.len());
    for p in v.drain(..) {
        match out.last_mut() {
            Some(last) if last.0 == p.0 => *last = p,
            _ => out.push(p),
        }
    }
    *v = out;
}

enum Open {
    Array(Vec<Jsonb>),
    Object(Vec<(Arc<str>, Jsonb)>, Option<Arc<str>>),
}

/// A sink that builds a [`Jsonb`].
#[derive(Default)]
pub(crate) struct Builder {
    stack: Vec<Open>,
    root: Option<Jsonb>,
}

impl Builder {
    fn add(&mut self, v: Jsonb) {
        match self.stack.last_mut() {
            None => self.root = Some(v),
            Some(Open::Array(items)) => items.push(v),
            Some(Open::Object(pairs, key)) => {
                let k = key.take().unwrap_or_else(|| Arc::from(""));
                pairs.push((k, v));
            }
        }
    }
}

/// Converts a json number token to numeric.
pub(crate) fn number_from_token(raw: &str) -> Result<Numeric, SqlError> {
    Numeric::parse(raw)
}

impl Sink for Builder {
    fn begin(&mut self, object: bool, _: usize) -> Result<(), SqlError> {
        self.stack.push(if object { Open::Object(Vec::new(), None) } else { Open::Array(Vec::new()) });
        Ok(())
    }
    fn end(&mut self, _: usize) -> Result<(), SqlError> {
        let v = match self.stack.pop() {
            Some(Open::Array(items)) => Jsonb::Array(Arc::new(items)),
            Some(Open::Object(mut pairs, _)) => {
                normalize_pairs(&mut pairs);
                Jsonb::Object(Arc::new(pairs))
            }
            None => return Ok(()),
        };
        self.add(v);
        Ok(())
    }
    fn key(&mut self, key: String) -> Result<(), SqlError> {
        if let Some(Open::Object(_, k)) = self.stack.last_mut() {
            *k = Some(Arc::from(key));
        }
        Ok(())
    }
    fn scalar(&mut self, s: Scalar<'_>) -> Result<(), SqlError> {
        let v = match s.tok {
            Tok::String => Jsonb::String(Arc::from(s.string.unwrap_or_default())),
            Tok::Number => Jsonb::Number(number_from_token(s.raw)?),
            Tok::True => Jsonb::Bool(true),
            Tok::False => Jsonb::Bool(false),
            _ => Jsonb::Null,
        };
        self.add(v);
        Ok(())
    }
}

/// One step of a walk over a value, as PostgreSQL's JsonbIterator yields.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Token<'a> {
    /// An array opens; `raw` marks the one-element pseudo array PostgreSQL
    /// wraps a top-level scalar in.
    BeginArray {
        len: usize,
        raw: bool,
    },
    BeginObject {
        len: usize,
    },
    Key(&'a str),
    /// An object's scalar value.
    Value(&'a Jsonb),
    /// An array's scalar element.
    Elem(&'a Jsonb),
    EndArray {
        raw: bool,
    },
    EndObject,
}

enum Frame<'a> {
    Array { items: &'a [Jsonb], i: usize, raw: bool },
    Object { pairs: &'a [(Arc<str>, Jsonb)], i: usize, key_done: bool },
}

/// The walk over a value, without recursion.
pub(crate) struct Tokens<'a> {
    root: Option<&'a Jsonb>,
    stack: Vec<Frame<'a>>,
}

impl<'a> Tokens<'a> {
    pub(crate) fn new(j: &'a Jsonb) -> Tokens<'a> {
        Tokens { root: Some(j), stack: Vec::new() }
    }

    fn open(&mut self, j: &'a Jsonb) -> Token<'a> {
        match j {
            Jsonb::Array(a) => {
                self.stack.push(Frame::Array { items: a, i: 0, raw: false });
                Token::BeginArray { len: a.len(), raw: false }
            }
            Jsonb::Object(o) => {
                self.stack.push(Frame::Object { pairs: o, i: 0, key_done: false });
                Token::BeginObject { len: o.len() }
            }
            _ => {
                self.stack.push(Frame::Array { items: std::slice::from_ref(j), i: 0, raw: true });
                Token::BeginArray { len: 1, raw: true }
            }
        }
    }
}

impl<'a> Iterator for Tokens<'a> {
    type Item = Token<'a>;

    fn next(&mut self) -> Option<Token<'a>> {
        if let Some(r) = self.root.take() {
            return Some(self.open(r));
        }
        let top = self.stack.last_mut()?;
        match top {
            Frame::Array { items, i, raw } => {
                if *i < items.len() {
                    let items: &'a [Jsonb] = items;
                    let item = &items[*i];
                    *i += 1;
                    if item.is_container() {
                        Some(self.open(item))
                    } else {
                        Some(Token::Elem(item))
                    }
                } else {
                    let raw = *raw;
                    self.stack.pop();
                    Some(Token::EndArray { raw })
                }
            }
            Frame::Object { pairs, i, key_done } => {
                if *i < pairs.len() {
                    let pairs: &'a [(Arc<str>, Jsonb)] = pairs;
                    let (k, v) = &pairs[*i];
                    if !*key_done {
                        *key_done = true;
                        return Some(Token::Key(k));
                    }
                    *key_done = false;
                    *i += 1;
                    if v.is_container() {
                        Some(self.open(v))
                    } else {
                        Some(Token::Value(v))
                    }
                } else {
                    self.stack.pop();
                    Some(Token::EndObject)
                }
            }
        }
    }
}
