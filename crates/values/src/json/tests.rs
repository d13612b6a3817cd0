//! Unit tests of json and jsonb against PostgreSQL 15's outputs.

use std::cell::RefCell;

thread_local! {
    /// The CONTEXT text of the last json error (see `attach_context`).
    pub(crate) static LAST_CONTEXT: RefCell<Option<String>> = const { RefCell::new(None) };
}

use snapscale_sqlstate::SqlState;

use super::*;
use crate::SqlError;

/// A TSV field of the testdata: `\N` is NULL, `\t` `\n` `\\` escaped
/// (also read by path/tests.rs).
pub(crate) fn unesc(s: &str) -> Option<String> {
    if s == "\\N" {
        return None;
    }
    let mut out = String::new();
    let mut it = s.chars();
    while let Some(c) = it.next() {
        if c == '\\' {
            match it.next() {
                Some('t') => out.push('\t'),
                Some('n') => out.push('\n'),
                Some(o) => out.push(o),
                None => {}
            }
        } else {
            out.push(c);
        }
    }
    Some(out)
}

type Outcome = Result<Option<String>, SqlError>;

/// Compares an outcome with a table row's expected fields; returns a
/// description of the mismatch.
fn check(got: &Outcome, exp: &[&str], context: Option<Option<String>>) -> Option<String> {
    match (got, exp[0]) {
        (Ok(v), "ok") => {
            let want = unesc(exp[1]);
            (v != &want).then(|| format!("got {v:?}, want {want:?}"))
        }
        (Err(e), "err") => {
            let want_code = SqlState::from_code(exp[1]);
            let mut bad = Vec::new();
            if Some(e.code) != want_code {
                bad.push(format!("code {:?} want {}", e.code, exp[1]));
            }
            if Some(e.message.clone()) != unesc(exp[2]) {
                bad.push(format!("message {:?} want {:?}", e.message, unesc(exp[2])));
            }
            if e.detail != unesc(exp[3]) {
                bad.push(format!("detail {:?} want {:?}", e.detail, unesc(exp[3])));
            }
            if e.hint != unesc(exp[4]) {
                bad.push(format!("hint {:?} want {:?}", e.hint, unesc(exp[4])));
            }
            if let Some(ctx) = context {
                if ctx != unesc(exp[5]) {
                    bad.push(format!("context {:?} want {:?}", ctx, unesc(exp[5])));
                }
            }
            (!bad.is_empty()).then(|| bad.join("; "))
        }
        (Ok(v), _) => Some(format!("got {v:?}, want error {exp:?}")),
        (Err(e), _) => Some(format!("got error {e:?}, want {exp:?}")),
    }
}

fn take_context() -> Option<String> {
    LAST_CONTEXT.with(|c| c.borrow_mut().take())
}

fn run_table(name: &str, data: &str, eval: impl Fn(&str, &str, &str) -> Outcome, with_context: bool) {
    let mut failures = Vec::new();
    let mut n = 0;
    for line in data.lines() {
        let f: Vec<&str> = line.split('\t').collect();
        let (op, input, arg, exp) =
            if name == "input" { (f[0], f[1], "", &f[2..]) } else { (f[0], f[1], f[2], &f[3..]) };
        let input = unesc(input).unwrap_or_default();
        let arg = unesc(arg).unwrap_or_default();
        take_context();
        let got = eval(op, &input, &arg);
        let ctx = if with_context { Some(take_context()) } else { None };
        n += 1;
        if let Some(why) = check(&got, exp, ctx) {
            failures.push(format!("{op} {input:?} {arg:?}: {why}"));
        }
    }
    assert!(failures.is_empty(), "{} of {n} {name} cases fail:\n{}", failures.len(), failures.join("\n"));
}

#[test]
fn input_table() {
    run_table(
        "input",
        include_str!("testdata/input.tsv"),
        |op, input, _| match op {
            "json" => json_in(input).map(|()| Some(input.to_owned())),
            "jsonb" => jsonb_in(input).map(|j| Some(j.to_text())),
            _ => jsonb_in(input).map(|j| Some(j.pretty())),
        },
        true,
    );
}

fn path_arg(s: &str) -> Vec<Option<String>> {
    match &Jsonb::parse(s).unwrap() {
        Jsonb::Array(a) => a
            .iter()
            .map(|v| match v {
                Jsonb::String(s) => Some(s.to_string()),
                _ => None,
            })
            .collect(),
        _ => panic!("bad path {s}"),
    }
}

