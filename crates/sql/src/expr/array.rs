//! Arrays (`ARRAY[…]`, subscripts, `op ANY/ALL (array)`, the array
//! functions) and POSIX regular expressions.

use std::cell::RefCell;
use std::collections::HashMap;

use snapscale_values::array::{funcs, ops};
use snapscale_values::Array;

use super::*;

/// An array argument, or `None` for NULL.
fn array_arg(v: &Value) -> Result<Option<&Array>, SqlError> {
    match v {
        Value::Null => Ok(None),
        Value::Array(a) => Ok(Some(a)),
        other => Err(SqlError::new(
            SqlState::DATATYPE_MISMATCH,
            format!("argument must be an array, not {}", describe(other)),
        )),
    }
}

fn array(a: Array) -> Value {
    Value::Array(Arc::new(a))
}

/// An int argument, or `None` for NULL.
fn int_arg(v: &Value) -> Option<i32> {
    match v {
        Value::Int(i) => Some(*i as i32),
        _ => None,
    }
}

/// The subscripts of an element reference (`None` if one is NULL).
fn indexes(shape: Subscripts, args: &[Value]) -> Option<Vec<i32>> {
    args[..usize::from(shape.count)].iter().map(int_arg).collect()
}

/// The bounds of a slice reference, and how many arguments they took;
/// `Err` if a given bound is NULL.
fn bounds(shape: Subscripts, args: &[Value]) -> (Result<Vec<ops::Bounds>, ()>, usize) {
    let mut at = 0;
    let mut out = Vec::with_capacity(usize::from(shape.count));
    let mut null = false;
    let mut next = |at: &mut usize| {
        let v = int_arg(&args[*at]);
        null |= v.is_none();
        *at += 1;
        v
    };
    for k in 0..shape.count {
        let bit = 1u8 << k;
        if shape.slices & bit == 0 {
            out.push((Some(1), next(&mut at)));
            continue;
        }
        let lower = if shape.lowers & bit != 0 { next(&mut at) } else { None };
        let upper = if shape.uppers & bit != 0 { next(&mut at) } else { None };
        out.push((lower, upper));
    }
    (if null { Err(()) } else { Ok(out) }, at)
}

fn null_subscript() -> SqlError {
    SqlError::new(SqlState::NULL_VALUE_NOT_ALLOWED, "array subscript in assignment must not be null")
}

