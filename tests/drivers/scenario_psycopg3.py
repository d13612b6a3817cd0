"""psycopg 3 with its defaults, against the server named by PGHOST/PGPORT/
PGUSER/PGDATABASE (libpq's environment variables)."""

from datetime import date, datetime, timedelta, timezone

import psycopg
from psycopg import errors

from steps import Scenario, check, check_eq

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


if conn is not None:
    conn.close()
sc.finish()
