"""SQLAlchemy 2 Core over psycopg 3 (postgresql+psycopg://) with its defaults.
The URL names no host: psycopg takes PGHOST/PGPORT/PGUSER/PGDATABASE."""

import enum
import warnings
from datetime import date, datetime, time, timedelta, timezone
from decimal import Decimal
from uuid import UUID

from sqlalchemy import (
    JSON, REAL, BigInteger, Boolean, Column, Date, DateTime, Double, Enum, Integer, Interval,
    LargeBinary, MetaData, Numeric, Table, Text, Time, Uuid, cast, create_engine, delete, func,
    insert, inspect, literal, select, text, update,
)
from sqlalchemy.dialects.postgresql import DOMAIN, JSONB
from sqlalchemy.exc import DBAPIError, IntegrityError

from steps import Scenario, check, check_eq, check_exact

T = "drv_sa_core"
sc = Scenario("sqlalchemy-core")
engine = create_engine("postgresql+psycopg://")
metadata = MetaData()
tbl = Table(
    T, metadata,
    Column("id", Integer, primary_key=True),  # SERIAL, as create_all makes it
    Column("n", Integer),
    Column("big", BigInteger),
    Column("name", Text, unique=True),
    Column("flag", Boolean),
    Column("score", Double),
    Column("day", Date),
    Column("at", DateTime),
    Column("at_tz", DateTime(timezone=True)),
)
ROW = dict(n=42, big=9_000_000_000, name="O'Hara ✓", flag=True, score=0.1 + 0.2,
           day=date(2024, 2, 29), at=datetime(2024, 1, 2, 3, 4, 5, 678000),
           at_tz=datetime(2024, 1, 2, 3, 4, 5, 678000, tzinfo=timezone(timedelta(hours=2))))
ROW2 = dict(n=-7, big=-1, name="beta", flag=False, score=-1.5e300, day=date(1999, 12, 31),
            at=datetime(1999, 12, 31, 23, 59, 59),
            at_tz=datetime(2000, 1, 1, tzinfo=timezone.utc))
ids = []


@sc.step("connect")
def _():
    with engine.connect() as conn:
        check_eq(conn.execute(text("SELECT 1")).scalar(), 1)


@sc.step("create table with metadata.drop_all + create_all (Integer primary key)")
def _():
    metadata.drop_all(engine)  # DROP TABLE IF EXISTS, through reflection
    metadata.create_all(engine)
    check(inspect(engine).has_table(T), "has_table is false after create_all")


@sc.step("insert with parameters of every type, RETURNING id")
def _():
    with engine.begin() as conn:
        for row in (ROW, ROW2):
            ids.append(conn.execute(insert(tbl).returning(tbl.c.id), row).scalar_one())
        # executemany of three rows (insertmanyvalues)
        res = conn.execute(
            insert(tbl).returning(tbl.c.id),
            [dict(n=i, name=f"many{i}", day=date(2020, 1, i)) for i in range(1, 4)],
        )
        check_eq(len(res.all()), 3, "ids of the executemany")


@sc.step("select with parameters, values round-trip")
def _():
    cols = [tbl.c[k] for k in ROW]
    with engine.connect() as conn:
        for id_, row in zip(ids, (ROW, ROW2)):
            got = conn.execute(select(*cols).where(tbl.c.id == id_)).one()._asdict()
            check_eq(got, row, f"row {id_}")
        count = conn.execute(
            select(func.count()).select_from(tbl).where(
                tbl.c.day >= date(2024, 1, 1), tbl.c.flag.is_(True),
                tbl.c.at < datetime(2025, 1, 1),
                tbl.c.at_tz > datetime(2023, 12, 31, tzinfo=timezone.utc))
        ).scalar()
        check_eq(count, 1, "filtered count")


@sc.step("update with parameters")
def _():
    new_tz = datetime(2030, 6, 1, 12, tzinfo=timezone.utc)
    with engine.begin() as conn:
        res = conn.execute(update(tbl).where(tbl.c.name == "beta")
                           .values(score=2.5, at_tz=new_tz, big=tbl.c.big + 1))
        check_eq(res.rowcount, 1, "rowcount")
        got = conn.execute(select(tbl.c.score, tbl.c.at_tz, tbl.c.big)
                           .where(tbl.c.name == "beta")).one()
        check_eq(tuple(got), (2.5, new_tz, 0))


