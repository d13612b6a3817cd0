//! PostgreSQL's array functions over elements: searching
//! (`array_position[s]`, `@>`, `<@`, `&&`), editing (`array_remove`,
//! `array_replace`, `trim_array`), `array_fill` and the thresholds form of
//! `width_bucket`. Elements are equal as `=` finds them; the functions that
//! search for NULL match it as IS NOT DISTINCT FROM does.

use std::cmp::Ordering;

use snapscale_sqlstate::SqlState;

use super::{Array, Dim, MAX_DIMS};
use crate::error::SqlError;
use crate::{Elem, SqlType, Value};

fn equal(a: &Value, b: &Value) -> bool {
    a.compare(b) == Some(Ordering::Equal)
}

/// NULL matches NULL (IS NOT DISTINCT FROM).
fn not_distinct(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Null, Value::Null) => true,
        (Value::Null, _) | (_, Value::Null) => false,
        _ => equal(a, b),
    }
}

fn one_dimension(a: &Array, what: &str) -> Result<(), SqlError> {
    if a.ndims() > 1 {
        return Err(SqlError::new(
            SqlState::FEATURE_NOT_SUPPORTED,
            format!("{what} in multidimensional arrays is not supported"),
        ));
    }
    Ok(())
}

/// `array_position(a, v [, start])`: the first subscript at or after
/// `start` holding `v`.
pub fn position(a: &Array, v: &Value, start: Option<i32>) -> Result<Option<i32>, SqlError> {
    one_dimension(a, "searching for elements")?;
    let Some(d) = a.dims().first() else { return Ok(None) };
    let from = start.map_or(0, |s| (i64::from(s) - i64::from(d.lower)).max(0) as usize);
    Ok(a.items()
        .iter()
        .enumerate()
        .skip(from)
        .find(|(_, x)| not_distinct(x, v))
        .map(|(i, _)| d.lower + i as i32))
}

/// `array_positions(a, v)`: every subscript holding `v`.
pub fn positions(a: &Array, v: &Value) -> Result<Array, SqlError> {
    one_dimension(a, "searching for elements")?;
    let lower = a.dims().first().map_or(1, |d| d.lower);
    let found = a
        .items()
        .iter()
        .enumerate()
        .filter(|(_, x)| not_distinct(x, v))
        .map(|(i, _)| Value::Int(i64::from(lower) + i as i64))
        .collect();
    Ok(Array::new(found))
}

/// `a @> b`: every element of `b` is in `a`; a NULL element of `b` is in
/// nothing.
pub fn contains(a: &Array, b: &Array) -> bool {
    b.items().iter().all(|y| !matches!(y, Value::Null) && a.items().iter().any(|x| equal(x, y)))
}

/// `a && b`: an element in both (NULLs never).
pub fn overlaps(a: &Array, b: &Array) -> bool {
    a.items().iter().any(|x| !matches!(x, Value::Null) && b.items().iter().any(|y| equal(x, y)))
}

/// `array_remove(a, v)`: without the elements equal to `v`.
pub fn remove(a: &Array, v: &Value) -> Result<Array, SqlError> {
    if a.ndims() > 1 {
        return Err(SqlError::new(
            SqlState::FEATURE_NOT_SUPPORTED,
            "removing elements from multidimensional arrays is not supported",
        ));
    }
    let kept: Vec<Value> = a.items().iter().filter(|x| !not_distinct(x, v)).cloned().collect();
    let lower = a.dims().first().map_or(1, |d| d.lower);
    Ok(Array::with_lower(lower, kept))
}

/// `array_replace(a, from, to)`: every element equal to `from` as `to`.
pub fn replace(a: &Array, from: &Value, to: &Value) -> Array {
    let items =
        a.items().iter().map(|x| if not_distinct(x, from) { to.clone() } else { x.clone() }).collect();
    a.reshaped(items)
}

/// `trim_array(a, n)`: without the last `n` entries of the first
/// dimension.
pub fn trim(a: &Array, n: i64) -> Result<Array, SqlError> {
    let Some(first) = a.dims().first() else {
        if n == 0 {
            return Ok(a.clone());
        }
        return Err(SqlError::new(
            SqlState::ARRAY_SUBSCRIPT_ERROR,
            "number of elements to trim must be between 0 and 0",
        ));
    };
    if n < 0 || n > i64::from(first.len) {
        return Err(SqlError::new(
            SqlState::ARRAY_SUBSCRIPT_ERROR,
            format!("number of elements to trim must be between 0 and {}", first.len),
        ));
    }
    let keep = first.len - n as i32;
    let per = a.len() / first.len as usize;
    let mut dims = a.dims().to_vec();
    dims[0].len = keep;
    Array::from_parts(dims, a.items()[..keep as usize * per].to_vec())
}

