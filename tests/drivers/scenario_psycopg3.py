"""psycopg 3 with its defaults, against the server named by PGHOST/PGPORT/
PGUSER/PGDATABASE (libpq's environment variables)."""

import json
from datetime import date, datetime, time, timedelta, timezone
from decimal import Decimal
from enum import Enum
from uuid import UUID

import psycopg
from psycopg import errors
from psycopg.types.enum import EnumInfo, register_enum
from psycopg.types.json import Json, Jsonb
from psycopg.types.numeric import Float4

from steps import Scenario, check, check_eq, check_exact

T = "drv_psycopg3"
sc = Scenario("psycopg3")
conn = None

ROWS = [
    # n, big, name, flag, score, day, at, at_tz
    (42, 9_000_000_000, "O'Hara ✓", True, 0.1 + 0.2, date(2024, 2, 29),
     datetime(2024, 1, 2, 3, 4, 5, 678000),
     datetime(2024, 1, 2, 3, 4, 5, 678000, tzinfo=timezone(timedelta(hours=2)))),
    (-7, -1, "beta", False, -1.5e300, date(1999, 12, 31),
     datetime(1999, 12, 31, 23, 59, 59),
     datetime(2000, 1, 1, 0, 0, tzinfo=timezone.utc)),
]
COLS = "n, big, name, flag, score, day, at, at_tz"


def rollback():
    if conn is not None and not conn.closed:
        conn.rollback()


sc.on_failure.append(rollback)


@sc.step("connect")
def _():
    global conn
    conn = psycopg.connect()
    cur = conn.execute("SELECT 1")
    check_eq(cur.fetchone(), (1,))
    conn.rollback()


@sc.step("create table (DROP IF EXISTS, SERIAL key, eight column types)")
def _():
    conn.execute(f"DROP TABLE IF EXISTS {T}")
    conn.execute(
        f"""CREATE TABLE {T} (
            id serial PRIMARY KEY,
            n integer, big bigint, name text UNIQUE, flag boolean,
            score double precision, day date, at timestamp, at_tz timestamptz)"""
    )
    conn.commit()


ids = []


@sc.step("insert with parameters of every type, RETURNING id")
def _():
    with conn.cursor() as cur:
        for row in ROWS:
            cur.execute(
                f"INSERT INTO {T} ({COLS}) VALUES (%s, %s, %s, %s, %s, %s, %s, %s) RETURNING id",
                row,
            )
            ids.append(cur.fetchone()[0])
        # executemany: psycopg runs it in pipeline mode
        cur.executemany(
            f"INSERT INTO {T} (n, name, day) VALUES (%s, %s, %s)",
            [(i, f"many{i}", date(2020, 1, i)) for i in range(1, 4)],
        )
    conn.commit()
    check_eq(len(ids), 2, "ids returned")


@sc.step("select with parameters, values round-trip")
def _():
    with conn.cursor() as cur:
        for id_, row in zip(ids, ROWS):
            cur.execute(f"SELECT {COLS} FROM {T} WHERE id = %s", (id_,))
            got = cur.fetchone()
            check_eq(got, row, f"row {id_}")
        cur.execute(
            f"SELECT count(*) FROM {T} WHERE day >= %s AND flag = %s AND at < %s AND at_tz > %s",
            (date(2024, 1, 1), True, datetime(2025, 1, 1),
             datetime(2023, 12, 31, tzinfo=timezone.utc)),
        )
        check_eq(cur.fetchone()[0], 1, "filtered count")
    conn.commit()


@sc.step("update with parameters")
def _():
    new_tz = datetime(2030, 6, 1, 12, 0, tzinfo=timezone.utc)
    cur = conn.execute(
        f"UPDATE {T} SET score = %s, at_tz = %s, big = big + %s WHERE name = %s",
        (2.5, new_tz, 1, "beta"),
    )
    check_eq(cur.rowcount, 1, "rowcount")
    got = conn.execute(f"SELECT score, at_tz, big FROM {T} WHERE name = %s", ("beta",)).fetchone()
    check_eq(got, (2.5, new_tz, 0))
    conn.commit()


