//! The parsed form of a jsonpath: chains of accessor items, each of which
//! may hold argument chains. It mirrors the item kinds PostgreSQL stores,
//! so that output, evaluation and error order can follow PostgreSQL's.

use crate::numeric::Numeric;

/// A chain: the first item is applied to the input, each following item
/// to the results of the one before (PostgreSQL's `next` links).
#[derive(Clone, Debug)]
pub(crate) struct Chain(pub Vec<Item>);

/// Binary operators (predicates and arithmetic).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum BinOp {
    And,
    Or,
    Eq,
    Ne,
    Lt,
    Gt,
    Le,
    Ge,
    StartsWith,
    Add,
    Sub,
    Mul,
    Div,
    Mod,
}

/// Unary operators and the one-argument items.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum UnOp {
    Not,
    IsUnknown,
    Exists,
    Filter,
    Plus,
    Minus,
}

/// The item methods that take no argument.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Method {
    Type,
    Size,
    Abs,
    Floor,
    Ceiling,
    Double,
    KeyValue,
}

/// `like_regex` flag bits, in PostgreSQL's output order.
pub(crate) const FLAG_I: u8 = 1;
pub(crate) const FLAG_S: u8 = 2;
pub(crate) const FLAG_M: u8 = 4;
pub(crate) const FLAG_X: u8 = 8;
pub(crate) const FLAG_Q: u8 = 16;

/// `**` bound meaning `last`.
pub(crate) const LAST_LEVEL: u32 = u32::MAX;

/// One jsonpath item.
#[derive(Clone, Debug)]
pub(crate) enum Item {
    Null,
    Bool(bool),
    Numeric(Numeric),
    String(String),
    Variable(String),
    Key(String),
    Root,
    Current,
    Last,
    AnyArray,
    AnyKey,
    /// `[a, b to c]`: subscripts with optional range ends.
    Index(Vec<(Chain, Option<Chain>)>),
    /// `.**{first to last}`.
    Any {
        first: u32,
        last: u32,
    },
    Binary(BinOp, Box<Chain>, Box<Chain>),
    Unary(UnOp, Box<Chain>),
    LikeRegex {
        expr: Box<Chain>,
        pattern: String,
        flags: u8,
    },
    Method(Method),
    Datetime(Option<String>),
}

impl BinOp {
    /// The operator as jsonpath_out and error messages spell it.
    pub(crate) fn name(self) -> &'static str {
        match self {
            BinOp::And => "&&",
            BinOp::Or => "||",
            BinOp::Eq => "==",
            BinOp::Ne => "!=",
            BinOp::Lt => "<",
            BinOp::Gt => ">",
            BinOp::Le => "<=",
            BinOp::Ge => ">=",
            BinOp::StartsWith => "starts with",
            BinOp::Add => "+",
            BinOp::Sub => "-",
            BinOp::Mul => "*",
            BinOp::Div => "/",
            BinOp::Mod => "%",
        }
    }

    /// True for the operators that yield a truth value.
    pub(crate) fn is_predicate(self) -> bool {
        !matches!(self, BinOp::Add | BinOp::Sub | BinOp::Mul | BinOp::Div | BinOp::Mod)
    }
}

impl Method {
    /// The method's name without the dot and parentheses.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Method::Type => "type",
            Method::Size => "size",
            Method::Abs => "abs",
            Method::Floor => "floor",
            Method::Ceiling => "ceiling",
            Method::Double => "double",
            Method::KeyValue => "keyvalue",
        }
    }
}

impl Item {
    /// True for the items that evaluate to a truth value.
    pub(crate) fn is_predicate(&self) -> bool {
        match self {
            Item::Binary(op, ..) => op.is_predicate(),
            Item::Unary(op, _) => matches!(op, UnOp::Not | UnOp::IsUnknown | UnOp::Exists),
            Item::LikeRegex { .. } => true,
            _ => false,
        }
    }
}
