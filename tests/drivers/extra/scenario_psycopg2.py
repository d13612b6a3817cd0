"""psycopg2 with its defaults (parameters interpolated client-side, no
auto-prepare: PREPARE/EXECUTE by hand), against the server named by
PGHOST/PGPORT/PGUSER/PGDATABASE. Checked by hand, not in CI."""

import io
import os
import sys
from datetime import date, datetime, timedelta, timezone

import psycopg2
import psycopg2.errors
import psycopg2.extensions

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from steps import Scenario, check, check_eq  # noqa: E402

T = "drv_psycopg2"
COLS = "n, big, name, flag, score, day, at, at_tz"
ROWS = [
    (42, 9_000_000_000, "O'Hara ✓", True, 0.1 + 0.2, date(2024, 2, 29),
     datetime(2024, 1, 2, 3, 4, 5, 678000),
     datetime(2024, 1, 2, 3, 4, 5, 678000, tzinfo=timezone(timedelta(hours=2)))),
    (-7, -1, "beta", False, -1.5e300, date(1999, 12, 31), datetime(1999, 12, 31, 23, 59, 59),
     datetime(2000, 1, 1, tzinfo=timezone.utc)),
]
sc = Scenario("psycopg2")
conn = None
ids = []


def rollback():
    if conn is not None and not conn.closed:
        conn.rollback()


sc.on_failure.append(rollback)


def one(sql, args=()):
    with conn.cursor() as cur:
        cur.execute(sql, args)
        return cur.fetchone()


@sc.step("connect")
def _():
    global conn
    conn = psycopg2.connect("")
    check_eq(one("SELECT 1"), (1,))
    conn.rollback()


@sc.step("create table (DROP IF EXISTS, SERIAL key, eight column types)")
def _():
    with conn.cursor() as cur:
        cur.execute(f"DROP TABLE IF EXISTS {T}")
        cur.execute(f"""CREATE TABLE {T} (
            id serial PRIMARY KEY,
            n integer, big bigint, name text UNIQUE, flag boolean,
            score double precision, day date, at timestamp, at_tz timestamptz)""")
    conn.commit()


@sc.step("insert with parameters of every type, RETURNING id; executemany")
def _():
    with conn.cursor() as cur:
        for row in ROWS:
            cur.execute(f"INSERT INTO {T} ({COLS}) VALUES (%s, %s, %s, %s, %s, %s, %s, %s) "
                        "RETURNING id", row)
            ids.append(cur.fetchone()[0])
        cur.executemany(f"INSERT INTO {T} (n, name, day) VALUES (%s, %s, %s)",
                        [(i, f"many{i}", date(2020, 1, i)) for i in range(1, 4)])
    conn.commit()


@sc.step("select with parameters, values round-trip")
def _():
    for id_, row in zip(ids, ROWS):
        check_eq(one(f"SELECT {COLS} FROM {T} WHERE id = %s", (id_,)), row, f"row {id_}")
    got = one(f"SELECT count(*) FROM {T} WHERE day >= %s AND flag = %s AND at < %s AND at_tz > %s",
              (date(2024, 1, 1), True, datetime(2025, 1, 1),
               datetime(2023, 12, 31, tzinfo=timezone.utc)))
    check_eq(got, (1,), "filtered count")
    conn.commit()


@sc.step("update with parameters")
def _():
    new_tz = datetime(2030, 6, 1, 12, tzinfo=timezone.utc)
    with conn.cursor() as cur:
        cur.execute(f"UPDATE {T} SET score = %s, at_tz = %s, big = big + %s WHERE name = %s",
                    (2.5, new_tz, 1, "beta"))
        check_eq(cur.rowcount, 1, "rowcount")
    check_eq(one(f"SELECT score, at_tz, big FROM {T} WHERE name = %s", ("beta",)),
             (2.5, new_tz, 0))
    conn.commit()


@sc.step("delete with parameters")
def _():
    with conn.cursor() as cur:
        cur.execute(f"DELETE FROM {T} WHERE name LIKE %s", ("many%",))
        check_eq(cur.rowcount, 3, "rowcount")
    conn.commit()


@sc.step("transaction rolled back; savepoint rolled back inside a committed one")
def _():
    with conn.cursor() as cur:
        cur.execute(f"INSERT INTO {T} (name) VALUES (%s)", ("gone",))
        conn.rollback()
        cur.execute(f"INSERT INTO {T} (name) VALUES (%s)", ("kept",))
        cur.execute("SAVEPOINT sp")
        cur.execute(f"INSERT INTO {T} (name) VALUES (%s)", ("undone",))
        cur.execute("ROLLBACK TO SAVEPOINT sp")
        conn.commit()
        cur.execute(f"SELECT name FROM {T}")
        names = {r[0] for r in cur.fetchall()}
    conn.commit()
    check("gone" not in names and "undone" not in names, f"rolled back rows visible: {names}")
    check("kept" in names, "committed row missing")


