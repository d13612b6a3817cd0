//! The nesting measure against sqlparser itself.

use sqlparser::tokenizer::Tokenizer;

use super::*;

fn parser(sql: &str, limit: usize) -> Parser<'static> {
    static PG: PostgreSqlDialect = PostgreSqlDialect {};
    let mut tokens = Tokenizer::new(&PG, sql).tokenize_with_location().expect("tokens");
    let blank = tokens.iter().take_while(|t| matches!(t.token, Token::Whitespace(_))).count();
    tokens.drain(..blank);
    Parser::new(&PG).with_recursion_limit(limit).with_tokens_with_locations(tokens)
}

fn nesting(sql: &str) -> Nesting {
    let mut p = parser(sql, 1);
    let n = measure(&mut p, Nesting { depth: usize::MAX, reparsed: usize::MAX });
    assert_eq!(p.index(), 0, "the parser is rewound");
    n
}

/// sqlparser's answer, with its recursion limit at `limit`.
fn outcome(sql: &str, limit: usize) -> String {
    format!("{:?}", parser(sql, limit).parse_statements())
}

/// The least limit at which sqlparser parses `sql` as it does without one.
fn sqlparser_depth(sql: &str) -> usize {
    let unlimited = outcome(sql, 1 << 20);
    let (mut lo, mut hi) = (1, 1 << 20);
    while lo < hi {
        let mid = (lo + hi) / 2;
        if outcome(sql, mid) == unlimited {
            hi = mid;
        } else {
            lo = mid + 1;
        }
    }
    lo
}

/// The measure is enough: with its limit at the measured depth,
/// sqlparser parses `sql` exactly as it does without a limit (unless the
/// statement has more levels sqlparser parses again than it may be given:
/// those may take it hours).
fn assert_bounds(sql: &str) -> Nesting {
    let n = nesting(sql);
    if n.reparsed > MAX_REPARSED_LEVELS {
        return n;
    }
    let unlimited = outcome(sql, 1 << 20);
    assert_eq!(outcome(sql, n.depth), unlimited, "measured {n:?} for {sql}");
    n
}

/// Runs `f` on a stack deep enough for sqlparser's trees and their
/// Debug output.
pub(crate) fn big_stack(f: impl FnOnce() + Send + 'static) {
    std::thread::Builder::new().stack_size(256 << 20).spawn(f).unwrap().join().unwrap();
}

