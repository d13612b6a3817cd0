//! The mathematical functions, for numeric (exact, from
//! snapscale_values::numeric) and for double precision (with
//! PostgreSQL's float8 rules and errors): rounding, roots, logarithms,
//! powers, integer division and remainders, gcd/lcm, factorial and
//! width_bucket.

use snapscale_sqlstate::SqlState;
use snapscale_values::numeric::Numeric;
use snapscale_values::{SqlError, Value};

use super::{int, Scalar};

fn num(v: &Value) -> Numeric {
    match v {
        Value::Numeric(n) => n.clone(),
        Value::Int(i) => Numeric::from(*i),
        _ => Numeric::NAN,
    }
}

fn float(v: &Value) -> f64 {
    match v {
        Value::Float(f) => *f,
        Value::Int(i) => *i as f64,
        _ => f64::NAN,
    }
}

fn scale_arg(v: &Value) -> i32 {
    int(v).clamp(i32::MIN.into(), i32::MAX.into()) as i32
}

fn n(v: Numeric) -> Result<Value, SqlError> {
    Ok(Value::Numeric(v))
}

/// A float result, with PostgreSQL's overflow and underflow checks: an
/// infinite result from finite inputs is 22003 overflow, a zero one from
/// non-zero inputs 22003 underflow.
fn checked(r: f64, finite_inputs: bool, zero_ok: bool) -> Result<Value, SqlError> {
    if r.is_infinite() && finite_inputs {
        return Err(SqlError::new(SqlState::NUMERIC_VALUE_OUT_OF_RANGE, "value out of range: overflow"));
    }
    if r == 0.0 && !zero_ok {
        return Err(SqlError::new(SqlState::NUMERIC_VALUE_OUT_OF_RANGE, "value out of range: underflow"));
    }
    Ok(Value::Float(r))
}

fn round_numeric(a: &[Value]) -> Result<Value, SqlError> {
    n(num(&a[0]).round(a.get(1).map_or(0, scale_arg))?)
}
fn trunc_numeric(a: &[Value]) -> Result<Value, SqlError> {
    n(num(&a[0]).trunc(a.get(1).map_or(0, scale_arg))?)
}
fn ceil_numeric(a: &[Value]) -> Result<Value, SqlError> {
    n(num(&a[0]).ceil()?)
}
fn floor_numeric(a: &[Value]) -> Result<Value, SqlError> {
    n(num(&a[0]).floor()?)
}
fn sign_numeric(a: &[Value]) -> Result<Value, SqlError> {
    n(num(&a[0]).sign())
}
fn sqrt_numeric(a: &[Value]) -> Result<Value, SqlError> {
    n(num(&a[0]).sqrt()?)
}
fn exp_numeric(a: &[Value]) -> Result<Value, SqlError> {
    n(num(&a[0]).exp()?)
}
fn ln_numeric(a: &[Value]) -> Result<Value, SqlError> {
    n(num(&a[0]).ln()?)
}
fn log10_numeric(a: &[Value]) -> Result<Value, SqlError> {
    n(num(&a[0]).log10()?)
}
fn log_numeric(a: &[Value]) -> Result<Value, SqlError> {
    n(Numeric::log(&num(&a[0]), &num(&a[1]))?)
}
fn power_numeric(a: &[Value]) -> Result<Value, SqlError> {
    n(num(&a[0]).pow(&num(&a[1]))?)
}
fn mod_numeric(a: &[Value]) -> Result<Value, SqlError> {
    n(num(&a[0]).rem(&num(&a[1]))?)
}
fn div_numeric(a: &[Value]) -> Result<Value, SqlError> {
    n(num(&a[0]).div_trunc(&num(&a[1]))?)
}
fn gcd_numeric(a: &[Value]) -> Result<Value, SqlError> {
    n(num(&a[0]).gcd(&num(&a[1]))?)
}
fn lcm_numeric(a: &[Value]) -> Result<Value, SqlError> {
    n(num(&a[0]).lcm(&num(&a[1]))?)
}
fn factorial(a: &[Value]) -> Result<Value, SqlError> {
    n(Numeric::factorial(int(&a[0]))?)
}
fn scale(a: &[Value]) -> Result<Value, SqlError> {
    Ok(num(&a[0]).scale().map_or(Value::Null, |s| Value::Int(s.into())))
}
fn min_scale(a: &[Value]) -> Result<Value, SqlError> {
    Ok(num(&a[0]).min_scale().map_or(Value::Null, |s| Value::Int(s.into())))
}
fn trim_scale(a: &[Value]) -> Result<Value, SqlError> {
    n(num(&a[0]).trim_scale())
}
fn width_bucket_numeric(a: &[Value]) -> Result<Value, SqlError> {
    let count = scale_arg(&a[3]);
    Ok(Value::Int(Numeric::width_bucket(&num(&a[0]), &num(&a[1]), &num(&a[2]), count)?.into()))
}