@sc.step("unique violation caught, constraint name reported")
def _():
    try:
        one(f"INSERT INTO {T} (name) VALUES (%s) RETURNING id", ("beta",))
    except psycopg2.errors.UniqueViolation as e:
        check_eq(e.pgcode, "23505", "pgcode")
        check_eq(e.diag.constraint_name, f"{T}_name_key", "diag.constraint_name")
        check_eq(e.diag.table_name, T, "diag.table_name")
    else:
        raise AssertionError("no error for a duplicate key")
    finally:
        conn.rollback()
    check_eq(one("SELECT 2"), (2,))
    conn.commit()


@sc.step("PREPARE / EXECUTE 10 times, ROLLBACK, EXECUTE again, DEALLOCATE")
def _():
    with conn.cursor() as cur:
        cur.execute(f"PREPARE drv_by_id (int) AS SELECT name, day FROM {T} WHERE id = $1")
        for _ in range(10):
            cur.execute("EXECUTE drv_by_id (%s)", (ids[0],))
            check_eq(cur.fetchone()[0], ROWS[0][2])
        conn.rollback()  # a prepared statement outlives the transaction
        for _ in range(10):
            cur.execute("EXECUTE drv_by_id (%s)", (ids[1],))
            check_eq(cur.fetchone()[0], "beta")
        cur.execute("DEALLOCATE drv_by_id")
    conn.commit()


@sc.step("COPY in with copy_from (WITH DELIMITER … NULL …)")
def _():
    data = "".join(
        f"{100 + i}\t{10**12 + i}\tcopy{i}\t{'t' if i % 2 == 0 else 'f'}\t{i / 4}\t"
        f"2021-03-0{i + 1}\t2021-03-0{i + 1} 08:30:00\t2021-03-0{i + 1} 08:30:00+00\n"
        for i in range(5)) + "\\N\t\\N\tcopynull\t\\N\t\\N\t\\N\t\\N\t\\N\n"
    with conn.cursor() as cur:
        cur.copy_from(io.StringIO(data), T, columns=COLS.split(", "))
        check_eq(cur.rowcount, 6, "rows copied in")
        cur.execute(f"SELECT name, n FROM {T} WHERE name LIKE 'copy%' ORDER BY name")
        check_eq(cur.fetchall(), [(f"copy{i}", 100 + i) for i in range(5)] + [("copynull", None)])
    conn.commit()


@sc.step("COPY out with copy_to and copy_expert (query, CSV HEADER)")
def _():
    with conn.cursor() as cur:
        out = io.StringIO()
        cur.copy_to(out, T, columns=("name", "n"))
        check("beta\t-7" in out.getvalue().splitlines(), f"copied out {out.getvalue()!r}")
        out = io.StringIO()
        cur.copy_expert(f"COPY (SELECT name, n FROM {T} WHERE id = {ids[1]}) TO STDOUT WITH CSV HEADER",
                        out)
        check_eq(out.getvalue().splitlines(), ["name,n", "beta,-7"])
    conn.commit()


@sc.step("REPEATABLE READ, snapshot kept, update of a changed row fails with 40001")
def _():
    a = psycopg2.connect("")
    b = psycopg2.connect("")
    try:
        a.set_session(isolation_level="REPEATABLE READ")
        b.autocommit = True
        ca, cb = a.cursor(), b.cursor()
        q = f"SELECT n FROM {T} WHERE id = %s"
        ca.execute(q, (ids[0],))
        before = ca.fetchone()[0]
        cb.execute(f"UPDATE {T} SET n = n + 100 WHERE id = %s", (ids[0],))
        ca.execute(q, (ids[0],))
        check_eq(ca.fetchone()[0], before, "A's second read")
        try:
            ca.execute(f"UPDATE {T} SET n = 0 WHERE id = %s", (ids[0],))
        except psycopg2.errors.SerializationFailure as e:
            check_eq(e.pgcode, "40001", "pgcode")
        else:
            raise AssertionError("A's update of a row B changed succeeded")
        a.rollback()
        ca.execute(q, (ids[0],))
        check_eq(ca.fetchone()[0], before + 100, "A's read in a new transaction")
        a.commit()
    finally:
        a.close()
        b.close()


if conn is not None:
    conn.close()
sc.finish()
