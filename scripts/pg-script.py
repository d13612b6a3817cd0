#!/usr/bin/env python3
"""Runs an SQL script file (crates/sql/tests/scripts/*.test) against a real
PostgreSQL and prints what it printed, in the script format, so that the
expected output kept in the file can be checked against PostgreSQL 15.

    python3 scripts/pg-script.py FILE [--dsn "host=127.0.0.1 port=5432 user=postgres"] [--diff]

Each session of the script gets its own connection (a fresh database,
dropped afterwards). Steps run in order. A step that has not finished
after a moment is printed as `session: waiting`, and after every later
step each waiting session is given a moment to finish, its lines then
printed with its name in front, as the in-process runner prints them (it
sees waits in the lock manager; this tool can only time them, so a
loaded machine can print a slow step as waiting). With --diff, the
output is compared with the file's expected lines and the differences
are printed (exit status 1 if any).

Needs psycopg 3 (`pip install psycopg[binary]`); it uses libpq directly
(psycopg.pq), so values are PostgreSQL's own text output.
"""

import argparse
import os
import difflib
import re
import select
import sys
import time

import psycopg
from psycopg import pq


def parse(path):
    """The script's lines: (kind, session, text) for steps, and the rest."""
    steps = []
    for line in open(path, encoding="utf-8").read().split("\n"):
        m = re.match(r"^> (\w+): (.*)$", line)
        if m:
            steps.append((m.group(1), m.group(2)))
    return steps


def finished(conn, seconds):
    """Waits up to `seconds` for the query sent on `conn` to finish."""
    deadline = time.monotonic() + seconds
    while True:
        conn.consume_input()
        if not conn.is_busy():
            return True
        left = deadline - time.monotonic()
        if left <= 0:
            return False
        select.select([conn.socket], [], [], left)


def results(conn):
    """The lines a finished simple Query printed."""
    out = []
    while True:
        res = conn.get_result()
        if res is None:
            break
        status = res.status
        for n in notices.pop(conn, []):
            out.append(n)
        if status == pq.ExecStatus.TUPLES_OK:
            names = [res.fname(i).decode() for i in range(res.nfields)]
            out.append(" | ".join(names))
            for r in range(res.ntuples):
                vals = []
                for c in range(res.nfields):
                    v = res.get_value(r, c)
                    vals.append("NULL" if v is None else v.decode())
                out.append(" | ".join(vals))
            out.append(res.command_status.decode())
        elif status == pq.ExecStatus.COMMAND_OK:
            out.append(res.command_status.decode())
        elif status == pq.ExecStatus.EMPTY_QUERY:
            out.append("EMPTY")
        elif status == pq.ExecStatus.FATAL_ERROR:
            code = res.error_field(pq.DiagnosticField.SQLSTATE).decode()
            msg = res.error_field(pq.DiagnosticField.MESSAGE_PRIMARY).decode()
            out.append(f"ERROR {code}: {msg}")
            detail = res.error_field(pq.DiagnosticField.MESSAGE_DETAIL)
            if detail:
                # One line each, as the in-process runner writes them.
                out.extend(f"DETAIL: {line}" for line in detail.decode().split("\n"))
        elif status == pq.ExecStatus.COPY_OUT:
            # Each row as it came (without its newline), then the tag.
            while True:
                n, data = conn.get_copy_data(0)
                if n < 0:
                    break
                out.append(bytes(data).decode().rstrip("\n"))
        elif status == pq.ExecStatus.COPY_IN:
            out.append("(COPY FROM STDIN is not run by this tool)")
            break
    for n in notices.pop(conn, []):
        out.append(n)
    return out


notices = {}

# How long a step may take before it is taken to be waiting (steps that
# are slow on PostgreSQL itself, such as writing a gigabyte, need longer).
STEP_WAIT = float(os.environ.get("PG_SCRIPT_STEP_WAIT", "0.5"))


def expand(sql):
    """The step's text with each `{{repeat N text}}` written out, as the
    in-process runner writes it (the text runs to the closing `}}`)."""
    return re.sub(r"\{\{repeat (\d+) (.*?)\}\}", lambda m: m.group(2) * int(m.group(1)), sql)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("file")
    ap.add_argument("--dsn", default="host=127.0.0.1 port=5432 user=postgres dbname=postgres")
    ap.add_argument("--diff", action="store_true")
    args = ap.parse_args()

    admin = psycopg.connect(args.dsn, autocommit=True)
    db = "pg_script_check"
    admin.execute(f"DROP DATABASE IF EXISTS {db} WITH (FORCE)")
    admin.execute(f"CREATE DATABASE {db}")
    dsn = re.sub(r"dbname=\S+", "", args.dsn) + f" dbname={db}"

    sessions = {}
    waiting = set()
    printed = []
    try:
        for session, sql in parse(args.file):
            if session not in sessions:
                conn = pq.PGconn.connect(dsn.encode())
                if conn.status != pq.ConnStatus.OK:
                    sys.exit(f"cannot connect: {conn.error_message.decode()}")

                def on_notice(res, conn=conn):
                    sev = res.error_field(pq.DiagnosticField.SEVERITY_NONLOCALIZED) or b"NOTICE"
                    code = res.error_field(pq.DiagnosticField.SQLSTATE).decode()
                    msg = res.error_field(pq.DiagnosticField.MESSAGE_PRIMARY).decode()
                    notices.setdefault(conn, []).append(f"{sev.decode()} {code}: {msg}")

                conn.notice_handler = on_notice
                sessions[session] = conn
            conn = sessions[session]
            if sql.strip() == "\\quit":
                conn.finish()
                del sessions[session]
                printed += [f"> {session}: {sql}", ""]
                continue
            if session in waiting:
                finished(conn, 60)
                waiting.discard(session)
                printed += [f"{session}: {line}" for line in results(conn)]
            printed.append(f"> {session}: {sql}")
            conn.send_query(expand(sql).encode())
            if finished(conn, STEP_WAIT):
                printed += results(conn)
            else:
                printed.append(f"{session}: waiting")
                waiting.add(session)
            for other in sorted(waiting - {session}):
                if finished(sessions[other], STEP_WAIT):
                    waiting.discard(other)
                    printed += [f"{other}: {line}" for line in results(sessions[other])]
            printed.append("")
    finally:
        for conn in sessions.values():
            conn.finish()
        admin.execute(f"DROP DATABASE IF EXISTS {db} WITH (FORCE)")

    if not args.diff:
        print("\n".join(printed))
        return
    expected = []
    keep = False
    for line in open(args.file, encoding="utf-8").read().split("\n"):
        if line.startswith("> "):
            keep = True
        if keep and not line.startswith("#"):
            expected.append(line)
    printed = "\n".join(printed).split("\n")
    diff = list(difflib.unified_diff(expected, printed, "expected", "postgresql", lineterm=""))
    print("\n".join(diff) if diff else "same as PostgreSQL")
    sys.exit(1 if diff else 0)


if __name__ == "__main__":
    main()