pub(super) fn array_func(f: Func, args: &[Value], zone: snapscale_values::Style) -> Result<Value, SqlError> {
    Ok(match f {
        Func::ArrayCons => Value::array(args.to_vec()),
        Func::ArrayConsNested => array(ops::construct(args)?),
        Func::ArrayCat => match (array_arg(&args[0])?, array_arg(&args[1])?) {
            (None, None) => Value::Null,
            (Some(a), None) | (None, Some(a)) => array(a.clone()),
            (Some(a), Some(b)) => array(ops::cat(a, b)?),
        },
        Func::ArrayAppend => match array_arg(&args[0])? {
            None => Value::array(vec![args[1].clone()]),
            Some(a) => array(ops::append(a, args[1].clone())?),
        },
        Func::ArrayPrepend => match array_arg(&args[1])? {
            None => Value::array(vec![args[0].clone()]),
            Some(a) => array(ops::prepend(args[0].clone(), a)?),
        },
        Func::Subscript(shape) => {
            let Some(a) = array_arg(&args[0])? else { return Ok(Value::Null) };
            let subs = &args[1..];
            if shape.is_slice() {
                match bounds(shape, subs).0 {
                    Ok(b) => array(ops::slice(a, &b)),
                    Err(()) => Value::Null,
                }
            } else {
                match indexes(shape, subs) {
                    Some(i) => ops::element(a, &i),
                    None => Value::Null,
                }
            }
        }
        Func::SubscriptAssign(shape) => {
            let base = array_arg(&args[0])?;
            let subs = &args[1..args.len() - 1];
            let value = args[args.len() - 1].clone();
            if shape.is_slice() {
                let b = bounds(shape, subs).0.map_err(|()| null_subscript())?;
                match array_arg(&value)? {
                    // Assigning NULL to a slice leaves the array as it was.
                    None => base.map_or(Value::Null, |a| array(a.clone())),
                    Some(source) => array(ops::assign_slice(base, &b, source)?),
                }
            } else {
                let i = indexes(shape, subs).ok_or_else(null_subscript)?;
                array(ops::assign_element(base, &i, value)?)
            }
        }
        Func::JsonbSubscript => {
            let Value::Jsonb(j) = &args[0] else { return Ok(Value::Null) };
            let mut path = Vec::with_capacity(args.len() - 1);
            for a in &args[1..] {
                let Value::Text(t) = a else { return Ok(Value::Null) };
                path.push(Some(t.as_str()));
            }
            j.extract_path(&path).map_or(Value::Null, Value::Jsonb)
        }
        Func::JsonbSubscriptAssign { first_is_int } => {
            let base = match &args[0] {
                Value::Jsonb(j) => Some(j),
                _ => None,
            };
            let (value, subs) = args[1..].split_last().expect("a value");
            let mut path = Vec::with_capacity(subs.len());
            for a in subs {
                let Value::Text(t) = a else {
                    return Err(SqlError::new(
                        SqlState::NULL_VALUE_NOT_ALLOWED,
                        "jsonb subscript in assignment must not be null",
                    ));
                };
                path.push(t.as_str());
            }
            // A NULL value is stored as JSON null.
            let new = match value {
                Value::Jsonb(v) => v.clone(),
                _ => snapscale_values::json::Jsonb::Null,
            };
            Value::Jsonb(snapscale_values::json::Jsonb::assign_path(base, &path, new, first_is_int)?)
        }
        Func::ArrayToString => {
            let Some(items) = array_arg(&args[0])? else { return Ok(Value::Null) };
            let Value::Text(sep) = &args[1] else { return Ok(Value::Null) };
            let null = match args.get(2) {
                Some(Value::Text(n)) => Some(n.as_str()),
                _ => None,
            };
            let mut parts: Vec<String> = Vec::with_capacity(items.len());
            for v in items.iter() {
                if let Some(text) = v.try_text_in(zone)?.or_else(|| null.map(str::to_owned)) {
                    parts.push(text);
                }
            }
            Value::Text(parts.join(sep))
        }
        Func::ArrayUpper | Func::ArrayLower | Func::ArrayLength => {
            let Some(a) = array_arg(&args[0])? else { return Ok(Value::Null) };
            let Value::Int(d) = args[1] else { return Ok(Value::Null) };
            let Some(dim) = a.dim(d) else { return Ok(Value::Null) };
            Value::Int(i64::from(match f {
                Func::ArrayLower => dim.lower,
                Func::ArrayUpper => dim.upper(),
                _ => dim.len,
            }))
        }
        Func::Cardinality => match array_arg(&args[0])? {
            None => Value::Null,
            Some(a) => Value::Int(a.len() as i64),
        },
        Func::ArrayNdims => match array_arg(&args[0])? {
            Some(a) if a.ndims() > 0 => Value::Int(a.ndims() as i64),
            _ => Value::Null,
        },
        Func::ArrayDims => array_arg(&args[0])?.and_then(|a| a.dims_text()).map_or(Value::Null, Value::Text),
        Func::ArrayPosition => {
            let Some(a) = array_arg(&args[0])? else { return Ok(Value::Null) };
            let start = match args.get(2) {
                None => None,
                Some(Value::Null) => {
                    return Err(SqlError::new(
                        SqlState::NULL_VALUE_NOT_ALLOWED,
                        "initial position must not be null",
                    ))
                }
                Some(v) => int_arg(v),
            };
            funcs::position(a, &args[1], start)?.map_or(Value::Null, |p| Value::Int(p.into()))
        }
        Func::ArrayPositions => match array_arg(&args[0])? {
            None => Value::Null,
            Some(a) => array(funcs::positions(a, &args[1])?),
        },
        Func::ArrayRemove => match array_arg(&args[0])? {
            None => Value::Null,
            Some(a) => array(funcs::remove(a, &args[1])?),
        },
        Func::ArrayReplace => match array_arg(&args[0])? {
            None => Value::Null,
            Some(a) => array(funcs::replace(a, &args[1], &args[2])),
        },
        Func::ArrayFill => {
            let lowers = match args.get(2) {
                None => None,
                Some(v) => Some(array_arg(v)?),
            };
            array(funcs::fill(&args[0], array_arg(&args[1])?, lowers)?)
        }
        Func::TrimArray => {
            let (Some(a), Value::Int(n)) = (array_arg(&args[0])?, &args[1]) else { return Ok(Value::Null) };
            array(funcs::trim(a, *n)?)
        }
        Func::WidthBucketArray => {
            let Some(t) = array_arg(&args[1])? else { return Ok(Value::Null) };
            if matches!(args[0], Value::Null) {
                return Ok(Value::Null);
            }
            Value::Int(funcs::width_bucket(&args[0], t)?.into())
        }
        Func::ArrayContains | Func::ArrayOverlap => {
            let (Some(a), Some(b)) = (array_arg(&args[0])?, array_arg(&args[1])?) else {
                return Ok(Value::Null);
            };
            Value::Bool(if f == Func::ArrayContains { funcs::contains(a, b) } else { funcs::overlaps(a, b) })
        }
        Func::Any { op, all, bpchar } => {
            let Some(items) = array_arg(&args[1])? else { return Ok(Value::Null) };
            if items.is_empty() {
                return Ok(Value::Bool(all));
            }
            if matches!(args[0], Value::Null) {
                return Ok(Value::Null);
            }
            let mut unknown = false;
            for v in items.iter() {
                if matches!(v, Value::Null) {
                    unknown = true;
                } else if op.holds(compare(&args[0], v, bpchar)?) != all {
                    return Ok(Value::Bool(!all));
                }
            }
            if unknown {
                Value::Null
            } else {
                Value::Bool(all)
            }
        }
        Func::LikeAny { all, negated, icase } => {
            let (Value::Text(text), Some(patterns)) = (&args[0], array_arg(&args[1])?) else {
                return Ok(Value::Null);
            };
            let fold = |s: &str| if icase { s.to_lowercase() } else { s.to_owned() };
            let text = fold(text);
            let mut unknown = false;
            for p in patterns.iter() {
                let Value::Text(p) = p else {
                    unknown = true;
                    continue;
                };
                if (super::operators::like(&text, &fold(p))? != negated) != all {
                    return Ok(Value::Bool(!all));
                }
            }
            if unknown {
                Value::Null
            } else {
                Value::Bool(all)
            }
        }
        _ => unreachable!("not an array function: {f:?}"),
    })
}

