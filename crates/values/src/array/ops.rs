//! What SQL does with arrays as wholes: subscripts and slices, read and
//! assigned; concatenation; construction from sub-arrays. Errors are
//! PostgreSQL's (2202E for shapes that do not fit, 54000 for sizes past its
//! limits, 22004 for a NULL subscript in an assignment).

use snapscale_sqlstate::SqlState;

use super::{too_many_dims, too_many_items, Array, Dim, MAX_DIMS, MAX_ITEMS};
use crate::error::SqlError;
use crate::Value;

/// A slice's bounds in one dimension; `None` where the bound was left out
/// (`a[:3]`, `a[2:]`).
pub type Bounds = (Option<i32>, Option<i32>);

fn subscript_error(message: &str) -> SqlError {
    SqlError::new(SqlState::ARRAY_SUBSCRIPT_ERROR, message.to_owned())
}

/// The flat offset of `subs` (one per dimension, inside the bounds).
fn offset(dims: &[Dim], subs: &[i32]) -> usize {
    dims.iter().zip(subs).fold(0usize, |at, (d, &s)| at * d.len as usize + (s - d.lower) as usize)
}

/// Every index tuple of a box, in row-major order.
fn each_index(lower: &[i32], upper: &[i32], mut f: impl FnMut(&[i32])) {
    if lower.iter().zip(upper).any(|(l, u)| l > u) {
        return;
    }
    let mut at = lower.to_vec();
    loop {
        f(&at);
        let mut d = at.len();
        loop {
            if d == 0 {
                return;
            }
            d -= 1;
            if at[d] < upper[d] {
                at[d] += 1;
                break;
            }
            at[d] = lower[d];
        }
    }
}

/// `a[i][j]…`: the element, or NULL when the count of subscripts is not
/// the array's or one falls outside its bounds.
pub fn element(a: &Array, subs: &[i32]) -> Value {
    a.get(subs).cloned().unwrap_or(Value::Null)
}

/// `a[l:u]…`: the slice, its lower bounds 1. Bounds clip to the array's,
/// and a slice with nothing in it is the empty array, as is any slice of
/// more dimensions than the array has.
pub fn slice(a: &Array, bounds: &[Bounds]) -> Array {
    let dims = a.dims();
    if dims.len() < bounds.len() || dims.is_empty() {
        return Array::empty();
    }
    let mut lower = Vec::with_capacity(dims.len());
    let mut upper = Vec::with_capacity(dims.len());
    for (i, d) in dims.iter().enumerate() {
        let (l, u) = bounds.get(i).copied().unwrap_or((None, None));
        let l = l.map_or(d.lower, |l| l.max(d.lower));
        let u = u.map_or(d.upper(), |u| u.min(d.upper()));
        if l > u {
            return Array::empty();
        }
        lower.push(l);
        upper.push(u);
    }
    let mut items = Vec::new();
    each_index(&lower, &upper, |at| items.push(a.items()[offset(dims, at)].clone()));
    let new_dims = lower.iter().zip(&upper).map(|(&l, &u)| Dim { lower: 1, len: u - l + 1 }).collect();
    Array::from_parts(new_dims, items).expect("a slice is no larger than its array")
}

