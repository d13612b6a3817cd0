//! double precision's trigonometric functions (in radians and in
//! degrees), its hyperbolic functions, and the binary send functions of
//! real and double precision, with PostgreSQL's results and errors. The
//! degree functions are exact where the answer is a "nice" value (sind(30)
//! is 0.5, tand(45) is 1): each works within one quadrant, where it scales
//! the radian function so that the quadrant's landmarks come out exact.

use snapscale_sqlstate::SqlState;
use snapscale_values::{SqlError, Value};

use super::Scalar;

fn float(v: &Value) -> f64 {
    match v {
        Value::Float(f) => *f,
        Value::Float4(f) => f64::from(*f),
        Value::Int(i) => *i as f64,
        _ => f64::NAN,
    }
}

fn out_of_range() -> SqlError {
    SqlError::new(SqlState::NUMERIC_VALUE_OUT_OF_RANGE, "input is out of range")
}

/// A function defined on all finite inputs whose infinite ones are out of
/// its range (sin, cos, tan, cot and their degree forms).
fn periodic(x: f64, f: impl Fn(f64) -> f64) -> Result<Value, SqlError> {
    if x.is_nan() {
        return Ok(Value::Float(f64::NAN));
    }
    if x.is_infinite() {
        return Err(out_of_range());
    }
    Ok(Value::Float(f(x)))
}

fn sin(a: &[Value]) -> Result<Value, SqlError> {
    periodic(float(&a[0]), f64::sin)
}
fn cos(a: &[Value]) -> Result<Value, SqlError> {
    periodic(float(&a[0]), f64::cos)
}
fn tan(a: &[Value]) -> Result<Value, SqlError> {
    periodic(float(&a[0]), f64::tan)
}
fn cot(a: &[Value]) -> Result<Value, SqlError> {
    periodic(float(&a[0]), |x| 1.0 / x.tan())
}

/// An inverse function defined on [-1, 1].
fn inverse_unit(x: f64, f: impl Fn(f64) -> f64) -> Result<Value, SqlError> {
    if x.is_nan() {
        return Ok(Value::Float(f64::NAN));
    }
    if !(-1.0..=1.0).contains(&x) {
        return Err(out_of_range());
    }
    Ok(Value::Float(f(x)))
}

fn asin(a: &[Value]) -> Result<Value, SqlError> {
    inverse_unit(float(&a[0]), f64::asin)
}
fn acos(a: &[Value]) -> Result<Value, SqlError> {
    inverse_unit(float(&a[0]), f64::acos)
}
fn atan(a: &[Value]) -> Result<Value, SqlError> {
    Ok(Value::Float(float(&a[0]).atan()))
}
fn atan2(a: &[Value]) -> Result<Value, SqlError> {
    Ok(Value::Float(float(&a[0]).atan2(float(&a[1]))))
}

fn degrees(a: &[Value]) -> Result<Value, SqlError> {
    Ok(Value::Float(float(&a[0]).to_degrees()))
}
fn radians(a: &[Value]) -> Result<Value, SqlError> {
    Ok(Value::Float(float(&a[0]).to_radians()))
}
fn pi(_: &[Value]) -> Result<Value, SqlError> {
    Ok(Value::Float(std::f64::consts::PI))
}

// The degree functions. Within [0, 30] sin is scaled so that sind(30) is
// 0.5, and within [0, 60] 1 - cos so that cosd(60) is 0.5; the rest of the
// first quadrant is the other function of the complement.

fn sind_0_to_30(x: f64) -> f64 {
    (x.to_radians().sin() / 30f64.to_radians().sin()) / 2.0
}

fn cosd_0_to_60(x: f64) -> f64 {
    1.0 - ((1.0 - x.to_radians().cos()) / (1.0 - 60f64.to_radians().cos())) / 2.0
}

fn sind_q1(x: f64) -> f64 {
    if x <= 30.0 {
        sind_0_to_30(x)
    } else {
        cosd_0_to_60(90.0 - x)
    }
}

fn cosd_q1(x: f64) -> f64 {
    if x <= 60.0 {
        cosd_0_to_60(x)
    } else {
        sind_0_to_30(90.0 - x)
    }
}

