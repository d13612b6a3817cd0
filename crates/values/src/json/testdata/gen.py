#!/usr/bin/env python3
"""Regenerates the json/jsonb test tables from a live PostgreSQL 15.

Usage: gen.py [dsn]   (default: host=/tmp port=5433 user=postgres)

Each line of a table is tab-separated; fields escape backslash, tab and
newline as \\\\, \\t, \\n. A result is either `ok <value>` (`\\N` for SQL NULL)
or `err <sqlstate> <message> <detail> <hint> <context>`.
"""
import json
import os
import re
import sys

import psycopg2

DSN = sys.argv[1] if len(sys.argv) > 1 else "host=/tmp port=5433 user=postgres dbname=postgres"
HERE = os.path.dirname(os.path.abspath(__file__))
REGRESS = os.path.join(HERE, "../../../../../target/pg-regress/postgresql-15.18/src/test/regress/sql")

conn = psycopg2.connect(DSN)
conn.autocommit = True
cur = conn.cursor()


def esc(s):
    if s is None:
        return "\\N"
    return s.replace("\\", "\\\\").replace("\t", "\\t").replace("\n", "\\n")


def run(sql, args=()):
    try:
        cur.execute(sql, args)
        v = cur.fetchone()[0]
        if isinstance(v, bool):
            v = "t" if v else "f"
        elif v is not None and not isinstance(v, str):
            v = str(v)
        return ["ok", esc(v)]
    except psycopg2.Error as e:
        d = e.diag
        return ["err", e.pgcode, esc(d.message_primary), esc(d.message_detail), esc(d.message_hint), esc(d.context)]


def literals():
    out = []
    seen = set()
    for f in ["json.sql", "jsonb.sql", "json_encoding.sql"]:
        text = open(os.path.join(REGRESS, f), encoding="utf-8").read()
        for m in re.finditer(r"'((?:[^']|'')*)'\s*(?:::\s*jsonb?\b)", text):
            s = m.group(1).replace("''", "'")
            if "\n" in s or len(s) > 400 or s in seen:
                continue
            seen.add(s)
            out.append(s)
    extra = [
        "", " ", "[", "]", "{", "}", "[1,]", "[1 2]", "{\"a\" 1}", "{\"a\":}", "{1:2}", "{\"a\":1,}", "-", "-0", "01",
        "1.", ".1", "1e", "1e+", "1E-5", "-1.5e10", "tru", "truex", "nul", "\"\\x\"", "\"\\u12\"", "\"a\tb\"",
        "[1,\n2,\n3 x]", "{\"a\":\n\n  [1, \"abcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuvwxyz\" , bad]}",
        "\"\\ud83d\\ude04\"", "\"\\uD83D\"", "\"\\u0000\"", "\"\\\\u0000\"", "[\"é\", \"ü\"]", "é", "[1, é]",
        "{\"b\":1,\"a\":2,\"aa\":3,\"a\":4}", "[1.0, 1.00, -0.0, 1e3, 1E-3, 123456789012345678901234567890]",
        "{\"a\":{\"b\":{\"c\":[null,true,false,\"\\n\\t\\\"\\\\\\/\\b\\f\\r\"]}}}", "\"\\u001f\"",
        "[[[[]]], {}, {\"\":\"\"}]", "  {  }  ", "1 2", "[] x", "{\"a\":1} }",
        "{\"" + "x" * 60 + "\": y}", "[" + "1," * 40 + "oops]",
    ]
    for s in extra:
        if s not in seen:
            seen.add(s)
            out.append(s)
    return out


def gen_input():
    rows = []
    for s in literals():
        for kind in ["json", "jsonb"]:
            rows.append([kind, esc(s)] + run("select %s::" + kind + "::text", (s,)))
        rows.append(["pretty", esc(s)] + run("select jsonb_pretty(%s::jsonb)", (s,)))
    with open(os.path.join(HERE, "input.tsv"), "w", encoding="utf-8") as f:
        for r in rows:
            f.write("\t".join(r) + "\n")