// ----------------------------------------------------------- float8

fn round_float(a: &[Value]) -> Result<Value, SqlError> {
    // PostgreSQL rounds float8 with rint(): halves to even.
    Ok(Value::Float(float(&a[0]).round_ties_even()))
}
fn trunc_float(a: &[Value]) -> Result<Value, SqlError> {
    Ok(Value::Float(float(&a[0]).trunc()))
}
fn ceil_float(a: &[Value]) -> Result<Value, SqlError> {
    Ok(Value::Float(float(&a[0]).ceil()))
}
fn floor_float(a: &[Value]) -> Result<Value, SqlError> {
    Ok(Value::Float(float(&a[0]).floor()))
}
fn sign_float(a: &[Value]) -> Result<Value, SqlError> {
    let x = float(&a[0]);
    Ok(Value::Float(if x > 0.0 {
        1.0
    } else if x < 0.0 {
        -1.0
    } else {
        0.0
    }))
}
fn sqrt_float(a: &[Value]) -> Result<Value, SqlError> {
    let x = float(&a[0]);
    if x < 0.0 {
        return Err(SqlError::new(
            SqlState::INVALID_ARGUMENT_FOR_POWER_FUNCTION,
            "cannot take square root of a negative number",
        ));
    }
    checked(x.sqrt(), x.is_finite(), x == 0.0)
}
fn cbrt_float(a: &[Value]) -> Result<Value, SqlError> {
    let x = float(&a[0]);
    checked(x.cbrt(), x.is_finite(), x == 0.0)
}
fn exp_float(a: &[Value]) -> Result<Value, SqlError> {
    let x = float(&a[0]);
    checked(x.exp(), x.is_finite(), !x.is_finite() || x.exp() != 0.0 || x == f64::NEG_INFINITY)
}
fn log_float(a: &[Value], f: fn(f64) -> f64) -> Result<Value, SqlError> {
    let x = float(&a[0]);
    if x == 0.0 {
        return Err(SqlError::new(SqlState::INVALID_ARGUMENT_FOR_LOGARITHM, "cannot take logarithm of zero"));
    }
    if x < 0.0 {
        return Err(SqlError::new(
            SqlState::INVALID_ARGUMENT_FOR_LOGARITHM,
            "cannot take logarithm of a negative number",
        ));
    }
    checked(f(x), x.is_finite(), x == 1.0)
}
fn ln_float(a: &[Value]) -> Result<Value, SqlError> {
    log_float(a, f64::ln)
}
fn log10_float(a: &[Value]) -> Result<Value, SqlError> {
    log_float(a, f64::log10)
}
/// float8 `power` / `^` with the C standard's special cases, as
/// PostgreSQL's dpow gives them.
fn power_float(a: &[Value]) -> Result<Value, SqlError> {
    let (x, y) = (float(&a[0]), float(&a[1]));
    if x.is_nan() {
        return Ok(Value::Float(if y == 0.0 { 1.0 } else { f64::NAN }));
    }
    if y.is_nan() {
        return Ok(Value::Float(if x == 1.0 { 1.0 } else { f64::NAN }));
    }
    if x == 0.0 && y < 0.0 {
        return Err(SqlError::new(
            SqlState::INVALID_ARGUMENT_FOR_POWER_FUNCTION,
            "zero raised to a negative power is undefined",
        ));
    }
    if x < 0.0 && y.is_finite() && y.floor() != y {
        return Err(SqlError::new(
            SqlState::INVALID_ARGUMENT_FOR_POWER_FUNCTION,
            "a negative number raised to a non-integer power yields a complex result",
        ));
    }
    let r = x.powf(y);
    checked(r, x.is_finite() && y.is_finite(), x == 0.0 || !x.is_finite() || !y.is_finite() || r != 0.0)
}
fn width_bucket_float(a: &[Value]) -> Result<Value, SqlError> {
    let (x, low, high, count) = (float(&a[0]), float(&a[1]), float(&a[2]), int(&a[3]));
    let wb = |m: &str| SqlError::new(SqlState::INVALID_ARGUMENT_FOR_WIDTH_BUCKET_FUNCTION, m);
    if count <= 0 {
        return Err(wb("count must be greater than zero"));
    }
    if x.is_nan() || low.is_nan() || high.is_nan() {
        return Err(wb("operand, lower bound, and upper bound cannot be NaN"));
    }
    if !low.is_finite() || !high.is_finite() {
        return Err(wb("lower and upper bounds must be finite"));
    }
    if low == high {
        return Err(wb("lower bound cannot equal upper bound"));
    }
    let bucket = if low < high {
        if x < low {
            0
        } else if x >= high {
            count + 1
        } else {
            ((count as f64) * ((x - low) / (high - low))) as i64 + 1
        }
    } else if x > low {
        0
    } else if x <= high {
        count + 1
    } else {
        ((count as f64) * ((low - x) / (low - high))) as i64 + 1
    };
    i32::try_from(bucket)
        .map(|b| Value::Int(b.into()))
        .map_err(|_| SqlError::new(SqlState::NUMERIC_VALUE_OUT_OF_RANGE, "integer out of range"))
}