/// Every construct that nests, valid and broken (unclosed, broken
/// inside, trailing garbage), at several depths: the measure bounds
/// sqlparser's depth from above, and not by much.
#[test]
fn the_measure_bounds_sqlparser_for_each_nesting_construct() {
    big_stack(|| {
        let constructs: &[(&str, &str, &str)] = &[
            ("(", "1", ")"),
            ("1 + (", "1", ")"),
            ("CASE WHEN true THEN ", "1", " END"),
            ("CASE WHEN ", "true", " THEN 1 END"),
            ("CASE ", "1", " WHEN 1 THEN 1 END"),
            ("CASE WHEN 1 THEN 1 ELSE ", "1", " END"),
            ("ARRAY[", "1", "]"),
            ("[", "1", "]"),
            ("ARRAY(SELECT ", "1", ")"),
            ("ROW(", "1", ")"),
            ("NOT ", "true", ""),
            ("- ", "1", ""),
            ("~ ", "1", ""),
            ("|/ ", "1", ""),
            ("EXISTS (SELECT ", "1", ")"),
            ("INTERVAL ", "'1'", ""),
            ("CAST(", "1", " AS int)"),
            ("abs(", "1", ")"),
            ("(SELECT ", "1", ")"),
            ("1 IN (", "1", ")"),
            ("1 IN (SELECT ", "1", ")"),
            ("1 = ANY(", "ARRAY[1]", ")"),
            ("coalesce(1, ", "1", ")"),
            ("EXTRACT(year FROM ", "1", ")"),
            ("substring(", "'a'", " FROM 1)"),
            ("position('a' IN ", "'a'", ")"),
            ("NOT 1 = ", "1", ""),
            ("- 1 ^ ", "1", ""),
            ("NOT 1 BETWEEN 1 AND ", "2", ""),
            ("NOT a NOT LIKE ", "b", ""),
            ("NOT a IS DISTINCT FROM ", "b", ""),
            ("NOT a OPERATOR(pg_catalog.+) ", "b", ""),
            ("NOT a LIKE b ESCAPE ", "c", ""),
            ("x AT TIME ZONE ", "'z'", ""),
            ("CAST(1 AS ARRAY< ", "int", " >)"),
            ("1::ARRAY< ", "int", " >"),
            ("(1, ", "1", ")"),
            ("a.b(", "1", ")"),
        ];
        for &(open, inner, close) in constructs {
            for n in [1, 2, 7, 60] {
                let valid = format!("SELECT {}{inner}{}", open.repeat(n), close.repeat(n));
                let m = assert_bounds(&valid);
                let actual = sqlparser_depth(&valid);
                assert!(
                    !outcome(&valid, 1 << 20).starts_with("Ok") || m.depth <= 3 * actual + 8,
                    "{valid}: measured {m:?}, sqlparser needs {actual}"
                );
                assert_bounds(&format!("SELECT {}", open.repeat(n)));
                assert_bounds(&format!("SELECT {}){}", open.repeat(n), close.repeat(n)));
                assert_bounds(&format!("{valid} )"));
                assert_bounds(&format!("SELECT * FROM t WHERE {valid} = {}", open.repeat(n)));
            }
        }
        for n in [1, 3, 30] {
            let from = format!("SELECT * FROM {}t JOIN u ON true{}", "(".repeat(n), ")".repeat(n));
            assert_bounds(&from);
            assert_bounds(&format!(
                "SELECT * FROM {}(SELECT 1) x{}",
                "(SELECT * FROM ".repeat(n),
                ") y".repeat(n)
            ));
            assert_bounds(&format!("{}SELECT 1", "PREPARE p AS ".repeat(n)));
            assert_bounds(&format!("WITH {} SELECT 1", "a AS (WITH ".repeat(n)));
        }
    });
}

/// A small deterministic generator (xorshift).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

pub(crate) const FRAGMENTS: &[&str] = &[
    "(",
    ")",
    ")",
    "[",
    "]",
    "ARRAY",
    "ARRAY[",
    "ARRAY(",
    "ARRAY<",
    ">",
    ">>",
    "CASE",
    "WHEN",
    "THEN",
    "ELSE",
    "END",
    "END",
    "NOT",
    "-",
    "+",
    "~",
    "@",
    "|/",
    "!!",
    "!",
    "1",
    "x",
    "t.c",
    "'s'",
    "$1",
    "true",
    "NULL",
    "AND",
    "OR",
    "=",
    "<",
    "<=",
    "*",
    "/",
    "^",
    "||",
    "%",
    "::int",
    "::",
    "IS",
    "IS NOT",
    "DISTINCT FROM",
    "BETWEEN",
    "IN",
    "NOT IN",
    "LIKE",
    "NOT LIKE",
    "ILIKE",
    "SIMILAR TO",
    "ESCAPE",
    "AT TIME ZONE",
    ",",
    ",",
    "SELECT",
    "FROM",
    "JOIN",
    "ON",
    "WHERE",
    "EXISTS",
    "INTERVAL",
    "CAST(",
    "AS",
    "f(",
    "ROW(",
    "COLLATE \"C\"",
    "ANY",
    "ALL",
    "= ANY(",
    "->",
    "#",
    "@>",
    "&&",
    "OPERATOR(pg_catalog.+)",
    "date '2020-01-01'",
    "EXTRACT(year FROM",
    "SUBSTRING(",
    "FOR",
    "POSITION(",
    "TRIM(",
    "OVERLAY(",
    "PLACING",
    "{",
    "}",
    ";",
    "LATERAL",
    "USING",
    "(SELECT",
    "VALUES",
    "DEFAULT",
    ".",
    ":",
    "?",
    "NOTNULL",
    "IS NULL",
    "ORDER BY",
    "GROUP BY",
    "LIMIT",
    "UNION",
    "PREPARE p AS",
    "int",
    "E'\\''",
    "CEIL(",
    "FLOOR(",
    "CONVERT(",
    "NOT (",
    "CASE (",
    "INTERVAL (",
    "ORDER BY 1)",
    "a.(",
    "TABLE(",
    "CAST (",
    "current_time(",
    "POINT",
    "ROW(",
    "VARIADIC",
    "=>",
    "FILTER (WHERE",
    "OVER (",
    "WITHIN GROUP (",
];

