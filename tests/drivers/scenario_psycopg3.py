"""psycopg 3 with its defaults, against the server named by PGHOST/PGPORT/
PGUSER/PGDATABASE (libpq's environment variables)."""

from datetime import date, datetime, timedelta, timezone
from decimal import Decimal
from uuid import UUID

import psycopg
from psycopg import errors

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


if conn is not None:
    conn.close()
sc.finish()
