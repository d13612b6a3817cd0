//! Arrays as PostgreSQL has them: up to six dimensions, each with its own
//! lower bound (1 unless written otherwise), the elements kept flat in
//! row-major order. An array with no elements has no dimensions.
//!
//! The element type is the column's (`SqlType::Array(elem)`): `int[]`,
//! `int[][]` and `int[3]` are one type, and any value of it may have any
//! number of dimensions, as in PostgreSQL.

pub mod funcs;
pub mod ops;
mod text;

use std::cmp::Ordering;
use std::ops::Deref;

use snapscale_sqlstate::SqlState;

use crate::error::SqlError;
use crate::Value;

pub use text::{format_array, parse_array};

/// PostgreSQL's MAXDIM.
pub const MAX_DIMS: usize = 6;

/// PostgreSQL's MaxArraySize: as many elements as a 1 GB allocation of
/// 8-byte datums holds.
pub const MAX_ITEMS: usize = 0x3fff_ffff / 8;

/// One dimension: its lower bound and its length.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Hash)]
pub struct Dim {
    pub lower: i32,
    pub len: i32,
}

impl Dim {
    /// The upper bound (`lower + len - 1`; the constructor keeps
    /// `lower + len` within i32).
    pub fn upper(self) -> i32 {
        self.lower + self.len - 1
    }
}

/// An array value.
#[derive(Clone, Debug, PartialEq)]
pub struct Array {
    dims: Box<[Dim]>,
    items: Box<[Value]>,
}

/// 54000, as PostgreSQL words it, for more than [`MAX_DIMS`] dimensions.
pub fn too_many_dims(n: usize) -> SqlError {
    SqlError::new(
        SqlState::PROGRAM_LIMIT_EXCEEDED,
        format!("number of array dimensions ({n}) exceeds the maximum allowed ({MAX_DIMS})"),
    )
}

/// 54000 for an array of more than [`MAX_ITEMS`] elements.
pub fn too_many_items() -> SqlError {
    SqlError::new(
        SqlState::PROGRAM_LIMIT_EXCEEDED,
        format!("array size exceeds the maximum allowed ({MAX_ITEMS})"),
    )
}

impl Array {
    /// A one-dimensional array from 1 (no dimensions when `items` is
    /// empty).
    pub fn new(items: Vec<Value>) -> Array {
        Array::with_lower(1, items)
    }

    /// The empty array.
    pub fn empty() -> Array {
        Array { dims: Box::new([]), items: Box::new([]) }
    }

    /// A one-dimensional array from `lower` (int2vector and oidvector
    /// count from 0).
    pub fn with_lower(lower: i32, items: Vec<Value>) -> Array {
        if items.is_empty() {
            return Array::empty();
        }
        let len = i32::try_from(items.len()).expect("an array holds fewer than 2^31 elements");
        Array { dims: Box::new([Dim { lower, len }]), items: items.into_boxed_slice() }
    }

    /// An array of the given shape; `items` holds the product of the
    /// lengths, in row-major order. A zero length anywhere makes the empty
    /// array. Errors are PostgreSQL's: 54000 for too many dimensions or
    /// elements, or a lower bound so large that the upper bound overflows.
    pub fn from_parts(dims: Vec<Dim>, items: Vec<Value>) -> Result<Array, SqlError> {
        if dims.len() > MAX_DIMS {
            return Err(too_many_dims(dims.len()));
        }
        let mut count: usize = 1;
        for d in &dims {
            if d.len < 0 {
                return Err(SqlError::new(SqlState::ARRAY_SUBSCRIPT_ERROR, "array dimensions are negative"));
            }
            count =
                count.checked_mul(d.len as usize).filter(|&c| c <= MAX_ITEMS).ok_or_else(too_many_items)?;
        }
        if dims.is_empty() || count == 0 {
            return Ok(Array::empty());
        }
        for d in &dims {
            if d.lower.checked_add(d.len).is_none() {
                return Err(SqlError::new(
                    SqlState::PROGRAM_LIMIT_EXCEEDED,
                    format!("array lower bound is too large: {}", d.lower),
                ));
            }
        }
        assert_eq!(count, items.len(), "an array's elements fill its dimensions");
        Ok(Array { dims: dims.into_boxed_slice(), items: items.into_boxed_slice() })
    }