/// `a[i]… := v`. A NULL or empty array takes the subscripts as its
/// bounds; a one-dimensional array grows, NULLs filling any gap; an array
/// of more dimensions takes only subscripts inside its bounds.
pub fn assign_element(base: Option<&Array>, subs: &[i32], v: Value) -> Result<Array, SqlError> {
    if subs.len() > MAX_DIMS {
        return Err(too_many_dims(subs.len()));
    }
    let empty = Array::empty();
    let a = base.unwrap_or(&empty);
    if a.ndims() == 0 {
        let dims = subs.iter().map(|&lower| Dim { lower, len: 1 }).collect();
        return Array::from_parts(dims, vec![v]);
    }
    if a.ndims() != subs.len() {
        return Err(subscript_error("wrong number of array subscripts"));
    }
    if let Some(slot) = a.get(subs) {
        let at = offset(a.dims(), subs);
        let _ = slot;
        let mut items = a.items().to_vec();
        items[at] = v;
        return Ok(a.reshaped(items));
    }
    if a.ndims() > 1 {
        return Err(subscript_error("array subscript out of range"));
    }
    let d = a.dims()[0];
    let s = i64::from(subs[0]);
    let lower = i64::from(d.lower).min(s);
    let upper = i64::from(d.upper()).max(s);
    let len = upper - lower + 1;
    if len > MAX_ITEMS as i64 || upper >= i64::from(i32::MAX) {
        return Err(too_many_items());
    }
    let mut items = vec![Value::Null; len as usize];
    let from = (i64::from(d.lower) - lower) as usize;
    items[from..from + a.len()].clone_from_slice(a.items());
    items[(s - lower) as usize] = v;
    Array::from_parts(vec![Dim { lower: lower as i32, len: len as i32 }], items)
}

/// `a[l:u]… := source`: the slice takes `source`'s elements in order
/// (`source` may hold more). A NULL or empty array takes the slice's
/// bounds, which must then be given; a one-dimensional array grows at
/// either end, NULLs filling any gap.
pub fn assign_slice(base: Option<&Array>, bounds: &[Bounds], source: &Array) -> Result<Array, SqlError> {
    if bounds.len() > MAX_DIMS {
        return Err(too_many_dims(bounds.len()));
    }
    let empty = Array::empty();
    let a = base.unwrap_or(&empty);
    if a.ndims() == 0 {
        let mut dims = Vec::with_capacity(bounds.len());
        for &(l, u) in bounds {
            let (Some(l), Some(u)) = (l, u) else {
                return Err(subscript_error("array slice subscript must provide both boundaries").with_detail(
                    "When assigning to a slice of an empty array value, slice boundaries must be fully specified.",
                ));
            };
            dims.push(slice_dim(l, u)?);
        }
        let count =
            dims.iter().try_fold(1usize, |n, d| n.checked_mul(d.len as usize)).ok_or_else(too_many_items)?;
        if count > MAX_ITEMS {
            return Err(too_many_items());
        }
        if source.len() < count {
            return Err(subscript_error("source array too small"));
        }
        return Array::from_parts(dims, source.items()[..count].to_vec());
    }
    if a.ndims() < bounds.len() {
        return Err(subscript_error("wrong number of array subscripts"));
    }
    let dims = a.dims();
    let mut lower = Vec::with_capacity(dims.len());
    let mut upper = Vec::with_capacity(dims.len());
    for (i, d) in dims.iter().enumerate() {
        let (l, u) = bounds.get(i).copied().unwrap_or((None, None));
        let l = l.unwrap_or(d.lower);
        let u = u.unwrap_or(d.upper());
        if l > u {
            return Err(subscript_error("upper bound cannot be less than lower bound"));
        }
        lower.push(l);
        upper.push(u);
    }
    let mut new_dims = dims.to_vec();
    if dims.len() == 1 {
        let d = dims[0];
        let lo = i64::from(lower[0].min(d.lower));
        let hi = i64::from(upper[0].max(d.upper()));
        // Past the end by more than one leaves a gap of NULLs, as does
        // before the start.
        let len = hi - lo + 1;
        if len > MAX_ITEMS as i64 || hi >= i64::from(i32::MAX) {
            return Err(too_many_items());
        }
        new_dims[0] = Dim { lower: lo as i32, len: len as i32 };
    } else if lower.iter().zip(&upper).zip(dims).any(|((&l, &u), d)| l < d.lower || u > d.upper()) {
        return Err(subscript_error("array subscript out of range"));
    }
    let count = lower
        .iter()
        .zip(&upper)
        .try_fold(1usize, |n, (&l, &u)| n.checked_mul((i64::from(u) - i64::from(l) + 1) as usize))
        .filter(|&n| n <= MAX_ITEMS)
        .ok_or_else(too_many_items)?;
    if source.len() < count {
        return Err(subscript_error("source array too small"));
    }
    let mut items = if new_dims[..] == dims[..] {
        a.items().to_vec()
    } else {
        let d = dims[0];
        let mut grown = vec![Value::Null; new_dims[0].len as usize];
        let from = (d.lower - new_dims[0].lower) as usize;
        grown[from..from + a.len()].clone_from_slice(a.items());
        grown
    };
    let mut next = source.items().iter();
    each_index(&lower, &upper, |at| {
        items[offset(&new_dims, at)] = next.next().expect("counted").clone();
    });
    Array::from_parts(new_dims, items)
}

