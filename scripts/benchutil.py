"""What the side-by-side benchmarks share (schema-bench.py,
plpgsql-bench.py): a snapscale server started on a free port next to a
PostgreSQL given by its DSN, and pgbench's throughput for a script."""

import os
import subprocess
import time

import psycopg

from netutil import free_port


def start_snapscale(binary, work):
    """A snapscale server on a fresh data directory under `work`, once it
    answers: the process, its DSN and pgbench's connection arguments."""
    port = free_port()
    server = subprocess.Popen(
        [binary, "serve", "--port", str(port), "--data-dir", os.path.join(work, "data")],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env={**os.environ, "SNAPSCALE_LOG": "warn"})
    dsn = f"host=127.0.0.1 port={port} user=postgres dbname=postgres"
    for _ in range(100):
        try:
            psycopg.connect(dsn).close()
            break
        except psycopg.OperationalError:
            time.sleep(0.1)
    return server, dsn, ["-h", "127.0.0.1", "-p", str(port), "-U", "postgres", "postgres"]


def pgbench_args(dsn):
    """pgbench's connection arguments for a libpq DSN."""
    a = dict(p.split("=", 1) for p in dsn.split())
    return ["-h", a.get("host", "localhost"), "-p", a.get("port", "5432"), "-U", a.get("user", "postgres"),
            a.get("dbname", "postgres")]


def pg_settings(dsn):
    """PostgreSQL's shared_buffers and version, for the report."""
    with psycopg.connect(dsn) as c:
        return c.execute("SHOW shared_buffers").fetchone()[0], c.execute("SHOW server_version").fetchone()[0]


def pgbench_tps(args, script, seconds):
    """tps of `script` for `seconds`, -M prepared, 2 clients."""
    out = subprocess.run(
        ["pgbench", "-n", "-M", "prepared", "-c", "2", "-j", "2", "-T", str(seconds), "-f", script, *args],
        capture_output=True, text=True, check=True).stdout
    return float(next(l for l in out.splitlines() if l.startswith("tps")).split()[2])