@sc.step("delete with parameters")
def _():
    with engine.begin() as conn:
        res = conn.execute(delete(tbl).where(tbl.c.name.like("many%")))
        check_eq(res.rowcount, 3, "rowcount")


@sc.step("transaction rolled back; savepoint (begin_nested) rolled back")
def _():
    with engine.connect() as conn:
        with conn.begin() as tx:
            conn.execute(insert(tbl), dict(name="gone"))
            tx.rollback()
        with conn.begin():
            conn.execute(insert(tbl), dict(name="kept"))
            sp = conn.begin_nested()
            conn.execute(insert(tbl), dict(name="undone"))
            sp.rollback()
        names = set(conn.execute(select(tbl.c.name)).scalars())
        conn.rollback()
    check("gone" not in names and "undone" not in names, f"rolled back rows visible: {names}")
    check("kept" in names, "committed row missing")


@sc.step("unique violation caught as IntegrityError, constraint name reported")
def _():
    with engine.connect() as conn:
        try:
            conn.execute(insert(tbl), dict(name="beta"))
        except IntegrityError as e:
            check_eq(e.orig.sqlstate, "23505", "sqlstate")
            check_eq(e.orig.diag.constraint_name, f"{T}_name_key", "diag.constraint_name")
        else:
            raise AssertionError("no error for a duplicate key")
        conn.rollback()
        check_eq(conn.execute(text("SELECT 2")).scalar(), 2)


@sc.step("statement run past psycopg's prepare_threshold, ROLLBACK, reuse (pool)")
def _():
    q = select(tbl.c.name).where(tbl.c.id == ids[0])
    with engine.connect() as conn:
        for _ in range(10):
            check_eq(conn.execute(q).scalar(), ROW["name"])
        conn.rollback()  # ROLLBACK, then psycopg's DEALLOCATE ALL
        for _ in range(10):
            check_eq(conn.execute(q).scalar(), ROW["name"])
    # the connection went back to the pool (its reset is a ROLLBACK); take it again
    for _ in range(3):
        with engine.connect() as conn:
            check_eq(conn.execute(q).scalar(), ROW["name"])


@sc.step("REPEATABLE READ, snapshot kept, update of a changed row fails with 40001")
def _():
    with engine.connect().execution_options(isolation_level="REPEATABLE READ") as a, \
            engine.connect() as b:
        before = a.execute(select(tbl.c.n).where(tbl.c.id == ids[0])).scalar()
        b.execute(update(tbl).where(tbl.c.id == ids[0]).values(n=tbl.c.n + 100))
        b.commit()
        check_eq(a.execute(select(tbl.c.n).where(tbl.c.id == ids[0])).scalar(), before,
                 "A's second read")
        try:
            a.execute(update(tbl).where(tbl.c.id == ids[0]).values(n=0))
        except DBAPIError as e:
            check_eq(getattr(e.orig, "sqlstate", None), "40001", f"error {e.orig!r}")
        else:
            raise AssertionError("A's update of a row B changed succeeded")
        a.rollback()
        check_eq(a.execute(select(tbl.c.n).where(tbl.c.id == ids[0])).scalar(), before + 100,
                 "A's read in a new transaction")


# application types: Numeric (unconstrained and Numeric(12, 2)), Uuid, LargeBinary
types_metadata = MetaData()
ttbl = Table(
    f"{T}_types", types_metadata,
    Column("id", Integer, primary_key=True),
    Column("amount", Numeric),  # NUMERIC, values as Decimal
    Column("price", Numeric(12, 2)),
    Column("u", Uuid, unique=True),  # UUID, values as uuid.UUID
    Column("data", LargeBinary),  # BYTEA
    Column("n", Integer),
    Column("big", BigInteger),
)
UUID_A = UUID("a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11")
TYPE_ROWS = [
    # price as inserted; PRICES: as numeric(12,2) stores it (rounded half away from zero)
    dict(amount=Decimal("12345678901234567890.123456789"), price=Decimal("1234.565"), u=UUID_A,
         data=b"\x00\xff\x01'\\\x7f\x80end", n=1, big=9_000_000_000_000_000_000),
    dict(amount=Decimal("-0.000000001"), price=Decimal("-0.005"), u=UUID(int=0), data=b"", n=2,
         big=9_000_000_000_000_000_000),
    dict(amount=Decimal("NaN"), price=Decimal("7"), u=UUID(int=2**128 - 1),
         data=bytes(range(256)), n=2, big=-5),
    dict(amount=Decimal("Infinity"), price=Decimal("9999999999.994"),
         u=UUID("00000000-0000-4000-8000-000000000001"), data=b"\x00", n=None, big=None),
]
PRICES = [Decimal("1234.57"), Decimal("-0.01"), Decimal("7.00"), Decimal("9999999999.99")]


