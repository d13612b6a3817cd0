//! Text I/O and errors of every type, with the expected values and messages
//! confirmed against PostgreSQL 15.18 on the project machine (2026-11-22).
//! `Value::parse` is assignment semantics (INSERT/COPY): too-long strings
//! are 22001 there, while an explicit cast truncates (the executor's job).

use snapscale_sql::{int_arith, IntOp, SqlError, SqlType, Value};

fn text(ty: SqlType, input: &str) -> String {
    Value::parse(ty, input).unwrap().to_text().unwrap()
}

fn error(ty: SqlType, input: &str) -> SqlError {
    Value::parse(ty, input).unwrap_err()
}

#[test]
fn float8_output_is_postgresql_15s_shortest_exact() {
    for (input, out) in [
        ("1e16", "1e+16"),
        ("1e-5", "1e-05"),
        ("0.0001", "0.0001"),
        ("123456789012345", "123456789012345"),
        ("1234567890123456", "1.234567890123456e+15"),
        ("-1.5e-7", "-1.5e-07"),
        ("nan", "NaN"),
        ("-inf", "-Infinity"),
        ("Infinity", "Infinity"),
        ("-0", "-0"),
        ("  2.5  ", "2.5"),
    ] {
        assert_eq!(text(SqlType::Float8, input), out, "{input}");
    }
    assert_eq!(Value::Float(0.1 + 0.2).to_text().unwrap(), "0.30000000000000004");
    let e = error(SqlType::Float8, "1e400");
    assert_eq!(
        (e.code.code(), e.message.as_str()),
        ("22003", "\"1e400\" is out of range for type double precision")
    );
    assert_eq!(error(SqlType::Float8, "1.5x").code, "22P02");
}

#[test]
fn integers_take_whitespace_and_report_range_errors() {
    assert_eq!(text(SqlType::Int4, "  42 "), "42");
    assert_eq!(text(SqlType::Int2, "-32768"), "-32768");
    let e = error(SqlType::Int4, "4x");
    assert_eq!(
        (e.code.code(), e.message.as_str()),
        ("22P02", "invalid input syntax for type integer: \"4x\"")
    );
    let e = error(SqlType::Int4, "2147483648");
    assert_eq!(
        (e.code.code(), e.message.as_str()),
        ("22003", "value \"2147483648\" is out of range for type integer")
    );
    assert_eq!(error(SqlType::Int8, "").code, "22P02");
    assert_eq!(error(SqlType::Int2, "+").code, "22P02");
}

#[test]
fn booleans_accept_postgresql_prefixes() {
    for (input, v) in
        [("tr", true), ("of", false), ("YES", true), ("n", false), ("1", true), (" off ", false)]
    {
        assert_eq!(Value::parse(SqlType::Bool, input).unwrap(), Value::Bool(v), "{input}");
    }
    let e = error(SqlType::Bool, "o");
    assert_eq!(
        (e.code.code(), e.message.as_str()),
        ("22P02", "invalid input syntax for type boolean: \"o\"")
    );
    assert_eq!(Value::Bool(true).to_text().unwrap(), "t");
}

#[test]
fn character_types_follow_assignment_rules() {
    let e = error(SqlType::Varchar(Some(2)), "abcd");
    assert_eq!(
        (e.code.code(), e.message.as_str()),
        ("22001", "value too long for type character varying(2)")
    );
    assert_eq!(text(SqlType::Varchar(Some(2)), "ab   "), "ab", "excess spaces are dropped");
    assert_eq!(text(SqlType::Char(4), "x"), "x   ", "char(n) pads");
    assert_eq!(error(SqlType::Char(1), "xy").code, "22001");
    assert_eq!(text(SqlType::Varchar(Some(3)), "héé"), "héé", "lengths count characters");
    assert_eq!(text(SqlType::Text, "anything at all"), "anything at all");
}