// -------------------------------------------------------- integers

/// gcd of two integers of a type whose range is `lo..=hi`: PostgreSQL's
/// 22003 when the answer does not fit (gcd(minimum, 0) is its magnitude).
fn gcd_in(a: &[Value], lo: i64, hi: i64, name: &str) -> Result<i64, SqlError> {
    let (mut x, mut y) = (int(&a[0]).unsigned_abs(), int(&a[1]).unsigned_abs());
    while y != 0 {
        (x, y) = (y, x % y);
    }
    i64::try_from(x).ok().filter(|g| (lo..=hi).contains(g)).ok_or_else(|| SqlError::out_of_range(name))
}

/// lcm of two integers of a type whose range is `lo..=hi`, 22003 when
/// it does not fit.
fn lcm_in(a: &[Value], lo: i64, hi: i64, name: &str) -> Result<i64, SqlError> {
    let (x, y) = (int(&a[0]), int(&a[1]));
    if x == 0 || y == 0 {
        return Ok(0);
    }
    let g = gcd_in(a, i64::MIN, i64::MAX, name)?;
    (x / g)
        .checked_mul(y)
        .and_then(i64::checked_abs)
        .filter(|l| (lo..=hi).contains(l))
        .ok_or_else(|| SqlError::out_of_range(name))
}

fn gcd_int4(a: &[Value]) -> Result<Value, SqlError> {
    gcd_in(a, i32::MIN.into(), i32::MAX.into(), "integer").map(Value::Int)
}
fn gcd_int8(a: &[Value]) -> Result<Value, SqlError> {
    gcd_in(a, i64::MIN, i64::MAX, "bigint").map(Value::Int)
}
fn lcm_int4(a: &[Value]) -> Result<Value, SqlError> {
    lcm_in(a, i32::MIN.into(), i32::MAX.into(), "integer").map(Value::Int)
}
fn lcm_int8(a: &[Value]) -> Result<Value, SqlError> {
    lcm_in(a, i64::MIN, i64::MAX, "bigint").map(Value::Int)
}