@sc.step("application types Numeric, Numeric(12,2), Uuid, LargeBinary, sum/avg as Decimal")
def _():
    types_metadata.drop_all(engine)
    types_metadata.create_all(engine)
    cols = [ttbl.c[k] for k in TYPE_ROWS[0]]
    want = [dict(row, price=price) for row, price in zip(TYPE_ROWS, PRICES)]
    with engine.begin() as conn:
        res = conn.execute(insert(ttbl).returning(ttbl.c.id), TYPE_ROWS)  # insertmanyvalues
        check_eq(len(res.all()), 4, "ids of the executemany")
        got = [r._asdict() for r in conn.execute(select(*cols).order_by(ttbl.c.id))]
        check_exact(got, want, "rows")
        # each type as a parameter in WHERE (numeric NaN equals NaN in PostgreSQL)
        for col in ("amount", "u", "data"):
            for row, price in zip(TYPE_ROWS, PRICES):
                got = conn.execute(select(ttbl.c.n, ttbl.c.price)
                                   .where(ttbl.c[col] == row[col])).all()
                check_exact([tuple(r) for r in got], [(row["n"], price)],
                            f"WHERE {col} = {row[col]!r}")
        check_exact(conn.execute(select(ttbl.c.u).where(ttbl.c.price == Decimal("1234.57")))
                    .scalar_one(), UUID_A, "WHERE price = 1234.57")
        # parameters straight back as results, typed by SQLAlchemy
        got = conn.execute(select(
            literal(Decimal("-Infinity"), Numeric),
            literal(Decimal("-98765432109876543210.0000000001"), Numeric),
            literal(UUID_A, Uuid), literal(b"\x00\x00\xff\xff", LargeBinary))).one()
        check_exact(tuple(got), (Decimal("-Infinity"), Decimal("-98765432109876543210.0000000001"),
                                 UUID_A, b"\x00\x00\xff\xff"), "parameters echoed")
        # sum(bigint) and avg(integer) arrive as Decimal; sum(integer) is bigint
        got = conn.execute(select(func.sum(ttbl.c.big), func.avg(ttbl.c.n), func.sum(ttbl.c.n),
                                  func.sum(ttbl.c.price), func.avg(ttbl.c.big))).one()
        check_exact(tuple(got), (Decimal("17999999999999999995"), Decimal("1.6666666666666667"), 5,
                                 Decimal("10000001241.55"), Decimal("5999999999999999998")),
                    "sum(big), avg(n), sum(n), sum(price), avg(big)")
    # a price that rounds past numeric(12,2)'s 10 integer digits
    with engine.connect() as conn:
        try:
            conn.execute(insert(ttbl), dict(price=Decimal("9999999999.995")))
        except DBAPIError as e:
            check_eq(getattr(e.orig, "sqlstate", None), "22003", f"error {e.orig!r}")
        else:
            raise AssertionError("no error for 9999999999.995 in numeric(12,2)")
        conn.rollback()


# more types: JSONB and JSON, REAL, Time and Time(timezone=True), Interval, an
# Enum of a Python enum (CREATE TYPE … AS ENUM) and a DOMAIN over integer
# (CREATE DOMAIN), all created and dropped by the metadata


class Mood(enum.Enum):
    sad = "sad"
    ok = "ok"
    happy = "happy"


