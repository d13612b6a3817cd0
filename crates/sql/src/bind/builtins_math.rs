//! The mathematical functions' signatures (implementations in
//! `expr/scalar/math.rs`): a numeric and a double precision version of
//! most, as PostgreSQL has them; an integer argument binds to the double
//! precision one, the numeric category's preferred type, as PostgreSQL
//! resolves it.

use snapscale_values::SqlType;

use super::builtins::{s, Arg, Builtin, Is, INT4, INT8, TEXT};
use crate::expr::scalar;

const NUMERIC: Arg = Is(SqlType::Numeric(-1));
const FLOAT8: Arg = Is(SqlType::Float8);
const N: SqlType = SqlType::Numeric(-1);
const F: SqlType = SqlType::Float8;

pub(super) static MATH: &[Builtin] = &[
    s("round", &[NUMERIC], N, scalar::ROUND_NUMERIC),
    s("round", &[FLOAT8], F, scalar::ROUND_FLOAT),
    s("round", &[NUMERIC, INT4], N, scalar::ROUND_NUMERIC),
    s("trunc", &[NUMERIC], N, scalar::TRUNC_NUMERIC),
    s("trunc", &[FLOAT8], F, scalar::TRUNC_FLOAT),
    s("trunc", &[NUMERIC, INT4], N, scalar::TRUNC_NUMERIC),
    s("ceil", &[NUMERIC], N, scalar::CEIL_NUMERIC),
    s("ceil", &[FLOAT8], F, scalar::CEIL_FLOAT),
    s("ceiling", &[NUMERIC], N, scalar::CEIL_NUMERIC),
    s("ceiling", &[FLOAT8], F, scalar::CEIL_FLOAT),
    s("floor", &[NUMERIC], N, scalar::FLOOR_NUMERIC),
    s("floor", &[FLOAT8], F, scalar::FLOOR_FLOAT),
    s("sign", &[NUMERIC], N, scalar::SIGN_NUMERIC),
    s("sign", &[FLOAT8], F, scalar::SIGN_FLOAT),
    s("sqrt", &[NUMERIC], N, scalar::SQRT_NUMERIC),
    s("sqrt", &[FLOAT8], F, scalar::SQRT_FLOAT),
    s("cbrt", &[FLOAT8], F, scalar::CBRT_FLOAT),
    s("exp", &[NUMERIC], N, scalar::EXP_NUMERIC),
    s("exp", &[FLOAT8], F, scalar::EXP_FLOAT),
    s("ln", &[NUMERIC], N, scalar::LN_NUMERIC),
    s("ln", &[FLOAT8], F, scalar::LN_FLOAT),
    s("log", &[NUMERIC], N, scalar::LOG10_NUMERIC),
    s("log", &[FLOAT8], F, scalar::LOG10_FLOAT),
    s("log10", &[NUMERIC], N, scalar::LOG10_NUMERIC),
    s("log10", &[FLOAT8], F, scalar::LOG10_FLOAT),
    s("log", &[NUMERIC, NUMERIC], N, scalar::LOG_NUMERIC),
    s("power", &[NUMERIC, NUMERIC], N, scalar::POWER_NUMERIC),
    s("power", &[FLOAT8, FLOAT8], F, scalar::POWER_FLOAT),
    s("pow", &[NUMERIC, NUMERIC], N, scalar::POWER_NUMERIC),
    s("pow", &[FLOAT8, FLOAT8], F, scalar::POWER_FLOAT),
    s("mod", &[Is(SqlType::Int2), Is(SqlType::Int2)], SqlType::Int2, scalar::MOD_INT),
    s("mod", &[INT4, INT4], SqlType::Int4, scalar::MOD_INT),
    s("mod", &[INT8, INT8], SqlType::Int8, scalar::MOD_INT),
    s("mod", &[NUMERIC, NUMERIC], N, scalar::MOD_NUMERIC),
    s("div", &[NUMERIC, NUMERIC], N, scalar::DIV_NUMERIC),
    s("gcd", &[INT4, INT4], SqlType::Int4, scalar::GCD_INT4),
    s("gcd", &[INT8, INT8], SqlType::Int8, scalar::GCD_INT8),
    s("gcd", &[NUMERIC, NUMERIC], N, scalar::GCD_NUMERIC),
    s("lcm", &[INT4, INT4], SqlType::Int4, scalar::LCM_INT4),
    s("lcm", &[INT8, INT8], SqlType::Int8, scalar::LCM_INT8),
    s("lcm", &[NUMERIC, NUMERIC], N, scalar::LCM_NUMERIC),
    s("factorial", &[INT8], N, scalar::FACTORIAL),
    s("scale", &[NUMERIC], SqlType::Int4, scalar::SCALE),
    s("min_scale", &[NUMERIC], SqlType::Int4, scalar::MIN_SCALE),
    s("trim_scale", &[NUMERIC], N, scalar::TRIM_SCALE),
    s("width_bucket", &[NUMERIC, NUMERIC, NUMERIC, INT4], SqlType::Int4, scalar::WIDTH_BUCKET_NUMERIC),
    s("width_bucket", &[FLOAT8, FLOAT8, FLOAT8, INT4], SqlType::Int4, scalar::WIDTH_BUCKET_FLOAT),
    // The formatting functions.
    s("to_char", &[INT4, TEXT], SqlType::Text, scalar::TO_CHAR_INT4),
    s("to_char", &[INT8, TEXT], SqlType::Text, scalar::TO_CHAR),
    s("to_char", &[NUMERIC, TEXT], SqlType::Text, scalar::TO_CHAR),
    s("to_char", &[Is(SqlType::Float4), TEXT], SqlType::Text, scalar::TO_CHAR),
    s("to_char", &[FLOAT8, TEXT], SqlType::Text, scalar::TO_CHAR),
    s("to_char", &[Is(SqlType::Timestamp), TEXT], SqlType::Text, scalar::TO_CHAR),
    s("to_char", &[Is(SqlType::TimestampTz), TEXT], SqlType::Text, scalar::TO_CHAR),
    s("to_char", &[Is(SqlType::Interval), TEXT], SqlType::Text, scalar::TO_CHAR),
    s("to_number", &[TEXT, TEXT], N, scalar::TO_NUMBER),
    s("to_date", &[TEXT, TEXT], SqlType::Date, scalar::TO_DATE),
    s("to_timestamp", &[TEXT, TEXT], SqlType::TimestampTz, scalar::TO_TIMESTAMP),
    s("to_timestamp", &[FLOAT8], SqlType::TimestampTz, scalar::TO_TIMESTAMP_EPOCH),
    // Date and time construction and adjustment.
    s("justify_hours", &[Is(SqlType::Interval)], SqlType::Interval, scalar::JUSTIFY_HOURS),
    s("justify_days", &[Is(SqlType::Interval)], SqlType::Interval, scalar::JUSTIFY_DAYS),
    s("justify_interval", &[Is(SqlType::Interval)], SqlType::Interval, scalar::JUSTIFY_INTERVAL),
    s("isfinite", &[Is(SqlType::Date)], SqlType::Bool, scalar::ISFINITE),
    s("isfinite", &[Is(SqlType::TimestampTz)], SqlType::Bool, scalar::ISFINITE),
    s("isfinite", &[Is(SqlType::Timestamp)], SqlType::Bool, scalar::ISFINITE),
    s("isfinite", &[Is(SqlType::Interval)], SqlType::Bool, scalar::ISFINITE),
    s("make_date", &[INT4, INT4, INT4], SqlType::Date, scalar::MAKE_DATE),
    s("make_time", &[INT4, INT4, FLOAT8], SqlType::Time, scalar::MAKE_TIME),
    s("make_timestamp", &[INT4, INT4, INT4, INT4, INT4, FLOAT8], SqlType::Timestamp, scalar::MAKE_TIMESTAMP),
    s(
        "make_timestamptz",
        &[INT4, INT4, INT4, INT4, INT4, FLOAT8],
        SqlType::TimestampTz,
        scalar::MAKE_TIMESTAMPTZ,
    ),
];
