#!/usr/bin/env python3
"""Side-by-side speed of issue 26's schema features against PostgreSQL 15:

    python3 scripts/schema-bench.py --bin target/release/snapscale \
        --pg "host=127.0.0.1 port=5433 user=postgres" [--seconds 10] [--rounds 3]

  - child inserts referencing random parents (a foreign-key check each),
    pgbench custom script, -M prepared, 2 clients;
  - deletes of random parents whose children cascade (two each);
  - an upsert-heavy script: INSERT … ON CONFLICT DO UPDATE on a hot range
    of 100 keys;
  - ALTER TABLE … ADD COLUMN with a constant default on a table of
    --rows rows (PostgreSQL 11+ does it without touching the rows).

The referencing columns are indexed on both servers, as a careful user
indexes them (PostgreSQL does not make the index). PostgreSQL must be
configured to hold the data (shared_buffers; printed). Rounds alternate
the servers; each cell is the median round. Ratios are snapscale's speed
over PostgreSQL's (above 1: snapscale faster). Prints a Markdown report.

Needs psycopg 3 and pgbench.
"""

import argparse
import os
import platform
import shutil
import statistics
import tempfile
import time

import psycopg

from benchutil import pg_settings, pgbench_args, pgbench_tps, start_snapscale

SETUP = [
    "DROP TABLE IF EXISTS children, parents, cchildren, cparents, counters, wide",
    "CREATE TABLE parents (id int PRIMARY KEY, v int)",
    "CREATE TABLE children (id bigserial PRIMARY KEY, parent_id int REFERENCES parents, v int)",
    "CREATE INDEX children_parent ON children (parent_id)",
    "INSERT INTO parents SELECT g, 0 FROM generate_series(1, 100000) g",
    "CREATE TABLE cparents (id int PRIMARY KEY)",
    "CREATE TABLE cchildren (id bigserial PRIMARY KEY, parent_id int REFERENCES cparents ON DELETE CASCADE)",
    "CREATE INDEX cchildren_parent ON cchildren (parent_id)",
    "INSERT INTO cparents SELECT g FROM generate_series(1, {parents}) g",
    "INSERT INTO cchildren (parent_id) SELECT g % {parents} + 1 FROM generate_series(1, 2 * {parents}) g",
    "CREATE TABLE counters (k int PRIMARY KEY, n int NOT NULL)",
]

SCRIPTS = {
    "child insert with a foreign-key check":
        "\\set p random(1, 100000)\nINSERT INTO children (parent_id, v) VALUES (:p, 1);\n",
    "parent delete cascading to 2 children":
        "\\set p random(1, {parents})\nDELETE FROM cparents WHERE id = :p;\n",
    "upsert on 100 hot keys":
        "\\set k random(1, 100)\n"
        "INSERT INTO counters VALUES (:k, 1) ON CONFLICT (k) DO UPDATE SET n = counters.n + 1;\n",
}


def setup(dsn, parents):
    with psycopg.connect(dsn, autocommit=True) as c:
        for sql in SETUP:
            c.execute(sql.format(parents=parents))
        c.execute("VACUUM ANALYZE")


def add_column(dsn, rows):
    with psycopg.connect(dsn, autocommit=True) as c:
        c.execute("DROP TABLE IF EXISTS wide")
        c.execute("CREATE TABLE wide (id int PRIMARY KEY, v int)")
        c.execute(f"INSERT INTO wide SELECT g, g FROM generate_series(1, {rows}) g")
        t = time.perf_counter()
        c.execute("ALTER TABLE wide ADD COLUMN extra int DEFAULT 42")
        return time.perf_counter() - t


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", default="target/release/snapscale")
    ap.add_argument("--pg", required=True, help="libpq DSN of a PostgreSQL 15")
    ap.add_argument("--seconds", type=int, default=10)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--parents", type=int, default=200000)
    ap.add_argument("--rows", type=int, default=1000000)
    a = ap.parse_args()
    work = tempfile.mkdtemp(prefix="schema-bench-")
    server, ss, ss_args = start_snapscale(a.bin, work)
    results = {name: {"snapscale": [], "pg": []} for name in SCRIPTS}
    try:
        servers = {"snapscale": (ss, ss_args), "pg": (a.pg, pgbench_args(a.pg))}
        shared_buffers, version = pg_settings(a.pg)
        scripts = {}
        for name, text in SCRIPTS.items():
            path = os.path.join(work, f"{len(scripts)}.sql")
            with open(path, "w") as f:
                f.write(text.format(parents=a.parents))
            scripts[name] = path
        for r in range(a.rounds):
            for who in (["snapscale", "pg"] if r % 2 == 0 else ["pg", "snapscale"]):
                dsn, args = servers[who]
                setup(dsn, a.parents)
                for name, path in scripts.items():
                    results[name][who].append(pgbench_tps(args, path, a.seconds))
        alter = {who: add_column(servers[who][0], a.rows) for who in servers}
    finally:
        server.terminate()
        server.wait()
        shutil.rmtree(work, ignore_errors=True)

    print(f"# Foreign keys, upserts and ADD COLUMN side by side with PostgreSQL {version}\n")
    print(f"{time.strftime('%Y-%m-%d')}, {platform.node()}, {os.cpu_count()} CPUs; pgbench -M prepared, "
          f"2 clients, {a.seconds} s, {a.rounds} alternating rounds (median shown, all rounds listed); "
          f"PostgreSQL shared_buffers = {shared_buffers}; {a.parents} cascading parents with two children "
          f"each; referencing columns indexed on both.\n")
    print("| workload | snapscale tps | PostgreSQL 15 tps | ratio (speed) | rounds (snapscale / PostgreSQL) |")
    print("|---|---|---|---|---|")
    for name, r in results.items():
        s, p = statistics.median(r["snapscale"]), statistics.median(r["pg"])
        rounds = " ".join(f"{x:.0f}" for x in r["snapscale"]) + " / " + " ".join(f"{x:.0f}" for x in r["pg"])
        print(f"| {name} | {s:.0f} | {p:.0f} | {s / p:.2f} | {rounds} |")
    print(f"| ALTER TABLE ADD COLUMN … DEFAULT 42 on {a.rows} rows | {alter['snapscale'] * 1000:.0f} ms | "
          f"{alter['pg'] * 1000:.0f} ms | {alter['pg'] / alter['snapscale']:.3f} | |")


if __name__ == "__main__":
    main()
