//! The protocol fuzzer of the normal suite: random frontend byte streams,
//! mostly well framed and often malformed, fed to an in-process server. After
//! every input the server must still answer `SELECT 1` on a fresh
//! connection, and the input's connection must have left no proc-array slot
//! and no lock behind (the harness is `snapscale_server::fuzzing`).
//!
//! It first replays the corpus in `fuzz/corpus/protocol/` (seeds, and the
//! inputs longer libFuzzer runs kept), then generates
//! `SNAPSCALE_FUZZ_CASES` inputs (default 300), for at most
//! `SNAPSCALE_FUZZ_SECONDS` (default 40; the suite's time bound).

use std::time::{Duration, Instant};

use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};
use snapscale_server::fuzzing::{startup_packet, Harness};

/// A server of the test's own. The harness's checks count every session
/// attached to its server, so two tests feeding one server concurrently
/// would each see the other's connections as leaks (and one test's quick
/// feed-check cycles can keep the count above the baseline for longer than
/// the other's check waits).
fn harness(test: &str) -> Harness {
    Harness::start(&std::env::temp_dir().join(format!("snapscale-fuzz-{}-{test}", std::process::id())))
}

fn message(ty: u8, body: &[u8]) -> Vec<u8> {
    let mut m = vec![ty];
    m.extend_from_slice(&((body.len() + 4) as i32).to_be_bytes());
    m.extend_from_slice(body);
    m
}

fn cstring(out: &mut Vec<u8>, s: &[u8]) {
    out.extend_from_slice(s);
    out.push(0);
}

/// Statements worth sending: transaction control, DDL and DML on a table
/// the inputs share, row locks, COPY, errors, deep and long expressions.
fn sql() -> impl Strategy<Value = Vec<u8>> {
    let known = prop::sample::select(vec![
        "SELECT 1",
        "BEGIN",
        "COMMIT",
        "ROLLBACK",
        "SAVEPOINT a",
        "ROLLBACK TO a",
        "RELEASE a",
        "CREATE TABLE IF NOT EXISTS f (id int PRIMARY KEY, v text)",
        "CREATE TEMP TABLE tt (id int)",
        "INSERT INTO f VALUES ($1, $2)",
        "INSERT INTO f VALUES (1, 'a'), (2, 'b') RETURNING *",
        "UPDATE f SET v = v || 'x' WHERE id = $1",
        "DELETE FROM f WHERE id > 100",
        "SELECT * FROM f WHERE id = $1 FOR UPDATE",
        "SELECT * FROM f FOR UPDATE NOWAIT",
        "SELECT * FROM f ORDER BY id LIMIT 1 FOR UPDATE SKIP LOCKED",
        "SELECT count(*), sum(id) FROM f GROUP BY v HAVING count(*) > 0",
        "COPY f FROM STDIN",
        "COPY f TO STDOUT",
        "VACUUM f",
        "DROP TABLE IF EXISTS f",
        "SELECT 1/0",
        "SELECT $1::int + $2",
        "SET lock_timeout = '100ms'",
        "SET max_stack_depth = '200kB'",
        "SHOW ALL",
        "SELECT 'a' LIKE '%a%a%a%a%b'",
        "",
        ";;;",
    ])
    .prop_map(|s| s.as_bytes().to_vec());
    prop_oneof![
        6 => known,
        1 => (1usize..4000).prop_map(|n| format!("SELECT {}1{}", "(".repeat(n), ")".repeat(n)).into_bytes()),
        1 => (1usize..20_000).prop_map(|n| format!("SELECT 1{}", "+1".repeat(n)).into_bytes()),
        1 => nest(),
        1 => prop::collection::vec(any::<u8>(), 0..40),
        1 => "[ -~]{0,60}".prop_map(String::into_bytes),
    ]
}