/// `mod` of integers: PostgreSQL's `%`, with its division by zero and
/// `x % -1 = 0`.
fn mod_int(a: &[Value]) -> Result<Value, SqlError> {
    let (x, y) = (int(&a[0]), int(&a[1]));
    if y == 0 {
        return Err(SqlError::division_by_zero());
    }
    Ok(Value::Int(if y == -1 { 0 } else { x % y }))
}

pub const ROUND_NUMERIC: Scalar = Scalar::new("round", round_numeric);
pub const TRUNC_NUMERIC: Scalar = Scalar::new("trunc", trunc_numeric);
pub const CEIL_NUMERIC: Scalar = Scalar::new("ceil", ceil_numeric);
pub const FLOOR_NUMERIC: Scalar = Scalar::new("floor", floor_numeric);
pub const SIGN_NUMERIC: Scalar = Scalar::new("sign", sign_numeric);
pub const SQRT_NUMERIC: Scalar = Scalar::new("sqrt", sqrt_numeric);
pub const EXP_NUMERIC: Scalar = Scalar::new("exp", exp_numeric);
pub const LN_NUMERIC: Scalar = Scalar::new("ln", ln_numeric);
pub const LOG10_NUMERIC: Scalar = Scalar::new("log10", log10_numeric);
pub const LOG_NUMERIC: Scalar = Scalar::new("log", log_numeric);
pub const POWER_NUMERIC: Scalar = Scalar::new("power", power_numeric);
pub const MOD_NUMERIC: Scalar = Scalar::new("mod", mod_numeric);
pub const DIV_NUMERIC: Scalar = Scalar::new("div", div_numeric);
pub const GCD_NUMERIC: Scalar = Scalar::new("gcd", gcd_numeric);
pub const LCM_NUMERIC: Scalar = Scalar::new("lcm", lcm_numeric);
pub const FACTORIAL: Scalar = Scalar::new("factorial", factorial);
pub const SCALE: Scalar = Scalar::new("scale", scale);
pub const MIN_SCALE: Scalar = Scalar::new("min_scale", min_scale);
pub const TRIM_SCALE: Scalar = Scalar::new("trim_scale", trim_scale);
pub const WIDTH_BUCKET_NUMERIC: Scalar = Scalar::new("width_bucket", width_bucket_numeric);
pub const ROUND_FLOAT: Scalar = Scalar::new("round", round_float);
pub const TRUNC_FLOAT: Scalar = Scalar::new("trunc", trunc_float);
pub const CEIL_FLOAT: Scalar = Scalar::new("ceil", ceil_float);
pub const FLOOR_FLOAT: Scalar = Scalar::new("floor", floor_float);
pub const SIGN_FLOAT: Scalar = Scalar::new("sign", sign_float);
pub const SQRT_FLOAT: Scalar = Scalar::new("sqrt", sqrt_float);
pub const CBRT_FLOAT: Scalar = Scalar::new("cbrt", cbrt_float);
pub const EXP_FLOAT: Scalar = Scalar::new("exp", exp_float);
pub const LN_FLOAT: Scalar = Scalar::new("ln", ln_float);
pub const LOG10_FLOAT: Scalar = Scalar::new("log10", log10_float);
pub const POWER_FLOAT: Scalar = Scalar::new("power", power_float);
pub const WIDTH_BUCKET_FLOAT: Scalar = Scalar::new("width_bucket", width_bucket_float);
pub const MOD_INT: Scalar = Scalar::new("mod", mod_int);
pub const GCD_INT4: Scalar = Scalar::new("gcd", gcd_int4);
pub const GCD_INT8: Scalar = Scalar::new("gcd", gcd_int8);
pub const LCM_INT4: Scalar = Scalar::new("lcm", lcm_int4);
pub const LCM_INT8: Scalar = Scalar::new("lcm", lcm_int8);