# SQLAlchemy 2.1 warns that its own DOMAIN type names no operator classes
warnings.filterwarnings("ignore", message=".*does not refer to an OperatorClass")
MOOD = Enum(Mood, name="drv_mood_sa_core")
POS = DOMAIN("drv_pos_sa_core", Integer, check="VALUE > 0")
more_metadata = MetaData()
mtbl = Table(
    f"{T}_more", more_metadata,
    Column("id", Integer, primary_key=True),
    Column("jb", JSONB),  # values as dict/list, json.dumps'd
    Column("js", JSON),
    Column("r", REAL),  # float
    Column("t", Time),  # datetime.time
    Column("tz", Time(timezone=True)),  # TIME WITH TIME ZONE: an aware datetime.time
    Column("iv", Interval),  # INTERVAL: timedelta
    Column("mood", MOOD),
    Column("pos", POS),
)
DOC = {"name": "Zoë ✓ \"q\"\\", "n": 42, "pi": 3.25, "big": 12345678901234567890,
       "tiny": -1.5e-07, "none": None, "yes": True, "tags": ["a", 1, None, [], {}],
       "nested": {"deep": {"list": [1, 2.5, "x"]}}}
# jsonb's text form: keys sorted by length then bytes, numbers as numeric writes them
DOC_JSONB_TEXT = (
    '{"n": 42, "pi": 3.25, "big": 12345678901234567890, "yes": true, '
    '"name": "Zoë ✓ \\"q\\"\\\\", '
    '"none": null, "tags": ["a", 1, null, [], {}], "tiny": -0.00000015, '
    '"nested": {"deep": {"list": [1, 2.5, "x"]}}}')
TZ = [timezone(timedelta(hours=5, minutes=30)), timezone(-timedelta(hours=8)), timezone.utc]
MORE_ROWS = [
    dict(jb=DOC, js=DOC, r=0.1, t=time(4, 5, 6, 789012), tz=time(4, 5, 6, 789012, tzinfo=TZ[0]),
         iv=timedelta(days=-3, microseconds=1), mood=Mood.happy, pos=5),
    dict(jb={"name": "other", "n": -1, "tags": []}, js={"name": "other"}, r=16777217.0,
         t=time(23, 59, 59, 999999), tz=time(23, 59, 59, 999999, tzinfo=TZ[1]),
         iv=timedelta(0), mood=Mood.sad, pos=1),
    dict(jb=[1, "two", None], js="just a string", r=-3.4028235e38, t=time(0, 0),
         tz=time(0, 0, tzinfo=TZ[2]), iv=None, mood=Mood.ok, pos=2147483647),
]
IV_TEXT = "1 year 2 mons 3 days 04:05:06.789"
# psycopg's interval: months count 30 days, a year 365 (timedelta has no months)
IV = timedelta(days=365 + 60 + 3, hours=4, minutes=5, seconds=6, microseconds=789000)