@sc.step("delete with parameters")
def _():
    cur = conn.execute(f"DELETE FROM {T} WHERE name LIKE %s", ("many%",))
    check_eq(cur.rowcount, 3, "rowcount")
    conn.commit()


@sc.step("transaction rolled back; savepoint rolled back inside a committed one")
def _():
    conn.execute(f"INSERT INTO {T} (name) VALUES (%s)", ("gone",))
    conn.rollback()
    with conn.transaction():
        conn.execute(f"INSERT INTO {T} (name) VALUES (%s)", ("kept",))
        with conn.transaction() as sp:  # a SAVEPOINT
            conn.execute(f"INSERT INTO {T} (name) VALUES (%s)", ("undone",))
            raise psycopg.Rollback(sp)
    names = {r[0] for r in conn.execute(f"SELECT name FROM {T}")}
    conn.commit()
    check("gone" not in names and "undone" not in names, f"rolled back rows visible: {names}")
    check("kept" in names, "committed row missing")


@sc.step("unique violation caught, constraint name reported")
def _():
    try:
        conn.execute(f"INSERT INTO {T} (name) VALUES (%s)", ("beta",))
    except errors.UniqueViolation as e:
        check_eq(e.sqlstate, "23505", "sqlstate")
        check_eq(e.diag.constraint_name, f"{T}_name_key", "diag.constraint_name")
        check_eq(e.diag.table_name, T, "diag.table_name")
    else:
        raise AssertionError("no error for a duplicate key")
    finally:
        conn.rollback()
    # the session is usable after the rollback
    check_eq(conn.execute("SELECT 2").fetchone(), (2,))
    conn.commit()


@sc.step("prepared statement past prepare_threshold, ROLLBACK (DEALLOCATE ALL), reuse")
def _():
    q = f"SELECT name, day FROM {T} WHERE id = %s"
    for _ in range(10):  # prepare_threshold is 5: prepared from the 6th run
        check_eq(conn.execute(q, (ids[0],)).fetchone()[0], ROWS[0][2])
    check(conn._prepared._names, "psycopg prepared nothing")  # noqa: SLF001
    conn.rollback()  # ROLLBACK, then psycopg sends DEALLOCATE ALL
    for _ in range(10):
        check_eq(conn.execute(q, (ids[1],)).fetchone()[0], ROWS[1][2])
    conn.execute(f"UPDATE {T} SET n = n + 1 WHERE id = %s", (ids[1],))
    conn.rollback()
    check_eq(conn.execute("SELECT 3").fetchone(), (3,))
    conn.commit()


@sc.step("COPY FROM STDIN (write_row) and COPY TO STDOUT (rows)")
def _():
    rows = [
        (100 + i, 10**12 + i, f"copy{i}", i % 2 == 0, i / 4, date(2021, 3, i + 1),
         datetime(2021, 3, i + 1, 8, 30), datetime(2021, 3, i + 1, 8, 30, tzinfo=timezone.utc))
        for i in range(5)
    ] + [(None, None, "copynull", None, None, None, None, None)]
    with conn.cursor() as cur:
        with cur.copy(f"COPY {T} ({COLS}) FROM STDIN") as copy:
            for r in rows:
                copy.write_row(r)
        check_eq(cur.rowcount, 6, "rows copied in")
        got = []
        with cur.copy(f"COPY {T} ({COLS}) TO STDOUT") as copy:
            copy.set_types(["int4", "int8", "text", "bool", "float8", "date", "timestamp",
                            "timestamptz"])
            for r in copy.rows():
                if r[2] and r[2].startswith("copy"):
                    got.append(r)
    conn.commit()
    check_eq(sorted(got, key=lambda r: r[2]), sorted(rows, key=lambda r: r[2]), "copied rows")