/// A slice's dimension from its bounds, with PostgreSQL's errors.
fn slice_dim(l: i32, u: i32) -> Result<Dim, SqlError> {
    if l > u {
        return Err(subscript_error("upper bound cannot be less than lower bound"));
    }
    let len = i64::from(u) - i64::from(l) + 1;
    if len > MAX_ITEMS as i64 || i64::from(l) + len > i64::from(i32::MAX) {
        return Err(too_many_items());
    }
    Ok(Dim { lower: l, len: len as i32 })
}

/// `ARRAY[sub, sub, …]` of arrays: one more dimension, every sub-array of
/// the same shape (NULLs left out); all empty makes the empty array.
pub fn construct(parts: &[Value]) -> Result<Array, SqlError> {
    let mismatch =
        || subscript_error("multidimensional arrays must have array expressions with matching dimensions");
    let mut shape: Option<&[Dim]> = None;
    let mut items = Vec::new();
    let mut count = 0i32;
    let mut saw_empty = false;
    for p in parts {
        let Value::Array(sub) = p else { continue };
        if sub.ndims() == 0 {
            saw_empty = true;
            if shape.is_some() {
                return Err(mismatch());
            }
            continue;
        }
        match shape {
            None if saw_empty => return Err(mismatch()),
            None => shape = Some(sub.dims()),
            Some(s)
                if s.iter().map(|d| d.len).ne(sub.dims().iter().map(|d| d.len))
                    || s.iter().map(|d| d.lower).ne(sub.dims().iter().map(|d| d.lower)) =>
            {
                return Err(mismatch())
            }
            Some(_) => {}
        }
        items.extend_from_slice(sub.items());
        count += 1;
    }
    let Some(inner) = shape else { return Ok(Array::empty()) };
    if inner.len() + 1 > MAX_DIMS {
        return Err(too_many_dims(inner.len() + 1));
    }
    if items.len() > MAX_ITEMS {
        return Err(too_many_items());
    }
    let mut dims = vec![Dim { lower: 1, len: count }];
    dims.extend_from_slice(inner);
    Array::from_parts(dims, items)
}

/// `array_agg` of arrays: whether `next` may follow `first` (the first
/// input, if any): no NULL, no empty array, one shape throughout.
pub fn check_stackable(first: Option<&Value>, next: &Value) -> Result<(), SqlError> {
    let Value::Array(a) = next else {
        return Err(SqlError::new(SqlState::NULL_VALUE_NOT_ALLOWED, "cannot accumulate null arrays"));
    };
    if a.ndims() == 0 {
        return Err(subscript_error("cannot accumulate empty arrays"));
    }
    if a.ndims() + 1 > MAX_DIMS {
        return Err(too_many_dims(a.ndims() + 1));
    }
    if let Some(Value::Array(f)) = first {
        if f.dims() != a.dims() {
            return Err(subscript_error("cannot accumulate arrays of different dimensionality"));
        }
    }
    Ok(())
}

fn incompatible(detail: String) -> SqlError {
    subscript_error("cannot concatenate incompatible arrays").with_detail(detail)
}

