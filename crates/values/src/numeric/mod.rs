//! PostgreSQL 15's `numeric`: an exact decimal with a display scale, plus
//! NaN and ±Infinity, with PostgreSQL's text and binary formats, result
//! scales, rounding, errors and aggregate behaviour, digit for digit.
//!
//! [`Numeric`] is 16 bytes and holds values whose coefficient fits an i64
//! inline; longer values keep base-10000 digits on the heap, the layout
//! PostgreSQL computes in, which is what lets scale selection and guard
//! digit rounding match it exactly.
//!
//! Modules: `repr` (the value and its display), `parse` (numeric_in),
//! `ord` (comparison and hashing), `arith` (operators and simple
//! functions), `transcendental` (sqrt, exp, ln, log, power), `convert`
//! (integer and float casts), `typmod` (`numeric(p,s)`), `wire` (binary
//! and storage formats), `agg` (sum, avg, variance), `var` and `nat` (the
//! digit arithmetic underneath).

mod agg;
mod arith;
mod convert;
mod nat;
mod ord;
mod parse;
mod repr;
mod transcendental;
mod typmod;
mod var;
mod wire;

#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_api;

pub use agg::{NumericSum, NumericVariance};
pub use repr::Numeric;
pub use typmod::{
    make_numeric_typmod, numeric_typmod_decode, numeric_typmod_in, numeric_typmod_out, NUMERIC_MAX_PRECISION,
    NUMERIC_MAX_SCALE, NUMERIC_MIN_SCALE,
};
