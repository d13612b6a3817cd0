//! Tests of aggregates, binary formats, typmods, conversions and the
//! property tests; expected values come from PostgreSQL 15.

use proptest::prelude::*;
use snapscale_sqlstate::SqlState;

use super::*;

fn n(s: &str) -> Numeric {
    Numeric::parse(s).unwrap_or_else(|e| panic!("parse {s:?}: {e:?}"))
}

fn opt(r: Result<Option<Numeric>, crate::SqlError>) -> String {
    match r.expect("aggregate") {
        Some(v) => v.to_string(),
        None => "NULL".to_owned(),
    }
}

/// sum, avg, var_samp, var_pop, stddev_samp, stddev_pop of `inputs`.
fn aggs(inputs: &[&str]) -> Vec<String> {
    let mut v = NumericVariance::new();
    for s in inputs {
        v.add(&n(s));
    }
    vec![
        opt(v.sums().sum()),
        opt(v.sums().avg()),
        opt(v.var_samp()),
        opt(v.var_pop()),
        opt(v.stddev_samp()),
        opt(v.stddev_pop()),
    ]
}

#[test]
fn aggregates_match_postgres() {
    let cases: [(&[&str], &str); 8] = [
        (&["1", "2.5", "-3.25", "100.001"], "100.251|25.0627500000000000|2501.8155835833333333|1876.3616876875000000|50.0181525406859998|43.3169907505992387"),
        (&["NaN", "1"], "NaN|NaN|NaN|NaN|NaN|NaN"),
        (&["Infinity", "1"], "Infinity|Infinity|NaN|NaN|NaN|NaN"),
        (&["Infinity", "-Infinity"], "NaN|NaN|NaN|NaN|NaN|NaN"),
        (&["42.42"], "42.42|42.4200000000000000|NULL|0|NULL|0"),
        (&["-7", "1e-20", "12345678901234567890.5"], "12345678901234567883.50000000000000000001|4115226300411522627.83333333333333333334|50805262510796122533556877028298531757.5421810703292181070550000000000000000000|33870175007197415022371251352199021171.6947873802194787380366666666666666666667|7127781036956461005.7307363231419473234196796184480962244872|5819808846276432043.6835561211681722726523543616764449168975"),
        (&["0.00", "0.000"], "0.000|0.00000000000000000000|0|0|0|0"),
        (&["-Infinity"], "-Infinity|-Infinity|NULL|NaN|NULL|NaN"),
    ];
    for (inputs, expected) in cases {
        assert_eq!(aggs(inputs).join("|"), expected, "{inputs:?}");
    }
    assert_eq!(aggs(&[]).join("|"), "NULL|NULL|NULL|NULL|NULL|NULL");
}

#[test]
fn aggregates_over_many_rows_and_combine() {
    // (i*7919 % 100003)::numeric(12,2)/100 for i in 1..=1000, split in two.
    let mut a = NumericVariance::new();
    let mut b = NumericVariance::new();
    for i in 1..=1000i64 {
        let x = Numeric::from(i * 7919 % 100003)
            .apply_typmod(12, 2)
            .unwrap()
            .div(&Numeric::from(100i64))
            .unwrap();
        if i % 2 == 0 {
            a.add(&x)
        } else {
            b.add(&x)
        }
    }
    a.combine(&b);
    let got = [a.sums().sum(), a.sums().avg(), a.var_samp(), a.var_pop(), a.stddev_samp(), a.stddev_pop()]
        .map(opt)
        .join("|");
    assert_eq!(got, "499420.98000000000000000000|499.42098000000000000000|83542.9990949345345345345345345345345345345345|83459.4560958396000000000000000000000000000000|289.0380582119498922346270706611661947743636|288.8935030350104636980608515651644185327520");

    let mut v = NumericVariance::new();
    for i in 1..=1000i64 {
        v.add_i64((i * i * 7919) % 1_000_000_007 - 500_000_000);
    }
    let got = [v.sums().sum(), v.sums().avg(), v.var_samp(), v.var_pop(), v.stddev_samp(), v.stddev_pop()]
        .map(opt)
        .join("|");
    assert_eq!(
        got,
        "-70372528998|-70372528.998000000000|89840368979542134|89750528610562592|299733830|299583926"
    );
}

#[test]
fn sum_of_a_million_inline_values_stays_exact() {
    let mut s = NumericSum::new();
    let x = n("12345678.91");
    for _ in 0..1_000_000 {
        s.add(&x);
        s.add_i64(i64::MAX);
    }
    assert_eq!(s.count(), 2_000_000);
    assert_eq!(s.sum().unwrap().unwrap().to_string(), "9223372036867121485910000.00");
}