@sc.step("REPEATABLE READ, snapshot kept, update of a changed row fails with 40001")
def _():
    a = psycopg.connect()
    b = psycopg.connect(autocommit=True)
    try:
        a.isolation_level = psycopg.IsolationLevel.REPEATABLE_READ
        before = a.execute(f"SELECT n FROM {T} WHERE id = %s", (ids[0],)).fetchone()[0]
        b.execute(f"UPDATE {T} SET n = n + 100 WHERE id = %s", (ids[0],))
        again = a.execute(f"SELECT n FROM {T} WHERE id = %s", (ids[0],)).fetchone()[0]
        check_eq(again, before, "A's second read")
        try:
            a.execute(f"UPDATE {T} SET n = 0 WHERE id = %s", (ids[0],))
        except errors.SerializationFailure as e:
            check_eq(e.sqlstate, "40001", "sqlstate")
        else:
            raise AssertionError("A's update of a row B changed succeeded")
        a.rollback()
        fresh = a.execute(f"SELECT n FROM {T} WHERE id = %s", (ids[0],)).fetchone()[0]
        check_eq(fresh, before + 100, "A's read in a new transaction")
        a.commit()
    finally:
        a.close()
        b.close()


# application types: numeric (unconstrained and numeric(12,2)), uuid, bytea
TT = f"{T}_types"
TYPE_COLS = "amount, price, u, data, n, big"
UUID_A = UUID("a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11")
TYPE_ROWS = [
    # amount numeric, price numeric(12,2) as inserted, u uuid, data bytea, n int, big bigint
    (Decimal("12345678901234567890.123456789"), Decimal("1234.565"), UUID_A,
     b"\x00\xff\x01'\\\x7f\x80end", 1, 9_000_000_000_000_000_000),
    (Decimal("-0.000000001"), Decimal("-0.005"), UUID(int=0), b"", 2,
     9_000_000_000_000_000_000),
    (Decimal("NaN"), Decimal("7"), UUID(int=2**128 - 1), bytes(range(256)), 2, -5),
    (Decimal("Infinity"), Decimal("9999999999.994"), UUID("00000000-0000-4000-8000-000000000001"),
     b"\x00", None, None),
]
# price as numeric(12,2) stores it: rounded half away from zero to 2 places
PRICES = [Decimal("1234.57"), Decimal("-0.01"), Decimal("7.00"), Decimal("9999999999.99")]


