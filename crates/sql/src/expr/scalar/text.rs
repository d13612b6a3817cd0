//! The string functions: what PostgreSQL's manual lists under "String
//! Functions and Operators", each with its errors.

use snapscale_sqlstate::SqlState;
use snapscale_values::{SqlError, Value};

use super::{int, text, Scalar};

/// The most a function may build: PostgreSQL's 1 GB limit on a value.
const MAX_ALLOC: usize = (1 << 30) - 1;

fn too_large() -> SqlError {
    SqlError::new(SqlState::PROGRAM_LIMIT_EXCEEDED, "requested length too large")
}

fn repeat(args: &[Value]) -> Result<Value, SqlError> {
    let (s, n) = (text(&args[0]), int(&args[1]).max(0) as usize);
    if s.len().checked_mul(n).is_none_or(|len| len > MAX_ALLOC) {
        return Err(too_large());
    }
    Ok(Value::Text(s.repeat(n)))
}

pub const REPEAT: Scalar = Scalar::new("repeat", repeat);
