//! Tests of jsonpath against PostgreSQL 15's own results: every statement
//! of the regression files jsonpath.sql and jsonb_jsonpath.sql that is a
//! jsonpath cast or a single jsonb_path_* call (or `@?` / `@@`) on
//! literals, plus extra cases, all recorded from a live server by
//! testdata/gen.py into testdata/cases.tsv.

use snapscale_sqlstate::SqlState;

use super::*;
use crate::json::tests::unesc;

fn bool_text(b: Option<bool>) -> Option<String> {
    b.map(|b| if b { "true" } else { "false" }.to_string())
}

/// Runs one case: the result rows (None for SQL NULL).
fn run(
    kind: &str,
    path: &str,
    json: Option<&str>,
    vars: Option<&str>,
    silent: bool,
) -> Result<Vec<Option<String>>, SqlError> {
    let p = JsonPath::parse(path)?;
    if kind == "cast" {
        return Ok(vec![Some(p.to_string())]);
    }
    let target = Jsonb::parse(json.unwrap_or("null"))?;
    let vars = Jsonb::parse(vars.unwrap_or("{}"))?;
    Ok(match kind {
        "query" => path_query(&target, &p, Some(&vars), silent)?.iter().map(|j| Some(j.to_text())).collect(),
        "query_array" => vec![Some(Jsonb::array(path_query(&target, &p, Some(&vars), silent)?).to_text())],
        "query_first" => vec![path_query(&target, &p, Some(&vars), silent)?.first().map(Jsonb::to_text)],
        "exists" => vec![bool_text(path_exists(&target, &p, Some(&vars), silent)?)],
        "match" => vec![bool_text(path_match(&target, &p, Some(&vars), silent)?)],
        _ => panic!("unknown kind {kind}"),
    })
}

/// Runs `f` on a thread with the stack statement threads have.
fn on_big_stack(f: impl FnOnce() + Send + 'static) {
    std::thread::Builder::new().stack_size(16 << 20).spawn(f).unwrap().join().unwrap();
}

#[test]
fn path_cases_match_postgres() {
    on_big_stack(cases);
}

fn cases() {
    let data = include_str!("testdata/cases.tsv");
    let mut failures = Vec::new();
    let mut n = 0;
    for line in data.lines() {
        let f: Vec<&str> = line.split('\t').collect();
        let (kind, path, json, vars, silent) =
            (f[0], unesc(f[1]).unwrap(), unesc(f[2]), unesc(f[3]), f[4] == "t");
        n += 1;
        let got = run(kind, &path, json.as_deref(), vars.as_deref(), silent);
        let bad = match (&got, f[5]) {
            (Ok(rows), "ok") => {
                let want: Vec<Option<String>> = f[6..].iter().map(|s| unesc(s)).collect();
                // A query with no rows is recorded as no fields.
                (rows != &want).then(|| format!("got {rows:?}, want {want:?}"))
            }
            (Err(e), "err") => {
                let mut bad = Vec::new();
                if Some(e.code) != SqlState::from_code(f[6]) {
                    bad.push(format!("code {:?} want {}", e.code, f[6]));
                }
                if Some(e.message.clone()) != unesc(f[7]) {
                    bad.push(format!("message {:?} want {:?}", e.message, unesc(f[7])));
                }
                if e.detail != unesc(f[8]) {
                    bad.push(format!("detail {:?} want {:?}", e.detail, unesc(f[8])));
                }
                if e.hint != unesc(f[9]) {
                    bad.push(format!("hint {:?} want {:?}", e.hint, unesc(f[9])));
                }
                (!bad.is_empty()).then(|| bad.join("; "))
            }
            (Ok(rows), _) => Some(format!("got {rows:?}, want error {:?}", &f[5..])),
            (Err(e), _) => Some(format!("got error {}: {}, want {:?}", e.code.code(), e.message, &f[5..])),
        };
        if let Some(b) = bad {
            failures.push(format!("{kind} {path:?} on {json:?} vars {vars:?} silent {silent}: {b}"));
        }
    }
    assert!(n > 4000, "only {n} cases");
    assert!(failures.is_empty(), "{} of {n} cases differ:\n{}", failures.len(), failures.join("\n"));
}

#[test]
fn path_deep_input_is_an_error() {
    on_big_stack(deep);
}

fn deep() {
    let deep = format!("{}1{}", "(".repeat(100_000), ")".repeat(100_000));
    assert_eq!(JsonPath::parse(&deep).unwrap_err().code, SqlState::STATEMENT_TOO_COMPLEX);
    let neg = format!("{}1", "-".repeat(100_000));
    assert_eq!(JsonPath::parse(&neg).unwrap_err().code, SqlState::STATEMENT_TOO_COMPLEX);
    let filters = format!("$ {}", "? (@ ".repeat(50_000));
    assert!(JsonPath::parse(&filters).is_err());
    let long = format!("${}", "[*]".repeat(200_000));
    let p = JsonPath::parse(&long).unwrap();
    let j = Jsonb::parse("[1]").unwrap();
    assert_eq!(path_query(&j, &p, None, false).unwrap_err().code, SqlState::STATEMENT_TOO_COMPLEX);
}

#[test]
fn path_binary_forms_round_trip() {
    for s in [
        "$",
        "strict $.a[*] ? (@ > 1).b",
        "$.**{2 to last}.keyvalue()",
        "\"x\\n\" like_regex \"a\" flag \"iq\"",
    ] {
        let p = JsonPath::parse(s).unwrap();
        let mut buf = Vec::new();
        p.encode(&mut buf);
        buf.push(7);
        let (q, used) = JsonPath::decode(&buf).unwrap();
        assert_eq!(used, buf.len() - 1);
        assert_eq!(q.to_string(), p.to_string());
        let mut w = Vec::new();
        p.to_wire(&mut w);
        assert_eq!(w[0], 1);
        assert_eq!(JsonPath::from_wire(&w).unwrap().to_string(), p.to_string());
    }
    assert!(JsonPath::from_wire(&[2, b'$']).is_err());
}
