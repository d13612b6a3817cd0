#!/usr/bin/env python3
"""Per-row execution cost side by side with PostgreSQL 15 (issue 28):
sysbench's range queries on its table, run by pgbench custom scripts.

    python3 scripts/range-bench.py --bin target/release/snapscale \
        --pg "host=127.0.0.1 port=5433 user=postgres" [--seconds 10] [--rounds 3]

The table is sysbench's `sbtest1` as its oltp `prepare` makes it:
`id int PRIMARY KEY, k int, c char(120), pad char(60)` with an index on
k, --rows rows (25 000 by default) with ids 1..rows, k uniform in
1..rows, c ten groups and pad five groups of eleven random digits joined
by '-'. The rows come from one seeded generator, the same on both
servers, loaded with COPY.

The scripts are sysbench's oltp_read_only statements, each alone, with
a random start and a range of 100 ids:

  - point select: `SELECT c FROM sbtest1 WHERE id = $1` (the control:
    one row, so the per-statement cost rather than the per-row one);
  - simple range: `SELECT c … WHERE id BETWEEN $1 AND $1 + 99`;
  - sum range: `SELECT SUM(k) …` over the same range;
  - order range: the simple range `ORDER BY c`;
  - distinct range: `SELECT DISTINCT c … ORDER BY c`.

pgbench -M prepared, 2 clients; rounds alternate the servers and each
cell is the median round. Ratios are snapscale's speed over PostgreSQL's
(above 1: snapscale faster). PostgreSQL must hold the table in
shared_buffers (printed). Prints a Markdown report.

Needs psycopg 3 and pgbench.
"""

import argparse
import os
import platform
import random
import shutil
import statistics
import tempfile
import time

import psycopg

from benchutil import pg_settings, pgbench_args, pgbench_tps, start_snapscale

SETUP = [
    "DROP TABLE IF EXISTS sbtest1",
    "CREATE TABLE sbtest1 (id int PRIMARY KEY, k int NOT NULL DEFAULT 0, "
    "c char(120) NOT NULL DEFAULT '', pad char(60) NOT NULL DEFAULT '')",
]

RANGE = "\\set s random(1, {rows})\n"

SCRIPTS = {
    "point select (control)": "\\set s random(1, {rows})\nSELECT c FROM sbtest1 WHERE id = :s;\n",
    "simple range: SELECT c … BETWEEN": RANGE + "SELECT c FROM sbtest1 WHERE id BETWEEN :s AND :s + 99;\n",
    "sum range: SELECT SUM(k)": RANGE + "SELECT SUM(k) FROM sbtest1 WHERE id BETWEEN :s AND :s + 99;\n",
    "order range: … ORDER BY c": RANGE + "SELECT c FROM sbtest1 WHERE id BETWEEN :s AND :s + 99 ORDER BY c;\n",
    "distinct range: DISTINCT c … ORDER BY c":
        RANGE + "SELECT DISTINCT c FROM sbtest1 WHERE id BETWEEN :s AND :s + 99 ORDER BY c;\n",
}


def digit_groups(rng, groups):
    """sysbench's c/pad template: `groups` groups of eleven digits joined by '-'."""
    return "-".join("".join(rng.choice("0123456789") for _ in range(11)) for _ in range(groups))


def rows_file(path, rows):
    """The rows as COPY text, one seeded generator, the same for both servers."""
    rng = random.Random(28)
    with open(path, "w") as f:
        for i in range(1, rows + 1):
            f.write(f"{i}\t{rng.randint(1, rows)}\t{digit_groups(rng, 10)}\t{digit_groups(rng, 5)}\n")


def load(dsn, path, rows):
    """sbtest1 afresh from `path`, its k index built after the load as sysbench does."""
    with psycopg.connect(dsn, autocommit=True) as c:
        for sql in SETUP:
            c.execute(sql)
        with open(path, "rb") as f, c.cursor().copy("COPY sbtest1 FROM STDIN") as cp:
            while chunk := f.read(1 << 20):
                cp.write(chunk)
        c.execute("CREATE INDEX k_1 ON sbtest1 (k)")
        c.execute("VACUUM ANALYZE sbtest1")
        got = c.execute("SELECT count(*) FROM sbtest1").fetchone()[0]
        assert got == rows, got


def steady_tps(args, script, seconds):
    """pgbench_tps, repeated (up to five times) when the run took much
    longer than asked: a machine shared with other work may pause the
    processes, and pgbench counts the pause in its time."""
    for _ in range(5):
        t = time.perf_counter()
        tps = pgbench_tps(args, script, seconds)
        if time.perf_counter() - t < seconds * 1.2 + 2:
            break
    return tps


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", default="target/release/snapscale")
    ap.add_argument("--pg", required=True, help="libpq DSN of a PostgreSQL 15")
    ap.add_argument("--seconds", type=int, default=10)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--rows", type=int, default=25000)
    ap.add_argument("--only", help="run only the scripts whose name contains this")
    a = ap.parse_args()
    work = tempfile.mkdtemp(prefix="range-bench-")
    data = os.path.join(work, "rows.txt")
    rows_file(data, a.rows)
    server, ss, ss_args = start_snapscale(a.bin, work)
    chosen = {n: t for n, t in SCRIPTS.items() if not a.only or a.only in n}
    results = {name: {"snapscale": [], "pg": []} for name in chosen}
    try:
        servers = {"snapscale": (ss, ss_args), "pg": (a.pg, pgbench_args(a.pg))}
        shared_buffers, version = pg_settings(a.pg)
        scripts = {}
        for name, text in chosen.items():
            path = os.path.join(work, f"{len(scripts)}.sql")
            with open(path, "w") as f:
                # Keep the range inside the table: a start near the end would return fewer rows.
                f.write(text.format(rows=a.rows - 99 if "BETWEEN" in text else a.rows))
            scripts[name] = path
        for dsn, _ in servers.values():
            load(dsn, data, a.rows)
        for r in range(a.rounds):
            for who in (["snapscale", "pg"] if r % 2 == 0 else ["pg", "snapscale"]):
                for name, path in scripts.items():
                    results[name][who].append(steady_tps(servers[who][1], path, a.seconds))
    finally:
        server.terminate()
        server.wait()
        shutil.rmtree(work, ignore_errors=True)

    print(f"# sysbench's range queries side by side with PostgreSQL {version}\n")
    print(f"{time.strftime('%Y-%m-%d')}, {platform.node()}, {os.cpu_count()} CPUs; sbtest1 of {a.rows} rows; "
          f"pgbench -M prepared, 2 clients, {a.seconds} s, {a.rounds} alternating rounds (median shown, all "
          f"rounds listed; a run the machine paused is repeated); PostgreSQL shared_buffers = {shared_buffers}.\n")
    print("| workload | snapscale tps | PostgreSQL 15 tps | ratio (speed) | rounds (snapscale / PostgreSQL) |")
    print("|---|---|---|---|---|")
    for name, r in results.items():
        s, p = statistics.median(r["snapscale"]), statistics.median(r["pg"])
        rounds = " ".join(f"{x:.0f}" for x in r["snapscale"]) + " / " + " ".join(f"{x:.0f}" for x in r["pg"])
        print(f"| {name} | {s:.0f} | {p:.0f} | {s / p:.2f} | {rounds} |")


if __name__ == "__main__":
    main()