fn soup(rng: &mut Rng) -> String {
    let mut parts: Vec<&str> = vec!["SELECT"];
    for _ in 0..1 + rng.below(6) {
        if rng.below(3) == 0 {
            for _ in 0..rng.below(12) {
                parts.push(FRAGMENTS[rng.below(FRAGMENTS.len())]);
            }
        } else {
            let pattern: Vec<&str> =
                (0..1 + rng.below(4)).map(|_| FRAGMENTS[rng.below(FRAGMENTS.len())]).collect();
            for _ in 0..1 + rng.below(120) {
                parts.extend(&pattern);
            }
        }
    }
    parts.join(" ")
}

/// The soups of a run: 1 500, or `SNAPSCALE_NESTING_CASES`, from the
/// seed `SNAPSCALE_NESTING_SEED` or a fixed one (the parse module's tests
/// time the server's parse of the same soups).
pub(crate) fn soups() -> impl Iterator<Item = String> {
    let cases: usize =
        std::env::var("SNAPSCALE_NESTING_CASES").ok().and_then(|n| n.parse().ok()).unwrap_or(1500);
    let seed = std::env::var("SNAPSCALE_NESTING_SEED").ok().and_then(|n| n.parse().ok());
    let mut rng = Rng(seed.unwrap_or(0x9e37_79b9_7f4a_7c15) | 1);
    (0..cases).map(move |_| soup(&mut rng))
}

/// Random token soups, made mostly of repeated patterns (where a
/// measure that undercounts one level per repetition would show): the
/// measure always suffices for sqlparser.
#[test]
fn the_measure_bounds_sqlparser_for_random_token_soups() {
    big_stack(|| {
        for sql in soups() {
            if Tokenizer::new(&PostgreSqlDialect {}, &sql).tokenize().is_ok() {
                assert_bounds(&sql);
            }
        }
    });
}