/// `a || b` of two arrays (array_cat): of equal dimensions, along the
/// first (the lower bound is `a`'s); differing by one, the smaller is one
/// more element of the larger's first dimension.
pub fn cat(a: &Array, b: &Array) -> Result<Array, SqlError> {
    if a.ndims() == 0 {
        return Ok(b.clone());
    }
    if b.ndims() == 0 {
        return Ok(a.clone());
    }
    let (da, db) = (a.dims(), b.dims());
    let mut items = Vec::with_capacity(a.len() + b.len());
    items.extend_from_slice(a.items());
    items.extend_from_slice(b.items());
    if items.len() > MAX_ITEMS {
        return Err(too_many_items());
    }
    let grow = |first: Dim, by: i32| -> Result<Dim, SqlError> {
        let len = first.len.checked_add(by).ok_or_else(too_many_items)?;
        Ok(Dim { lower: first.lower, len })
    };
    let dims = if da.len() == db.len() {
        if da[1..] != db[1..] {
            return Err(incompatible(
                "Arrays with differing element dimensions are not compatible for concatenation.".into(),
            ));
        }
        let mut dims = da.to_vec();
        dims[0] = grow(da[0], db[0].len)?;
        dims
    } else if da.len() == db.len() + 1 {
        if da[1..] != db[..] {
            return Err(incompatible(
                "Arrays with differing dimensions are not compatible for concatenation.".into(),
            ));
        }
        let mut dims = da.to_vec();
        dims[0] = grow(da[0], 1)?;
        dims
    } else if db.len() == da.len() + 1 {
        if db[1..] != da[..] {
            return Err(incompatible(
                "Arrays with differing dimensions are not compatible for concatenation.".into(),
            ));
        }
        let mut dims = db.to_vec();
        dims[0] = Dim { lower: db[0].lower, len: db[0].len.checked_add(1).ok_or_else(too_many_items)? };
        dims
    } else {
        return Err(incompatible(format!(
            "Arrays of {} and {} dimensions are not compatible for concatenation.",
            da.len(),
            db.len()
        )));
    };
    Array::from_parts(dims, items)
}

/// `array_append(a, v)` / `a || v`: one more element at the end of a
/// one-dimensional array.
pub fn append(a: &Array, v: Value) -> Result<Array, SqlError> {
    match a.ndims() {
        0 => Ok(Array::new(vec![v])),
        1 => {
            let d = a.dims()[0];
            if d.lower.checked_add(d.len).is_none() {
                return Err(SqlError::new(SqlState::NUMERIC_VALUE_OUT_OF_RANGE, "integer out of range"));
            }
            let mut items = a.items().to_vec();
            items.push(v);
            Array::from_parts(vec![Dim { lower: d.lower, len: d.len + 1 }], items)
        }
        _ => Err(SqlError::new(SqlState::DATA_EXCEPTION, "argument must be empty or one-dimensional array")),
    }
}

