//! The jsonb operators and functions: `->`, `->>`, `#>`, `#>>`, `@>`,
//! `<@`, `?`, `?|`, `?&`, `||`, `-`, `#-`, jsonb_set, jsonb_insert,
//! jsonb_strip_nulls, jsonb_typeof, jsonb_array_length,
//! jsonb_object_keys, jsonb_each[_text], jsonb_array_elements[_text].
//!
//! Each follows PostgreSQL's function of the same name, including how a
//! top-level scalar behaves (PostgreSQL stores it as a one-element array,
//! so `'1'::jsonb -> 0` is `1` and `'"a"'::jsonb ? 'a'` is true) and the
//! exact error reports. Path arguments are `text[]` elements, `None` for a
//! SQL NULL element.

use std::sync::Arc;

use snapscale_sqlstate::SqlState;

use super::value::Jsonb;
use crate::SqlError;

/// One element of a `text[]` path argument; `None` is a NULL element.
pub type PathStep<'a> = Option<&'a str>;

fn invalid(msg: impl Into<String>) -> SqlError {
    SqlError::new(SqlState::INVALID_PARAMETER_VALUE, msg)
}

/// C's strtoint as PostgreSQL uses it on path elements: optional leading
/// whitespace and sign, decimal digits, nothing after, within i32.
pub(crate) fn strtoint(s: &str) -> Option<i32> {
    let t = s.trim_start_matches([' ', '\t', '\n', '\r', '\u{b}', '\u{c}']);
    let (neg, digits) = match t.as_bytes().first() {
        Some(b'-') => (true, &t[1..]),
        Some(b'+') => (false, &t[1..]),
        _ => (false, t),
    };
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let mut v: i64 = 0;
    for b in digits.bytes() {
        v = v * 10 + i64::from(b - b'0');
        if v > 1 << 32 {
            return None;
        }
    }
    i32::try_from(if neg { -v } else { v }).ok()
}

/// The elements an array operation sees: a scalar is a one-element array.
fn as_elements(v: &Jsonb) -> Option<&[Jsonb]> {
    match v {
        Jsonb::Array(a) => Some(a),
        Jsonb::Object(_) => None,
        s => Some(std::slice::from_ref(s)),
    }
}

fn scalar_eq(a: &Jsonb, b: &Jsonb) -> bool {
    match (a, b) {
        (Jsonb::Null, Jsonb::Null) => true,
        (Jsonb::Bool(x), Jsonb::Bool(y)) => x == y,
        (Jsonb::Number(x), Jsonb::Number(y)) => x == y,
        (Jsonb::String(x), Jsonb::String(y)) => x == y,
        _ => false,
    }
}

