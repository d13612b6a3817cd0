#!/usr/bin/env python3
"""Issue 27's speed benchmarks, side by side with PostgreSQL 15:

    python3 scripts/plpgsql-bench.py --bin target/release/snapscale \
        --pg "host=127.0.0.1 port=5433 user=postgres" [--seconds 10] [--rounds 3]

  - a PL/pgSQL function looping 1 000 000 times over integer arithmetic
    (`SELECT spin(1000000)`), timed from the client;
  - pgbench's tpcb-like transaction as one PL/pgSQL function call doing
    its four statements and the history insert (pgbench scale 10,
    -M prepared, 2 clients);
  - what an AFTER ROW trigger costs per row: 100 000 rows inserted by one
    INSERT … SELECT into a table without triggers, with an AFTER ROW
    trigger whose function does nothing, and with one that inserts an
    audit row; the cost is the difference per row.

Rounds alternate the servers; each cell is the median round, and within
a round each load and spin is the best of three. Ratios are
snapscale's speed over PostgreSQL's (above 1: snapscale faster).
PostgreSQL must be configured to hold the data (shared_buffers; printed).
Prints a Markdown report. Needs psycopg 3 and pgbench.
"""

import argparse
import os
import platform
import shutil
import statistics
import subprocess
import tempfile
import time

import psycopg

from benchutil import pg_settings, pgbench_args, pgbench_tps, start_snapscale

FUNCTIONS = [
    """CREATE OR REPLACE FUNCTION spin(n int) RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE s bigint := 0; i int;
BEGIN
  FOR i IN 1..n LOOP s := s + i; END LOOP;
  RETURN s;
END $$""",
    """CREATE OR REPLACE FUNCTION tpcb(p_aid int, p_bid int, p_tid int, p_delta int)
RETURNS int LANGUAGE plpgsql AS $$
DECLARE bal int;
BEGIN
  UPDATE pgbench_accounts SET abalance = abalance + p_delta WHERE aid = p_aid;
  SELECT abalance INTO bal FROM pgbench_accounts WHERE aid = p_aid;
  UPDATE pgbench_tellers SET tbalance = tbalance + p_delta WHERE tid = p_tid;
  UPDATE pgbench_branches SET bbalance = bbalance + p_delta WHERE bid = p_bid;
  INSERT INTO pgbench_history (tid, bid, aid, delta, mtime)
    VALUES (p_tid, p_bid, p_aid, p_delta, CURRENT_TIMESTAMP);
  RETURN bal;
END $$""",
]

TRIGGER_SETUP = [
    "DROP TABLE IF EXISTS trig_plain, trig_empty, trig_audit, trig_log",
    "CREATE TABLE trig_plain (a int, b text)",
    "CREATE TABLE trig_empty (a int, b text)",
    "CREATE TABLE trig_audit (a int, b text)",
    "CREATE TABLE trig_log (a int, op text)",
    """CREATE OR REPLACE FUNCTION trig_nothing() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN RETURN NULL; END $$""",
    """CREATE OR REPLACE FUNCTION trig_log_it() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN INSERT INTO trig_log VALUES (NEW.a, TG_OP); RETURN NULL; END $$""",
    "CREATE TRIGGER t AFTER INSERT ON trig_empty FOR EACH ROW EXECUTE FUNCTION trig_nothing()",
    "CREATE TRIGGER t AFTER INSERT ON trig_audit FOR EACH ROW EXECUTE FUNCTION trig_log_it()",
]

TRIGGER_ROWS = 100_000


def load_seconds(dsn, table, tries=3):
    """Seconds to insert TRIGGER_ROWS rows into `table` (emptied first),
    the best of `tries`: a difference of two loads amplifies the noise of
    each, and the best is the load least disturbed by the rest of the
    machine."""
    best = None
    with psycopg.connect(dsn, autocommit=True) as c:
        for _ in range(tries):
            c.execute(f"TRUNCATE {table}")
            c.execute("TRUNCATE trig_log")
            t = time.perf_counter()
            c.execute(f"INSERT INTO {table} SELECT g, 'x' FROM generate_series(1, {TRIGGER_ROWS}) g")
            took = time.perf_counter() - t
            best = took if best is None else min(best, took)
    return best


SCRIPT = """\\set aid random(1, 100000 * :scale)
\\set bid random(1, 1 * :scale)
\\set tid random(1, 10 * :scale)
\\set delta random(-5000, 5000)
SELECT tpcb(:aid, :bid, :tid, :delta);
"""


