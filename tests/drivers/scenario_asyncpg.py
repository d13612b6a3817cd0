"""asyncpg with its defaults (every statement prepared and cached), against
the server named by PGHOST/PGPORT/PGUSER/PGDATABASE."""

import asyncio
import json
from datetime import date, datetime, time, timedelta, timezone
from decimal import Decimal
from uuid import UUID

import asyncpg

from steps import Scenario, check, check_eq, check_exact

T = "drv_asyncpg"
COLS = "n, big, name, flag, score, day, at, at_tz"
ROWS = [
    (42, 9_000_000_000, "O'Hara ✓", True, 0.1 + 0.2, date(2024, 2, 29),
     datetime(2024, 1, 2, 3, 4, 5, 678000),
     datetime(2024, 1, 2, 3, 4, 5, 678000, tzinfo=timezone(timedelta(hours=2)))),
    (-7, -1, "beta", False, -1.5e300, date(1999, 12, 31), datetime(1999, 12, 31, 23, 59, 59),
     datetime(2000, 1, 1, tzinfo=timezone.utc)),
]

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

# more types: jsonb and json, real (float4), time and timetz, interval, an
# enum and a domain over integer, with names of this scenario's own
TM = f"{T}_more"
TE = f"{T}_moods"
TD = f"{T}_pos"
MOOD = "drv_mood_asyncpg"
POS = "drv_pos_asyncpg"
DOC = {"name": "Zoë ✓ \"q\"\\", "n": 42, "pi": 3.25, "big": 12345678901234567890,
       "tiny": -1.5e-07, "none": None, "yes": True, "tags": ["a", 1, None, [], {}],
       "nested": {"deep": {"list": [1, 2.5, "x"]}}}
# asyncpg's json and jsonb codecs take and return str (no decoding by default)
DOC_JSON = json.dumps(DOC, ensure_ascii=False)
# jsonb's text form: keys sorted by length then bytes, numbers as numeric writes them
DOC_JSONB = (
    '{"n": 42, "pi": 3.25, "big": 12345678901234567890, "yes": true, '
    '"name": "Zoë ✓ \\"q\\"\\\\", '
    '"none": null, "tags": ["a", 1, null, [], {}], "tiny": -0.00000015, '
    '"nested": {"deep": {"list": [1, 2.5, "x"]}}}')
TIMES = [time(4, 5, 6, 789012), time(23, 59, 59, 999999), time(0, 0)]
TIMETZS = [time(4, 5, 6, 789012, tzinfo=timezone(timedelta(hours=5, minutes=30))),
           time(23, 59, 59, 999999, tzinfo=timezone(-timedelta(hours=8))),
           time(0, 0, tzinfo=timezone.utc)]
IV_TEXT = "1 year 2 mons 3 days 04:05:06.789"
# asyncpg's interval: months count 30 days, a year 365 (timedelta has no months)
IV = timedelta(days=365 + 60 + 3, hours=4, minutes=5, seconds=6, microseconds=789000)


