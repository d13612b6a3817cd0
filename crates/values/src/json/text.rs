//! The json (text) functions: `->`, `->>`, `#>`, `#>>`, json_typeof,
//! json_array_length, json_object_keys, json_each[_text],
//! json_array_elements[_text], json_strip_nulls.
//!
//! `json` keeps the text it was given, so these work on the original text:
//! values come back as slices of it (whitespace and duplicate keys kept),
//! and a repeated key finds its last occurrence, as in PostgreSQL. The text
//! is indexed into a flat node list (no recursion, no deep drop). Like
//! PostgreSQL, the functions that need string values decode every escape
//! in the document, so `\u0000` anywhere makes them fail.

use snapscale_sqlstate::SqlState;

use super::lexer::{Lexer, Tok};
use super::ops::{strtoint, PathStep};
use super::out::escape_json;
use super::parse::{self, Scalar, Sink};
use crate::SqlError;

#[derive(Debug)]
pub(super) enum Kind {
    Object,
    Array,
    /// A scalar token; strings carry their decoded value.
    Scalar(Tok, Option<String>),
}

#[derive(Debug)]
struct Node {
    kind: Kind,
    start: usize,
    end: usize,
    /// The key this node is the value of, in an object.
    key: Option<String>,
    children: Vec<u32>,
}

/// json text indexed for the json functions.
#[derive(Debug)]
pub struct JsonText<'a> {
    text: &'a str,
    nodes: Vec<Node>,
}

#[derive(Default)]
struct Indexer {
    nodes: Vec<Node>,
    open: Vec<u32>,
    key: Option<String>,
}

impl Indexer {
    fn push(&mut self, kind: Kind, start: usize, end: usize) -> u32 {
        let id = self.nodes.len() as u32;
        let key = self.key.take();
        self.nodes.push(Node { kind, start, end, key, children: Vec::new() });
        if let Some(&p) = self.open.last() {
            self.nodes[p as usize].children.push(id);
        }
        id
    }
}

impl Sink for Indexer {
    fn begin(&mut self, object: bool, start: usize) -> Result<(), SqlError> {
        let id = self.push(if object { Kind::Object } else { Kind::Array }, start, start);
        self.open.push(id);
        Ok(())
    }
    fn end(&mut self, end: usize) -> Result<(), SqlError> {
        if let Some(id) = self.open.pop() {
            self.nodes[id as usize].end = end;
        }
        Ok(())
    }
    fn key(&mut self, key: String) -> Result<(), SqlError> {
        self.key = Some(key);
        Ok(())
    }
    fn scalar(&mut self, s: Scalar<'_>) -> Result<(), SqlError> {
        self.push(Kind::Scalar(s.tok, s.string), s.start, s.end);
        Ok(())
    }
}

fn invalid(msg: impl Into<String>) -> SqlError {
    SqlError::new(SqlState::INVALID_PARAMETER_VALUE, msg)
}

/// The first token of (already valid) json text.
fn first_token(text: &str) -> Result<Tok, SqlError> {
    let mut lex = Lexer::new(text, false);
    lex.next()?;
    Ok(lex.tok)
}

/// json_typeof.
pub fn json_typeof(text: &str) -> Result<&'static str, SqlError> {
    Ok(match first_token(text)? {
        Tok::ObjectStart => "object",
        Tok::ArrayStart => "array",
        Tok::String => "string",
        Tok::Number => "number",
        Tok::True | Tok::False => "boolean",
        _ => "null",
    })
}

/// json_array_length.
pub fn json_array_length(text: &str) -> Result<i32, SqlError> {
    struct Count {
        depth: usize,
        n: i32,
    }
    impl Sink for Count {
        fn begin(&mut self, _: bool, _: usize) -> Result<(), SqlError> {
            if self.depth == 1 {
                self.n += 1;
            }
            self.depth += 1;
            Ok(())
        }
        fn end(&mut self, _: usize) -> Result<(), SqlError> {
            self.depth -= 1;
            Ok(())
        }
        fn key(&mut self, _: String) -> Result<(), SqlError> {
            Ok(())
        }
        fn scalar(&mut self, _: Scalar<'_>) -> Result<(), SqlError> {
            if self.depth == 1 {
                self.n += 1;
            }
            Ok(())
        }
    }
    match first_token(text)? {
        Tok::ArrayStart => {}
        Tok::ObjectStart => return Err(invalid("cannot get array length of a non-array")),
        _ => return Err(invalid("cannot get array length of a scalar")),
    }
    let mut c = Count { depth: 0, n: 0 };
    parse::parse(text, false, &mut c)?;
    Ok(c.n)
}