def spin_seconds(dsn, tries=3):
    """The best of `tries` calls of spin(1000000), after one warming call."""
    best = None
    with psycopg.connect(dsn, autocommit=True) as c:
        c.execute("SELECT spin(1000)")
        for _ in range(tries):
            t = time.perf_counter()
            c.execute("SELECT spin(1000000)")
            took = time.perf_counter() - t
            best = took if best is None else min(best, took)
    return best


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", default="target/release/snapscale")
    ap.add_argument("--pg", required=True, help="libpq DSN of a PostgreSQL 15")
    ap.add_argument("--seconds", type=int, default=10)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--scale", type=int, default=10)
    a = ap.parse_args()
    work = tempfile.mkdtemp(prefix="plpgsql-bench-")
    server, ss, ss_args = start_snapscale(a.bin, work)
    spins = {"snapscale": [], "pg": []}
    tps = {"snapscale": [], "pg": []}
    loads = {who: {t: [] for t in ("trig_plain", "trig_empty", "trig_audit")} for who in ("snapscale", "pg")}
    try:
        servers = {"snapscale": (ss, ss_args), "pg": (a.pg, pgbench_args(a.pg))}
        shared_buffers, version = pg_settings(a.pg)
        script = os.path.join(work, "tpcb.pgbench")
        with open(script, "w") as f:
            f.write(SCRIPT)
        for who, (dsn, args) in servers.items():
            subprocess.run(["pgbench", "-i", "-q", "-s", str(a.scale), *args], check=True, capture_output=True)
            with psycopg.connect(dsn, autocommit=True) as c:
                for sql in FUNCTIONS + TRIGGER_SETUP:
                    c.execute(sql)
        for r in range(a.rounds):
            for who in (["snapscale", "pg"] if r % 2 == 0 else ["pg", "snapscale"]):
                dsn, args = servers[who]
                spins[who].append(spin_seconds(dsn))
                tps[who].append(pgbench_tps(args, script, a.seconds))
                for table in loads[who]:
                    loads[who][table].append(load_seconds(dsn, table))
    finally:
        server.terminate()
        server.wait()
        shutil.rmtree(work, ignore_errors=True)

    print(f"# PL/pgSQL side by side with PostgreSQL {version}\n")
    print(f"{time.strftime('%Y-%m-%d')}, {platform.node()}, {os.cpu_count()} CPUs; {a.rounds} alternating rounds "
          f"(median shown, all rounds listed); PostgreSQL shared_buffers = {shared_buffers}; pgbench scale "
          f"{a.scale}, -M prepared, 2 clients, {a.seconds} s.\n")
    print("| benchmark | snapscale | PostgreSQL 15 | ratio (speed) | rounds (snapscale / PostgreSQL) |")
    print("|---|---|---|---|---|")
    s, p = statistics.median(spins["snapscale"]), statistics.median(spins["pg"])
    rounds = " ".join(f"{x * 1000:.0f}" for x in spins["snapscale"]) + " / " + \
        " ".join(f"{x * 1000:.0f}" for x in spins["pg"])
    print(f"| `spin(1000000)`: a 1 M-iteration loop of arithmetic | {s * 1000:.0f} ms | {p * 1000:.0f} ms | "
          f"{p / s:.2f} | {rounds} |")
    s, p = statistics.median(tps["snapscale"]), statistics.median(tps["pg"])
    rounds = " ".join(f"{x:.0f}" for x in tps["snapscale"]) + " / " + " ".join(f"{x:.0f}" for x in tps["pg"])
    print(f"| tpcb-like as one PL/pgSQL call | {s:.0f} tps | {p:.0f} tps | {s / p:.2f} | {rounds} |")
    # Per round: the trigger table's load less the plain table's of the
    # same round; the median of the rounds.
    per_row = lambda who, t: statistics.median(
        (x - y) / TRIGGER_ROWS * 1e6 for x, y in zip(loads[who][t], loads[who]["trig_plain"]))
    for table, what in (("trig_plain", "INSERT of 100 000 rows, no trigger"),):
        s, p = statistics.median(loads["snapscale"][table]), statistics.median(loads["pg"][table])
        rounds = " ".join(f"{x * 1000:.0f}" for x in loads["snapscale"][table]) + " / " + \
            " ".join(f"{x * 1000:.0f}" for x in loads["pg"][table])
        print(f"| {what} | {s * 1000:.0f} ms | {p * 1000:.0f} ms | {p / s:.2f} | {rounds} |")
    for table, what in (("trig_empty", "an AFTER ROW trigger doing nothing, per row"),
                        ("trig_audit", "an AFTER ROW trigger inserting an audit row, per row")):
        s, p = per_row("snapscale", table), per_row("pg", table)
        rounds = " ".join(f"{x * 1000:.0f}" for x in loads["snapscale"][table]) + " / " + \
            " ".join(f"{x * 1000:.0f}" for x in loads["pg"][table])
        print(f"| {what} | {s:.2f} µs | {p:.2f} µs | {p / s:.2f} | {rounds} (whole INSERT, ms) |")


if __name__ == "__main__":
    main()