/// Nests of the constructs that nest (brackets, reserved-word constructs,
/// prefix operators), one or a few in turn, closed or not, with a tail
/// that may break them: shallow, around the levels sqlparser parses again
/// when the statement fails (64 are allowed), and past its depth (16 384
/// at the default max_stack_depth), where sqlparser on its own retried for
/// hours.
fn nest() -> impl Strategy<Value = Vec<u8>> {
    let construct = prop::sample::select(vec![
        ("(", ")"),
        ("CASE WHEN true THEN ", " END"),
        ("CASE ", " WHEN 1 THEN 1 END"),
        ("CASE WHEN ", " THEN 1 END"),
        ("ARRAY[", "]"),
        ("ARRAY(SELECT ", ")"),
        ("ROW(", ")"),
        ("NOT ", ""),
        ("- ", ""),
        ("~ ", ""),
        ("EXISTS (SELECT ", ")"),
        ("INTERVAL ", ""),
        ("CAST(", " AS int)"),
        ("abs(", ")"),
        ("(SELECT ", ")"),
        ("1 IN (", ")"),
        ("NOT 1 = ", ""),
        ("1 + (", ")"),
        ("POSITION(", ")"),
        ("x IN (SELECT - ", ")"),
        ("CEIL(", " ORDER BY 1)"),
        ("NOT (", " ORDER BY 1)"),
        ("ARRAY< ", " >"),
        ("SELECT * FROM (", ")"),
    ]);
    let depth =
        prop_oneof![4 => 1usize..200, 1 => 60usize..70, 2 => 16_300usize..16_500, 1 => 16_500usize..30_000];
    let inner = prop::sample::select(vec!["1", "true", "'1 day'", "x", ""]);
    let tail = prop::sample::select(vec!["", " garbage", ")", " END", " + 1"]);
    (prop::collection::vec(construct, 1..4), depth, inner, any::<bool>(), tail).prop_map(
        |(constructs, depth, inner, closed, tail)| {
            let mut sql = String::from("SELECT ");
            for i in 0..depth {
                sql.push_str(constructs[i % constructs.len()].0);
            }
            sql.push_str(inner);
            if closed {
                for i in (0..depth).rev() {
                    sql.push_str(constructs[i % constructs.len()].1);
                }
            }
            sql.push_str(tail);
            sql.into_bytes()
        },
    )
}

fn name() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        Just(Vec::new()),
        Just(b"s".to_vec()),
        Just(b"p".to_vec()),
        "[a-z]{1,3}".prop_map(String::into_bytes)
    ]
}

/// One frontend message of the query phase, well formed or not.
fn frontend() -> impl Strategy<Value = Vec<u8>> {
    let param = prop_oneof![
        Just((-1i32, Vec::new())),
        prop::collection::vec(any::<u8>(), 0..9).prop_map(|b| (b.len() as i32, b)),
        // A length that lies (negative, or past the end).
        (any::<i32>(), prop::collection::vec(any::<u8>(), 0..4)),
    ];
    let format = prop_oneof![4 => 0i16..2, 1 => any::<i16>()];
    prop_oneof![
        4 => sql().prop_map(|q| {
            let mut b = Vec::new();
            cstring(&mut b, &q);
            message(b'Q', &b)
        }),
        3 => (name(), sql(), prop::collection::vec(prop_oneof![Just(0u32), Just(23), Just(25), any::<u32>()], 0..3))
            .prop_map(|(n, q, oids)| {
                let mut b = Vec::new();
                cstring(&mut b, &n);
                cstring(&mut b, &q);
                b.extend_from_slice(&(oids.len() as u16).to_be_bytes());
                oids.iter().for_each(|o| b.extend_from_slice(&o.to_be_bytes()));
                message(b'P', &b)
            }),
        3 => (
            name(),
            name(),
            prop::collection::vec(format.clone(), 0..4),
            prop::collection::vec(param, 0..4),
            prop::collection::vec(format, 0..3)
        )
            .prop_map(|(portal, statement, formats, params, results)| {
                let mut b = Vec::new();
                cstring(&mut b, &portal);
                cstring(&mut b, &statement);
                b.extend_from_slice(&(formats.len() as u16).to_be_bytes());
                formats.iter().for_each(|f| b.extend_from_slice(&f.to_be_bytes()));
                b.extend_from_slice(&(params.len() as u16).to_be_bytes());
                for (len, bytes) in params {
                    b.extend_from_slice(&len.to_be_bytes());
                    b.extend_from_slice(&bytes);
                }
                b.extend_from_slice(&(results.len() as u16).to_be_bytes());
                results.iter().for_each(|f| b.extend_from_slice(&f.to_be_bytes()));
                message(b'B', &b)
            }),
        2 => (prop_oneof![Just(b'S'), Just(b'P'), any::<u8>()], name()).prop_map(|(k, n)| {
            let mut b = vec![k];
            cstring(&mut b, &n);
            message(b'D', &b)
        }),
        2 => (name(), prop_oneof![Just(0i32), any::<i32>()]).prop_map(|(n, max)| {
            let mut b = Vec::new();
            cstring(&mut b, &n);
            b.extend_from_slice(&max.to_be_bytes());
            message(b'E', &b)
        }),
        1 => (prop_oneof![Just(b'S'), Just(b'P')], name()).prop_map(|(k, n)| {
            let mut b = vec![k];
            cstring(&mut b, &n);
            message(b'C', &b)
        }),
        4 => Just(message(b'S', &[])),
        1 => Just(message(b'H', &[])),
        2 => "[0-9]{1,3}\t[a-z]{0,3}\n|\\\\N\t\\\\N\n|\\\\\\.\n|x".prop_map(|d| message(b'd', d.as_bytes())),
        1 => Just(message(b'c', &[])),
        1 => Just(message(b'f', b"stop\0")),
        1 => Just(message(b'X', &[])),
        // Any type byte with an honest length, or a lying one.
        1 => (any::<u8>(), prop::collection::vec(any::<u8>(), 0..24)).prop_map(|(t, b)| message(t, &b)),
        1 => (any::<u8>(), any::<i32>(), prop::collection::vec(any::<u8>(), 0..8)).prop_map(|(t, len, b)| {
            let mut m = vec![t];
            m.extend_from_slice(&len.to_be_bytes());
            m.extend_from_slice(&b);
            m
        }),
    ]
}

