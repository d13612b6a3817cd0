"""SQLAlchemy 2 ORM (declarative model) over psycopg 3 with its defaults.
The URL names no host: psycopg takes PGHOST/PGPORT/PGUSER/PGDATABASE."""

import enum
import warnings
from datetime import date, datetime, time, timedelta, timezone
from decimal import Decimal
from typing import Any, Optional
from uuid import UUID

from sqlalchemy import (
    REAL, BigInteger, DateTime, Double, Enum, Integer, Numeric, Text, Time, cast, create_engine,
    func, select,
)
from sqlalchemy.dialects.postgresql import DOMAIN, JSONB
from sqlalchemy.exc import DBAPIError, IntegrityError
from sqlalchemy.orm import DeclarativeBase, Mapped, Session, mapped_column

from steps import Scenario, check, check_eq, check_exact

sc = Scenario("sqlalchemy-orm")
engine = create_engine("postgresql+psycopg://")


class Base(DeclarativeBase):
    pass


class Item(Base):
    __tablename__ = "drv_sa_orm"
    id: Mapped[int] = mapped_column(primary_key=True)  # SERIAL
    n: Mapped[Optional[int]]
    big: Mapped[Optional[int]] = mapped_column(BigInteger)
    name: Mapped[str] = mapped_column(unique=True)
    flag: Mapped[Optional[bool]]
    score: Mapped[Optional[float]]
    day: Mapped[Optional[date]]
    at: Mapped[Optional[datetime]]
    at_tz: Mapped[Optional[datetime]] = mapped_column(DateTime(timezone=True))


FIELDS = ("n", "big", "name", "flag", "score", "day", "at", "at_tz")
ROW = dict(n=42, big=9_000_000_000, name="O'Hara ✓", flag=True, score=0.1 + 0.2,
           day=date(2024, 2, 29), at=datetime(2024, 1, 2, 3, 4, 5, 678000),
           at_tz=datetime(2024, 1, 2, 3, 4, 5, 678000, tzinfo=timezone(timedelta(hours=2))))
ROW2 = dict(n=-7, big=-1, name="beta", flag=False, score=-1.5e300, day=date(1999, 12, 31),
            at=datetime(1999, 12, 31, 23, 59, 59),
            at_tz=datetime(2000, 1, 1, tzinfo=timezone.utc))
ids = []


def fields(item):
    return {k: getattr(item, k) for k in FIELDS}


@sc.step("connect")
def _():
    with Session(engine) as s:
        check_eq(s.scalar(select(1)), 1)


@sc.step("create table with Base.metadata.drop_all + create_all (declarative model)")
def _():
    Base.metadata.drop_all(engine)
    Base.metadata.create_all(engine)


@sc.step("insert objects of every attribute type (ids from RETURNING)")
def _():
    with Session(engine) as s:
        items = [Item(**ROW), Item(**ROW2)]
        s.add_all(items)
        s.flush()
        ids.extend(i.id for i in items)
        s.add_all([Item(n=i, name=f"many{i}", day=date(2020, 1, i)) for i in range(1, 4)])
        s.commit()
    check(all(ids), f"ids {ids}")


@sc.step("select by primary key and by filters, values round-trip")
def _():
    with Session(engine) as s:
        for id_, row in zip(ids, (ROW, ROW2)):
            check_eq(fields(s.get(Item, id_)), row, f"item {id_}")
        count = s.scalar(select(func.count()).select_from(Item).where(
            Item.day >= date(2024, 1, 1), Item.flag.is_(True), Item.at < datetime(2025, 1, 1),
            Item.at_tz > datetime(2023, 12, 31, tzinfo=timezone.utc)))
        check_eq(count, 1, "filtered count")
        check_eq(len(s.scalars(select(Item).where(Item.name.like("many%"))).all()), 3)


@sc.step("update through attributes (unit of work)")
def _():
    new_tz = datetime(2030, 6, 1, 12, tzinfo=timezone.utc)
    with Session(engine) as s:
        item = s.scalars(select(Item).where(Item.name == "beta")).one()
        item.score, item.at_tz, item.big = 2.5, new_tz, item.big + 1
        s.commit()
    with Session(engine) as s:
        item = s.scalars(select(Item).where(Item.name == "beta")).one()
        check_eq((item.score, item.at_tz, item.big), (2.5, new_tz, 0))


@sc.step("delete objects")
def _():
    with Session(engine) as s:
        for item in s.scalars(select(Item).where(Item.name.like("many%"))):
            s.delete(item)
        s.commit()
        check_eq(s.scalar(select(func.count()).select_from(Item)), 2, "rows left")