fn wrong_subscripts(detail: &str) -> SqlError {
    SqlError::new(SqlState::ARRAY_SUBSCRIPT_ERROR, "wrong number of array subscripts")
        .with_detail(detail.to_owned())
}

/// The integers of a dimension or bound array for `array_fill`.
fn fill_ints(a: &Array) -> Result<Vec<i32>, SqlError> {
    if a.ndims() > 1 {
        return Err(wrong_subscripts("Dimension array must be one dimensional."));
    }
    a.items()
        .iter()
        .map(|v| match v {
            Value::Int(i) => Ok(*i as i32),
            _ => Err(SqlError::new(SqlState::NULL_VALUE_NOT_ALLOWED, "dimension values cannot be null")),
        })
        .collect()
}

/// `array_fill(v, dims [, lower bounds])`.
pub fn fill(v: &Value, dims: Option<&Array>, lowers: Option<Option<&Array>>) -> Result<Array, SqlError> {
    let null_dims = || {
        SqlError::new(SqlState::NULL_VALUE_NOT_ALLOWED, "dimension array or low bound array cannot be null")
    };
    let lens = fill_ints(dims.ok_or_else(null_dims)?)?;
    let lowers = match lowers {
        None => vec![1; lens.len()],
        Some(None) => return Err(null_dims()),
        Some(Some(l)) => fill_ints(l)?,
    };
    if lowers.len() != lens.len() {
        return Err(wrong_subscripts("Low bound array has different size than dimensions array."));
    }
    if lens.len() > MAX_DIMS {
        return Err(super::too_many_dims(lens.len()));
    }
    let mut count = 1usize;
    for &len in &lens {
        if len < 0 {
            return Err(super::too_many_items());
        }
        count = count
            .checked_mul(len as usize)
            .filter(|&c| c <= super::MAX_ITEMS)
            .ok_or_else(super::too_many_items)?;
    }
    if lens.is_empty() {
        count = 0;
    }
    let dims = lens.iter().zip(&lowers).map(|(&len, &lower)| Dim { lower, len }).collect();
    Array::from_parts(dims, vec![v.clone(); count])
}

/// `width_bucket(v, thresholds)`: how many thresholds are at or below
/// `v` (the thresholds in ascending order).
pub fn width_bucket(v: &Value, thresholds: &Array) -> Result<i32, SqlError> {
    if thresholds.ndims() > 1 {
        return Err(SqlError::new(
            SqlState::ARRAY_SUBSCRIPT_ERROR,
            "thresholds must be one-dimensional array",
        ));
    }
    if thresholds.items().iter().any(|t| matches!(t, Value::Null)) {
        return Err(SqlError::new(
            SqlState::NULL_VALUE_NOT_ALLOWED,
            "thresholds array must not contain NULLs",
        ));
    }
    // Binary search: the first threshold above v. NaN sorts above every
    // number, as the float ordering has it.
    let items = thresholds.items();
    let (mut lo, mut hi) = (0usize, items.len());
    while lo < hi {
        let mid = (lo + hi) / 2;
        if v.compare(&items[mid]) == Some(Ordering::Less) {
            hi = mid;
        } else {
            lo = mid + 1;
        }
    }
    Ok(lo as i32)
}

/// An array as a column of element type `elem` and type modifier
/// `typmod` holds it: char(n) and varchar(n) elements to their length (an
/// error past it, char(n) padded), date/time elements to their precision.
pub fn adjust_typmod(v: Value, elem: Elem, typmod: i32) -> Result<Value, SqlError> {
    let Value::Array(a) = v else { return Ok(v) };
    let fit = |x: &Value| -> Result<Value, SqlError> {
        match (elem, x) {
            (_, Value::Null) => Ok(Value::Null),
            (Elem::Bpchar, Value::Text(t)) if typmod >= 5 => {
                let n = (typmod - 4) as u32;
                Value::parse(SqlType::Char(n), t)
            }
            (Elem::Varchar, Value::Text(t)) if typmod >= 5 => {
                let n = (typmod - 4) as u32;
                Value::parse(SqlType::Varchar(Some(n)), t)
            }
            (Elem::Bpchar | Elem::Varchar, _) => Ok(x.clone()),
            _ => crate::adjust_typmod(x.clone(), typmod),
        }
    };
    let items = a.iter().map(fit).collect::<Result<Vec<_>, _>>()?;
    Ok(Value::Array(std::sync::Arc::new(a.reshaped(items))))
}