fn sind(a: &[Value]) -> Result<Value, SqlError> {
    periodic(float(&a[0]), |x| {
        let (mut x, mut sign) = (x % 360.0, 1.0);
        if x < 0.0 {
            x = -x;
            sign = -sign;
        }
        if x > 180.0 {
            x -= 180.0;
            sign = -sign;
        }
        if x > 90.0 {
            x = 180.0 - x;
        }
        sign * sind_q1(x)
    })
}

fn cosd(a: &[Value]) -> Result<Value, SqlError> {
    periodic(float(&a[0]), |x| {
        let (mut x, mut sign) = ((x % 360.0).abs(), 1.0);
        if x > 180.0 {
            x = 360.0 - x;
        }
        if x > 90.0 {
            x = 180.0 - x;
            sign = -sign;
        }
        sign * cosd_q1(x)
    })
}

/// tand and cotd: the first quadrant's angle and the sign.
fn tan_quadrant(x: f64) -> (f64, f64) {
    let (mut x, mut sign) = (x % 360.0, 1.0);
    if x < 0.0 {
        x = -x;
        sign = -sign;
    }
    if x > 180.0 {
        x = 360.0 - x;
        sign = -sign;
    }
    if x > 90.0 {
        x = 180.0 - x;
        sign = -sign;
    }
    (x, sign)
}

/// A zero result is +0, as PostgreSQL gives it.
fn no_negative_zero(r: f64) -> f64 {
    if r == 0.0 {
        0.0
    } else {
        r
    }
}

fn tand(a: &[Value]) -> Result<Value, SqlError> {
    periodic(float(&a[0]), |x| {
        let (x, sign) = tan_quadrant(x);
        no_negative_zero(sign * (sind_q1(x) / cosd_q1(x)))
    })
}

fn cotd(a: &[Value]) -> Result<Value, SqlError> {
    periodic(float(&a[0]), |x| {
        let (x, sign) = tan_quadrant(x);
        no_negative_zero(sign * (cosd_q1(x) / sind_q1(x)))
    })
}

// The inverse degree functions, scaled so that 0.5 and 1 give exact
// angles.

fn asind_q1(x: f64) -> f64 {
    if x <= 0.5 {
        (x.asin() / 0.5f64.asin()) * 30.0
    } else {
        90.0 - (x.acos() / 0.5f64.acos()) * 60.0
    }
}

fn acosd_q1(x: f64) -> f64 {
    if x <= 0.5 {
        90.0 - (x.asin() / 0.5f64.asin()) * 30.0
    } else {
        (x.acos() / 0.5f64.acos()) * 60.0
    }
}

fn asind(a: &[Value]) -> Result<Value, SqlError> {
    inverse_unit(float(&a[0]), |x| if x >= 0.0 { asind_q1(x) } else { -asind_q1(-x) })
}

fn acosd(a: &[Value]) -> Result<Value, SqlError> {
    inverse_unit(float(&a[0]), |x| if x >= 0.0 { acosd_q1(x) } else { 90.0 + asind_q1(-x) })
}

fn atand(a: &[Value]) -> Result<Value, SqlError> {
    let x = float(&a[0]);
    Ok(Value::Float((x.atan() / 1f64.atan()) * 45.0))
}

fn atan2d(a: &[Value]) -> Result<Value, SqlError> {
    let (y, x) = (float(&a[0]), float(&a[1]));
    Ok(Value::Float((y.atan2(x) / 1f64.atan()) * 45.0))
}

// The hyperbolic functions.

fn sinh(a: &[Value]) -> Result<Value, SqlError> {
    Ok(Value::Float(float(&a[0]).sinh()))
}
fn cosh(a: &[Value]) -> Result<Value, SqlError> {
    Ok(Value::Float(float(&a[0]).cosh()))
}
fn tanh(a: &[Value]) -> Result<Value, SqlError> {
    Ok(Value::Float(float(&a[0]).tanh()))
}
fn asinh(a: &[Value]) -> Result<Value, SqlError> {
    Ok(Value::Float(float(&a[0]).asinh()))
}
fn acosh(a: &[Value]) -> Result<Value, SqlError> {
    let x = float(&a[0]);
    if x < 1.0 {
        return Err(out_of_range());
    }
    Ok(Value::Float(x.acosh()))
}
fn atanh(a: &[Value]) -> Result<Value, SqlError> {
    let x = float(&a[0]);
    if x.is_nan() {
        return Ok(Value::Float(f64::NAN));
    }
    if !(-1.0..=1.0).contains(&x) {
        return Err(out_of_range());
    }
    // atanh(±1) is ±Infinity.
    Ok(Value::Float(if x.abs() == 1.0 { f64::INFINITY.copysign(x) } else { x.atanh() }))
}