VALUES = [
    '{}', '[]', '1', '"a"', 'null', 'true', 'false', '"b"', '0', '-1.5', '1.50',
    '{"a": 1}', '{"a": 1, "b": 2}', '{"a": null}', '{"b": 2, "a": 1}', '{"a": {"b": 1}}',
    '{"a": [1, 2, {"c": 3}]}', '[1, 2, 3]', '[1, [2, 3]]', '["a", "b", "c"]', '[[1, 2], [3]]',
    '[{"a": 1}, {"b": 2}]', '{"aa": 1, "b": 2}', '[null]', '[1, "a", null, true]', '{"a": [1, 2], "b": {"c": null}}',
    '[1, 1]', '[2, 1]', '{"a": 1.0}', '[[]]', '[{}]', '{"a": {}}', '{"a": []}', '"aa"', '{"c": 1}', '["a", 1]',
    '[1, 2]', '{"a": 2}', '{"a": 1, "c": 3}', '[{"a": [1, 2]}]', '{"a": {"b": {"c": 1}}}',
]
KEYS = ["a", "b", "c", "aa", "", "x"]
INTS = [0, 1, 2, -1, -2, -3, 5, -5]
PATHS = [[], ["a"], ["a", "b"], ["0"], ["1"], ["-1"], ["a", "0"], ["a", "1"], ["a", "-1"], ["x"], ["a", None],
         ["a", "2", "c"], ["a", "b", "c"], ["0", "a"], ["5"], ["-5"], ["a", "x"], [None], ["b", "c"], [" 1"], ["1x"]]
KEYARRS = [[], ["a"], ["a", "b"], ["x", "y"], ["a", None], [None], ["b", "c"]]


def gen_ops():
    rows = []
    for i, l in enumerate(VALUES):
        for op in ["typeof", "array_length", "object_keys", "strip_nulls", "each", "each_text", "array_elements",
                   "array_elements_text"]:
            sql = {
                "typeof": "select jsonb_typeof(%s::jsonb)",
                "array_length": "select jsonb_array_length(%s::jsonb)::text",
                "object_keys": "select string_agg(k, ',') from jsonb_object_keys(%s::jsonb) k",
                "strip_nulls": "select jsonb_strip_nulls(%s::jsonb)::text",
                "each": "select string_agg(key || '=' || value::text, ',') from jsonb_each(%s::jsonb)",
                "each_text": "select string_agg(key || '=' || coalesce(value, '<null>'), ',') from jsonb_each_text(%s::jsonb)",
                "array_elements": "select string_agg(value::text, ',') from jsonb_array_elements(%s::jsonb)",
                "array_elements_text": "select string_agg(coalesce(value, '<null>'), ',') from jsonb_array_elements_text(%s::jsonb)",
            }[op]
            rows.append([op, esc(l), ""] + run(sql, (l,)))
        for k in KEYS:
            for op, sql in [("->", "select (%s::jsonb -> %s)::text"), ("->>", "select %s::jsonb ->> %s"),
                            ("?", "select %s::jsonb ? %s"), ("-", "select (%s::jsonb - %s)::text")]:
                rows.append([op, esc(l), esc(k)] + run(sql, (l, k)))
        for n in INTS:
            for op, sql in [("->i", "select (%s::jsonb -> %s)::text"), ("->>i", "select %s::jsonb ->> %s"),
                            ("-i", "select (%s::jsonb - %s)::text")]:
                rows.append([op, esc(l), str(n)] + run(sql, (l, n)))
        for p in PATHS:
            pj = json.dumps(p)
            for op, sql in [("#>", "select (%s::jsonb #> %s::text[])::text"), ("#>>", "select %s::jsonb #>> %s::text[]"),
                            ("#-", "select (%s::jsonb #- %s::text[])::text")]:
                rows.append([op, esc(l), esc(pj)] + run(sql, (l, p)))
            for nv in ['"new"', '{"n": 1}']:
                for op, sql in [("set", "select jsonb_set(%s::jsonb, %s::text[], %s::jsonb)::text"),
                                ("set_nocreate", "select jsonb_set(%s::jsonb, %s::text[], %s::jsonb, false)::text"),
                                ("insert", "select jsonb_insert(%s::jsonb, %s::text[], %s::jsonb)::text"),
                                ("insert_after", "select jsonb_insert(%s::jsonb, %s::text[], %s::jsonb, true)::text")]:
                    rows.append([op, esc(l), esc(json.dumps([p, nv]))] + run(sql, (l, p, nv)))
        for ka in KEYARRS:
            kj = json.dumps(ka)
            for op, sql in [("?|", "select %s::jsonb ?| %s::text[]"), ("?&", "select %s::jsonb ?& %s::text[]"),
                            ("-a", "select (%s::jsonb - %s::text[])::text")]:
                rows.append([op, esc(l), esc(kj)] + run(sql, (l, ka)))
        for r in VALUES:
            for op, sql in [("@>", "select %s::jsonb @> %s::jsonb"), ("||", "select (%s::jsonb || %s::jsonb)::text"),
                            ("cmp", "select case when %s::jsonb < %s::jsonb then '<' when %s::jsonb = %s::jsonb then '=' else '>' end")]:
                args = (l, r, l, r) if op == "cmp" else (l, r)
                rows.append([op, esc(l), esc(r)] + run(sql, args))
    with open(os.path.join(HERE, "ops.tsv"), "w", encoding="utf-8") as f:
        for r in rows:
            f.write("\t".join(r) + "\n")