#[test]
fn dates_and_timestamps_read_and_write_iso() {
    assert_eq!(text(SqlType::Date, "2024-02-29"), "2024-02-29");
    assert_eq!(Value::parse(SqlType::Date, "2000-01-01").unwrap(), Value::Date(0), "PostgreSQL's epoch");
    let e = error(SqlType::Date, "2024-02-30");
    assert_eq!(
        (e.code.code(), e.message.as_str()),
        ("22008", "date/time field value out of range: \"2024-02-30\"")
    );
    assert_eq!(error(SqlType::Date, "yesterday-ish").code, "22007");
    // PostgreSQL reads it as day 99 of month 1 (YMD needs four digits) and
    // refuses the day.
    assert_eq!(error(SqlType::Date, "99-01-01").code, "22008", "as PostgreSQL 15");
    assert_eq!(text(SqlType::Date, "0999-12-31"), "0999-12-31");
    assert_eq!(text(SqlType::Timestamp, "2024-02-29 13:05:07.1234567"), "2024-02-29 13:05:07.123457");
    assert_eq!(text(SqlType::Timestamp, "1999-12-31T23:59"), "1999-12-31 23:59:00");
    assert_eq!(text(SqlType::Timestamp, "1970-01-01"), "1970-01-01 00:00:00");
    assert_eq!(error(SqlType::Timestamp, "2024-01-01 25:00").code, "22008");
    // With a time zone: the offset is applied; UTC is the session's zone.
    assert_eq!(text(SqlType::TimestampTz, "2024-01-01 00:30-01"), "2024-01-01 01:30:00+00");
    assert_eq!(text(SqlType::TimestampTz, "2024-01-01 00:30+01:30"), "2023-12-31 23:00:00+00");
    assert_eq!(text(SqlType::TimestampTz, "2024-01-01T00:30:00.5Z"), "2024-01-01 00:30:00.5+00");
    assert_eq!(text(SqlType::TimestampTz, "2024-01-01"), "2024-01-01 00:00:00+00");
    assert_eq!(error(SqlType::TimestampTz, "2024-01-01 00:30+16").code, "22009");
    // A zone name that names no zone: PostgreSQL's 22023, not a syntax
    // error.
    assert_eq!(error(SqlType::TimestampTz, "2024-01-01 00:30 Mars/Olympus").code, "22023");
    assert_eq!(error(SqlType::TimestampTz, "2024-01-01 00:30 +5x").code, "22007");
}

#[test]
fn integer_arithmetic_checks_range_and_zero() {
    let e = int_arith(SqlType::Int2, IntOp::Add, 32767, 1).unwrap_err();
    assert_eq!((e.code.code(), e.message.as_str()), ("22003", "smallint out of range"));
    let e = int_arith(SqlType::Int4, IntOp::Div, 1, 0).unwrap_err();
    assert_eq!((e.code.code(), e.message.as_str()), ("22012", "division by zero"));
    assert_eq!(int_arith(SqlType::Int4, IntOp::Rem, -2_147_483_648, -1).unwrap(), 0);
    assert_eq!(int_arith(SqlType::Int4, IntOp::Div, -2_147_483_648, -1).unwrap_err().code, "22003");
    assert_eq!(int_arith(SqlType::Int8, IntOp::Mul, 3, -7).unwrap(), -21);
}

#[test]
fn types_have_postgresql_oids_and_names() {
    assert_eq!(SqlType::from_name("int", None).unwrap(), SqlType::Int4);
    assert_eq!(SqlType::from_name("character varying", Some(10)).unwrap(), SqlType::Varchar(Some(10)));
    // PostgreSQL's bpchar without a length is blank-padded of any length
    // (`'abc'::bpchar` is 'abc'); char and character without one are char(1).
    assert_eq!(SqlType::from_name("bpchar", None).unwrap(), SqlType::Char(0));
    assert_eq!(SqlType::from_name("character", None).unwrap(), SqlType::Char(1));
    assert_eq!(SqlType::from_name("bpchar", Some(4)).unwrap(), SqlType::Char(4));
    assert_eq!(SqlType::from_name("numeric", None).unwrap(), SqlType::Numeric(-1));
    assert_eq!(SqlType::from_name("uuid", None).unwrap().oid(), 2950);
    assert_eq!(SqlType::from_name("geometry", None).unwrap_err().code, "42704");
    for (ty, oid) in
        [(SqlType::Int4, 23), (SqlType::Int8, 20), (SqlType::Text, 25), (SqlType::Varchar(None), 1043)]
    {
        assert_eq!(ty.oid(), oid);
    }
}

#[test]
fn comparison_follows_postgresql() {
    use std::cmp::Ordering::*;
    assert_eq!(Value::Float(f64::NAN).compare(&Value::Float(f64::INFINITY)), Some(Greater));
    assert_eq!(Value::Float(f64::NAN).compare(&Value::Float(f64::NAN)), Some(Equal));
    assert_eq!(Value::Float(-0.0).compare(&Value::Float(0.0)), Some(Equal));
    assert_eq!(Value::Int(2).compare(&Value::Float(2.5)), Some(Less));
    assert_eq!(Value::Null.compare(&Value::Int(1)), None);
}