#[test]
fn wire_round_trip_and_postgres_bytes() {
    let cases = [
        ("Infinity", "00000000d0000020"),
        ("-Infinity", "00000000f0000020"),
        ("NaN", "00000000c0000000"),
        ("0.00", "0000000000000002"),
        ("-12345.678", "0003000140000003000109291a7c"),
        ("1e-20", "0001fffb000000140001"),
    ];
    for (s, hex) in cases {
        let mut out = Vec::new();
        n(s).to_wire(&mut out);
        let got: String = out.iter().map(|b| format!("{b:02x}")).collect();
        assert_eq!(got, hex, "{s}");
        let back = Numeric::from_wire(&out).unwrap();
        assert_eq!(back.to_string(), n(s).to_string());
    }
    let err = |bytes: &[u8]| Numeric::from_wire(bytes).unwrap_err();
    let e = err(&[0, 0, 0, 0, 0x12, 0x34, 0, 0]);
    assert_eq!(
        (e.code, e.message.as_str()),
        (SqlState::INVALID_BINARY_REPRESENTATION, "invalid sign in external \"numeric\" value")
    );
    let e = err(&[0, 0, 0, 0, 0, 0, 0x40, 0]);
    assert_eq!(e.message, "invalid scale in external \"numeric\" value");
    let e = err(&[0, 1, 0, 0, 0, 0, 0, 0, 0x27, 0x10]);
    assert_eq!(e.message, "invalid digit in external \"numeric\" value");
    let e = err(&[0, 1, 0, 0]);
    assert_eq!(e.code, SqlState::PROTOCOL_VIOLATION);
    // Digits hidden by the scale are truncated: 1.2345 sent with dscale 2.
    let v = Numeric::from_wire(&[0, 2, 0, 0, 0, 0, 0, 2, 0, 1, 0x09, 0x29]).unwrap();
    assert_eq!(v.to_string(), "1.23");
}

#[test]
fn storage_encoding_round_trips() {
    let values = [
        "0",
        "1.50",
        "-922337203685477.5808",
        "123456789012345678901234567890.000001",
        "NaN",
        "Infinity",
        "-Infinity",
        "1e-16383",
    ];
    let mut buf = Vec::new();
    for s in values {
        n(s).encode(&mut buf);
    }
    assert!(buf.len() < 120);
    let mut at = 0;
    for s in values {
        let (v, used) = Numeric::decode(&buf[at..]).unwrap();
        at += used;
        assert_eq!(v.to_string(), n(s).to_string());
    }
    assert_eq!(at, buf.len());
    let mut small = Vec::new();
    n("12.34").encode(&mut small);
    assert_eq!(small.len(), 4);
}

#[test]
fn typmod_helpers() {
    assert_eq!(make_numeric_typmod(10, 2), (10 << 16 | 2) + 4);
    assert_eq!(numeric_typmod_decode(make_numeric_typmod(5, -3)), Some((5, -3)));
    assert_eq!(numeric_typmod_decode(-1), None);
    assert_eq!(numeric_typmod_out(make_numeric_typmod(1000, 1000)), "(1000,1000)");
    let e = numeric_typmod_in(0, Some(0)).unwrap_err();
    assert_eq!(
        (e.code, e.message.as_str()),
        (SqlState::INVALID_PARAMETER_VALUE, "NUMERIC precision 0 must be between 1 and 1000")
    );
    let e = numeric_typmod_in(5, Some(2000)).unwrap_err();
    assert_eq!(e.message, "NUMERIC scale 2000 must be between -1000 and 1000");
    assert_eq!(numeric_typmod_in(7, None).unwrap(), make_numeric_typmod(7, 0));
    let e = n("12345").apply_typmod_raw(make_numeric_typmod(4, 0)).unwrap_err();
    assert_eq!(
        e.detail.as_deref(),
        Some("A field with precision 4, scale 0 must round to an absolute value less than 10^4.")
    );
    let e = n("1").apply_typmod(2, 2).unwrap_err();
    assert_eq!(
        e.detail.as_deref(),
        Some("A field with precision 2, scale 2 must round to an absolute value less than 1.")
    );
    assert_eq!(n("9.995").apply_typmod(3, 2).unwrap_err().code, SqlState::NUMERIC_VALUE_OUT_OF_RANGE);
    assert_eq!(n("NaN").apply_typmod(3, 2).unwrap().to_string(), "NaN");
}

