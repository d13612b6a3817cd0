#!/usr/bin/env python3
"""Side-by-side timings of the application types (issue 25's speed list)
against PostgreSQL 15, on one table of ROWS rows loaded into both:

    python3 scripts/types-bench.py --bin target/release/snapscale \
        --pg "host=127.0.0.1 port=5433 user=postgres" [--rows 1000000] [--runs 5]

  - sum and avg of a numeric(12,2) column;
  - a numeric expression in a WHERE clause;
  - a `jsonb ->> 'key' = $1` filter (prepared, a parameter);
  - a uuid primary-key lookup under pgbench with a custom script
    (-M prepared, 2 clients, 10 s), the uuid computed as md5(i)::uuid on
    both servers;
  - COPY of the whole table out (to /dev/null) and in (text format).

PostgreSQL must be configured as a careful user would: shared_buffers
large enough to hold the table (the script prints it). snapscale runs on a
fresh data directory with its defaults. Each timing is the median of
--runs runs on a warm cache; ratios are snapscale's speed over
PostgreSQL's (above 1: snapscale faster). Prints a Markdown report.

Needs psycopg 3 and pgbench.
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

from netutil import free_port

TABLE = """CREATE TABLE types_bench (
    id uuid PRIMARY KEY, price numeric(12,2), doc jsonb, body bytea, r real, n int)"""


def rows_file(path, rows):
    """The rows as COPY text, the same for both servers."""
    import hashlib

    with open(path, "w") as f:
        for i in range(1, rows + 1):
            u = hashlib.md5(str(i).encode()).hexdigest()
            price = f"{(i * 7919) % 1000000 / 100:.2f}"
            doc = '{"k": "v%d", "n": %d, "tags": ["a", "b"]}' % (i % 1000, i)
            body = "\\\\x" + u[:16]
            f.write(f"{u}\t{price}\t{doc}\t{body}\t{i / 7:.3f}\t{i}\n")


def timed(conn, sql, params=None, runs=5):
    times = []
    for _ in range(runs + 1):
        t = time.perf_counter()
        conn.execute(sql, params, prepare=True).fetchall()
        times.append(time.perf_counter() - t)
    return statistics.median(times[1:])  # the first run warms up


def copy_out(dsn, runs):
    times = []
    for _ in range(runs):
        t = time.perf_counter()
        with psycopg.connect(dsn) as c, c.cursor().copy("COPY types_bench TO STDOUT") as cp:
            for _ in cp:
                pass
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def copy_in(dsn, path, runs):
    times = []
    for _ in range(runs):
        with psycopg.connect(dsn, autocommit=True) as c:
            c.execute("DROP TABLE IF EXISTS types_bench_in")
            c.execute(TABLE.replace("types_bench", "types_bench_in"))
            t = time.perf_counter()
            with open(path, "rb") as f, c.cursor().copy("COPY types_bench_in FROM STDIN") as cp:
                while chunk := f.read(1 << 20):
                    cp.write(chunk)
            times.append(time.perf_counter() - t)
            c.execute("DROP TABLE types_bench_in")
    return statistics.median(times)


def pgbench_tps(dsn_args, script, seconds):
    out = subprocess.run(
        ["pgbench", "-n", "-M", "prepared", "-c", "2", "-j", "2", "-T", str(seconds), "-f", script, *dsn_args],
        capture_output=True, text=True, check=True).stdout
    for line in out.splitlines():
        if line.startswith("tps ="):
            return float(line.split()[2])
    raise RuntimeError(out)


def measure(name, dsn, pgbench_args, path, rows, runs, seconds, script):
    with psycopg.connect(dsn, autocommit=True) as c:
        c.execute("DROP TABLE IF EXISTS types_bench")
        c.execute(TABLE)
        t = time.perf_counter()
        with open(path, "rb") as f, c.cursor().copy("COPY types_bench FROM STDIN") as cp:
            while chunk := f.read(1 << 20):
                cp.write(chunk)
        load = time.perf_counter() - t
        if name == "PostgreSQL 15":
            c.execute("VACUUM ANALYZE types_bench")
        got = c.execute("SELECT count(*) FROM types_bench").fetchone()[0]
        assert got == rows, got
        result = {
            "load (COPY in, first)": load,
            "sum and avg of numeric(12,2)": timed(c, "SELECT sum(price), avg(price) FROM types_bench", runs=runs),
            "numeric expression in WHERE": timed(
                c, "SELECT count(*) FROM types_bench WHERE price * 1.1 > 5000.5", runs=runs),
            "jsonb ->> 'k' = $1": timed(
                c, "SELECT count(*) FROM types_bench WHERE doc ->> 'k' = %s", ("v123",), runs=runs),
        }
    result["COPY out"] = copy_out(dsn, runs)
    result["COPY in"] = copy_in(dsn, path, runs)
    result["uuid key lookup (pgbench tps)"] = pgbench_tps(pgbench_args, script, seconds)
    return result


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", default="target/release/snapscale")
    ap.add_argument("--pg", required=True, help="libpq DSN of a PostgreSQL 15")
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--seconds", type=int, default=10)
    a = ap.parse_args()

    work = tempfile.mkdtemp(prefix="types-bench-")
    path = os.path.join(work, "rows.txt")
    rows_file(path, a.rows)
    script = os.path.join(work, "lookup.sql")
    with open(script, "w") as f:
        f.write(f"\\set i random(1, {a.rows})\nSELECT n FROM types_bench WHERE id = md5(:i::text)::uuid;\n")

    port = free_port()
    server = subprocess.Popen(
        [a.bin, "serve", "--port", str(port), "--data-dir", os.path.join(work, "data")],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env={**os.environ, "SNAPSCALE_LOG": "warn"})
    try:
        ss_dsn = f"host=127.0.0.1 port={port} user=postgres dbname=postgres"
        for _ in range(100):
            try:
                psycopg.connect(ss_dsn).close()
                break
            except psycopg.OperationalError:
                time.sleep(0.1)
        pg_args = dict(p.split("=", 1) for p in a.pg.split())
        pg_pgbench = ["-h", pg_args.get("host", "localhost"), "-p", pg_args.get("port", "5432"),
                      "-U", pg_args.get("user", "postgres"), pg_args.get("dbname", "postgres")]
        with psycopg.connect(a.pg) as c:
            shared_buffers = c.execute("SHOW shared_buffers").fetchone()[0]
            version = c.execute("SHOW server_version").fetchone()[0]
        ss = measure("snapscale", ss_dsn, ["-h", "127.0.0.1", "-p", str(port), "-U", "postgres", "postgres"],
                     path, a.rows, a.runs, a.seconds, script)
        pg = measure("PostgreSQL 15", a.pg, pg_pgbench, path, a.rows, a.runs, a.seconds, script)
    finally:
        server.terminate()
        server.wait()
        shutil.rmtree(work, ignore_errors=True)

    print(f"# Application types side by side with PostgreSQL {version}\n")
    print(f"{time.strftime('%Y-%m-%d')}, {platform.node()}, {os.cpu_count()} CPUs; {a.rows} rows "
          f"(uuid key, numeric(12,2), jsonb, bytea, real, int); PostgreSQL shared_buffers = {shared_buffers}; "
          f"median of {a.runs} warm runs; pgbench -M prepared, 2 clients, {a.seconds} s.\n")
    print("| measurement | snapscale | PostgreSQL 15 | ratio (speed) |")
    print("|---|---|---|---|")
    for k in ss:
        if k.endswith("tps)"):
            print(f"| {k} | {ss[k]:.0f} | {pg[k]:.0f} | {ss[k] / pg[k]:.2f} |")
        else:
            print(f"| {k} | {ss[k] * 1000:.0f} ms | {pg[k] * 1000:.0f} ms | {pg[k] / ss[k]:.2f} |")


if __name__ == "__main__":
    main()