def application_types(fmt, binary):
    """Parameters in `fmt` (%t text, %b binary), results in binary or text."""
    p = f"%{fmt}"
    with conn.cursor(binary=binary) as cur:
        cur.execute(f"DROP TABLE IF EXISTS {TT}")
        cur.execute(f"""CREATE TABLE {TT} (id serial PRIMARY KEY, amount numeric,
                        price numeric(12,2), u uuid UNIQUE, data bytea, n integer, big bigint)""")
        cur.executemany(f"INSERT INTO {TT} ({TYPE_COLS}) VALUES ({', '.join([p] * 6)})",
                        TYPE_ROWS)
        cur.execute(f"SELECT {TYPE_COLS} FROM {TT} ORDER BY id")
        check_eq([cur.pgresult.fformat(i) for i in range(6)], [int(binary)] * 6, "result formats")
        check_eq([d.type_code for d in cur.description], [1700, 1700, 2950, 17, 23, 20],
                 "result type oids")
        got = cur.fetchall()
        check_eq(len(got), 4, "rows")
        want = [row[:1] + (price,) + row[2:] for row, price in zip(TYPE_ROWS, PRICES)]
        for g, w in zip(got, want):
            check_exact(g, w, f"row of {w[2]}")
        # each type as a parameter in WHERE (numeric NaN equals NaN in PostgreSQL)
        for col, i in (("amount", 0), ("u", 2), ("data", 3)):
            for k, row in enumerate(TYPE_ROWS):
                cur.execute(f"SELECT n, price FROM {TT} WHERE {col} = {p}", (row[i],))
                check_exact(cur.fetchall(), [(row[4], PRICES[k])], f"WHERE {col} = {row[i]!r}")
        cur.execute(f"SELECT u FROM {TT} WHERE price = {p}", (Decimal("1234.57"),))
        check_exact(cur.fetchone(), (UUID_A,), "WHERE price = 1234.57")
        # parameters straight back as results
        cur.execute(f"SELECT {p}, {p}, {p}, {p}",
                    (Decimal("-Infinity"), Decimal("-98765432109876543210.0000000001"),
                     UUID_A, b"\x00\x00\xff\xff"))
        check_exact(cur.fetchone(), (Decimal("-Infinity"),
                                     Decimal("-98765432109876543210.0000000001"),
                                     UUID_A, b"\x00\x00\xff\xff"), "parameters echoed")
        # sum(bigint) and avg(integer) are numeric; sum(integer) is bigint
        cur.execute(f"SELECT sum(big), avg(n), sum(n), sum(price), avg(big) FROM {TT}")
        check_eq([d.type_code for d in cur.description], [1700, 1700, 20, 1700, 1700],
                 "aggregate type oids")
        check_exact(cur.fetchone(), (Decimal("17999999999999999995"),
                                     Decimal("1.6666666666666667"), 5,
                                     Decimal("10000001241.55"),
                                     Decimal("5999999999999999998")),
                    "sum(big), avg(n), sum(n), sum(price), avg(big)")
    conn.commit()
    # a price that rounds past numeric(12,2)'s 10 integer digits
    try:
        conn.execute(f"INSERT INTO {TT} (price) VALUES ({p})", (Decimal("9999999999.995"),))
    except errors.NumericValueOutOfRange as e:
        check_eq(e.sqlstate, "22003", "sqlstate")
    else:
        raise AssertionError("no error for 9999999999.995 in numeric(12,2)")
    finally:
        conn.rollback()


@sc.step("application types numeric, uuid, bytea, sum/avg as Decimal (text format)")
def _():
    application_types("t", binary=False)
    # uuid as a string (sent as unknown: any of PostgreSQL's input forms), bytea's text form
    with conn.cursor() as cur:
        for text in ("A0EEBC99-9C0B-4EF8-BB6D-6BB9BD380A11",
                     "{a0eebc99-9c0b4ef8-bb6d6bb9-bd380a11}", "a0eebc999c0b4ef8bb6d6bb9bd380a11"):
            cur.execute(f"SELECT u, u::text FROM {TT} WHERE u = %s", (text,))
            check_exact(cur.fetchall(), [(UUID_A, str(UUID_A))], f"WHERE u = {text!r}")
        cur.execute(f"SELECT data::text, amount::text FROM {TT} WHERE n = 1")
        check_exact(cur.fetchone(), ("\\x00ff01275c7f80656e64", "12345678901234567890.123456789"),
                    "bytea and numeric as text")
    conn.commit()


@sc.step("application types numeric, uuid, bytea, sum/avg as Decimal (binary format)")
def _():
    application_types("b", binary=True)


@sc.step("numeric(12,2) precision and scale in cursor.description (the type modifier)")
def _():
    with conn.cursor() as cur:
        # an expression over the column has none, as in PostgreSQL
        cur.execute(f"""SELECT amount, price, price::numeric(6,1), %s::numeric(5), price + 1,
                               round(price, 1), u FROM {TT} WHERE n = 1""", (Decimal("1.5"),))
        check_eq([(d.name, d.type_code, d.precision, d.scale) for d in cur.description],
                 [("amount", 1700, None, None), ("price", 1700, 12, 2), ("price", 1700, 6, 1),
                  ("numeric", 1700, 5, 0), ("?column?", 1700, None, None),
                  ("round", 1700, None, None), ("u", 2950, None, None)], "description")
        check_exact(cur.fetchone(), (TYPE_ROWS[0][0], Decimal("1234.57"), Decimal("1234.6"),
                                     Decimal("2"), Decimal("1235.57"), Decimal("1234.6"), UUID_A),
                    "values")
    conn.commit()