/// Statements that random soups (other seeds, 10 000 cases each) found
/// measured too low, by this measure's earlier versions or by versions of
/// it on the way here, each as runs of a repeated piece: the measure
/// followed one of sqlparser's readings where sqlparser, after a failure,
/// went on with another that nests deeper (a word such as ARRAY, CASE or
/// INTERVAL read as an identifier, an operator read as infix instead of
/// prefix).
const FOUND_BY_THE_SOUPS: &[&[(&str, usize)]] = &[
    &[("|/ - ", 79), ("ILIKE ^ OVER ( ", 36), ("USING AS NOT IN ", 1), ("! AS ROW( ARRAY[ ", 33)],
    &[("IS % ~ ", 7)],
    &[("TABLE( ARRAY< true > ", 110), (">> 1 EXTRACT(year FROM IS NOT BETWEEN JOIN CONVERT( JOIN AS x WHEN IS NULL % BETWEEN |/ IS NOT : AS && SUBSTRING( ILIKE INTERVAL ROW( AS [ (SELECT OPERATOR(pg_catalog.+) BETWEEN FILTER (WHERE PLACING ~ ", 1)],
    &[("|/ OR % ", 51), ("} SIMILAR TO INTERVAL ( SUBSTRING( ", 1)],
    &[("@ ILIKE % ", 19), ("; ARRAY FROM ", 101), ("true NOT ( ", 12)],
    &[("- THEN AT TIME ZONE ", 54), (", IS AS VALUES ", 49), ("ILIKE , BETWEEN f( ", 63), ("LIKE ; @ ", 79)],
    &[("LIMIT AND f( ", 78), ("} END ALL THEN ", 1), (">> ) ) ", 71), ("t.c ( ", 75)],
    &[("NOTNULL ", 110), ("AND INTERVAL ( ARRAY ", 37), ("-> + INTERVAL ( THEN ", 14)],
    &[("( END OPERATOR(pg_catalog.+) ", 120), ("LIMIT ", 72), ("OR :: (SELECT >> ", 6), ("/ AT TIME ZONE WHEN WHEN ", 2), ("WHEN ", 69)],
    &[("ROW( DISTINCT FROM OPERATOR(pg_catalog.+) ", 119)],
    &[("TABLE( PLACING AT TIME ZONE ", 23), ("WHEN ", 1)],
    &[("ROW( ", 87), ("date '2020-01-01' SIMILAR TO ~ ROW( ", 79)],
    &[("INTERVAL ( ALL SIMILAR TO ", 46), ("EXISTS @ ", 31), ("DISTINCT FROM ] <= = ANY( ::int ", 1), ("^ EXTRACT(year FROM ", 10), ("OPERATOR(pg_catalog.+) AS USING ", 49)],
    &[("ROW( ROW( ON ILIKE ", 71), ("|/ ] ", 113)],
    &[("FILTER (WHERE AND INTERVAL ( ", 30), ("; ", 37), ("NOT IN LIKE ", 75), ("INTERVAL ( EXISTS USING [ FROM a.( CEIL( ; >> ", 1)],
    &[("WHERE SIMILAR TO a.( ", 53), ("ON PREPARE p AS , ", 32)],
    &[("NOT IN LIKE ", 9), ("DEFAULT ", 1)],
    &[("[ CASE ILIKE |/ ", 60), ("# - ", 1)],
    &[("USING # FILTER (WHERE ~ ", 14), ("SUBSTRING( 's' AND ", 34)],
    &[("[ INTERVAL ", 1), ("OPERATOR(pg_catalog.+) NOT LIKE ", 105)],
    &[("ROW( CONVERT( ARRAY AT TIME ZONE ", 20)],
    &[("|/ ARRAY AT TIME ZONE ~ ", 20)],
    &[("ARRAY LIKE SUBSTRING( ", 20)],
    &[("ARRAY AND TABLE( ", 20)],
    &[("NOTNULL ILIKE NOT int ", 20)],
    &[("TABLE( DISTINCT FROM DEFAULT ", 20)],
    &[("AS ! ", 1), ("ILIKE NOT IN ", 20)],
];

#[test]
fn statements_the_soups_found_are_bounded() {
    big_stack(|| {
        let mut low = Vec::new();
        for (i, runs) in FOUND_BY_THE_SOUPS.iter().enumerate() {
            let sql: String = std::iter::once("SELECT ".to_string())
                .chain(runs.iter().map(|(piece, n)| piece.repeat(*n)))
                .collect();
            let n = nesting(&sql);
            // As in assert_bounds: past the levels parsed again, refused.
            if n.reparsed <= MAX_REPARSED_LEVELS && outcome(&sql, n.depth) != outcome(&sql, 1 << 20) {
                low.push((i, n, sqlparser_depth(&sql)));
            }
        }
        assert!(low.is_empty(), "measured too low (index, measure, sqlparser's depth): {low:?}");
    });
}