/// `float8send(x)`: its IEEE 754 bits, most significant byte first.
fn float8send(a: &[Value]) -> Result<Value, SqlError> {
    Ok(Value::Bytes(float(&a[0]).to_bits().to_be_bytes().to_vec().into()))
}

/// `float4send(x)`.
fn float4send(a: &[Value]) -> Result<Value, SqlError> {
    let x = match &a[0] {
        Value::Float4(f) => *f,
        v => float(v) as f32,
    };
    Ok(Value::Bytes(x.to_bits().to_be_bytes().to_vec().into()))
}

pub const SIN: Scalar = Scalar::new("sin", sin);
pub const COS: Scalar = Scalar::new("cos", cos);
pub const TAN: Scalar = Scalar::new("tan", tan);
pub const COT: Scalar = Scalar::new("cot", cot);
pub const ASIN: Scalar = Scalar::new("asin", asin);
pub const ACOS: Scalar = Scalar::new("acos", acos);
pub const ATAN: Scalar = Scalar::new("atan", atan);
pub const ATAN2: Scalar = Scalar::new("atan2", atan2);
pub const DEGREES: Scalar = Scalar::new("degrees", degrees);
pub const RADIANS: Scalar = Scalar::new("radians", radians);
pub const PI: Scalar = Scalar::new("pi", pi);
pub const SIND: Scalar = Scalar::new("sind", sind);
pub const COSD: Scalar = Scalar::new("cosd", cosd);
pub const TAND: Scalar = Scalar::new("tand", tand);
pub const COTD: Scalar = Scalar::new("cotd", cotd);
pub const ASIND: Scalar = Scalar::new("asind", asind);
pub const ACOSD: Scalar = Scalar::new("acosd", acosd);
pub const ATAND: Scalar = Scalar::new("atand", atand);
pub const ATAN2D: Scalar = Scalar::new("atan2d", atan2d);
pub const SINH: Scalar = Scalar::new("sinh", sinh);
pub const COSH: Scalar = Scalar::new("cosh", cosh);
pub const TANH: Scalar = Scalar::new("tanh", tanh);
pub const ASINH: Scalar = Scalar::new("asinh", asinh);
pub const ACOSH: Scalar = Scalar::new("acosh", acosh);
pub const ATANH: Scalar = Scalar::new("atanh", atanh);
pub const FLOAT8SEND: Scalar = Scalar::new("float8send", float8send);
pub const FLOAT4SEND: Scalar = Scalar::new("float4send", float4send);

#[cfg(test)]
mod tests {
    use super::*;

    fn f(func: fn(&[Value]) -> Result<Value, SqlError>, x: f64) -> f64 {
        match func(&[Value::Float(x)]).unwrap() {
            Value::Float(r) => r,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn degree_functions_are_exact_at_landmarks() {
        let sines: Vec<f64> =
            [0., 30., 90., 150., 180., 210., 270., 330., 360.].iter().map(|&x| f(sind, x)).collect();
        assert_eq!(sines, [0., 0.5, 1., 0.5, 0., -0.5, -1., -0.5, 0.]);
        let cosines: Vec<f64> =
            [0., 60., 90., 120., 180., 240., 270., 300., 360.].iter().map(|&x| f(cosd, x)).collect();
        assert_eq!(cosines, [1., 0.5, 0., -0.5, -1., -0.5, 0., 0.5, 1.]);
        let tangents: Vec<f64> =
            [0., 45., 90., 135., 180., 225., 270., 315.].iter().map(|&x| f(tand, x)).collect();
        assert_eq!(tangents, [0., 1., f64::INFINITY, -1., 0., 1., f64::NEG_INFINITY, -1.]);
        assert_eq!(f(cotd, 180.), f64::NEG_INFINITY);
        assert_eq!([-1., -0.5, 0., 0.5, 1.].map(|x| f(asind, x)), [-90., -30., 0., 30., 90.]);
        assert_eq!([-1., -0.5, 0., 0.5, 1.].map(|x| f(acosd, x)), [180., 120., 90., 60., 0.]);
        assert_eq!(f(atand, f64::INFINITY), 90.);
    }
}