# more types: jsonb and json, real (float4), time and timetz, interval, an
# enum and a domain over integer, with names of this scenario's own
TM = f"{T}_more"
MOOD = "drv_mood_psycopg3"
POS = "drv_pos_psycopg3"
DOC = {"name": "Zoë ✓ \"q\"\\", "n": 42, "pi": 3.25, "big": 12345678901234567890,
       "tiny": -1.5e-07, "none": None, "yes": True, "tags": ["a", 1, None, [], {}],
       "nested": {"deep": {"list": [1, 2.5, "x"]}}}
# jsonb's text form: keys sorted by length then bytes, numbers as numeric writes them
DOC_JSONB_TEXT = (
    '{"n": 42, "pi": 3.25, "big": 12345678901234567890, "yes": true, '
    '"name": "Zoë ✓ \\"q\\"\\\\", '
    '"none": null, "tags": ["a", 1, null, [], {}], "tiny": -0.00000015, '
    '"nested": {"deep": {"list": [1, 2.5, "x"]}}}')
# the object as jsonb returns it: its keys in that order
DOC_JSONB = json.loads(DOC_JSONB_TEXT)
DOC2 = {"name": "other", "n": -1, "tags": []}
TIMES = [time(4, 5, 6, 789012), time(23, 59, 59, 999999), time(0, 0)]
TIMETZS = [time(4, 5, 6, 789012, tzinfo=timezone(timedelta(hours=5, minutes=30))),
           time(23, 59, 59, 999999, tzinfo=timezone(-timedelta(hours=8))),
           time(0, 0, tzinfo=timezone.utc)]
TIMETZ_TEXT = ["04:05:06.789012+05:30", "23:59:59.999999-08", "00:00:00+00"]
IV_TEXT = "1 year 2 mons 3 days 04:05:06.789"
# psycopg's interval: months count 30 days, a year 365 (timedelta has no months)
IV = timedelta(days=365 + 60 + 3, hours=4, minutes=5, seconds=6, microseconds=789000)
IV_PARAMS = [timedelta(days=-3, microseconds=1), timedelta(0)]
IV_PARAM_TEXT = ["-3 days +00:00:00.000001", "00:00:00"]


class Mood(Enum):
    sad = "sad"
    ok = "ok"
    happy = "happy"