/// Flat chains of any length measure as shallow: they are not nesting.
#[test]
fn flat_chains_are_shallow() {
    let terms = |t: &str, sep: &str| vec![t; 20_000].join(sep);
    for sql in [
        format!("SELECT {}", terms("1", " + ")),
        format!("SELECT {}", terms("-1", " - ")),
        format!("SELECT * FROM t WHERE {}", terms("id = 1", " OR ")),
        format!("SELECT * FROM t WHERE {}", terms("NOT a", " AND ")),
        format!("SELECT * FROM t WHERE {}", terms("NOT a = 1", " OR ")),
        format!("SELECT * FROM t WHERE {}", terms("a BETWEEN 1 AND 2", " AND ")),
        format!("SELECT * FROM t WHERE {}", terms("a IS NOT NULL", " AND ")),
        format!("SELECT * FROM t WHERE {}", terms("a NOT LIKE 'x' ESCAPE '!'", " OR ")),
        format!("SELECT * FROM t WHERE id IN ({})", terms("1", ", ")),
        format!("SELECT * FROM t WHERE id NOT IN ({})", terms("-1", ", ")),
        format!("SELECT {}", terms("'a'", " || ")),
        format!("SELECT 1{}", "::int".repeat(20_000)),
        format!("SELECT a{}", ".b".repeat(20_000)),
        format!("SELECT CASE {} END", terms("WHEN NOT a THEN - 1", " ")),
        format!("INSERT INTO t VALUES {}", terms("(1, -1, NOT true)", ", ")),
        format!("SELECT {}", terms("f(- x, NOT y)", ", ")),
        format!("SELECT 1 {}", "UNION SELECT 1 ".repeat(20_000)),
        format!("SELECT * FROM {}", terms("t JOIN u ON a = - b", " JOIN ")),
        format!("SELECT * FROM {}", terms("(t JOIN u ON true)", ", ")),
        format!("SELECT x{}", " AT TIME ZONE 'UTC'".repeat(20_000)),
    ] {
        let n = nesting(&sql);
        assert!(n.depth < 16 && n.reparsed <= 1, "{n:?} for {}", &sql[..80]);
    }
}

/// The scan is linear however its frames and tokens are arranged: deep
/// runs of frames followed by many keywords or stray closers.
#[test]
fn the_scan_is_linear() {
    let sql = format!(
        "SELECT {}x{}{}{}",
        "NOT (".repeat(5_000),
        " WHERE FROM".repeat(100_000),
        " ]".repeat(100_000),
        " )".repeat(5_000)
    );
    let started = std::time::Instant::now();
    let n = nesting(&sql);
    assert_eq!(n.depth, BASE + 10_000);
    assert!(started.elapsed() < std::time::Duration::from_secs(20), "{:?}", started.elapsed());
}

/// What sqlparser would parse again when a statement fails inside it.
#[test]
fn reparsed_levels() {
    let nest = |open: &str, n: usize| nesting(&format!("SELECT {}", open.repeat(n))).reparsed;
    assert_eq!(nest("CASE WHEN true THEN ", 70), 69);
    assert_eq!(nest("CASE WHEN true THEN 1 + ", 70), 69);
    assert_eq!(nest("CASE ", 70), 69);
    assert_eq!(nest("CASE - ", 70), 69);
    assert_eq!(nest("ARRAY[", 70), 70);
    assert_eq!(nest("ARRAY[(", 70), 70);
    assert_eq!(nest("CASE WHEN true THEN 1 ELSE ", 70), 0);
    assert_eq!(nest("CASE WHEN ", 70), 0);
    assert_eq!(nest("CASE WHEN true THEN (", 70), 0);
    assert_eq!(nest("[", 70), 0);
    assert_eq!(nest("CAST(", 70), 70);
    assert_eq!(nest("NOT (", 70), 70);
    assert_eq!(nest("CEIL(", 70), 70);
    assert_eq!(nest("abs(", 70), 0);
    assert_eq!(nest("POSITION(", 5), 80);
    assert_eq!(nest("x IN (SELECT - ", 5), 80);
    assert_eq!(nest("x NOT IN (SELECT NOT ", 5), 80);
    assert_eq!(nest("x IN (SELECT x FROM t WHERE x IN (", 70), 0);
    assert_eq!(nest("x IN (SELECT * FROM t WHERE x IN (", 70), 0);
    assert_eq!(nesting("SELECT 1::ARRAY< ARRAY< ARRAY< int > > >").reparsed, 3);
    let from = |open: &str, n: usize| nesting(&format!("SELECT * FROM {}", open.repeat(n))).reparsed;
    assert_eq!(from("(", 70), 70);
    assert_eq!(from("(SELECT * FROM ", 70), 0);
    assert_eq!(from("t JOIN (", 70), 70);
    assert_eq!(nesting("SELECT * FROM a, (b JOIN (c JOIN d ON true) ON true)").reparsed, 2);
}