@sc.step("transaction rolled back; savepoint (begin_nested) rolled back")
def _():
    with Session(engine) as s:
        s.add(Item(name="gone"))
        s.flush()
        s.rollback()
        s.add(Item(name="kept"))
        sp = s.begin_nested()
        s.add(Item(name="undone"))
        s.flush()
        sp.rollback()
        s.commit()
        names = set(s.scalars(select(Item.name)))
    check("gone" not in names and "undone" not in names, f"rolled back rows visible: {names}")
    check("kept" in names, "committed row missing")


@sc.step("unique violation caught at flush, constraint name reported")
def _():
    with Session(engine) as s:
        s.add(Item(name="beta"))
        try:
            s.flush()
        except IntegrityError as e:
            check_eq(e.orig.sqlstate, "23505", "sqlstate")
            check_eq(e.orig.diag.constraint_name, "drv_sa_orm_name_key",
                     "diag.constraint_name")
        else:
            raise AssertionError("no error for a duplicate key")
        s.rollback()
        check_eq(s.scalar(select(func.count()).select_from(Item)), 3)


@sc.step("query run past psycopg's prepare_threshold, rollback, reuse")
def _():
    with Session(engine) as s:
        for _ in range(10):
            s.expire_all()
            check_eq(s.scalars(select(Item).where(Item.id == ids[0])).one().name, ROW["name"])
        s.rollback()  # ROLLBACK, then psycopg's DEALLOCATE ALL
        for _ in range(10):
            s.expire_all()
            check_eq(s.scalars(select(Item).where(Item.id == ids[1])).one().name, "beta")
        s.commit()


@sc.step("REPEATABLE READ, snapshot kept, update of a changed row fails with 40001")
def _():
    rr = engine.execution_options(isolation_level="REPEATABLE READ")
    with Session(rr) as a, Session(engine) as b:
        before = a.get(Item, ids[0]).n
        b.get(Item, ids[0]).n += 100
        b.commit()
        a.expire_all()
        check_eq(a.get(Item, ids[0]).n, before, "A's second read")
        a.get(Item, ids[0]).n = 0
        try:
            a.flush()
        except DBAPIError as e:
            check_eq(getattr(e.orig, "sqlstate", None), "40001", f"error {e.orig!r}")
        else:
            raise AssertionError("A's update of a row B changed succeeded")
        a.rollback()
        check_eq(a.get(Item, ids[0]).n, before + 100, "A's read in a new transaction")


# application types: Decimal, uuid.UUID and bytes attributes, mapped by their
# annotations to NUMERIC, UUID and BYTEA, and a Numeric(12, 2) column. The
# model is declared here, after the create step: its own step creates it.
class Payment(Base):
    __tablename__ = "drv_sa_orm_types"
    id: Mapped[int] = mapped_column(primary_key=True)
    amount: Mapped[Optional[Decimal]]
    price: Mapped[Optional[Decimal]] = mapped_column(Numeric(12, 2))
    key: Mapped[UUID] = mapped_column(unique=True)
    data: Mapped[Optional[bytes]]
    n: Mapped[Optional[int]]
    big: Mapped[Optional[int]] = mapped_column(BigInteger)


PAY_FIELDS = ("amount", "price", "key", "data", "n", "big")
KEY_A = UUID("a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11")
PAYMENTS = [
    # price as set; PRICES: as numeric(12,2) stores it (rounded half away from zero)
    dict(amount=Decimal("12345678901234567890.123456789"), price=Decimal("1234.565"), key=KEY_A,
         data=b"\x00\xff\x01'\\\x7f\x80end", n=1, big=9_000_000_000_000_000_000),
    dict(amount=Decimal("-0.000000001"), price=Decimal("-0.005"), key=UUID(int=0), data=b"",
         n=2, big=9_000_000_000_000_000_000),
    dict(amount=Decimal("NaN"), price=Decimal("7"), key=UUID(int=2**128 - 1),
         data=bytes(range(256)), n=2, big=-5),
    dict(amount=Decimal("Infinity"), price=Decimal("9999999999.994"),
         key=UUID("00000000-0000-4000-8000-000000000001"), data=b"\x00", n=None, big=None),
]
PRICES = [Decimal("1234.57"), Decimal("-0.01"), Decimal("7.00"), Decimal("9999999999.99")]