def more_types(fmt, binary):
    """jsonb, json, real, time, timetz, interval, an enum and a domain: parameters
    in `fmt` (%t text, %b binary), results in binary or text. In text the enum
    goes as a str (sent untyped) and comes back as a str (psycopg's defaults);
    in binary the type is registered (EnumInfo.fetch) and values are a Python Enum."""
    p = f"%{fmt}"
    conn.execute(f"DROP TABLE IF EXISTS {TM}")
    conn.execute(f"DROP TYPE IF EXISTS {MOOD}")
    conn.execute(f"DROP DOMAIN IF EXISTS {POS}")
    conn.execute(f"CREATE TYPE {MOOD} AS ENUM ('sad', 'ok', 'happy')")
    conn.execute(f"CREATE DOMAIN {POS} AS integer CHECK (VALUE > 0)")
    conn.execute(f"""CREATE TABLE {TM} (id serial PRIMARY KEY, jb jsonb, js json, r real,
                     t time, tz timetz, iv interval, mood {MOOD}, pos {POS})""")
    conn.commit()
    if binary:
        info = EnumInfo.fetch(conn, MOOD)
        check(info is not None, f"EnumInfo.fetch found no {MOOD}")
        check_eq(info.labels, ["sad", "ok", "happy"], "enum labels")
        register_enum(info, conn, Mood)  # for the cursors opened from now on
        moods = [Mood.happy, Mood.sad, Mood.ok]
    else:
        moods = ["happy", "sad", "ok"]
    with conn.cursor(binary=binary) as cur:
        rows = [
            (Jsonb(DOC), Json(DOC), Float4(0.1), TIMES[0], TIMETZS[0],
             timedelta(days=-3, microseconds=1), moods[0], 5),
            (Jsonb(DOC2), Json(DOC2), 16777217.0, TIMES[1], TIMETZS[1], timedelta(0), moods[1], 1),
            (Jsonb([1, "two", None]), Json("just a string"), Float4(-3.4028235e38), TIMES[2],
             TIMETZS[2], None, moods[2], 2147483647),
        ]
        cur.executemany(f"INSERT INTO {TM} (jb, js, r, t, tz, iv, mood, pos) "
                        f"VALUES ({', '.join([p] * 8)})", rows)
        cur.execute(f"SELECT jb, js, r, t, tz, iv, mood, pos FROM {TM} ORDER BY id")
        check_eq([cur.pgresult.fformat(i) for i in range(8)], [int(binary)] * 8, "result formats")
        # a domain column is described as its base type (int4); the enum by its own oid
        oids = [d.type_code for d in cur.description]
        check_eq(oids[:6] + oids[7:], [3802, 114, 700, 1083, 1266, 1186, 23], "result type oids")
        check(oids[6] > 16383, f"enum oid {oids[6]}")
        got = cur.fetchall()
        # real: 0.1 rounded to float4 reads as 0.1 in text (its shortest form) and as
        # the float4 value itself in binary; 16777217 is 16777216 as a float4
        tenth = 0.10000000149011612 if binary else 0.1
        lowest = -3.4028234663852886e38 if binary else -3.4028235e38
        want = [
            (DOC_JSONB, DOC, tenth, TIMES[0], TIMETZS[0], IV_PARAMS[0], moods[0], 5),
            ({"n": -1, "name": "other", "tags": []}, DOC2, 16777216.0, TIMES[1], TIMETZS[1],
             IV_PARAMS[1], moods[1], 1),
            ([1, "two", None], "just a string", lowest, TIMES[2], TIMETZS[2], None, moods[2],
             2147483647),
        ]
        for g, w in zip(got, want):
            check_exact(g, w, "row")
        # the same rows as PostgreSQL's text
        cur.execute(f"""SELECT jb::text, r::float8, r::text, t::text, tz::text, iv::text,
                               mood::text, pos::text FROM {TM} ORDER BY id""")
        check_exact(cur.fetchall(), [
            (DOC_JSONB_TEXT, 0.10000000149011612, "0.1", "04:05:06.789012", TIMETZ_TEXT[0],
             IV_PARAM_TEXT[0], "happy", "5"),
            ('{"n": -1, "name": "other", "tags": []}', 16777216.0, "1.6777216e+07",
             "23:59:59.999999", TIMETZ_TEXT[1], IV_PARAM_TEXT[1], "sad", "1"),
            ('[1, "two", null]', -3.4028234663852886e38, "-3.4028235e+38", "00:00:00",
             TIMETZ_TEXT[2], None, "ok", "2147483647"),
        ], "as text")
        # jsonb ->> with parameters, json ->>, containment
        cur.execute(f"SELECT id FROM {TM} WHERE jb ->> 'name' = {p}", (DOC["name"],))
        check_eq(len(cur.fetchall()), 1, "jb ->> 'name' = a parameter")
        cur.execute(f"SELECT jb ->> {p}, js ->> 'name', jb -> 'nested' -> 'deep' FROM {TM} "
                    f"WHERE jb ->> {p} = {p} ORDER BY id", ("n", "n", "42"))
        check_exact(cur.fetchall(), [("42", DOC["name"], {"list": [1, 2.5, "x"]})],
                    "jb ->> a parameter key")
        cur.execute(f"SELECT count(*) FROM {TM} WHERE jb @> {p}", (Jsonb({"tags": ["a"]}),))
        check_eq(cur.fetchone()[0], 1, "jb @> a jsonb parameter")
        # real: a float4 parameter equals the stored 0.1, a float8 one does not
        cur.execute(f"SELECT count(*) FROM {TM} WHERE r = {p}", (Float4(0.1),))
        check_eq(cur.fetchone()[0], 1, "r = float4 0.1")
        cur.execute(f"SELECT count(*) FROM {TM} WHERE r = {p}", (0.1,))
        check_eq(cur.fetchone()[0], 0, "r = float8 0.1")
        # time, timetz and interval as parameters in WHERE
        cur.execute(f"SELECT id FROM {TM} WHERE t = {p} AND tz = {p}", (TIMES[1], TIMETZS[1]))
        check_eq(len(cur.fetchall()), 1, "WHERE t = and tz =")
        cur.execute(f"SELECT count(*) FROM {TM} WHERE t > {p}", (time(4, 5, 6, 789011),))
        check_eq(cur.fetchone()[0], 2, "WHERE t > 04:05:06.789011")
        cur.execute(f"SELECT count(*) FROM {TM} WHERE iv < {p}", (timedelta(microseconds=1),))
        check_eq(cur.fetchone()[0], 2, "WHERE iv < 1 microsecond")
        # an interval with months: in as text cast to interval, out as timedelta
        cur.execute(f"SELECT {p}::interval, ({p}::interval)::text, {p}::interval > {p}",
                    (IV_TEXT, IV_TEXT, IV_TEXT, timedelta(days=400)))
        check_exact(cur.fetchone(), (IV, IV_TEXT, True), "interval with months")
        # the enum: ordered by its labels' order, compared with a parameter
        cur.execute(f"SELECT mood, pos FROM {TM} ORDER BY mood")
        check_exact(cur.fetchall(), [(moods[1], 1), (moods[2], 2147483647), (moods[0], 5)],
                    "ORDER BY mood")
        cur.execute(f"SELECT pos FROM {TM} WHERE mood > {p} ORDER BY mood DESC", (moods[1],))
        check_exact(cur.fetchall(), [(5,), (2147483647,)], "WHERE mood > 'sad'")
        cur.execute(f"SELECT id FROM {TM} WHERE mood = {p} AND pos = {p}", (moods[0], 5))
        check_eq(len(cur.fetchall()), 1, "WHERE mood = and pos =")
        # parameters straight back as results
        cur.execute(f"SELECT {p}, {p}, {p}, {p}, {p}, {p}, {p}::{MOOD}, {p}::{POS}",
                    (Jsonb(DOC), Json(DOC2), Float4(0.1), TIMES[0], TIMETZS[1], IV_PARAMS[0],
                     moods[1], 7))
        check_exact(cur.fetchone(), (DOC_JSONB, DOC2, tenth, TIMES[0], TIMETZS[1], IV_PARAMS[0],
                                     moods[1], 7), "parameters echoed")
    conn.commit()
    # the domain's check, as a column and as a cast of a parameter; a label not in the enum
    for sql, args in ((f"INSERT INTO {TM} (pos) VALUES ({p})", (0,)),
                      (f"SELECT {p}::{POS}", (-1,))):
        try:
            conn.execute(sql, args)
        except errors.CheckViolation as e:
            check_eq(e.sqlstate, "23514", "sqlstate")
            check_eq(e.diag.constraint_name, f"{POS}_check", "diag.constraint_name")
            check_eq(e.diag.datatype_name, POS, "diag.datatype_name")
        else:
            raise AssertionError(f"no error for {args[0]} in {POS}")
        finally:
            conn.rollback()
    try:
        conn.execute(f"INSERT INTO {TM} (mood) VALUES (%t)", ("angry",))
    except errors.InvalidTextRepresentation as e:
        check_eq(e.sqlstate, "22P02", "sqlstate")
    else:
        raise AssertionError(f"no error for 'angry' in {MOOD}")
    finally:
        conn.rollback()


@sc.step("more types jsonb, json, real, time, timetz, interval, enum, domain (text format)")
def _():
    more_types("t", binary=False)


@sc.step("more types jsonb, json, real, time, timetz, interval, enum, domain (binary format)")
def _():
    more_types("b", binary=True)



if conn is not None:
    conn.close()
sc.finish()
