//! Assignment through jsonb subscripts (`SET j['a'][0] = v`), as
//! PostgreSQL 14+ does it: the path is created where it is missing (an
//! array where the next step reads as an integer, else an object), arrays
//! grow with JSON nulls filling any gap, and a step into a scalar is an
//! error. Reading through subscripts is `#>` ([`Jsonb::extract_path`]).

use std::sync::Arc;

use snapscale_sqlstate::SqlState;

use super::ops::strtoint;
use super::Jsonb;
use crate::SqlError;

fn scalar_in_path() -> SqlError {
    SqlError::new(SqlState::INVALID_PARAMETER_VALUE, "cannot replace existing key")
        .with_detail("The path assumes key is a composite object, but it is a scalar value.")
}

/// PostgreSQL's limit on how far one assignment may grow an array: the
/// most elements a jsonb array holds.
const MAX_ARRAY: i64 = (1 << 28) - 1;

impl Jsonb {
    /// `v[path…] := new`; `v` NULL (`None`) starts as an empty array when
    /// the first subscript is an integer, else an empty object.
    pub fn assign_path(
        v: Option<&Jsonb>,
        path: &[&str],
        new: Jsonb,
        first_is_int: bool,
    ) -> Result<Jsonb, SqlError> {
        let start = match v {
            Some(v) => v.clone(),
            None if first_is_int => Jsonb::array(Vec::new()),
            None => Jsonb::object::<Arc<str>>(Vec::new()),
        };
        if path.is_empty() {
            return Ok(new);
        }
        assign(&start, path, 0, new)
    }
}

fn assign(v: &Jsonb, path: &[&str], level: usize, new: Jsonb) -> Result<Jsonb, SqlError> {
    let last = level == path.len() - 1;
    match v {
        Jsonb::Object(pairs) => {
            let key = path[level];
            let mut out: Vec<(Arc<str>, Jsonb)> = Vec::with_capacity(pairs.len() + 1);
            let mut found = false;
            for (k, child) in pairs.iter() {
                if &**k == key {
                    found = true;
                    let value = if last { new.clone() } else { assign(child, path, level + 1, new.clone())? };
                    out.push((k.clone(), value));
                } else {
                    out.push((k.clone(), child.clone()));
                }
            }
            if !found {
                out.push((Arc::from(key), created(path, level + 1, new)?));
            }
            Ok(Jsonb::object(out))
        }
        Jsonb::Array(items) => {
            let step = path[level];
            let Some(i) = strtoint(step) else {
                return Err(SqlError::new(
                    SqlState::INVALID_TEXT_REPRESENTATION,
                    format!("path element at position {} is not an integer: \"{step}\"", level + 1),
                ));
            };
            let n = items.len() as i64;
            let mut at = i64::from(i);
            if at < 0 {
                if -at > n {
                    return Err(SqlError::new(
                        SqlState::INVALID_PARAMETER_VALUE,
                        format!("path element at position {} is out of range: {i}", level + 1),
                    ));
                }
                at += n;
            }
            if at > MAX_ARRAY {
                return Err(SqlError::new(
                    SqlState::PROGRAM_LIMIT_EXCEEDED,
                    format!("number of jsonb array elements exceeds the maximum allowed ({})", MAX_ARRAY + 1),
                ));
            }
            let mut out: Vec<Jsonb> = items.to_vec();
            if at < n {
                let slot = &mut out[at as usize];
                *slot = if last { new } else { assign(slot, path, level + 1, new)? };
            } else {
                out.resize(at as usize, Jsonb::Null);
                out.push(created(path, level + 1, new)?);
            }
            Ok(Jsonb::array(out))
        }
        _ => Err(scalar_in_path()),
    }
}

/// The value that the rest of the path, from `level`, creates around `new`.
fn created(path: &[&str], level: usize, new: Jsonb) -> Result<Jsonb, SqlError> {
    if level == path.len() {
        return Ok(new);
    }
    let inner = created(path, level + 1, new)?;
    let step = path[level];
    Ok(match strtoint(step) {
        Some(i) if i >= 0 => {
            if i64::from(i) > MAX_ARRAY {
                return Err(SqlError::new(
                    SqlState::PROGRAM_LIMIT_EXCEEDED,
                    format!("number of jsonb array elements exceeds the maximum allowed ({})", MAX_ARRAY + 1),
                ));
            }
            let mut items = vec![Jsonb::Null; i as usize];
            items.push(inner);
            Jsonb::array(items)
        }
        // A negative index into an array that does not exist yet makes a
        // one-element array, as PostgreSQL's push_path does.
        Some(_) => Jsonb::array(vec![inner]),
        None => Jsonb::object(vec![(Arc::<str>::from(step), inner)]),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn j(s: &str) -> Jsonb {
        Jsonb::parse(s).unwrap()
    }

    fn set(start: Option<&str>, path: &[&str], new: &str, first_is_int: bool) -> Result<String, SqlError> {
        let start = start.map(j);
        Jsonb::assign_path(start.as_ref(), path, j(new), first_is_int).map(|v| v.to_string())
    }

    #[test]
    fn creates_paths_and_fills_gaps_as_postgresql() {
        assert_eq!(
            set(Some("{}"), &["a", "0", "b", "0", "c"], "1", false).unwrap(),
            r#"{"a": [{"b": [{"c": 1}]}]}"#
        );
        assert_eq!(
            set(Some("{}"), &["a", "2", "b"], "1", false).unwrap(),
            r#"{"a": [null, null, {"b": 1}]}"#
        );
        assert_eq!(set(Some("[0]"), &["5"], "1", true).unwrap(), "[0, null, null, null, null, 1]");
        assert_eq!(set(Some("[0, 1, 2]"), &["-1"], "9", true).unwrap(), "[0, 1, 9]");
        assert_eq!(set(None, &["1", "x"], "2", true).unwrap(), r#"[null, {"x": 2}]"#);
        assert_eq!(set(None, &["a"], "2", false).unwrap(), r#"{"a": 2}"#);
        assert_eq!(set(Some("{}"), &["0", "a"], "1", true).unwrap(), r#"{"0": {"a": 1}}"#);
        assert_eq!(
            set(Some("[0]"), &["-8"], "1", true).unwrap_err().message,
            "path element at position 1 is out of range: -8"
        );
        assert_eq!(
            set(Some(r#"{"a": 1}"#), &["a", "b"], "1", false).unwrap_err().message,
            "cannot replace existing key"
        );
        assert_eq!(set(Some("null"), &["0"], "1", true).unwrap_err().message, "cannot replace existing key");
        assert_eq!(
            set(Some("[1]"), &["a"], "1", false).unwrap_err().message,
            "path element at position 1 is not an integer: \"a\""
        );
    }
}