fn steps(p: &[Option<String>]) -> Vec<Option<&str>> {
    p.iter().map(|s| s.as_deref()).collect()
}

fn rows(v: Vec<String>) -> Option<String> {
    (!v.is_empty()).then(|| v.join(","))
}

fn bool_text(b: bool) -> Outcome {
    Ok(Some(if b { "t" } else { "f" }.to_owned()))
}

fn jsonb_op(op: &str, l: &str, arg: &str) -> Outcome {
    let j = Jsonb::parse(l).unwrap();
    let text = |r: Result<Jsonb, SqlError>| r.map(|v| Some(v.to_text()));
    match op {
        "typeof" => Ok(Some(j.type_name().to_owned())),
        "array_length" => j.array_length().map(|n| Some(n.to_string())),
        "object_keys" => j.object_keys().map(rows),
        "strip_nulls" => Ok(Some(j.strip_nulls().to_text())),
        "each" => j.each().map(|r| rows(r.into_iter().map(|(k, v)| format!("{k}={v}")).collect())),
        "each_text" => j.each_text().map(|r| {
            rows(r.into_iter().map(|(k, v)| format!("{k}={}", v.unwrap_or("<null>".into()))).collect())
        }),
        "array_elements" => j.array_elements().map(|r| rows(r.iter().map(Jsonb::to_text).collect())),
        "array_elements_text" => j
            .array_elements_text()
            .map(|r| rows(r.into_iter().map(|v| v.unwrap_or("<null>".into())).collect())),
        "->" => Ok(j.field(arg).map(|v| v.to_text())),
        "->>" => Ok(j.field_text(arg)),
        "?" => bool_text(j.exists(arg)),
        "-" => text(j.delete_key(arg)),
        "->i" => Ok(j.element(arg.parse().unwrap()).map(|v| v.to_text())),
        "->>i" => Ok(j.element_text(arg.parse().unwrap())),
        "-i" => text(j.delete_index(arg.parse().unwrap())),
        "#>" => Ok(j.extract_path(&steps(&path_arg(arg))).map(|v| v.to_text())),
        "#>>" => Ok(j.extract_path_text(&steps(&path_arg(arg)))),
        "#-" => text(j.delete_path(&steps(&path_arg(arg)))),
        "set" | "set_nocreate" | "insert" | "insert_after" => {
            let a = Jsonb::parse(arg).unwrap();
            let (Jsonb::Array(parts), _) = (&a, ()) else { panic!() };
            let path = path_arg(&parts[0].to_text());
            let nv = match &parts[1] {
                Jsonb::String(s) => Jsonb::parse(s).unwrap(),
                _ => panic!(),
            };
            let p = steps(&path);
            text(match op {
                "set" => j.set_path(&p, &nv, true),
                "set_nocreate" => j.set_path(&p, &nv, false),
                "insert" => j.insert_path(&p, &nv, false),
                _ => j.insert_path(&p, &nv, true),
            })
        }
        "?|" => bool_text(j.exists_any(&steps(&path_arg(arg)))),
        "?&" => bool_text(j.exists_all(&steps(&path_arg(arg)))),
        "-a" => text(j.delete_keys(&steps(&path_arg(arg)))),
        "@>" => bool_text(j.contains(&Jsonb::parse(arg).unwrap())),
        "||" => Ok(Some(j.concat(&Jsonb::parse(arg).unwrap()).to_text())),
        "cmp" => {
            let r = Jsonb::parse(arg).unwrap();
            Ok(Some(
                match compare(&j, &r) {
                    std::cmp::Ordering::Less => "<",
                    std::cmp::Ordering::Equal => "=",
                    std::cmp::Ordering::Greater => ">",
                }
                .to_owned(),
            ))
        }
        _ => panic!("unknown op {op}"),
    }
}

#[test]
fn jsonb_ops_table() {
    run_table("ops", include_str!("testdata/ops.tsv"), jsonb_op, false);
}

