//! Arrays (`ARRAY[…]`, subscripts, `op ANY/ALL (array)`, the array
//! functions) and POSIX regular expressions.

use std::cell::RefCell;
use std::collections::HashMap;

use super::*;

/// The elements of an array argument, or `None` for NULL.
fn elements(v: &Value) -> Result<Option<&Arc<[Value]>>, SqlError> {
    match v {
        Value::Null => Ok(None),
        Value::Array(items) => Ok(Some(items)),
        other => Err(SqlError::new(
            SqlState::DATATYPE_MISMATCH,
            format!("argument must be an array, not {}", describe(other)),
        )),
    }
}

pub(super) fn array_func(f: Func, args: &[Value], zone: snapscale_values::Style) -> Result<Value, SqlError> {
    Ok(match f {
        Func::ArrayCons => Value::Array(args.to_vec().into()),
        Func::ArrayCat => match (&args[0], &args[1]) {
            (Value::Null, Value::Null) => Value::Null,
            (Value::Array(a), Value::Array(b)) => Value::Array(a.iter().chain(b.iter()).cloned().collect()),
            (Value::Array(a), Value::Null) | (Value::Null, Value::Array(a)) => Value::Array(Arc::clone(a)),
            (Value::Array(a), e) => Value::Array(a.iter().cloned().chain([e.clone()]).collect()),
            (e, Value::Array(b)) => Value::Array([e.clone()].into_iter().chain(b.iter().cloned()).collect()),
            _ => Value::Null,
        },
        Func::Subscript { from } => {
            let (Some(items), Value::Int(i)) = (elements(&args[0])?, &args[1]) else {
                return Ok(Value::Null);
            };
            usize::try_from(i - from).ok().and_then(|i| items.get(i)).cloned().unwrap_or(Value::Null)
        }
        Func::ArrayToString => {
            let Some(items) = elements(&args[0])? else { return Ok(Value::Null) };
            let Value::Text(sep) = &args[1] else { return Ok(Value::Null) };
            let null = match args.get(2) {
                Some(Value::Text(n)) => Some(n.as_str()),
                _ => None,
            };
            let parts: Vec<String> =
                items.iter().filter_map(|v| v.to_text_in(zone).or_else(|| null.map(str::to_owned))).collect();
            Value::Text(parts.join(sep))
        }
        Func::ArrayUpper | Func::ArrayLower | Func::ArrayLength => {
            let Some(items) = elements(&args[0])? else { return Ok(Value::Null) };
            // One dimension; an empty array has none.
            if items.is_empty() || !matches!(args[1], Value::Int(1)) {
                return Ok(Value::Null);
            }
            Value::Int(match f {
                Func::ArrayLower => 1,
                _ => items.len() as i64,
            })
        }
        Func::Cardinality => match elements(&args[0])? {
            None => Value::Null,
            Some(items) => Value::Int(items.len() as i64),
        },
        Func::Any { op, all, bpchar } => {
            let Some(items) = elements(&args[1])? else { return Ok(Value::Null) };
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