thread_local! {
    /// Compiled patterns, by pattern and case rule: a statement applies one
    /// pattern to many rows.
    static PATTERNS: RefCell<HashMap<(String, bool), regex::Regex>> = RefCell::new(HashMap::new());
}

/// Patterns longer than this are refused (54000), as a bound on compile
/// time and memory.
const MAX_PATTERN: usize = 64 << 10;

/// 2201B, worded as PostgreSQL's regular expression library words the
/// common cases.
fn invalid_regex(e: &regex::Error) -> SqlError {
    let text = e.to_string();
    let reason = text.lines().rev().find(|l| l.starts_with("error: ")).map_or(text.as_str(), |l| &l[7..]);
    let reason = match reason {
        "unclosed group" | "unopened group" => "parentheses () not balanced",
        "unclosed character class" => "brackets [] not balanced",
        "repetition operator missing expression" => "quantifier operand invalid",
        "incomplete escape sequence, reached end of pattern prematurely" => "invalid escape \\ sequence",
        other => other,
    };
    SqlError::new(SqlState::INVALID_REGULAR_EXPRESSION, format!("invalid regular expression: {reason}"))
}

/// `text ~ pattern` (`icase`: `~*`).
pub(super) fn regex_match(text: &str, pattern: &str, icase: bool) -> Result<bool, SqlError> {
    if pattern.len() > MAX_PATTERN {
        return Err(SqlError::new(SqlState::PROGRAM_LIMIT_EXCEEDED, "regular expression is too long"));
    }
    PATTERNS.with(|cache| {
        let mut cache = cache.borrow_mut();
        let key = (pattern.to_owned(), icase);
        if let Some(re) = cache.get(&key) {
            return Ok(re.is_match(text));
        }
        let re = regex::RegexBuilder::new(pattern)
            .case_insensitive(icase)
            .size_limit(1 << 20)
            .build()
            .map_err(|e| invalid_regex(&e))?;
        let matched = re.is_match(text);
        if cache.len() >= 64 {
            cache.clear();
        }
        cache.insert(key, re);
        Ok(matched)
    })
}
