//! Scalar functions that are plain functions of their arguments, one Rust
//! function per SQL signature: what the types' functions are made of
//! (bytea's encode/decode and digests, uuid's generator, numeric's
//! mathematics). The binder's builtin table names them; a call is strict
//! unless marked otherwise (a NULL argument gives NULL without calling).

use std::fmt;

use snapscale_values::{SqlError, Style, Value};

/// `call` of a function that has only a styled implementation.
fn unstyled(_: &[Value]) -> Result<Value, SqlError> {
    unreachable!("a styled function is called with its style")
}

mod bytea;
mod float_functions;
mod formatting;
mod json;
mod math;
mod string_syntax;
pub(crate) mod text;

pub use bytea::*;
pub use float_functions::*;
pub use formatting::*;
pub use json::*;
pub use math::*;
pub use string_syntax::*;
pub use text::*;

/// A function of its arguments and the session's style.
pub type StyledFn = fn(&[Value], Style) -> Result<Value, SqlError>;

/// One SQL function's implementation.
#[derive(Clone, Copy)]
pub struct Scalar {
    /// The SQL name, for messages and for equality (one implementation
    /// per name and signature).
    pub name: &'static str,
    /// The implementation, given non-NULL arguments (all of them, for a
    /// non-strict one).
    pub call: fn(&[Value]) -> Result<Value, SqlError>,
    /// The implementation of one that reads the session's TimeZone,
    /// DateStyle or IntervalStyle (`to_char` of a timestamptz); `call` is
    /// then unused.
    pub styled: Option<StyledFn>,
    /// A NULL argument gives NULL without a call.
    pub strict: bool,
    /// Each call may answer differently (`gen_random_uuid()`): a statement
    /// run again after a wait replays it (EVAL-REPLAY).
    pub volatile: bool,
}

impl Scalar {
    /// A strict, immutable function.
    pub const fn new(name: &'static str, call: fn(&[Value]) -> Result<Value, SqlError>) -> Scalar {
        Scalar { name, call, styled: None, strict: true, volatile: false }
    }

    /// A strict, stable function of the session's style.
    pub const fn styled(name: &'static str, call: fn(&[Value], Style) -> Result<Value, SqlError>) -> Scalar {
        Scalar { name, call: unstyled, styled: Some(call), strict: true, volatile: false }
    }

    /// A strict function whose calls may each answer differently.
    pub const fn volatile(name: &'static str, call: fn(&[Value]) -> Result<Value, SqlError>) -> Scalar {
        Scalar { name, call, styled: None, strict: true, volatile: true }
    }

    /// Calls it on `args` in the session's `style`.
    pub fn apply(&self, args: &[Value], style: Style) -> Result<Value, SqlError> {
        if self.strict && args.iter().any(|a| matches!(a, Value::Null)) {
            return Ok(Value::Null);
        }
        match self.styled {
            Some(f) => f(args, style),
            None => (self.call)(args),
        }
    }
}

// Two entries are the same function when they have the same name and
// implementation; comparing the pointers' addresses is what identity means
// here, and no two signatures share one.
impl PartialEq for Scalar {
    fn eq(&self, other: &Scalar) -> bool {
        self.name == other.name && std::ptr::fn_addr_eq(self.call, other.call)
    }
}

impl Eq for Scalar {}

impl fmt::Debug for Scalar {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}()", self.name)
    }
}

/// The argument as bytes (bound as bytea).
pub(crate) fn bytes(v: &Value) -> &[u8] {
    match v {
        Value::Bytes(b) => b,
        Value::Text(s) => s.as_bytes(),
        _ => &[],
    }
}

/// The argument as text (bound as text).
pub(crate) fn text(v: &Value) -> &str {
    match v {
        Value::Text(s) => s,
        _ => "",
    }
}

/// The argument as an integer (bound as an integer type).
pub(crate) fn int(v: &Value) -> i64 {
    match v {
        Value::Int(i) => *i,
        _ => 0,
    }
}
