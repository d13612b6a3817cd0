#!/usr/bin/env python3
"""Issue 27's speed benchmarks, side by side with PostgreSQL 15:

    python3 scripts/plpgsql-bench.py --bin target/release/snapscale \
        --pg "host=127.0.0.1 port=5433 user=postgres" [--seconds 10] [--rounds 3]

  - a PL/pgSQL function looping 1 000 000 times over integer arithmetic
    (`SELECT spin(1000000)`), timed from the client;
  - pgbench's tpcb-like transaction as one PL/pgSQL function call doing
    its four statements and the history insert (pgbench scale 10,
    -M prepared, 2 clients).

Rounds alternate the servers; each cell is the median round. Ratios are
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

SCRIPT = """\\set aid random(1, 100000 * :scale)
\\set bid random(1, 1 * :scale)
\\set tid random(1, 10 * :scale)
\\set delta random(-5000, 5000)
SELECT tpcb(:aid, :bid, :tid, :delta);
"""


def spin_seconds(dsn):
    with psycopg.connect(dsn, autocommit=True) as c:
        c.execute("SELECT spin(1000)")
        t = time.perf_counter()
        c.execute("SELECT spin(1000000)")
        return time.perf_counter() - t


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
    try:
        servers = {"snapscale": (ss, ss_args), "pg": (a.pg, pgbench_args(a.pg))}
        shared_buffers, version = pg_settings(a.pg)
        script = os.path.join(work, "tpcb.pgbench")
        with open(script, "w") as f:
            f.write(SCRIPT)
        for who, (dsn, args) in servers.items():
            subprocess.run(["pgbench", "-i", "-q", "-s", str(a.scale), *args], check=True, capture_output=True)
            with psycopg.connect(dsn, autocommit=True) as c:
                for sql in FUNCTIONS:
                    c.execute(sql)
        for r in range(a.rounds):
            for who in (["snapscale", "pg"] if r % 2 == 0 else ["pg", "snapscale"]):
                dsn, args = servers[who]
                spins[who].append(spin_seconds(dsn))
                tps[who].append(pgbench_tps(args, script, a.seconds))
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


if __name__ == "__main__":
    main()