/// `array_prepend(v, a)` / `v || a`: one more element at the start.
pub fn prepend(v: Value, a: &Array) -> Result<Array, SqlError> {
    match a.ndims() {
        0 => Ok(Array::new(vec![v])),
        1 => {
            let d = a.dims()[0];
            if d.lower.checked_sub(1).is_none() {
                return Err(SqlError::new(SqlState::NUMERIC_VALUE_OUT_OF_RANGE, "integer out of range"));
            }
            let mut items = Vec::with_capacity(a.len() + 1);
            items.push(v);
            items.extend_from_slice(a.items());
            // The lower bound stays the array's, as PostgreSQL keeps it.
            Array::from_parts(vec![Dim { lower: d.lower, len: d.len + 1 }], items)
        }
        _ => Err(SqlError::new(SqlState::DATA_EXCEPTION, "argument must be empty or one-dimensional array")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{format_array, parse_array, SqlType, Zone};

    fn a(text: &str) -> Array {
        match parse_array(SqlType::Int4, text, Zone::UTC).unwrap() {
            Value::Array(a) => (*a).clone(),
            _ => unreachable!(),
        }
    }

    fn show(a: &Array) -> String {
        format_array(a, Zone::UTC)
    }

    #[test]
    fn slices_clip_and_count_from_one() {
        let m = a("{{1,2,3},{4,5,6},{7,8,9}}");
        assert_eq!(show(&slice(&m, &[(Some(1), Some(2)), (Some(1), Some(2))])), "{{1,2},{4,5}}");
        assert_eq!(show(&slice(&m, &[(Some(2), None)])), "{{4,5,6},{7,8,9}}");
        assert_eq!(show(&slice(&m, &[(Some(5), Some(6))])), "{}");
        let z = a("[0:2][0:2]={{1,2,3},{4,5,6},{7,8,9}}");
        assert_eq!(show(&slice(&z, &[(Some(1), Some(2)), (Some(1), Some(2))])), "{{5,6},{8,9}}");
        assert_eq!(element(&z, &[0, 2]), Value::Int(3));
        assert_eq!(element(&z, &[0]), Value::Null);
    }

    #[test]
    fn assignment_grows_one_dimension_with_nulls() {
        let v = a("{1,2,NULL,4}");
        assert_eq!(
            show(&assign_element(Some(&v), &[8], Value::Int(8)).unwrap()),
            "{1,2,NULL,4,NULL,NULL,NULL,8}"
        );
        assert_eq!(show(&assign_element(Some(&v), &[0], Value::Int(0)).unwrap()), "[0:4]={0,1,2,NULL,4}");
        assert_eq!(show(&assign_element(None, &[3, 4], Value::Int(1)).unwrap()), "[3:3][4:4]={{1}}");
        let s = assign_slice(Some(&v), &[(Some(-1), Some(0))], &a("{7,8,9}")).unwrap();
        assert_eq!(show(&s), "[-1:4]={7,8,1,2,NULL,4}");
        let m = a("{{1,2,3},{4,5,6}}");
        assert_eq!(
            show(&assign_slice(Some(&m), &[(Some(2), None), (Some(2), None)], &a("{8,9}")).unwrap()),
            "{{1,2,3},{4,8,9}}"
        );
        assert_eq!(
            assign_element(Some(&m), &[3, 1], Value::Null).unwrap_err().code,
            SqlState::ARRAY_SUBSCRIPT_ERROR
        );
        assert_eq!(
            assign_slice(None, &[(None, Some(2))], &a("{1,2}")).unwrap_err().message,
            "array slice subscript must provide both boundaries"
        );
        assert_eq!(
            assign_slice(Some(&v), &[(None, None)], &a("{1}")).unwrap_err().message,
            "source array too small"
        );
        let edge = a("[-2147483648:-2147483647]={1,2}");
        assert_eq!(
            assign_element(Some(&edge), &[i32::MAX], Value::Int(1)).unwrap_err().code,
            SqlState::PROGRAM_LIMIT_EXCEEDED
        );
    }

    #[test]
    fn construction_and_concatenation() {
        let parts = [Value::Array(a("{1,2}").into()), Value::Array(a("{3,4}").into())];
        assert_eq!(show(&construct(&parts).unwrap()), "{{1,2},{3,4}}");
        let bad = [Value::Array(a("{1,2}").into()), Value::Array(a("{3}").into())];
        assert_eq!(construct(&bad).unwrap_err().code, SqlState::ARRAY_SUBSCRIPT_ERROR);
        assert_eq!(show(&cat(&a("{1,2}"), &a("{{3,4},{5,6}}")).unwrap()), "{{1,2},{3,4},{5,6}}");
        assert_eq!(show(&cat(&a("{{3,4},{5,6}}"), &a("{1,2}")).unwrap()), "{{3,4},{5,6},{1,2}}");
        assert_eq!(show(&cat(&a("[0:1]={1,2}"), &a("{3}")).unwrap()), "[0:2]={1,2,3}");
        assert_eq!(cat(&a("{1,2}"), &a("{{{3}}}")).unwrap_err().code, SqlState::ARRAY_SUBSCRIPT_ERROR);
        assert_eq!(show(&prepend(Value::Int(0), &a("{1}")).unwrap()), "{0,1}");
    }
}