#[test]
fn misc_functions() {
    assert_eq!(Numeric::factorial(20).unwrap().to_string(), "2432902008176640000");
    assert_eq!(Numeric::factorial(25).unwrap().to_string(), "15511210043330985984000000");
    assert_eq!(Numeric::factorial(0).unwrap().to_string(), "1");
    assert_eq!(Numeric::factorial(-1).unwrap_err().message, "factorial of a negative number is undefined");
    assert_eq!(Numeric::factorial(32178).unwrap_err().message, "value overflows numeric format");
    assert_eq!(Numeric::factorial(1000).unwrap().to_string().len(), 2568);
    let wb = |o: &str, l: &str, h: &str, c: i32| Numeric::width_bucket(&n(o), &n(l), &n(h), c);
    assert_eq!(wb("5.35", "0.024", "10.06", 5).unwrap(), 3);
    assert_eq!(wb("-1", "0", "10", 5).unwrap(), 0);
    assert_eq!(wb("10", "0", "10", 5).unwrap(), 6);
    assert_eq!(wb("7", "10", "0", 5).unwrap(), 2);
    assert_eq!(wb("Infinity", "0", "10", 5).unwrap(), 6);
    assert_eq!(wb("1", "0", "10", 0).unwrap_err().message, "count must be greater than zero");
    assert_eq!(
        wb("NaN", "0", "10", 5).unwrap_err().message,
        "operand, lower bound, and upper bound cannot be NaN"
    );
    assert_eq!(wb("1", "0", "Infinity", 5).unwrap_err().message, "lower and upper bounds must be finite");
    assert_eq!(wb("1", "5", "5", 5).unwrap_err().code, SqlState::INVALID_ARGUMENT_FOR_WIDTH_BUCKET_FUNCTION);
    assert_eq!(wb("10", "0", "10", i32::MAX).unwrap_err().message, "integer out of range");
    assert_eq!(Numeric::from_f64(0.1).to_string(), "0.1");
    assert_eq!(Numeric::from_f64(1e20).to_string(), "100000000000000000000");
    assert_eq!(Numeric::from_f64(-1.5e-7).to_string(), "-0.00000015");
    assert_eq!(Numeric::from_f64(f64::NAN).to_string(), "NaN");
    assert_eq!(Numeric::from_f32(0.1).to_string(), "0.1");
    assert_eq!(Numeric::from(i64::MIN).neg().to_string(), "9223372036854775808");
    let big = "9".repeat(100000);
    assert_eq!(n(&big).to_string(), big);
}

#[test]
#[ignore = "slow in debug builds"]
fn sqrt_of_largest_magnitude() {
    let r = n("1e131071").sqrt().unwrap().to_string();
    assert!(r.starts_with("316227766016837933199889354443271853371955513932521682685750485279259443863923822134424810837930029518734728415284005514854885603045388001469051959670015390334492165717925994065915015347411333948412408531692957709047157646188068014"));
}

/// Inline-sized values with varied scales.
fn small_numeric() -> impl Strategy<Value = (i64, u16)> {
    (-1_000_000_000_000i64..1_000_000_000_000, 0u16..12)
}

fn from_parts(c: i64, s: u16) -> Numeric {
    Numeric::from_scaled(c, s).unwrap()
}

/// Reference: `a / 10^sa` as a big integer coefficient string at scale `s`.
fn reference(v: i128, scale: u16) -> String {
    let neg = v < 0;
    let digits = v.unsigned_abs().to_string();
    let s = usize::from(scale);
    let body = if s == 0 {
        digits
    } else if digits.len() > s {
        format!("{}.{}", &digits[..digits.len() - s], &digits[digits.len() - s..])
    } else {
        format!("0.{}{}", "0".repeat(s - digits.len()), digits)
    };
    if neg {
        format!("-{body}")
    } else {
        body
    }
}

proptest! {
    #[test]
    fn parse_display_round_trip(c in any::<i64>(), s in 0u16..40, big in proptest::collection::vec(0u8..10, 0..60)) {
        let x = from_parts(c, s);
        let y = Numeric::parse(&x.to_string()).unwrap();
        prop_assert_eq!(&x, &y);
        prop_assert_eq!(x.to_string(), y.to_string());
        let text: String = big.iter().map(|d| char::from(b'0' + d)).collect();
        if !text.is_empty() {
            let z = Numeric::parse(&format!("-{text}.{text}")).unwrap();
            prop_assert_eq!(Numeric::parse(&z.to_string()).unwrap().to_string(), z.to_string());
        }
    }

    #[test]
    fn arithmetic_matches_reference((a, sa) in small_numeric(), (b, sb) in small_numeric()) {
        let (x, y) = (from_parts(a, sa), from_parts(b, sb));
        let s = sa.max(sb);
        let ai = i128::from(a) * 10i128.pow(u32::from(s - sa));
        let bi = i128::from(b) * 10i128.pow(u32::from(s - sb));
        prop_assert_eq!(x.add(&y).unwrap().to_string(), reference(ai + bi, s));
        prop_assert_eq!(x.sub(&y).unwrap().to_string(), reference(ai - bi, s));
        prop_assert_eq!(x.mul(&y).unwrap().to_string(), reference(i128::from(a) * i128::from(b), sa + sb));
        prop_assert_eq!(x.cmp(&y), ai.cmp(&bi));
        // Big-representation path agrees with the inline one.
        let xb = x.mul(&n("1.00000000000000000000000000000")).unwrap();
        prop_assert_eq!(xb.add(&y).unwrap().trim_scale().to_string(), x.add(&y).unwrap().trim_scale().to_string());
        if b != 0 {
            let q = x.div(&y).unwrap();
            // q * y is within half a unit of the last place of x.
            let back = q.mul(&y).unwrap().sub(&x).unwrap().abs();
            let ulp = Numeric::parse(&format!("1e-{}", q.scale().unwrap())).unwrap().mul(&y.abs()).unwrap();
            prop_assert!(back <= ulp);
            prop_assert_eq!(x.rem(&y).unwrap().to_string(), reference(ai % bi, s));
        }
    }
}