JSON_VALUES = [
    '{"a" : 1, "b":[1,  2], "a":"x\\n"}', '[ 1 , "two" , [3] , {"f": null} ]', ' 1 ', '"s\\u0041"', 'null',
    '{"a": {"b": [10, {"c": "d"}]}}', '{"x": "\\u0000"}', '[]', '{}', '{"a":null, "b": {"c": null, "d": [null]}}',
    '{"a":{"b":1},"a":{"c":2}}', '[1, 2, 3]', 'true',
]


def gen_json_ops():
    rows = []
    for l in JSON_VALUES:
        for op, sql in [("typeof", "select json_typeof(%s::json)"),
                        ("array_length", "select json_array_length(%s::json)::text"),
                        ("object_keys", "select string_agg(k, ',') from json_object_keys(%s::json) k"),
                        ("strip_nulls", "select json_strip_nulls(%s::json)::text"),
                        ("each", "select string_agg(key || '=' || value::text, ',') from json_each(%s::json)"),
                        ("each_text", "select string_agg(key || '=' || coalesce(value, '<null>'), ',') from json_each_text(%s::json)"),
                        ("array_elements", "select string_agg(value::text, ',') from json_array_elements(%s::json)"),
                        ("array_elements_text", "select string_agg(coalesce(value, '<null>'), ',') from json_array_elements_text(%s::json)")]:
            rows.append([op, esc(l), ""] + run(sql, (l,)))
        for k in ["a", "b", "x"]:
            for op, sql in [("->", "select (%s::json -> %s)::text"), ("->>", "select %s::json ->> %s")]:
                rows.append([op, esc(l), esc(k)] + run(sql, (l, k)))
        for n in [0, 1, -1, 3, -4]:
            for op, sql in [("->i", "select (%s::json -> %s)::text"), ("->>i", "select %s::json ->> %s")]:
                rows.append([op, esc(l), str(n)] + run(sql, (l, n)))
        for p in [[], ["a"], ["a", "b"], ["a", "b", "1", "c"], ["1"], ["-1", "f"], ["a", "c"], [None], ["b", "0"]]:
            for op, sql in [("#>", "select (%s::json #> %s::text[])::text"), ("#>>", "select %s::json #>> %s::text[]")]:
                rows.append([op, esc(l), esc(json.dumps(p))] + run(sql, (l, p)))
    with open(os.path.join(HERE, "json_ops.tsv"), "w", encoding="utf-8") as f:
        for r in rows:
            f.write("\t".join(r) + "\n")


gen_input()
gen_ops()
gen_json_ops()