@sc.step("more types JSONB, JSON, REAL, Time, Time(timezone), Interval, Enum, DOMAIN")
def _():
    more_metadata.drop_all(engine)  # the table, then the enum and the domain
    more_metadata.create_all(engine)  # CREATE TYPE, CREATE DOMAIN, CREATE TABLE
    cols = [mtbl.c[k] for k in MORE_ROWS[0]]
    with engine.begin() as conn:
        res = conn.execute(insert(mtbl).returning(mtbl.c.id), MORE_ROWS)  # insertmanyvalues
        check_eq(len(res.all()), 3, "ids of the executemany")
        got = [r._asdict() for r in conn.execute(select(*cols).order_by(mtbl.c.id))]
        # real: 0.1 reads back as 0.1 (float4's shortest text), 16777217 as 16777216
        want = [dict(MORE_ROWS[0]), dict(MORE_ROWS[1], r=16777216.0), MORE_ROWS[2]]
        check_eq(got, want, "rows")
        check_exact([type(r["mood"]) for r in got], [Mood] * 3, "enum values are Mood")
        got = conn.execute(select(cast(mtbl.c.jb, Text), cast(mtbl.c.r, Double),
                                  cast(mtbl.c.iv, Text)).order_by(mtbl.c.id)).first()
        check_exact(tuple(got), (DOC_JSONB_TEXT, 0.10000000149011612, "-3 days +00:00:00.000001"),
                    "as text")
        # jsonb ->> (the key a parameter too), json ->>, containment
        check_eq(conn.execute(select(mtbl.c.pos).where(mtbl.c.jb["name"].astext == DOC["name"]))
                 .scalars().all(), [5], "jb['name'].astext == a parameter")
        check_eq(conn.execute(select(mtbl.c.pos).where(mtbl.c.js["name"].as_string() == "other"))
                 .scalars().all(), [1], "js['name'].as_string() == a parameter")
        check_eq(conn.execute(select(mtbl.c.pos).where(mtbl.c.jb.contains({"tags": ["a"]})))
                 .scalars().all(), [5], "jb.contains")
        # real: equal to 0.1 cast to REAL, not to the float 0.1 (psycopg sends float8)
        check_eq(conn.execute(select(func.count()).where(mtbl.c.r == cast(0.1, REAL)))
                 .scalar(), 1, "r == CAST(0.1 AS REAL)")
        check_eq(conn.execute(select(func.count()).where(mtbl.c.r == 0.1)).scalar(), 0,
                 "r == 0.1")
        # time, timetz, interval as parameters in WHERE
        check_eq(conn.execute(select(mtbl.c.pos).where(mtbl.c.t == MORE_ROWS[1]["t"],
                                                       mtbl.c.tz == MORE_ROWS[1]["tz"]))
                 .scalars().all(), [1], "t ==, tz ==")
        check_eq(conn.execute(select(func.count()).where(mtbl.c.t > time(4, 5, 6, 789011)))
                 .scalar(), 2, "t > 04:05:06.789011")
        check_eq(conn.execute(select(func.count()).where(mtbl.c.iv < timedelta(microseconds=1)))
                 .scalar(), 2, "iv < 1 microsecond")
        # an interval with months: in as text cast to INTERVAL, out as timedelta
        got = conn.execute(select(cast(literal(IV_TEXT), Interval),
                                  cast(literal(IV_TEXT), Interval) > timedelta(days=400))).one()
        check_exact(tuple(got), (IV, True), "interval with months")
        # the enum: ordered by its labels' order, compared with a parameter
        check_eq([tuple(r) for r in conn.execute(select(mtbl.c.mood, mtbl.c.pos)
                                                 .order_by(mtbl.c.mood))],
                 [(Mood.sad, 1), (Mood.ok, 2147483647), (Mood.happy, 5)], "ORDER BY mood")
        check_eq(conn.execute(select(mtbl.c.pos).where(mtbl.c.mood > Mood.sad)
                              .order_by(mtbl.c.mood.desc())).scalars().all(), [5, 2147483647],
                 "mood > Mood.sad")
        check_eq(conn.execute(select(func.count()).where(mtbl.c.mood == Mood.happy,
                                                         mtbl.c.pos == 5)).scalar(),
                 1, "mood == Mood.happy, pos == 5")
        # parameters straight back as results, typed by SQLAlchemy
        got = conn.execute(select(
            literal(DOC, JSONB), literal({"a": [1, {"b": None}]}, JSON), literal(0.1, REAL),
            literal(time(4, 5, 6, 789012), Time), literal(MORE_ROWS[1]["tz"], Time(timezone=True)),
            literal(timedelta(days=-3, microseconds=1), Interval), literal(Mood.ok, MOOD),
            literal(7, POS))).one()
        check_exact(tuple(got)[2:], (0.1, time(4, 5, 6, 789012), MORE_ROWS[1]["tz"],
                                     timedelta(days=-3, microseconds=1), Mood.ok, 7),
                    "parameters echoed")
        check_eq(tuple(got)[:2], (DOC, {"a": [1, {"b": None}]}), "json parameters echoed")
    # the domain's check, caught as IntegrityError
    with engine.connect() as conn:
        for stmt in (insert(mtbl).values(pos=0), select(cast(literal(-1), POS))):
            try:
                conn.execute(stmt)
            except IntegrityError as e:
                check_eq(e.orig.sqlstate, "23514", "sqlstate")
                check_eq(e.orig.diag.constraint_name, "drv_pos_sa_core_check",
                         "diag.constraint_name")
            else:
                raise AssertionError("no error for a value the domain's check refuses")
            conn.rollback()


engine.dispose()
sc.finish()