impl<'a> JsonText<'a> {
    /// Indexes `text`, decoding escapes (PostgreSQL's json functions
    /// report `\u0000` and bad surrogate pairs here).
    pub fn parse(text: &'a str) -> Result<JsonText<'a>, SqlError> {
        let mut ix = Indexer::default();
        parse::parse(text, true, &mut ix)?;
        Ok(JsonText { text, nodes: ix.nodes })
    }

    pub(super) fn kind_of(&self, id: u32) -> &Kind {
        &self.nodes[id as usize].kind
    }

    pub(super) fn slice_of(&self, id: u32) -> &'a str {
        self.slice(id)
    }

    pub(super) fn decoded_of(&self, id: u32) -> Option<String> {
        self.node_text(id)
    }

    pub(super) fn children_of(&self, id: u32) -> &[u32] {
        &self.nodes[id as usize].children
    }

    pub(super) fn child_key(&self, id: u32, key: &str) -> Option<u32> {
        self.child_by_key(id, key)
    }

    fn slice(&self, id: u32) -> &'a str {
        let n = &self.nodes[id as usize];
        &self.text[n.start..n.end]
    }

    /// The value's text for `->>`: strings decoded, null as SQL NULL.
    fn node_text(&self, id: u32) -> Option<String> {
        match &self.nodes[id as usize].kind {
            Kind::Scalar(Tok::Null, _) => None,
            Kind::Scalar(Tok::String, Some(s)) => Some(s.clone()),
            _ => Some(self.slice(id).to_owned()),
        }
    }

    fn child_by_key(&self, id: u32, key: &str) -> Option<u32> {
        let n = &self.nodes[id as usize];
        if !matches!(n.kind, Kind::Object) {
            return None;
        }
        n.children.iter().rev().copied().find(|&c| self.nodes[c as usize].key.as_deref() == Some(key))
    }

    fn child_by_index(&self, id: u32, index: i32) -> Option<u32> {
        let n = &self.nodes[id as usize];
        if !matches!(n.kind, Kind::Array) {
            return None;
        }
        let len = n.children.len() as i64;
        let mut i = i64::from(index);
        if i < 0 {
            if -i > len {
                return None;
            }
            i += len;
        }
        n.children.get(usize::try_from(i).ok()?).copied()
    }

    /// `->` with a text key: the value's original text.
    pub fn field(&self, key: &str) -> Option<&'a str> {
        self.child_by_key(0, key).map(|c| self.slice(c))
    }

    /// `->>` with a text key.
    pub fn field_text(&self, key: &str) -> Option<String> {
        self.child_by_key(0, key).and_then(|c| self.node_text(c))
    }

    /// `->` with an integer (negative counts from the end).
    pub fn element(&self, index: i32) -> Option<&'a str> {
        self.child_by_index(0, index).map(|c| self.slice(c))
    }

    /// `->>` with an integer.
    pub fn element_text(&self, index: i32) -> Option<String> {
        self.child_by_index(0, index).and_then(|c| self.node_text(c))
    }

    fn find_path(&self, path: &[PathStep<'_>]) -> Option<u32> {
        if path.iter().any(Option::is_none) {
            return None;
        }
        // Every key occurrence is followed; the last full match wins.
        let mut found = None;
        let mut stack: Vec<(u32, usize)> = vec![(0, 0)];
        while let Some((id, depth)) = stack.pop() {
            if depth == path.len() {
                found = Some(found.map_or(id, |f: u32| f.max(id)));
                continue;
            }
            let step = path[depth].unwrap_or_default();
            let n = &self.nodes[id as usize];
            match n.kind {
                Kind::Object => {
                    for &c in &n.children {
                        if self.nodes[c as usize].key.as_deref() == Some(step) {
                            stack.push((c, depth + 1));
                        }
                    }
                }
                Kind::Array => {
                    if let Some(c) = strtoint(step).and_then(|i| self.child_by_index(id, i)) {
                        stack.push((c, depth + 1));
                    }
                }
                Kind::Scalar(..) => {}
            }
        }
        found
    }

    /// `#>`. An empty path gives the whole text from its start (leading
    /// whitespace included, as PostgreSQL does).
    pub fn extract_path(&self, path: &[PathStep<'_>]) -> Option<&'a str> {
        let id = self.find_path(path)?;
        if id == 0 {
            return Some(&self.text[..self.nodes[0].end]);
        }
        Some(self.slice(id))
    }

    /// `#>>`.
    pub fn extract_path_text(&self, path: &[PathStep<'_>]) -> Option<String> {
        let id = self.find_path(path)?;
        if id == 0 && !matches!(self.nodes[0].kind, Kind::Scalar(Tok::String | Tok::Null, _)) {
            return Some(self.text[..self.nodes[0].end].to_owned());
        }
        self.node_text(id)
    }

    fn root_kind_error(&self, scalar: &str, array: &str, object: &str) -> Result<&Node, SqlError> {
        let root = &self.nodes[0];
        match root.kind {
            Kind::Scalar(..) if !scalar.is_empty() => Err(invalid(scalar)),
            Kind::Array if !array.is_empty() => Err(invalid(array)),
            Kind::Object if !object.is_empty() => Err(invalid(object)),
            _ => Ok(root),
        }
    }

    /// json_object_keys: keys in order, repeats included.
    pub fn object_keys(&self) -> Result<Vec<String>, SqlError> {
        let root = self.root_kind_error(
            "cannot call json_object_keys on a scalar",
            "cannot call json_object_keys on an array",
            "",
        )?;
        Ok(root.children.iter().map(|&c| self.nodes[c as usize].key.clone().unwrap_or_default()).collect())
    }

    /// json_each: (key, value text) rows in order.
    pub fn each(&self) -> Result<Vec<(String, &'a str)>, SqlError> {
        let root = self.root_kind_error(
            "cannot deconstruct a scalar",
            "cannot deconstruct an array as an object",
            "",
        )?;
        Ok(root
            .children
            .iter()
            .map(|&c| (self.nodes[c as usize].key.clone().unwrap_or_default(), self.slice(c)))
            .collect())
    }

    /// json_each_text.
    pub fn each_text(&self) -> Result<Vec<(String, Option<String>)>, SqlError> {
        let root = self.root_kind_error(
            "cannot deconstruct a scalar",
            "cannot deconstruct an array as an object",
            "",
        )?;
        Ok(root
            .children
            .iter()
            .map(|&c| (self.nodes[c as usize].key.clone().unwrap_or_default(), self.node_text(c)))
            .collect())
    }

    /// json_array_elements.
    pub fn array_elements(&self) -> Result<Vec<&'a str>, SqlError> {
        let root = self.root_kind_error(
            "cannot call json_array_elements on a scalar",
            "",
            "cannot call json_array_elements on a non-array",
        )?;
        Ok(root.children.iter().map(|&c| self.slice(c)).collect())
    }

    /// json_array_elements_text.
    pub fn array_elements_text(&self) -> Result<Vec<Option<String>>, SqlError> {
        let root = self.root_kind_error(
            "cannot call json_array_elements_text on a scalar",
            "",
            "cannot call json_array_elements_text on a non-array",
        )?;
        Ok(root.children.iter().map(|&c| self.node_text(c)).collect())
    }

    /// json_strip_nulls: the text re-emitted compactly without object
    /// fields whose value is null.
    pub fn strip_nulls(&self) -> String {
        let mut out = String::new();
        // (node, next child index)
        let mut stack: Vec<(u32, usize)> = vec![(0, 0)];
        let mut fresh = true;
        while let Some(&mut (id, ref mut i)) = stack.last_mut() {
            let n = &self.nodes[id as usize];
            if fresh {
                fresh = false;
                match &n.kind {
                    Kind::Object => out.push('{'),
                    Kind::Array => out.push('['),
                    Kind::Scalar(Tok::String, Some(s)) => escape_json(&mut out, s),
                    Kind::Scalar(..) => out.push_str(&self.text[n.start..n.end]),
                }
                if matches!(n.kind, Kind::Scalar(..)) {
                    stack.pop();
                }
                continue;
            }
            let object = matches!(n.kind, Kind::Object);
            // Next child to emit, skipping null-valued fields.
            let mut next = None;
            while *i < n.children.len() {
                let c = n.children[*i];
                *i += 1;
                if object && matches!(self.nodes[c as usize].kind, Kind::Scalar(Tok::Null, _)) {
                    continue;
                }
                next = Some(c);
                break;
            }
            match next {
                Some(c) => {
                    if !matches!(out.as_bytes().last(), Some(b'{' | b'[')) {
                        out.push(',');
                    }
                    if object {
                        escape_json(&mut out, self.nodes[c as usize].key.as_deref().unwrap_or_default());
                        out.push(':');
                    }
                    stack.push((c, 0));
                    fresh = true;
                }
                None => {
                    out.push(if object { '}' } else { ']' });
                    stack.pop();
                }
            }
        }
        out
    }
}

/// Checks the root's kind from the first token, before the whole text is
/// decoded: PostgreSQL reports a wrong kind ahead of escape errors.
fn check_root(text: &str, scalar: &str, array: &str, object: &str) -> Result<(), SqlError> {
    match first_token(text)? {
        Tok::ObjectStart if !object.is_empty() => Err(invalid(object)),
        Tok::ArrayStart if !array.is_empty() => Err(invalid(array)),
        Tok::ObjectStart | Tok::ArrayStart => Ok(()),
        _ if !scalar.is_empty() => Err(invalid(scalar)),
        _ => Ok(()),
    }
}

/// json_object_keys.
pub fn json_object_keys(text: &str) -> Result<Vec<String>, SqlError> {
    check_root(
        text,
        "cannot call json_object_keys on a scalar",
        "cannot call json_object_keys on an array",
        "",
    )?;
    JsonText::parse(text)?.object_keys()
}

/// json_each: (key, value text) rows.
pub fn json_each(text: &str) -> Result<Vec<(String, &str)>, SqlError> {
    check_root(text, "cannot deconstruct a scalar", "cannot deconstruct an array as an object", "")?;
    JsonText::parse(text)?.each()
}

/// json_each_text.
pub fn json_each_text(text: &str) -> Result<Vec<(String, Option<String>)>, SqlError> {
    check_root(text, "cannot deconstruct a scalar", "cannot deconstruct an array as an object", "")?;
    JsonText::parse(text)?.each_text()
}

/// json_array_elements.
pub fn json_array_elements(text: &str) -> Result<Vec<&str>, SqlError> {
    check_root(
        text,
        "cannot call json_array_elements on a scalar",
        "",
        "cannot call json_array_elements on a non-array",
    )?;
    JsonText::parse(text)?.array_elements()
}

/// json_array_elements_text.
pub fn json_array_elements_text(text: &str) -> Result<Vec<Option<String>>, SqlError> {
    check_root(
        text,
        "cannot call json_array_elements_text on a scalar",
        "",
        "cannot call json_array_elements_text on a non-array",
    )?;
    JsonText::parse(text)?.array_elements_text()
}

/// `#>` on json text; a NULL path element gives NULL without reading.
pub fn json_extract_path<'a>(text: &'a str, path: &[PathStep<'_>]) -> Result<Option<&'a str>, SqlError> {
    if path.iter().any(Option::is_none) {
        return Ok(None);
    }
    Ok(JsonText::parse(text)?.extract_path(path))
}

/// `#>>` on json text.
pub fn json_extract_path_text(text: &str, path: &[PathStep<'_>]) -> Result<Option<String>, SqlError> {
    if path.iter().any(Option::is_none) {
        return Ok(None);
    }
    Ok(JsonText::parse(text)?.extract_path_text(path))
}

/// json_strip_nulls.
pub fn json_strip_nulls(text: &str) -> Result<String, SqlError> {
    Ok(JsonText::parse(text)?.strip_nulls())
}