fn json_op(op: &str, l: &str, arg: &str) -> Outcome {
    match op {
        "typeof" => return json_typeof(l).map(|s| Some(s.to_owned())),
        "array_length" => return json_array_length(l).map(|n| Some(n.to_string())),
        "object_keys" => return json_object_keys(l).map(rows),
        "each" => {
            return json_each(l).map(|r| rows(r.into_iter().map(|(k, v)| format!("{k}={v}")).collect()))
        }
        "each_text" => {
            return json_each_text(l).map(|r| {
                rows(r.into_iter().map(|(k, v)| format!("{k}={}", v.unwrap_or("<null>".into()))).collect())
            })
        }
        "array_elements" => {
            return json_array_elements(l).map(|r| rows(r.iter().map(|s| s.to_string()).collect()))
        }
        "array_elements_text" => {
            return json_array_elements_text(l)
                .map(|r| rows(r.into_iter().map(|v| v.unwrap_or("<null>".into())).collect()))
        }
        "#>" => return json_extract_path(l, &steps(&path_arg(arg))).map(|v| v.map(str::to_owned)),
        "#>>" => return json_extract_path_text(l, &steps(&path_arg(arg))),
        "strip_nulls" => return json_strip_nulls(l).map(Some),
        _ => {}
    }
    let j = JsonText::parse(l)?;
    match op {
        "object_keys" => j.object_keys().map(rows),
        "strip_nulls" => Ok(Some(j.strip_nulls())),
        "each" => j.each().map(|r| rows(r.into_iter().map(|(k, v)| format!("{k}={v}")).collect())),
        "each_text" => j.each_text().map(|r| {
            rows(r.into_iter().map(|(k, v)| format!("{k}={}", v.unwrap_or("<null>".into()))).collect())
        }),
        "array_elements" => j.array_elements().map(|r| rows(r.iter().map(|s| s.to_string()).collect())),
        "array_elements_text" => j
            .array_elements_text()
            .map(|r| rows(r.into_iter().map(|v| v.unwrap_or("<null>".into())).collect())),
        "->" => Ok(j.field(arg).map(str::to_owned)),
        "->>" => Ok(j.field_text(arg)),
        "->i" => Ok(j.element(arg.parse().unwrap()).map(str::to_owned)),
        "->>i" => Ok(j.element_text(arg.parse().unwrap())),
        "#>" => Ok(j.extract_path(&steps(&path_arg(arg))).map(str::to_owned)),
        "#>>" => Ok(j.extract_path_text(&steps(&path_arg(arg)))),
        _ => panic!("unknown op {op}"),
    }
}

#[test]
fn json_ops_table() {
    run_table("json ops", include_str!("testdata/json_ops.tsv"), json_op, false);
}

fn nested(open: &str, inner: &str, close: &str, n: usize) -> String {
    format!("{}{}{}", open.repeat(n), inner, close.repeat(n))
}

#[test]
fn nesting_limit_matches_postgres() {
    // PostgreSQL 15 with max_stack_depth = 2MB accepts 14545 nested arrays
    // and 13090 nested objects.
    for (open, inner, close, max) in [("[", "", "]", 14545), ("{\"a\":", "1", "}", 13090)] {
        assert!(json_in(&nested(open, inner, close, max)).is_ok());
        let deep = jsonb_in(&nested(open, inner, close, max)).unwrap();
        // Output, comparison, hashing, encoding and drop don't recurse.
        assert_eq!(deep.to_text(), nested(&open.replace(':', ": "), inner, close, max));
        assert_eq!(deep.cmp(&deep.clone()), std::cmp::Ordering::Equal);
        let mut buf = Vec::new();
        deep.encode(&mut buf);
        let (back, used) = Jsonb::decode(&buf).unwrap();
        assert_eq!(used, buf.len());
        assert_eq!(back, deep);
        let e = jsonb_in(&nested(open, inner, close, max + 1)).unwrap_err();
        assert_eq!(e.code, SqlState::STATEMENT_TOO_COMPLEX);
        assert_eq!(e.message, "stack depth limit exceeded");
        assert_eq!(
            e.hint.as_deref(),
            Some("Increase the configuration parameter \"max_stack_depth\" (currently 2048kB), after ensuring the platform's stack depth limit is adequate.")
        );
    }
    let e = jsonb_in(&nested("[", "", "]", 1_000_000)).unwrap_err();
    assert_eq!(e.code, SqlState::STATEMENT_TOO_COMPLEX);
    assert_eq!(json_in(&"[".repeat(1_000_000)).unwrap_err().code, SqlState::STATEMENT_TOO_COMPLEX);
}