    /// An array of this one's shape holding `items` (as many as this one
    /// holds).
    pub fn reshaped(&self, items: Vec<Value>) -> Array {
        assert_eq!(items.len(), self.items.len(), "the same shape holds as many elements");
        Array { dims: self.dims.clone(), items: items.into_boxed_slice() }
    }

    /// The dimensions, outermost first (none for the empty array).
    pub fn dims(&self) -> &[Dim] {
        &self.dims
    }

    /// How many dimensions.
    pub fn ndims(&self) -> usize {
        self.dims.len()
    }

    /// The elements, in row-major order.
    pub fn items(&self) -> &[Value] {
        &self.items
    }

    /// The elements, taken.
    pub fn into_items(self) -> Vec<Value> {
        self.items.into_vec()
    }

    /// Dimension `d` (counted from 1, as `array_length(a, d)` counts).
    pub fn dim(&self, d: i64) -> Option<Dim> {
        usize::try_from(d).ok().and_then(|d| d.checked_sub(1)).and_then(|d| self.dims.get(d)).copied()
    }

    /// `array_dims`: `[1:3][0:1]`, or `None` for the empty array.
    pub fn dims_text(&self) -> Option<String> {
        if self.dims.is_empty() {
            return None;
        }
        Some(self.dims.iter().map(|d| format!("[{}:{}]", d.lower, d.upper())).collect())
    }

    /// Whether every lower bound is 1 (so the text form needs no
    /// dimension decoration).
    pub fn default_bounds(&self) -> bool {
        self.dims.iter().all(|d| d.lower == 1)
    }

    /// The element at `subscripts` (one per dimension), if inside the
    /// bounds.
    pub fn get(&self, subscripts: &[i32]) -> Option<&Value> {
        if subscripts.len() != self.dims.len() {
            return None;
        }
        let mut at = 0usize;
        for (d, &s) in self.dims.iter().zip(subscripts) {
            if s < d.lower || s > d.upper() {
                return None;
            }
            at = at * d.len as usize + (s - d.lower) as usize;
        }
        self.items.get(at)
    }

    /// PostgreSQL's array ordering: element by element (NULL above any
    /// value), then the one with fewer elements first, then fewer
    /// dimensions, then by the dimensions' lengths and their lower bounds.
    /// Equal only when shape and elements are.
    pub fn compare(&self, other: &Array) -> Option<Ordering> {
        let o = compare_items(&self.items, &other.items)?;
        if o != Ordering::Equal {
            return Some(o);
        }
        Some(self.items.len().cmp(&other.items.len()).then(self.dims.len().cmp(&other.dims.len())).then_with(
            || {
                let lens = self.dims.iter().map(|d| d.len).cmp(other.dims.iter().map(|d| d.len));
                lens.then_with(|| self.dims.iter().map(|d| d.lower).cmp(other.dims.iter().map(|d| d.lower)))
            },
        ))
    }
}

impl Deref for Array {
    type Target = [Value];

    fn deref(&self) -> &[Value] {
        &self.items
    }
}

impl From<Vec<Value>> for Array {
    fn from(items: Vec<Value>) -> Array {
        Array::new(items)
    }
}

impl FromIterator<Value> for Array {
    fn from_iter<I: IntoIterator<Item = Value>>(iter: I) -> Array {
        Array::new(iter.into_iter().collect())
    }
}

/// Element by element over the shorter, a NULL above any value; `Equal`
/// when one is a prefix of the other (records compare the same way, and
/// then by length).
pub(crate) fn compare_items(a: &[Value], b: &[Value]) -> Option<Ordering> {
    for (x, y) in a.iter().zip(b) {
        let o = match (x, y) {
            (Value::Null, Value::Null) => Ordering::Equal,
            (Value::Null, _) => Ordering::Greater,
            (_, Value::Null) => Ordering::Less,
            _ => x.compare(y)?,
        };
        if o != Ordering::Equal {
            return Some(o);
        }
    }
    Some(Ordering::Equal)
}

#[cfg(test)]
mod tests;