@sc.step("application types Decimal, Numeric(12,2), UUID, bytes attributes, sum/avg as Decimal")
def _():
    Payment.__table__.drop(engine, checkfirst=True)
    Payment.__table__.create(engine)
    check_eq([c.type.compile(dialect=engine.dialect) for c in Payment.__table__.columns],
             ["INTEGER", "NUMERIC", "NUMERIC(12, 2)", "UUID", "BYTEA", "INTEGER", "BIGINT"],
             "column types from the annotations")
    pay_ids = []
    with Session(engine) as s:
        items = [Payment(**p) for p in PAYMENTS]
        s.add_all(items)
        s.commit()  # expires the objects: their next read reloads what was stored
        pay_ids.extend(i.id for i in items)
        check_exact([i.price for i in items], PRICES, "prices reloaded after commit")
    with Session(engine) as s:
        for id_, p, price in zip(pay_ids, PAYMENTS, PRICES):
            item = s.get(Payment, id_)
            check_exact({k: getattr(item, k) for k in PAY_FIELDS}, dict(p, price=price),
                        f"payment {id_}")
        # each type as a parameter in a filter (numeric NaN equals NaN in PostgreSQL)
        for attr in ("amount", "key", "data"):
            for id_, p in zip(pay_ids, PAYMENTS):
                got = s.scalars(select(Payment.id).where(getattr(Payment, attr) == p[attr])).all()
                check_eq(got, [id_], f"where {attr} == {p[attr]!r}")
        check_exact(s.scalar(select(Payment.key).where(Payment.price == Decimal("1234.57"))),
                    KEY_A, "where price == 1234.57")
        # an update through an attribute: rounded again on the way in
        s.get(Payment, pay_ids[0]).price = Decimal("0.125")
        s.get(Payment, pay_ids[1]).key = UUID("11111111-2222-3333-4444-555555555555")
        s.get(Payment, pay_ids[1]).data = b"\xff\x00"
        s.commit()
        check_exact((s.get(Payment, pay_ids[0]).price, s.get(Payment, pay_ids[1]).key,
                     s.get(Payment, pay_ids[1]).data),
                    (Decimal("0.13"), UUID("11111111-2222-3333-4444-555555555555"), b"\xff\x00"),
                    "updated price, key, data")
        # sum(bigint) and avg(integer) arrive as Decimal; sum(integer) is bigint
        got = s.execute(select(func.sum(Payment.big), func.avg(Payment.n), func.sum(Payment.n),
                               func.sum(Payment.price), func.avg(Payment.big))).one()
        check_exact(tuple(got), (Decimal("17999999999999999995"), Decimal("1.6666666666666667"),
                                 5, Decimal("10000000007.11"), Decimal("5999999999999999998")),
                    "sum(big), avg(n), sum(n), sum(price), avg(big)")
        # a price that rounds past numeric(12,2)'s 10 integer digits, caught at flush
        s.add(Payment(key=UUID(int=5), price=Decimal("9999999999.995")))
        try:
            s.flush()
        except DBAPIError as e:
            check_eq(getattr(e.orig, "sqlstate", None), "22003", f"error {e.orig!r}")
        else:
            raise AssertionError("no error for 9999999999.995 in numeric(12,2)")
        s.rollback()


# more types: a JSONB attribute (dict), REAL (float), time and an aware time
# (TIME WITH TIME ZONE), timedelta (INTERVAL), a Python enum (a named ENUM
# type) and a DOMAIN over integer; declared after the create step, as above.


class Mood(enum.Enum):
    sad = "sad"
    ok = "ok"
    happy = "happy"


# SQLAlchemy 2.1 warns that its own DOMAIN type names no operator classes
warnings.filterwarnings("ignore", message=".*does not refer to an OperatorClass")
MOOD = Enum(Mood, name="drv_mood_sa_orm")
POS = DOMAIN("drv_pos_sa_orm", Integer, check="VALUE > 0")


class Entry(Base):
    __tablename__ = "drv_sa_orm_more"
    id: Mapped[int] = mapped_column(primary_key=True)
    doc: Mapped[Optional[Any]] = mapped_column(JSONB)
    r: Mapped[Optional[float]] = mapped_column(REAL)
    t: Mapped[Optional[time]]
    tz: Mapped[Optional[time]] = mapped_column(Time(timezone=True))
    iv: Mapped[Optional[timedelta]]
    mood: Mapped[Optional[Mood]] = mapped_column(MOOD)
    pos: Mapped[Optional[int]] = mapped_column(POS)


ENTRY_FIELDS = ("doc", "r", "t", "tz", "iv", "mood", "pos")
DOC = {"name": "Zoë ✓ \"q\"\\", "n": 42, "pi": 3.25, "big": 12345678901234567890,
       "tiny": -1.5e-07, "none": None, "yes": True, "tags": ["a", 1, None, [], {}],
       "nested": {"deep": {"list": [1, 2.5, "x"]}}}