#[test]
fn normalisation_and_output() {
    let j = jsonb_in(r#"{"b": 1, "aa": [1, 2.50, "x\u00e9\n"], "a": {"c": null}, "b": true}"#).unwrap();
    assert_eq!(j.to_text(), r#"{"a": {"c": null}, "b": true, "aa": [1, 2.50, "xé\n"]}"#);
    assert_eq!(
        j.pretty(),
        "{\n    \"a\": {\n        \"c\": null\n    },\n    \"b\": true,\n    \"aa\": [\n        1,\n        2.50,\n        \"xé\\n\"\n    ]\n}"
    );
    assert_eq!(
        Jsonb::object(vec![("b", Jsonb::Null), ("a", Jsonb::Bool(true))]).to_text(),
        r#"{"a": true, "b": null}"#
    );
}

#[test]
fn equality_and_hash_follow_values() {
    use std::collections::hash_map::DefaultHasher;
    use std::hash::{Hash, Hasher};
    let h = |j: &Jsonb| {
        let mut s = DefaultHasher::new();
        j.hash(&mut s);
        s.finish()
    };
    let a = jsonb_in(r#"{"a": [1.0, 2], "b": "x"}"#).unwrap();
    let b = jsonb_in(r#"{"b": "x", "a": [1, 2.000]}"#).unwrap();
    assert_eq!(a, b);
    assert_eq!(h(&a), h(&b));
    assert_ne!(jsonb_in("1").unwrap(), jsonb_in("[1]").unwrap());
    // A top-level scalar sorts after an empty array and before [1].
    assert!(jsonb_in("1").unwrap() > jsonb_in("[]").unwrap());
    assert!(jsonb_in("1").unwrap() < jsonb_in("[1]").unwrap());
}

#[test]
fn wire_formats() {
    let j = jsonb_in(r#"{"a": [1, "x", null, true, {"b": -1.5e3}], "": {}}"#).unwrap();
    let mut w = Vec::new();
    j.to_wire(&mut w);
    assert_eq!(w[0], 1);
    assert_eq!(&w[1..], j.to_text().as_bytes());
    assert_eq!(Jsonb::from_wire(&w).unwrap(), j);
    let e = Jsonb::from_wire(b"\x02{}").unwrap_err();
    assert_eq!(e.message, "unsupported jsonb version number 2");
    let mut buf = vec![9, 9];
    j.encode(&mut buf);
    buf.push(7);
    let (back, used) = Jsonb::decode(&buf[2..]).unwrap();
    assert_eq!(used, buf.len() - 3);
    assert_eq!(back.to_text(), j.to_text());
    assert!(Jsonb::decode(&buf[2..5]).is_err());
    let mut t = Vec::new();
    json_to_wire("[1,  2]", &mut t);
    assert_eq!(json_from_wire(&t).unwrap(), "[1,  2]");
    assert_eq!(
        json_from_wire(b"[1,").unwrap_err().detail.as_deref(),
        Some("The input string ended unexpectedly.")
    );
}

fn n(s: &str) -> JsonInput {
    JsonInput::Numeric(crate::numeric::Numeric::parse(s).unwrap())
}

fn t(s: &str) -> JsonInput {
    JsonInput::Text(s.to_owned())
}

#[test]
fn builders_match_postgres() {
    // Expected texts from PostgreSQL 15.
    let args = [
        t("a"),
        n("1"),
        t("b"),
        t("x"),
        t("c"),
        JsonInput::Null,
        t("d"),
        JsonInput::Json("[1, 2]".into()),
        t("e"),
        JsonInput::Bool(true),
    ];
    assert_eq!(
        json_build_object(&args).unwrap(),
        r#"{"a" : 1, "b" : "x", "c" : null, "d" : [1, 2], "e" : true}"#
    );
    assert_eq!(
        jsonb_build_object(&args).unwrap().to_text(),
        r#"{"a": 1, "b": "x", "c": null, "d": [1, 2], "e": true}"#
    );
    assert_eq!(json_build_object(&[]).unwrap(), "{}");
    assert_eq!(json_build_array(&[]), "[]");
    let e = json_build_object(&[t("a")]).unwrap_err();
    assert_eq!(e.message, "argument list must have even number of elements");
    assert_eq!(
        e.hint.as_deref(),
        Some("The arguments of json_build_object() must consist of alternating keys and values.")
    );
    let e = json_build_object(&[JsonInput::Null, n("1")]).unwrap_err();
    assert_eq!(
        (e.message.as_str(), e.hint.as_deref()),
        ("argument 1 cannot be null", Some("Object keys should be text."))
    );
    assert_eq!(
        jsonb_build_object(&[JsonInput::Null, n("1")]).unwrap_err().message,
        "argument 1: key must not be null"
    );
    assert_eq!(
        json_build_object(&[JsonInput::Json("{}".into()), n("1")]).unwrap_err().message,
        "key value must be scalar, not array, composite, or json"
    );
    assert_eq!(json_build_object(&[n("1.50"), n("NaN")]).unwrap(), r#"{"1.50" : "NaN"}"#);
    assert_eq!(
        json_build_array(&[n("1"), t("x"), JsonInput::Null, JsonInput::Json(r#"{"a" :1}"#.into())]),
        r#"[1, "x", null, {"a" :1}]"#
    );
    assert_eq!(to_json(&t("a\"b")), r#""a\"b""#);
    assert_eq!(to_json(&JsonInput::NumberText("Infinity".into())), r#""Infinity""#);
    assert_eq!(to_json(&JsonInput::NumberText("-1.5e+10".into())), "-1.5e+10");
    assert_eq!(to_jsonb(&n("1.50")).unwrap().to_text(), "1.50");

    let mut agg = JsonAgg::new();
    assert_eq!(agg.finish(), None);
    for v in [n("1"), n("2"), JsonInput::Null] {
        agg.add(&v);
    }
    assert_eq!(agg.finish().as_deref(), Some("[1, 2, null]"));
    let mut agg = JsonAgg::new();
    agg.add(&JsonInput::Structured("[1,2]".into()));
    agg.add(&JsonInput::Structured("[3]".into()));
    assert_eq!(agg.finish().as_deref(), Some("[[1,2], \n [3]]"));
    let mut oagg = JsonObjectAgg::new();
    oagg.add(&t("a"), &n("1")).unwrap();
    oagg.add(&t("b"), &n("2")).unwrap();
    assert_eq!(oagg.add(&JsonInput::Null, &n("2")).unwrap_err().message, "field name must not be null");
    assert_eq!(oagg.finish().as_deref(), Some(r#"{ "a" : 1, "b" : 2 }"#));
    let mut boagg = JsonbObjectAgg::new();
    for (k, v) in [("a", "1"), ("b", "2"), ("a", "3")] {
        boagg.add(&t(k), &n(v)).unwrap();
    }
    assert_eq!(boagg.finish().unwrap().to_text(), r#"{"a": 3, "b": 2}"#);
    let mut bagg = JsonbAgg::new();
    bagg.add(&n("1")).unwrap();
    bagg.add(&JsonInput::Json(r#"{"b":1,"a":2}"#.into())).unwrap();
    assert_eq!(bagg.finish().unwrap().to_text(), r#"[1, {"a": 2, "b": 1}]"#);

    let flat = [Some("a"), Some("1"), Some("b"), None];
    assert_eq!(json_object(&[4], &flat).unwrap(), r#"{"a" : "1", "b" : null}"#);
    assert_eq!(jsonb_object(&[2, 2], &flat).unwrap().to_text(), r#"{"a": "1", "b": null}"#);
    assert_eq!(json_object(&[3], &flat[..3]).unwrap_err().message, "array must have even number of elements");
    assert_eq!(json_object(&[2, 3], &flat).unwrap_err().message, "array must have two columns");
    assert_eq!(json_object(&[], &[]).unwrap(), "{}");
    assert_eq!(
        json_object(&[2], &[None, Some("x")]).unwrap_err().message,
        "null value not allowed for object key"
    );
    assert_eq!(
        json_object_two_arg(&[Some("a"), Some("b")], 1, &[Some("1"), None], 1).unwrap(),
        r#"{"a" : "1", "b" : null}"#
    );
    assert_eq!(
        jsonb_object_two_arg(&[Some("a")], 1, &[Some("1"), None], 1).unwrap_err().message,
        "mismatched array dimensions"
    );
}

#[test]
fn error_context_lines() {
    let e = json_in("{\"a\":\n\n  [1, x]}").unwrap_err();
    assert_eq!(e.detail.as_deref(), Some("Token \"x\" is invalid."));
    assert_eq!(take_context().as_deref(), Some("JSON data, line 3:   [1, x..."));
}