async def main():
    sc = Scenario("asyncpg")
    st = {}
    ids = []

    async def reset():
        conn = st.get("conn")
        if conn is not None and not conn.is_closed() and conn.is_in_transaction():
            await conn.execute("ROLLBACK")

    sc.on_async_failure.append(reset)

    async def connect():
        st["conn"] = await asyncpg.connect()
        check_eq(await st["conn"].fetchval("SELECT 1"), 1)

    await sc.astep("connect", connect)
    conn = st.get("conn")

    async def create():
        await conn.execute(f"DROP TABLE IF EXISTS {T}")
        await conn.execute(
            f"""CREATE TABLE {T} (
                id serial PRIMARY KEY,
                n integer, big bigint, name text UNIQUE, flag boolean,
                score double precision, day date, at timestamp, at_tz timestamptz)""")

    await sc.astep("create table (DROP IF EXISTS, SERIAL key, eight column types)", create)

    async def insert():
        for row in ROWS:
            ids.append(await conn.fetchval(
                f"INSERT INTO {T} ({COLS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING id",
                *row))
        await conn.executemany(f"INSERT INTO {T} (n, name, day) VALUES ($1, $2, $3)",
                               [(i, f"many{i}", date(2020, 1, i)) for i in range(1, 4)])

    await sc.astep("insert with parameters of every type, RETURNING id; executemany", insert)

    async def select():
        for id_, row in zip(ids, ROWS):
            got = await conn.fetchrow(f"SELECT {COLS} FROM {T} WHERE id = $1", id_)
            check_eq(tuple(got), row, f"row {id_}")
        count = await conn.fetchval(
            f"SELECT count(*) FROM {T} WHERE day >= $1 AND flag = $2 AND at < $3 AND at_tz > $4",
            date(2024, 1, 1), True, datetime(2025, 1, 1),
            datetime(2023, 12, 31, tzinfo=timezone.utc))
        check_eq(count, 1, "filtered count")

    await sc.astep("select with parameters, values round-trip", select)

    async def update():
        new_tz = datetime(2030, 6, 1, 12, tzinfo=timezone.utc)
        status = await conn.execute(
            f"UPDATE {T} SET score = $1, at_tz = $2, big = big + $3 WHERE name = $4",
            2.5, new_tz, 1, "beta")
        check_eq(status, "UPDATE 1", "command tag")
        got = await conn.fetchrow(f"SELECT score, at_tz, big FROM {T} WHERE name = $1", "beta")
        check_eq(tuple(got), (2.5, new_tz, 0))

    await sc.astep("update with parameters", update)

    async def delete():
        check_eq(await conn.execute(f"DELETE FROM {T} WHERE name LIKE $1", "many%"),
                 "DELETE 3", "command tag")

    await sc.astep("delete with parameters", delete)

    async def transactions():
        tx = conn.transaction()
        await tx.start()
        await conn.execute(f"INSERT INTO {T} (name) VALUES ($1)", "gone")
        await tx.rollback()
        async with conn.transaction():
            await conn.execute(f"INSERT INTO {T} (name) VALUES ($1)", "kept")
            sp = conn.transaction()  # nested: a SAVEPOINT
            await sp.start()
            await conn.execute(f"INSERT INTO {T} (name) VALUES ($1)", "undone")
            await sp.rollback()
        names = {r["name"] for r in await conn.fetch(f"SELECT name FROM {T}")}
        check("gone" not in names and "undone" not in names, f"rolled back rows visible: {names}")
        check("kept" in names, "committed row missing")

    await sc.astep("transaction rolled back; savepoint rolled back inside a committed one",
                   transactions)

    async def unique():
        try:
            await conn.execute(f"INSERT INTO {T} (name) VALUES ($1)", "beta")
        except asyncpg.UniqueViolationError as e:
            check_eq(e.sqlstate, "23505", "sqlstate")
            check_eq(e.constraint_name, f"{T}_name_key", "constraint_name")
            check_eq(e.table_name, T, "table_name")
        else:
            raise AssertionError("no error for a duplicate key")
        check_eq(await conn.fetchval("SELECT 2"), 2)

    await sc.astep("unique violation caught, constraint name reported", unique)

    async def prepared():
        q = f"SELECT name, day FROM {T} WHERE id = $1"
        tx = conn.transaction()
        await tx.start()
        for _ in range(10):  # asyncpg prepares every statement and caches it
            check_eq(await conn.fetchval(q, ids[0]), ROWS[0][2])
        stmt = await conn.prepare(q)  # the explicit API, also reused
        for _ in range(10):
            check_eq(await stmt.fetchval(ids[1]), "beta")
        await tx.rollback()
        for _ in range(10):
            check_eq(await conn.fetchval(q, ids[1]), "beta")
        check_eq(await stmt.fetchval(ids[0]), ROWS[0][2])

    await sc.astep("prepared statements reused 10 times, ROLLBACK, reused again", prepared)

    async def copy_in():
        rows = [
            (100 + i, 10**12 + i, f"copy{i}", i % 2 == 0, i / 4, date(2021, 3, i + 1),
             datetime(2021, 3, i + 1, 8, 30), datetime(2021, 3, i + 1, 8, 30, tzinfo=timezone.utc))
            for i in range(5)
        ] + [(None, None, "copynull", None, None, None, None, None)]
        status = await conn.copy_records_to_table(T, records=rows, columns=COLS.split(", "))
        check_eq(status, "COPY 6", "copy in status")
        got = await conn.fetch(f"SELECT {COLS} FROM {T} WHERE name LIKE 'copy%' ORDER BY name")
        check_eq([tuple(r) for r in got], rows, "rows copied in")

    await sc.astep("COPY in with copy_records_to_table (binary format)", copy_in)

    chunks = []

    async def sink(data):
        chunks.append(data)

    async def copy_out_table():
        chunks.clear()
        status = await conn.copy_from_table(T, columns=["name", "n"], output=sink)
        lines = b"".join(chunks).decode().splitlines()
        check_eq(status, f"COPY {len(lines)}", "copy out status")
        check("beta\t-7" in lines, f"copied out {lines}")

    await sc.astep("COPY out with copy_from_table", copy_out_table)

    async def copy_out_query():
        chunks.clear()
        # a query with an argument: asyncpg quotes it into COPY (query) TO STDOUT
        status = await conn.copy_from_query(
            f"SELECT name, n FROM {T} WHERE id = $1", ids[1], output=sink)
        check_eq(status, "COPY 1", "copy out status")
        check_eq(b"".join(chunks).decode(), "beta\t-7\n", "copied out")

    await sc.astep("COPY (query) out with copy_from_query and an argument", copy_out_query)

    async def pool():
        async with asyncpg.create_pool(min_size=1, max_size=2) as p:
            for i in range(3):  # each release runs the pool's reset query
                async with p.acquire() as c:
                    check_eq(await c.fetchval(f"SELECT name FROM {T} WHERE id = $1", ids[1]),
                             "beta")
                    await c.execute("SET application_name = 'drv'")

    await sc.astep("pool acquire, release (reset query), acquire again", pool)

    async def repeatable_read():
        a = await asyncpg.connect()
        b = await asyncpg.connect()
        try:
            tx = a.transaction(isolation="repeatable_read")
            await tx.start()
            q = f"SELECT n FROM {T} WHERE id = $1"
            before = await a.fetchval(q, ids[0])
            await b.execute(f"UPDATE {T} SET n = n + 100 WHERE id = $1", ids[0])
            check_eq(await a.fetchval(q, ids[0]), before, "A's second read")
            try:
                await a.execute(f"UPDATE {T} SET n = 0 WHERE id = $1", ids[0])
            except asyncpg.SerializationError as e:
                check_eq(e.sqlstate, "40001", "sqlstate")
            else:
                raise AssertionError("A's update of a row B changed succeeded")
            await tx.rollback()
            check_eq(await a.fetchval(q, ids[0]), before + 100, "A's read after the rollback")
        finally:
            await a.close()
            await b.close()

    await sc.astep("REPEATABLE READ, snapshot kept, update of a changed row fails with 40001",
                   repeatable_read)

    async def application_types():
        await conn.execute(f"DROP TABLE IF EXISTS {TT}")
        await conn.execute(f"""CREATE TABLE {TT} (id serial PRIMARY KEY, amount numeric,
                               price numeric(12,2), u uuid UNIQUE, data bytea, n integer,
                               big bigint)""")
        await conn.executemany(
            f"INSERT INTO {TT} ({TYPE_COLS}) VALUES ($1, $2, $3, $4, $5, $6)", TYPE_ROWS)
        want = [row[:1] + (price,) + row[2:] for row, price in zip(TYPE_ROWS, PRICES)]
        stmt = await conn.prepare(f"SELECT {TYPE_COLS} FROM {TT} ORDER BY id")
        check_eq([a.type.name for a in stmt.get_attributes()],
                 ["numeric", "numeric", "uuid", "bytea", "int4", "int8"], "result types")
        got = [tuple(r) for r in await stmt.fetch()]
        check_eq(len(got), 4, "rows")
        for g, w in zip(got, want):
            check_exact(g, w, f"row of {w[2]}")
        # each type as a parameter in WHERE (numeric NaN equals NaN in PostgreSQL)
        for col, i in (("amount", 0), ("u", 2), ("data", 3)):
            for k, row in enumerate(TYPE_ROWS):
                r = await conn.fetch(f"SELECT n, price FROM {TT} WHERE {col} = $1", row[i])
                check_exact([tuple(x) for x in r], [(row[4], PRICES[k])],
                            f"WHERE {col} = {row[i]!r}")
        check_exact(await conn.fetchval(f"SELECT u FROM {TT} WHERE price = $1",
                                        Decimal("1234.57")), UUID_A, "WHERE price = 1234.57")
        # a uuid parameter given as a string (asyncpg encodes it)
        check_exact(await conn.fetchval(f"SELECT n FROM {TT} WHERE u = $1",
                                        "A0EEBC99-9C0B-4EF8-BB6D-6BB9BD380A11"), 1,
                    "WHERE u = an upper-case string")
        # parameters straight back as results
        r = await conn.fetchrow("SELECT $1::numeric, $2::numeric, $3::uuid, $4::bytea",
                                Decimal("-Infinity"), Decimal("-98765432109876543210.0000000001"),
                                UUID_A, b"\x00\x00\xff\xff")
        check_exact(tuple(r), (Decimal("-Infinity"), Decimal("-98765432109876543210.0000000001"),
                               UUID_A, b"\x00\x00\xff\xff"), "parameters echoed")
        # sum(bigint) and avg(integer) are numeric; sum(integer) is bigint
        r = await conn.fetchrow(
            f"SELECT sum(big), avg(n), sum(n), sum(price), avg(big) FROM {TT}")
        check_exact(tuple(r), (Decimal("17999999999999999995"), Decimal("1.6666666666666667"), 5,
                               Decimal("10000001241.55"), Decimal("5999999999999999998")),
                    "sum(big), avg(n), sum(n), sum(price), avg(big)")
        # COPY in of these types (binary format), read back
        await conn.execute(f"DELETE FROM {TT}")
        status = await conn.copy_records_to_table(TT, records=TYPE_ROWS,
                                                  columns=TYPE_COLS.split(", "))
        check_eq(status, "COPY 4", "copy in status")
        got = [tuple(r) for r in await stmt.fetch()]
        check_eq(len(got), 4, "rows copied in")
        for g, w in zip(got, want):
            check_exact(g, w, f"row of {w[2]} copied in")
        # a price that rounds past numeric(12,2)'s 10 integer digits
        try:
            await conn.execute(f"INSERT INTO {TT} (price) VALUES ($1)", Decimal("9999999999.995"))
        except asyncpg.NumericValueOutOfRangeError as e:
            check_eq(e.sqlstate, "22003", "sqlstate")
        else:
            raise AssertionError("no error for 9999999999.995 in numeric(12,2)")

    await sc.astep("application types numeric, uuid, bytea, sum/avg as Decimal (binary format)",
                   application_types)

    async def more_types():
        await conn.execute(f"DROP TABLE IF EXISTS {TM}")
        await conn.execute(f"""CREATE TABLE {TM} (id serial PRIMARY KEY, jb jsonb, js json, r real,
                               t time, tz timetz, iv interval)""")
        rows = [
            (DOC_JSON, DOC_JSON, 0.1, TIMES[0], TIMETZS[0], timedelta(days=-3, microseconds=1)),
            ('{"name": "other", "n": -1, "tags": []}', '{"name": "other", "n": -1, "tags": []}',
             16777217.0, TIMES[1], TIMETZS[1], timedelta(0)),
            ('[1, "two", null]', '"just a string"', -3.4028235e38, TIMES[2], TIMETZS[2], None),
        ]
        await conn.executemany(
            f"INSERT INTO {TM} (jb, js, r, t, tz, iv) VALUES ($1, $2, $3, $4, $5, $6)", rows)
        stmt = await conn.prepare(f"SELECT jb, js, r, t, tz, iv FROM {TM} ORDER BY id")
        check_eq([a.type.name for a in stmt.get_attributes()],
                 ["jsonb", "json", "float4", "time", "timetz", "interval"], "result types")
        # jsonb comes back in its own text form, json as it went in; real as the
        # float4 value (0.1 is 0.10000000149011612, 16777217 is 16777216)
        check_exact([tuple(r) for r in await stmt.fetch()], [
            (DOC_JSONB, DOC_JSON, 0.10000000149011612, TIMES[0], TIMETZS[0],
             timedelta(days=-3, microseconds=1)),
            ('{"n": -1, "name": "other", "tags": []}', '{"name": "other", "n": -1, "tags": []}',
             16777216.0, TIMES[1], TIMETZS[1], timedelta(0)),
            ('[1, "two", null]', '"just a string"', -3.4028234663852886e38, TIMES[2], TIMETZS[2],
             None),
        ], "rows")
        check_eq(json.loads((await stmt.fetchrow())["jb"]), DOC, "jsonb decoded")
        r = await conn.fetchrow(f"SELECT r::float8, r::text, tz::text, iv::text FROM {TM} "
                                "ORDER BY id")
        check_exact(tuple(r), (0.10000000149011612, "0.1", "04:05:06.789012+05:30",
                               "-3 days +00:00:00.000001"), "as text")
        # jsonb ->> with parameters, json ->>, containment
        check_eq(await conn.fetchval(f"SELECT count(*) FROM {TM} WHERE jb ->> 'name' = $1",
                                     DOC["name"]), 1, "jb ->> 'name' = a parameter")
        r = await conn.fetch(f"SELECT jb ->> $1, js ->> 'name', jb -> 'nested' -> 'deep' FROM {TM} "
                             "WHERE jb ->> $1 = $2 ORDER BY id", "n", "42")
        check_exact([tuple(x) for x in r], [("42", DOC["name"], '{"list": [1, 2.5, "x"]}')],
                    "jb ->> a parameter key")
        check_eq(await conn.fetchval(f"SELECT count(*) FROM {TM} WHERE jb @> $1",
                                     '{"tags": ["a"]}'), 1, "jb @> a jsonb parameter")
        # real: a float4 parameter equals the stored 0.1, a float8 one does not
        check_eq(await conn.fetchval(f"SELECT count(*) FROM {TM} WHERE r = $1", 0.1), 1,
                 "r = float4 0.1")
        check_eq(await conn.fetchval(f"SELECT count(*) FROM {TM} WHERE r = $1::float8", 0.1), 0,
                 "r = float8 0.1")
        # time, timetz and interval as parameters in WHERE
        check_eq(await conn.fetchval(f"SELECT count(*) FROM {TM} WHERE t = $1 AND tz = $2",
                                     TIMES[1], TIMETZS[1]), 1, "WHERE t = and tz =")
        check_eq(await conn.fetchval(f"SELECT count(*) FROM {TM} WHERE t > $1",
                                     time(4, 5, 6, 789011)), 2, "WHERE t > 04:05:06.789011")
        check_eq(await conn.fetchval(f"SELECT count(*) FROM {TM} WHERE iv < $1",
                                     timedelta(microseconds=1)), 2, "WHERE iv < 1 microsecond")
        # an interval with months: in as text cast to interval, out as timedelta
        r = await conn.fetchrow("SELECT $1::text::interval, ($1::text::interval)::text, "
                                "$1::text::interval > $2", IV_TEXT, timedelta(days=400))
        check_exact(tuple(r), (IV, IV_TEXT, True), "interval with months")
        # parameters straight back as results
        r = await conn.fetchrow("SELECT $1::jsonb, $2::json, $3::real, $4::time, $5::timetz, "
                                "$6::interval", DOC_JSON, DOC_JSON, 0.1, TIMES[0], TIMETZS[1],
                                timedelta(days=-3, microseconds=1))
        check_exact(tuple(r), (DOC_JSONB, DOC_JSON, 0.10000000149011612, TIMES[0], TIMETZS[1],
                               timedelta(days=-3, microseconds=1)), "parameters echoed")

    await sc.astep("more types jsonb, json, real, time, timetz, interval (binary format)",
                   more_types)

    async def enum_type():
        await conn.execute(f"DROP TABLE IF EXISTS {TE}")
        await conn.execute(f"DROP TYPE IF EXISTS {MOOD}")
        await conn.execute(f"CREATE TYPE {MOOD} AS ENUM ('sad', 'ok', 'happy')")
        await conn.execute(f"CREATE TABLE {TE} (id serial PRIMARY KEY, mood {MOOD}, n integer)")
        # the enum goes as its label (str); a result of the enum's oid makes asyncpg
        # introspect the type (its catalog query, run once) and decode it as str
        await conn.executemany(f"INSERT INTO {TE} (mood, n) VALUES ($1, $2)",
                               [("happy", 5), ("sad", 1), ("ok", 2)])
        stmt = await conn.prepare(f"SELECT mood, n FROM {TE} ORDER BY id")
        check_eq([a.type.name for a in stmt.get_attributes()], [MOOD, "int4"], "result types")
        check_exact([tuple(r) for r in await stmt.fetch()], [("happy", 5), ("sad", 1), ("ok", 2)],
                    "rows")
        # ordered by its labels' order, compared with a parameter
        r = await conn.fetch(f"SELECT mood, n FROM {TE} ORDER BY mood")
        check_exact([tuple(x) for x in r], [("sad", 1), ("ok", 2), ("happy", 5)], "ORDER BY mood")
        r = await conn.fetch(f"SELECT n FROM {TE} WHERE mood > $1 ORDER BY mood DESC", "sad")
        check_exact([tuple(x) for x in r], [(5,), (2,)], "WHERE mood > 'sad'")
        # a parameter straight back as a result
        check_exact(await conn.fetchval(f"SELECT $1::{MOOD}", "ok"), "ok", "parameter echoed")
        # a label not in the enum
        try:
            await conn.execute(f"INSERT INTO {TE} (mood) VALUES ($1)", "angry")
        except asyncpg.InvalidTextRepresentationError as e:
            check_eq(e.sqlstate, "22P02", "sqlstate")
        else:
            raise AssertionError(f"no error for 'angry' in {MOOD}")

    await sc.astep("enum as column, parameter and result, ORDER BY (binary format)", enum_type)

    async def domain():
        await conn.execute(f"DROP TABLE IF EXISTS {TD}")
        await conn.execute(f"DROP DOMAIN IF EXISTS {POS}")
        await conn.execute(f"CREATE DOMAIN {POS} AS integer CHECK (VALUE > 0)")
        await conn.execute(f"CREATE TABLE {TD} (id serial PRIMARY KEY, pos {POS})")
        await conn.executemany(f"INSERT INTO {TD} (pos) VALUES ($1)", [(5,), (1,), (2147483647,)])
        stmt = await conn.prepare(f"SELECT pos FROM {TD} ORDER BY id")
        # a domain column is described as its base type (int4)
        check_eq([a.type.name for a in stmt.get_attributes()], ["int4"], "result types")
        check_exact([tuple(r) for r in await stmt.fetch()], [(5,), (1,), (2147483647,)], "rows")
        check_eq(await conn.fetchval(f"SELECT id FROM {TD} WHERE pos = $1", 1), 2, "WHERE pos =")
        check_exact(await conn.fetchval(f"SELECT $1::{POS}", 7), 7, "parameter echoed")
        # the domain's check, as a column and as a cast of a parameter
        for sql, arg in ((f"INSERT INTO {TD} (pos) VALUES ($1)", 0), (f"SELECT $1::{POS}", -1)):
            try:
                await conn.execute(sql, arg)
            except asyncpg.CheckViolationError as e:
                check_eq(e.sqlstate, "23514", "sqlstate")
                check_eq(e.constraint_name, f"{POS}_check", "constraint_name")
                check_eq(e.data_type_name, POS, "data_type_name")
            else:
                raise AssertionError(f"no error for {arg} in {POS}")

    await sc.astep("domain over integer, its check violation 23514 (binary format)", domain)

    if conn is not None:
        await conn.close()
    sc.finish()


asyncio.run(main())