TZ530 = timezone(timedelta(hours=5, minutes=30))
ENTRIES = [
    dict(doc=DOC, r=0.1, t=time(4, 5, 6, 789012), tz=time(4, 5, 6, 789012, tzinfo=TZ530),
         iv=timedelta(days=-3, microseconds=1), mood=Mood.happy, pos=5),
    dict(doc={"name": "other", "tags": []}, r=16777217.0, t=time(23, 59, 59, 999999),
         tz=time(23, 59, 59, 999999, tzinfo=timezone(-timedelta(hours=8))), iv=timedelta(0),
         mood=Mood.sad, pos=1),
    dict(doc=[1, "two", None], r=-3.4028235e38, t=time(0, 0), tz=time(0, 0, tzinfo=timezone.utc),
         iv=None, mood=Mood.ok, pos=2147483647),
]


@sc.step("more types JSONB, REAL, time, aware time, timedelta, Enum, DOMAIN attributes")
def _():
    Entry.__table__.drop(engine, checkfirst=True)
    MOOD.drop(engine, checkfirst=True)
    POS.drop(engine, checkfirst=True)
    Entry.__table__.create(engine)  # creates the enum and the domain first
    check_eq([c.type.compile(dialect=engine.dialect) for c in Entry.__table__.columns],
             ["INTEGER", "JSONB", "REAL", "TIME WITHOUT TIME ZONE", "TIME WITH TIME ZONE",
              "INTERVAL", "drv_mood_sa_orm", "drv_pos_sa_orm"], "column types")
    entry_ids = []
    with Session(engine) as s:
        items = [Entry(**e) for e in ENTRIES]
        s.add_all(items)
        s.commit()  # expires the objects: their next read reloads what was stored
        entry_ids.extend(i.id for i in items)
        # real: 0.1 reads back as 0.1 (float4's shortest text), 16777217 as 16777216
        check_eq([i.r for i in items], [0.1, 16777216.0, -3.4028235e38], "reals reloaded")
    with Session(engine) as s:
        for id_, e, r in zip(entry_ids, ENTRIES, (0.1, 16777216.0, -3.4028235e38)):
            item = s.get(Entry, id_)
            check_eq({k: getattr(item, k) for k in ENTRY_FIELDS}, dict(e, r=r), f"entry {id_}")
            check_exact((item.tz, item.mood), (e["tz"], e["mood"]), f"entry {id_} tz, mood")
        check_eq(s.scalar(select(cast(Entry.r, Double)).where(Entry.id == entry_ids[0])),
                 0.10000000149011612, "r as double precision")
        # jsonb ->> a parameter, the enum and the other types in filters
        check_eq(s.scalars(select(Entry.id).where(Entry.doc["name"].astext == DOC["name"])).all(),
                 [entry_ids[0]], "doc['name'].astext == a parameter")
        check_eq(s.scalars(select(Entry.id).where(Entry.mood > Mood.sad)
                           .order_by(Entry.mood.desc())).all(),
                 [entry_ids[0], entry_ids[2]], "mood > Mood.sad, ORDER BY mood DESC")
        check_eq(s.scalars(select(Entry.pos).order_by(Entry.mood)).all(), [1, 2147483647, 5],
                 "ORDER BY mood")
        check_eq(s.scalars(select(Entry.id).where(Entry.t == ENTRIES[1]["t"],
                                                  Entry.tz == ENTRIES[1]["tz"],
                                                  Entry.iv == timedelta(0))).all(),
                 [entry_ids[1]], "t ==, tz ==, iv ==")
        check_eq(s.scalars(select(Entry.id).where(Entry.r == cast(0.1, REAL))).all(),
                 [entry_ids[0]], "r == CAST(0.1 AS REAL)")
        # an update through attributes (a new dict for the JSONB: no in-place tracking)
        item = s.get(Entry, entry_ids[1])
        item.doc = {"name": "other", "tags": ["b"], "v": {"w": None}}
        item.iv = timedelta(days=400, microseconds=5)
        item.mood = Mood.happy
        item.tz = time(12, 0, tzinfo=TZ530)
        s.commit()
        check_exact((item.doc, item.iv, item.mood, item.tz, item.pos),
                    ({"v": {"w": None}, "name": "other", "tags": ["b"]},
                     timedelta(days=400, microseconds=5), Mood.happy, time(12, 0, tzinfo=TZ530), 1),
                    "updated doc, iv, mood, tz")
        check_eq(s.scalar(select(cast(Entry.iv, Text)).where(Entry.id == entry_ids[1])),
                 "400 days 00:00:00.000005", "iv as text")
        # the domain's check, caught at flush
        s.add(Entry(pos=0))
        try:
            s.flush()
        except IntegrityError as e:
            check_eq(e.orig.sqlstate, "23514", "sqlstate")
            check_eq(e.orig.diag.constraint_name, "drv_pos_sa_orm_check", "diag.constraint_name")
        else:
            raise AssertionError("no error for 0 in drv_pos_sa_orm")
        s.rollback()


engine.dispose()
sc.finish()
