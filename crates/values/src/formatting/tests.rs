//! Unit tests. The `testdata/*.tsv` tables were produced by `gen.py` from a
//! PostgreSQL 15 server (C locale): each line is a function, its
//! arguments and PostgreSQL's result (`ERR <sqlstate> <message>[ DETAIL
//! <detail>]` for errors, `\N` for NULL).

use super::*;
use crate::numeric::Numeric;
use crate::zone::Zone;
use crate::SqlError;

fn unescape(s: &str) -> String {
    let mut out = String::new();
    let mut it = s.chars();
    while let Some(c) = it.next() {
        if c == '\\' {
            match it.next() {
                Some('t') => out.push('\t'),
                Some('n') => out.push('\n'),
                Some('N') => out.push_str("\\N"),
                Some(o) => out.push(o),
                None => out.push('\\'),
            }
        } else {
            out.push(c);
        }
    }
    out
}

fn show<T: ToString>(r: Result<Option<T>, SqlError>) -> String {
    match r {
        Ok(Some(v)) => v.to_string(),
        Ok(None) => "\\N".to_owned(),
        Err(e) => {
            let mut s = format!("ERR {} {}", e.code.code(), e.message);
            if let Some(d) = e.detail.clone() {
                s.push_str(" DETAIL ");
                s.push_str(&d);
            }
            s
        }
    }
}

/// Runs every line of a table through `eval`, reporting all mismatches.
fn check_table(name: &str, table: &str, eval: impl Fn(&[String]) -> Option<String>) {
    let mut failures = Vec::new();
    let mut count = 0;
    for line in table.lines() {
        let fields: Vec<String> = line.split('\t').map(unescape).collect();
        let (expected, args) = fields.split_last().expect("non-empty line");
        let Some(got) = eval(args) else { continue };
        count += 1;
        if &got != expected {
            failures.push(format!("{args:?}: got {got:?} expected {expected:?}"));
        }
    }
    assert!(count > 0, "{name}: no cases ran");
    assert!(
        failures.is_empty(),
        "{name}: {} of {count} failed:\n{}",
        failures.len(),
        failures[..failures.len().min(60)].join("\n")
    );
}

#[test]
fn to_char_numbers() {
    check_table("to_char_number", include_str!("testdata/to_char_number.tsv"), |a| {
        let (v, fmt) = (&a[1], &a[2]);
        Some(show(match a[0].as_str() {
            "numeric" => Numeric::parse(v).and_then(|n| to_char_numeric(&n, fmt)).map(Some),
            "int8" => to_char_i64(v.parse().ok()?, fmt).map(Some),
            "int4" => to_char_i32(v.parse().ok()?, fmt).map(Some),
            "float8" => to_char_f64(parse_float(v), fmt).map(Some),
            "float4" => to_char_f32(parse_float(v) as f32, fmt).map(Some),
            _ => return None,
        }))
    });
}

fn parse_float(v: &str) -> f64 {
    match v {
        "NaN" => f64::NAN,
        "Infinity" => f64::INFINITY,
        "-Infinity" => f64::NEG_INFINITY,
        _ => v.parse().expect("float"),
    }
}

#[test]
fn to_number_table() {
    check_table("to_number", include_str!("testdata/to_number.tsv"), |a| Some(show(to_number(&a[1], &a[2]))));
}

#[test]
fn to_char_datetimes() {
    check_table("to_char_datetime", include_str!("testdata/to_char_datetime.tsv"), |a| {
        Some(show(match a[0].as_str() {
            "ts" => to_char_timestamp(a[1].parse().ok()?, &a[2], None),
            "tstz" => {
                let zone = Zone::setting(&a[1]).expect("zone").0;
                to_char_timestamp(a[2].parse().ok()?, &a[3], Some(zone))
            }
            "interval" => to_char_interval(a[1].parse().ok()?, a[2].parse().ok()?, a[3].parse().ok()?, &a[4]),
            _ => return None,
        }))
    });
}

#[test]
fn parse_datetimes() {
    check_table("parse_datetime", include_str!("testdata/parse_datetime.tsv"), |a| {
        Some(show(match a[0].as_str() {
            "to_timestamp" => {
                let zone = Zone::setting(&a[1]).expect("zone").0;
                to_timestamp_in(&a[2], &a[3], zone).map(Some)
            }
            "to_date" => to_date(&a[1], &a[2]).map(|d| Some(i64::from(d))),
            _ => return None,
        }))
    });
}

#[test]
fn empty_templates_and_infinities_are_null() {
    assert_eq!(to_char_timestamp(0, "", None).unwrap(), None);
    assert_eq!(to_char_timestamp(i64::MAX, "YYYY", None).unwrap(), None);
    assert_eq!(to_char_interval(0, 0, 0, "").unwrap(), None);
    assert_eq!(to_number("12", "").unwrap(), None);
    assert_eq!(to_char_i64(12, "").unwrap(), "");
}

#[test]
fn to_timestamp_reports_the_offset_it_read() {
    let (local, offset) = to_timestamp("2000-01-01 05:30 +05:30", "YYYY-MM-DD HH24:MI TZH:TZM").unwrap();
    assert_eq!(local, (5 * 3600 + 30 * 60) * 1_000_000);
    assert_eq!(offset, Some(5 * 3600 + 30 * 60));
    assert_eq!(to_timestamp("2000-01-02", "YYYY-MM-DD").unwrap(), (86_400_000_000, None));
}