/// Deep containment of `b` in `a` (both containers, or `a` an array).
fn deep_contains(a: &Jsonb, b: &Jsonb, a_raw: bool, b_raw: bool) -> bool {
    match (a, b) {
        (Jsonb::Object(ao), Jsonb::Object(bo)) => {
            if ao.len() < bo.len() {
                return false;
            }
            bo.iter().all(|(k, bv)| match a.get(k) {
                None => false,
                Some(av) => {
                    if bv.is_scalar() {
                        av.is_scalar() && scalar_eq(av, bv)
                    } else {
                        av.is_container() && deep_contains(av, bv, false, false)
                    }
                }
            })
        }
        (Jsonb::Object(_), _) | (_, Jsonb::Object(_)) => false,
        _ => {
            // Both array-like (a top-level scalar is a raw one-element array).
            if a_raw && !b_raw {
                return false;
            }
            let (Some(ae), Some(be)) = (as_elements(a), as_elements(b)) else { return false };
            let mut a_conts: Option<Vec<&Jsonb>> = None;
            for bv in be {
                if bv.is_scalar() {
                    if !ae.iter().any(|av| av.is_scalar() && scalar_eq(av, bv)) {
                        return false;
                    }
                } else {
                    let conts =
                        a_conts.get_or_insert_with(|| ae.iter().filter(|v| v.is_container()).collect());
                    if conts.is_empty() {
                        return false;
                    }
                    if !conts.iter().any(|av| deep_contains(av, bv, false, false)) {
                        return false;
                    }
                }
            }
            true
        }
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum PathOp {
    Create,
    Delete,
    Replace,
    InsertBefore,
    InsertAfter,
}

impl PathOp {
    fn creates(self) -> bool {
        matches!(self, PathOp::Create | PathOp::InsertBefore | PathOp::InsertAfter)
    }
}

fn set_path(
    v: &Jsonb,
    path: &[PathStep<'_>],
    level: usize,
    new: Option<&Jsonb>,
    op: PathOp,
) -> Result<Jsonb, SqlError> {
    if path[level].is_none() {
        return Err(SqlError::new(
            SqlState::NULL_VALUE_NOT_ALLOWED,
            format!("path element at position {} is null", level + 1),
        ));
    }
    match v {
        Jsonb::Array(items) => set_path_array(items, path, level, new, op),
        Jsonb::Object(pairs) => set_path_object(pairs, path, level, new, op),
        s => Ok(s.clone()),
    }
}

fn set_path_object(
    pairs: &[(Arc<str>, Jsonb)],
    path: &[PathStep<'_>],
    level: usize,
    new: Option<&Jsonb>,
    op: PathOp,
) -> Result<Jsonb, SqlError> {
    let key = path[level].unwrap_or_default();
    let last = level == path.len() - 1;
    let mut out: Vec<(Arc<str>, Jsonb)> = Vec::with_capacity(pairs.len() + 1);
    let mut done = false;
    if pairs.is_empty() && op.creates() && last {
        if let Some(n) = new {
            out.push((Arc::from(key), n.clone()));
        }
    }
    for (i, (k, v)) in pairs.iter().enumerate() {
        if !done && &**k == key {
            done = true;
            if last {
                if matches!(op, PathOp::InsertBefore | PathOp::InsertAfter) {
                    return Err(invalid("cannot replace existing key")
                        .with_hint("Try using the function jsonb_set to replace key value."));
                }
                if op != PathOp::Delete {
                    if let Some(n) = new {
                        out.push((k.clone(), n.clone()));
                    }
                }
            } else {
                out.push((k.clone(), set_path(v, path, level + 1, new, op)?));
            }
        } else {
            if op.creates() && !done && last && i == pairs.len() - 1 {
                if let Some(n) = new {
                    out.push((Arc::from(key), n.clone()));
                }
            }
            out.push((k.clone(), v.clone()));
        }
    }
    Ok(Jsonb::object(out))
}

fn set_path_array(
    items: &[Jsonb],
    path: &[PathStep<'_>],
    level: usize,
    new: Option<&Jsonb>,
    op: PathOp,
) -> Result<Jsonb, SqlError> {
    let c = path[level].unwrap_or_default();
    let Some(idx) = strtoint(c) else {
        return Err(SqlError::new(
            SqlState::INVALID_TEXT_REPRESENTATION,
            format!("path element at position {} is not an integer: \"{}\"", level + 1, c),
        ));
    };
    let n = items.len() as i64;
    let mut idx = i64::from(idx);
    let mut prepend = false;
    if idx < 0 {
        if -idx > n {
            prepend = true;
            idx = i64::MIN;
        } else {
            idx += n;
        }
    }
    if idx > n {
        idx = n;
    }
    let last = level == path.len() - 1;
    let mut out = Vec::with_capacity(items.len() + 1);
    let mut done = false;
    if (prepend || n == 0) && last && op.creates() {
        if let Some(nv) = new {
            out.push(nv.clone());
        }
        done = true;
    }
    for (i, item) in items.iter().enumerate() {
        if i as i64 == idx {
            done = true;
            if last {
                if matches!(op, PathOp::InsertBefore | PathOp::Create) {
                    out.extend(new.cloned());
                }
                if matches!(op, PathOp::InsertBefore | PathOp::InsertAfter) {
                    out.push(item.clone());
                }
                if matches!(op, PathOp::InsertAfter | PathOp::Replace) {
                    out.extend(new.cloned());
                }
            } else {
                out.push(set_path(item, path, level + 1, new, op)?);
            }
        } else {
            out.push(item.clone());
        }
    }
    if op.creates() && !done && last {
        out.extend(new.cloned());
    }
    Ok(Jsonb::array(out))
}

impl Jsonb {
    /// `->` with a text key: the field's value, if this is an object.
    pub fn field(&self, key: &str) -> Option<Jsonb> {
        self.get(key).cloned()
    }

    /// `->>` with a text key.
    pub fn field_text(&self, key: &str) -> Option<String> {
        self.get(key).and_then(Jsonb::as_text)
    }

    /// `->` with an integer: the element (negative counts from the end);
    /// a top-level scalar acts as a one-element array.
    pub fn element(&self, index: i32) -> Option<Jsonb> {
        let items = as_elements(self)?;
        let n = items.len() as i64;
        let mut i = i64::from(index);
        if i < 0 {
            if -i > n {
                return None;
            }
            i += n;
        }
        items.get(usize::try_from(i).ok()?).cloned()
    }

    /// `->>` with an integer.
    pub fn element_text(&self, index: i32) -> Option<String> {
        self.element(index).and_then(|v| v.as_text())
    }

    /// The text `->>` gives for a value: strings unquoted, numbers and
    /// booleans as written, containers as jsonb_out, JSON null as SQL NULL.
    pub fn as_text(&self) -> Option<String> {
        match self {
            Jsonb::Null => None,
            Jsonb::String(s) => Some(s.to_string()),
            other => Some(other.to_text()),
        }
    }

    /// `#>` (jsonb_extract_path): `None` is SQL NULL. A NULL path element
    /// gives NULL; an empty path gives the whole value.
    pub fn extract_path(&self, path: &[PathStep<'_>]) -> Option<Jsonb> {
        if path.iter().any(Option::is_none) {
            return None;
        }
        let mut cur = self;
        if path.is_empty() {
            return Some(cur.clone());
        }
        if cur.is_scalar() {
            return None;
        }
        for step in path {
            let step = step.unwrap_or_default();
            cur = match cur {
                Jsonb::Object(_) => cur.get(step)?,
                Jsonb::Array(items) => {
                    let i = i64::from(strtoint(step)?);
                    let n = items.len() as i64;
                    let i = if i < 0 {
                        if i == i64::from(i32::MIN) || -i > n {
                            return None;
                        }
                        i + n
                    } else {
                        i
                    };
                    items.get(usize::try_from(i).ok()?)?
                }
                _ => return None,
            };
        }
        Some(cur.clone())
    }

    /// `#>>` (jsonb_extract_path_text).
    pub fn extract_path_text(&self, path: &[PathStep<'_>]) -> Option<String> {
        if path.is_empty() && !path.iter().any(Option::is_none) && self.is_container() {
            return Some(self.to_text());
        }
        self.extract_path(path).and_then(|v| v.as_text())
    }

    /// `@>`: whether this value contains `other`.
    pub fn contains(&self, other: &Jsonb) -> bool {
        if matches!(self, Jsonb::Object(_)) != matches!(other, Jsonb::Object(_)) {
            return false;
        }
        deep_contains(self, other, self.is_scalar(), other.is_scalar())
    }

    /// `<@`: whether this value is contained in `other`.
    pub fn contained_in(&self, other: &Jsonb) -> bool {
        other.contains(self)
    }

    /// `?`: a top-level key, or a top-level string element, equal to `key`.
    pub fn exists(&self, key: &str) -> bool {
        match self {
            Jsonb::Object(_) => self.get(key).is_some(),
            other => as_elements(other)
                .is_some_and(|items| items.iter().any(|v| matches!(v, Jsonb::String(s) if &**s == key))),
        }
    }

    /// `?|`: any of the (non-NULL) keys exists.
    pub fn exists_any(&self, keys: &[PathStep<'_>]) -> bool {
        keys.iter().flatten().any(|k| self.exists(k))
    }

    /// `?&`: all of the (non-NULL) keys exist.
    pub fn exists_all(&self, keys: &[PathStep<'_>]) -> bool {
        keys.iter().flatten().all(|k| self.exists(k))
    }

    /// `||`: objects merge (right side wins); otherwise both sides become
    /// arrays (a scalar or object is one element) and are concatenated.
    pub fn concat(&self, other: &Jsonb) -> Jsonb {
        if let (Jsonb::Object(a), Jsonb::Object(b)) = (self, other) {
            let mut pairs: Vec<(Arc<str>, Jsonb)> = a.iter().chain(b.iter()).cloned().collect();
            super::value::normalize_pairs(&mut pairs);
            return Jsonb::Object(Arc::new(pairs));
        }
        let mut out = Vec::new();
        for side in [self, other] {
            match side {
                Jsonb::Array(items) => out.extend(items.iter().cloned()),
                v => out.push(v.clone()),
            }
        }
        Jsonb::array(out)
    }

    /// `-` with a text key: removes the key from an object, or matching
    /// string elements from an array.
    pub fn delete_key(&self, key: &str) -> Result<Jsonb, SqlError> {
        self.delete_keys(&[Some(key)])
    }

    /// `-` with `text[]`: removes each (non-NULL) key.
    pub fn delete_keys(&self, keys: &[PathStep<'_>]) -> Result<Jsonb, SqlError> {
        let hit = |k: &str| keys.iter().flatten().any(|x| *x == k);
        match self {
            Jsonb::Object(pairs) => {
                Ok(Jsonb::Object(Arc::new(pairs.iter().filter(|(k, _)| !hit(k)).cloned().collect())))
            }
            Jsonb::Array(items) => Ok(Jsonb::array(
                items.iter().filter(|v| !matches!(v, Jsonb::String(s) if hit(s))).cloned().collect(),
            )),
            _ => Err(invalid("cannot delete from scalar")),
        }
    }

    /// `-` with an integer: removes an array element (negative counts from
    /// the end; out of range changes nothing).
    pub fn delete_index(&self, index: i32) -> Result<Jsonb, SqlError> {
        match self {
            Jsonb::Object(_) => Err(invalid("cannot delete from object using integer index")),
            Jsonb::Array(items) => {
                let n = items.len() as i64;
                let mut i = i64::from(index);
                if i < 0 {
                    if -i > n {
                        return Ok(self.clone());
                    }
                    i += n;
                }
                if i >= n {
                    return Ok(self.clone());
                }
                let mut v: Vec<Jsonb> = items.as_ref().clone();
                v.remove(i as usize);
                Ok(Jsonb::array(v))
            }
            _ => Err(invalid("cannot delete from scalar")),
        }
    }

    /// `#-`: removes the value at `path`.
    pub fn delete_path(&self, path: &[PathStep<'_>]) -> Result<Jsonb, SqlError> {
        if self.is_scalar() {
            return Err(invalid("cannot delete path in scalar"));
        }
        if container_len(self) == 0 || path.is_empty() {
            return Ok(self.clone());
        }
        set_path(self, path, 0, None, PathOp::Delete)
    }

    /// jsonb_set(target, path, new_value, create_if_missing).
    pub fn set_path(
        &self,
        path: &[PathStep<'_>],
        new: &Jsonb,
        create_missing: bool,
    ) -> Result<Jsonb, SqlError> {
        if self.is_scalar() {
            return Err(invalid("cannot set path in scalar"));
        }
        if (container_len(self) == 0 && !create_missing) || path.is_empty() {
            return Ok(self.clone());
        }
        set_path(self, path, 0, Some(new), if create_missing { PathOp::Create } else { PathOp::Replace })
    }

    /// jsonb_insert(target, path, new_value, insert_after).
    pub fn insert_path(&self, path: &[PathStep<'_>], new: &Jsonb, after: bool) -> Result<Jsonb, SqlError> {
        if self.is_scalar() {
            return Err(invalid("cannot set path in scalar"));
        }
        if path.is_empty() {
            return Ok(self.clone());
        }
        set_path(self, path, 0, Some(new), if after { PathOp::InsertAfter } else { PathOp::InsertBefore })
    }

    /// jsonb_strip_nulls: drops object fields whose value is null, at every
    /// level (array elements stay).
    pub fn strip_nulls(&self) -> Jsonb {
        match self {
            Jsonb::Object(pairs) => Jsonb::Object(Arc::new(
                pairs
                    .iter()
                    .filter(|(_, v)| !matches!(v, Jsonb::Null))
                    .map(|(k, v)| (k.clone(), v.strip_nulls()))
                    .collect(),
            )),
            Jsonb::Array(items) => Jsonb::array(items.iter().map(Jsonb::strip_nulls).collect()),
            s => s.clone(),
        }
    }

    /// jsonb_typeof.
    pub fn type_name(&self) -> &'static str {
        match self {
            Jsonb::Null => "null",
            Jsonb::Bool(_) => "boolean",
            Jsonb::Number(_) => "number",
            Jsonb::String(_) => "string",
            Jsonb::Array(_) => "array",
            Jsonb::Object(_) => "object",
        }
    }

    /// jsonb_array_length.
    pub fn array_length(&self) -> Result<i32, SqlError> {
        match self {
            Jsonb::Array(a) => Ok(a.len() as i32),
            Jsonb::Object(_) => Err(invalid("cannot get array length of a non-array")),
            _ => Err(invalid("cannot get array length of a scalar")),
        }
    }

    /// jsonb_object_keys: the keys in stored order.
    pub fn object_keys(&self) -> Result<Vec<String>, SqlError> {
        match self {
            Jsonb::Object(o) => Ok(o.iter().map(|(k, _)| k.to_string()).collect()),
            Jsonb::Array(_) => Err(invalid("cannot call jsonb_object_keys on an array")),
            _ => Err(invalid("cannot call jsonb_object_keys on a scalar")),
        }
    }

    /// jsonb_each: (key, value) rows.
    pub fn each(&self) -> Result<Vec<(String, Jsonb)>, SqlError> {
        match self {
            Jsonb::Object(o) => Ok(o.iter().map(|(k, v)| (k.to_string(), v.clone())).collect()),
            _ => Err(invalid("cannot call jsonb_each on a non-object")),
        }
    }

    /// jsonb_each_text: values as `->>` gives them.
    pub fn each_text(&self) -> Result<Vec<(String, Option<String>)>, SqlError> {
        match self {
            Jsonb::Object(o) => Ok(o.iter().map(|(k, v)| (k.to_string(), v.as_text())).collect()),
            _ => Err(invalid("cannot call jsonb_each_text on a non-object")),
        }
    }

    /// jsonb_array_elements.
    pub fn array_elements(&self) -> Result<Vec<Jsonb>, SqlError> {
        match self {
            Jsonb::Array(a) => Ok(a.as_ref().clone()),
            Jsonb::Object(_) => Err(invalid("cannot extract elements from an object")),
            _ => Err(invalid("cannot extract elements from a scalar")),
        }
    }

    /// jsonb_array_elements_text.
    pub fn array_elements_text(&self) -> Result<Vec<Option<String>>, SqlError> {
        Ok(self.array_elements()?.iter().map(Jsonb::as_text).collect())
    }
}

fn container_len(v: &Jsonb) -> usize {
    match v {
        Jsonb::Array(a) => a.len(),
        Jsonb::Object(o) => o.len(),
        _ => 1,
    }
}
