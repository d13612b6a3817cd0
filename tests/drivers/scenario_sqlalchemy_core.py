"""SQLAlchemy 2 Core over psycopg 3 (postgresql+psycopg://) with its defaults.
The URL names no host: psycopg takes PGHOST/PGPORT/PGUSER/PGDATABASE."""

from datetime import date, datetime, timedelta, timezone

from sqlalchemy import (
    BigInteger, Boolean, Column, Date, DateTime, Double, Integer, MetaData, Table, Text,
    create_engine, delete, func, insert, inspect, select, text, update,
)
from sqlalchemy.exc import DBAPIError, IntegrityError

from steps import Scenario, check, check_eq

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


engine.dispose()
sc.finish()
