//! Unit tests. Expected strings come from a PostgreSQL 15 server: the
//! `testdata/*.tsv` tables were produced by running each expression there
//! (errors as `ERR <sqlstate> <message>[ DETAIL <detail>]`).

use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};

use super::*;
use crate::SqlError;

fn n(s: &str) -> Numeric {
    Numeric::parse(s).unwrap_or_else(|e| panic!("parse {s:?}: {e:?}"))
}

/// Formats a result the way the test tables hold it.
fn show<T: ToString>(r: Result<T, SqlError>) -> String {
    match r {
        Ok(v) => v.to_string(),
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

fn show_opt<T: ToString>(r: Option<T>) -> String {
    r.map_or_else(|| "NULL".to_owned(), |v| v.to_string())
}

/// Runs every line of a table through `eval`, reporting all mismatches.
fn check_table(name: &str, table: &str, eval: impl Fn(&[&str]) -> Option<String>) {
    let mut failures = Vec::new();
    let mut count = 0;
    for line in table.lines() {
        let fields: Vec<&str> = line.split('\t').collect();
        let (expected, args) = fields.split_last().expect("non-empty line");
        let started = std::time::Instant::now();
        let Some(got) = eval(args) else { continue };
        if started.elapsed().as_millis() > 500 {
            eprintln!("slow: {args:?} {:?}", started.elapsed());
        }
        count += 1;
        if !same(&got, expected) {
            failures.push(format!("{args:?}: got {:.200} expected {:.200}", got, expected));
        }
    }
    assert!(count > 0, "{name}: no cases ran");
    assert!(
        failures.is_empty(),
        "{name}: {} of {count} failed:\n{}",
        failures.len(),
        failures[..failures.len().min(40)].join("\n")
    );
}

/// Equal, or both floats with the same value (PostgreSQL prints floats in
/// its own shortest form).
fn same(got: &str, expected: &str) -> bool {
    if got == expected {
        return true;
    }
    if let Some(g) = got.strip_prefix("f4:") {
        if let (Ok(a), Ok(b)) = (g.parse::<f32>(), expected.parse::<f32>()) {
            return a == b || (a.is_nan() && b.is_nan());
        }
    }
    if let Some(g) = got.strip_prefix("f:") {
        if let (Ok(a), Ok(b)) = (g.parse::<f64>(), expected.parse::<f64>()) {
            return a == b || (a.is_nan() && b.is_nan());
        }
    }
    false
}

fn hex(bytes: &[u8]) -> String {
    let mut s = String::from("\\x");
    for b in bytes {
        s.push_str(&format!("{b:02x}"));
    }
    s
}

#[test]
fn size_and_inline() {
    assert!(std::mem::size_of::<Numeric>() <= 16);
    assert!(n("123456.78").is_inline());
    assert!(n("-922337203685477.5807").is_inline());
    assert!(!n("123456789012345678901234567890").is_inline());
}

#[test]
fn input_table() {
    check_table("input", include_str!("testdata/input.tsv"), |a| Some(show(Numeric::parse(a[1]))));
}

#[test]
fn unary_table() {
    check_table("unary", include_str!("testdata/unary.tsv"), |a| {
        let x = match Numeric::parse(a[1]) {
            Ok(x) => x,
            Err(e) => return Some(show::<Numeric>(Err(e))),
        };
        Some(match a[0] {
            "out" => x.to_string(),
            "neg" => x.neg().to_string(),
            "abs" => x.abs().to_string(),
            "sign" => x.sign().to_string(),
            "sqrt" => show(x.sqrt()),
            "exp" => show(x.exp()),
            "ln" => show(x.ln()),
            "log10" => show(x.log10()),
            "ceil" => show(x.ceil()),
            "floor" => show(x.floor()),
            "round0" => show(x.round(0)),
            "round2" => show(x.round(2)),
            "roundm2" => show(x.round(-2)),
            "trunc1" => show(x.trunc(1)),
            "truncm1" => show(x.trunc(-1)),
            "trunc0" => show(x.trunc(0)),
            "scale" => show_opt(x.scale()),
            "min_scale" => show_opt(x.min_scale()),
            "trim_scale" => x.trim_scale().to_string(),
            "int8" => show(x.to_i64()),
            "int4" => show(x.to_i32()),
            "int2" => show(x.to_i16()),
            "float8" => match x.to_f64() {
                Ok(v) => format!("f:{v:e}"),
                Err(e) => show::<f64>(Err(e)),
            },
            "float4" => match x.to_f32() {
                Ok(v) => format!("f4:{v:e}"),
                Err(e) => show::<f32>(Err(e)),
            },
            "send" => {
                let mut out = Vec::new();
                x.to_wire(&mut out);
                hex(&out)
            }
            "typ52" => show(x.apply_typmod(5, 2)),
            "typ103" => show(x.apply_typmod(10, 3)),
            "typ3m2" => show(x.apply_typmod(3, -2)),
            "typ24" => show(x.apply_typmod(2, 4)),
            op => panic!("unknown op {op}"),
        })
    });
}

#[test]
fn binary_table() {
    check_table("binary", include_str!("testdata/binary.tsv"), |a| {
        let (x, y) = (n(a[1]), n(a[2]));
        Some(match a[0] {
            "add" => show(x.add(&y)),
            "sub" => show(x.sub(&y)),
            "mul" => show(x.mul(&y)),
            "div" => show(x.div(&y)),
            "mod" => show(x.rem(&y)),
            "divt" => show(x.div_trunc(&y)),
            "gcd" => show(x.gcd(&y)),
            "lcm" => show(x.lcm(&y)),
            "cmp" => (x.cmp(&y) as i32).to_string(),
            op => panic!("unknown op {op}"),
        })
    });
}

#[test]
fn power_table() {
    check_table("power", include_str!("testdata/power.tsv"), |a| {
        let (x, y) = (n(a[1]), n(a[2]));
        Some(match a[0] {
            "pow" => show(x.pow(&y)),
            "log" => show(Numeric::log(&x, &y)),
            op => panic!("unknown op {op}"),
        })
    });
}

#[test]
fn equal_values_hash_equal() {
    let h = |x: &Numeric| {
        let mut s = DefaultHasher::new();
        x.hash(&mut s);
        s.finish()
    };
    let pairs = [
        ("1.0", "1.00"),
        ("1", "1.00000000000000000000000000000"),
        ("-123.4500", "-123.45"),
        ("100", "1e2"),
        ("0", "0.000000000000000000000000000000000000000000000e-5"),
        ("12345678901234567890.5", "12345678901234567890.500"),
        ("NaN", "nan"),
    ];
    for (a, b) in pairs {
        let (x, y) = (n(a), n(b));
        assert_eq!(x, y, "{a} = {b}");
        assert_eq!(h(&x), h(&y), "hash {a} {b}");
    }
    assert_ne!(n("1.5"), n("1.05"));
}

#[test]
fn ordering_of_specials() {
    let mut v: Vec<Numeric> =
        ["NaN", "1", "-Infinity", "Infinity", "-1e100", "1e100", "0"].iter().map(|s| n(s)).collect();
    v.sort();
    let s: Vec<String> = v.iter().map(|x| x.to_string()).collect();
    assert_eq!(s[0], "-Infinity");
    assert_eq!(s[6], "NaN");
    assert_eq!(s[5], "Infinity");
    assert_eq!(s[2], "0");
}

#[test]
fn random_table() {
    check_table("random", include_str!("testdata/random.tsv"), |a| {
        let x = n(a[1]);
        Some(match a[0] {
            "sqrt" => show(x.sqrt()),
            "ln" => show(x.ln()),
            "log10" => show(x.log10()),
            "exp" => show(x.exp()),
            "log" => show(Numeric::log(&x, &n(a[2]))),
            "pow" => show(x.pow(&n(a[2]))),
            "div" => show(x.div(&n(a[2]))),
            "mul" => show(x.mul(&n(a[2]))),
            "mod" => show(x.rem(&n(a[2]))),
            "f8" => Numeric::from_f64(a[1].parse().expect("f64")).to_string(),
            "f4" => {
                // float4in rejects these before numeric sees them.
                let v: f32 = a[1].parse().expect("f32");
                if v.is_infinite() || v == 0.0 {
                    return None;
                }
                Numeric::from_f32(v).to_string()
            }
            op => panic!("unknown op {op}"),
        })
    });
}