/// A startup of the input's own (an odd first byte): valid, or not.
fn startup() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        Just(startup_packet()),
        Just(vec![0, 0, 0, 8, 4, 0xd2, 0x16, 0x2f]),
        Just(vec![0, 0, 0, 16, 4, 0xd2, 0x16, 0x2e, 0, 0, 0, 1, 0, 0, 0, 2]),
        prop::collection::vec(any::<u8>(), 0..32),
        (any::<i32>(), prop::collection::vec(any::<u8>(), 0..24)).prop_map(|(len, b)| {
            let mut m = len.to_be_bytes().to_vec();
            m.extend_from_slice(&b);
            m
        }),
        Just({
            // No user.
            let mut body = 196_608i32.to_be_bytes().to_vec();
            body.extend_from_slice(b"database\0x\0\0");
            let mut m = ((body.len() + 4) as i32).to_be_bytes().to_vec();
            m.extend_from_slice(&body);
            m
        }),
    ]
}

/// A whole input in the harness's format (see `snapscale_server::fuzzing`).
fn input() -> impl Strategy<Value = Vec<u8>> {
    (prop_oneof![9 => Just(0u8), 1 => Just(1u8)], startup(), prop::collection::vec(frontend(), 1..14))
        .prop_map(|(first, startup, messages)| {
            let mut bytes = vec![first];
            if first % 2 == 1 {
                bytes.extend_from_slice(&startup);
            }
            for m in messages {
                bytes.extend_from_slice(&m);
            }
            bytes
        })
}

fn corpus() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz/corpus/protocol")
}

#[test]
fn the_corpus_leaves_the_server_serving() {
    let h = harness("corpus");
    let mut files: Vec<_> = std::fs::read_dir(corpus()).expect("the corpus directory").flatten().collect();
    files.sort_by_key(|f| f.path());
    assert!(!files.is_empty(), "the corpus is empty");
    for f in files {
        let bytes = std::fs::read(f.path()).unwrap();
        h.feed(&bytes);
        h.check();
    }
}

#[test]
fn random_streams_leave_the_server_serving() {
    let env =
        |name: &str, default: u64| std::env::var(name).ok().and_then(|n| n.parse().ok()).unwrap_or(default);
    let cases = env("SNAPSCALE_FUZZ_CASES", 300) as u32;
    let budget = Duration::from_secs(env("SNAPSCALE_FUZZ_SECONDS", 40));
    let mut runner = TestRunner::new(Config { cases, failure_persistence: None, ..Config::default() });
    let h = harness("random");
    let started = Instant::now();
    let fed = std::sync::atomic::AtomicU32::new(0);
    runner
        .run(&input(), |bytes| {
            // Past the time bound the remaining cases are generated but not fed.
            if started.elapsed() < budget {
                h.feed(&bytes);
                h.check();
                fed.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            }
            Ok(())
        })
        .unwrap();
    eprintln!("fed {} generated inputs in {:?}", fed.into_inner(), started.elapsed());
}
