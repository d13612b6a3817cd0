//! One value inside a json or jsonb document, read without copying the
//! document: what json[b]_populate_record and its kin walk. A json node
//! keeps its original text (whitespace, and duplicate keys, the last of
//! which a lookup finds); a jsonb node prints as jsonb prints.

use super::lexer::Tok;
use super::text::{JsonText, Kind};
use super::Jsonb;
use crate::SqlError;

/// A node of a json text or of a jsonb value.
#[derive(Clone, Copy)]
pub enum JsonNode<'a> {
    Jsonb(&'a Jsonb),
    Text(&'a JsonText<'a>, u32),
}

/// What a node holds.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum NodeKind {
    Null,
    String,
    Number,
    Bool,
    Array,
    Object,
}

impl<'a> JsonNode<'a> {
    /// The root of a json text.
    pub fn root(text: &'a JsonText<'a>) -> JsonNode<'a> {
        JsonNode::Text(text, 0)
    }

    pub fn kind(&self) -> NodeKind {
        match self {
            JsonNode::Jsonb(j) => match j {
                Jsonb::Null => NodeKind::Null,
                Jsonb::String(_) => NodeKind::String,
                Jsonb::Number(_) => NodeKind::Number,
                Jsonb::Bool(_) => NodeKind::Bool,
                Jsonb::Array(_) => NodeKind::Array,
                Jsonb::Object(_) => NodeKind::Object,
            },
            JsonNode::Text(t, id) => match t.kind_of(*id) {
                Kind::Object => NodeKind::Object,
                Kind::Array => NodeKind::Array,
                Kind::Scalar(Tok::String, _) => NodeKind::String,
                Kind::Scalar(Tok::Number, _) => NodeKind::Number,
                Kind::Scalar(Tok::True | Tok::False, _) => NodeKind::Bool,
                Kind::Scalar(..) => NodeKind::Null,
            },
        }
    }

    /// The node's JSON text: as written for json, as jsonb prints it.
    pub fn json(&self) -> String {
        match self {
            JsonNode::Jsonb(j) => j.to_string(),
            JsonNode::Text(t, id) => t.slice_of(*id).to_owned(),
        }
    }

    /// The text a type's input function reads: a string decoded, any
    /// other node as its JSON text; `None` for null.
    pub fn text(&self) -> Option<String> {
        match (self.kind(), self) {
            (NodeKind::Null, _) => None,
            (NodeKind::String, JsonNode::Jsonb(Jsonb::String(s))) => Some(s.to_string()),
            (NodeKind::String, JsonNode::Text(t, id)) => t.decoded_of(*id),
            _ => Some(self.json()),
        }
    }

    /// The node as a jsonb value.
    pub fn to_jsonb(&self) -> Result<Jsonb, SqlError> {
        match self {
            JsonNode::Jsonb(j) => Ok((*j).clone()),
            JsonNode::Text(t, id) => Jsonb::parse(t.slice_of(*id)),
        }
    }

    /// An array's elements (none for anything else).
    pub fn elements(&self) -> Vec<JsonNode<'a>> {
        match *self {
            JsonNode::Jsonb(Jsonb::Array(items)) => items.iter().map(JsonNode::Jsonb).collect(),
            JsonNode::Jsonb(_) => Vec::new(),
            JsonNode::Text(t, id) => match t.kind_of(id) {
                Kind::Array => t.children_of(id).iter().map(|&c| JsonNode::Text(t, c)).collect(),
                _ => Vec::new(),
            },
        }
    }

    /// An object's member `key` (the last of that name in json text).
    pub fn field(&self, key: &str) -> Option<JsonNode<'a>> {
        match *self {
            JsonNode::Jsonb(j) => match j {
                Jsonb::Object(_) => j.get(key).map(JsonNode::Jsonb),
                _ => None,
            },
            JsonNode::Text(t, id) => t.child_key(id, key).map(|c| JsonNode::Text(t, c)),
        }
    }
}
