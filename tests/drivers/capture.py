#!/usr/bin/env python3
"""Run one command against a PostgreSQL that logs every statement and write
what the clients sent to a .sql file.

    python3 tests/drivers/capture.py LOGFILE OUT.sql -- COMMAND...

The PostgreSQL must run with log_statement = 'all' and
log_line_prefix = '[%p] ' (ALTER SYSTEM, then pg_reload_conf()), with its
stderr in LOGFILE (pg_ctl -l LOGFILE). OUT.sql gets two parts: the distinct
catalog, introspection and session statements (pg_catalog, information_schema,
pg_* relations and functions, SET, SHOW, RESET, DISCARD, DEALLOCATE, version()
and the like), then every statement in the order sent, with its parameters and
any error, per backend pid. Literal values of the scenario's own rows are kept.
"""

import re
import subprocess
import sys
import time

START = re.compile(r"^\[(\d+)\] (LOG|DETAIL|ERROR|STATEMENT|WARNING|NOTICE|HINT|FATAL|CONTEXT):  (.*)$")
SQL = re.compile(r"^(statement|execute [^:]+|parse [^:]+|bind [^:]+): (.*)$", re.S)
CATALOG = re.compile(
    r"pg_catalog|information_schema|\bpg_\w+|\bversion\(\)|current_setting|set_config|"
    r"current_schema|current_database|::reg\w+|^\s*(SET|SHOW|RESET|DISCARD|DEALLOCATE)\b",
    re.I | re.M,
)


def records(text):
    rec = None
    for line in text.splitlines():
        m = START.match(line)
        if m:
            if rec:
                yield rec
            rec = [m.group(1), m.group(2), m.group(3)]
        elif rec:  # a continuation line, which PostgreSQL indents with a tab
            rec[2] += "\n" + (line[1:] if line.startswith("\t") else line)
    if rec:
        yield rec


def main():
    log, out, sep, *cmd = sys.argv[1:]
    assert sep == "--" and cmd, __doc__
    with open(log, "rb") as f:
        f.seek(0, 2)
        offset = f.tell()
    status = subprocess.call(cmd)
    time.sleep(1)  # let the last lines reach the log
    with open(log, "rb") as f:
        f.seek(offset)
        text = f.read().decode("utf-8", "replace")

    distinct, ordered, last_pid = [], [], None
    for pid, kind, msg in records(text):
        if pid != last_pid:
            ordered.append(f"\n-- backend {pid}")
            last_pid = pid
        if kind == "LOG":
            m = SQL.match(msg)
            if not m:
                continue
            how, sql = m.group(1), m.group(2).rstrip()
            note = "" if how == "statement" else f"-- {how} (extended protocol)\n"
            ordered.append(f"{note}{sql}" + ("" if sql.endswith(";") else ";"))
            if CATALOG.search(sql) and sql not in distinct:
                distinct.append(sql)
        elif kind == "DETAIL" and msg.startswith("parameters:"):
            ordered.append("--   " + msg.replace("\n", "\n--   "))
        elif kind in ("ERROR", "FATAL", "WARNING"):
            ordered.append(f"--   {kind}: " + msg.replace("\n", "\n--   "))

    with open(out, "w") as f:
        f.write(f"-- Captured from PostgreSQL 15 (log_statement = 'all') while running:\n"
                f"--   {' '.join(cmd)}\n-- exit status {status}\n\n")
        f.write("-- ===== Distinct catalog, introspection and session statements =====\n\n")
        for sql in distinct:
            f.write(sql + ("" if sql.endswith(";") else ";") + "\n\n")
        f.write("-- ===== Every statement, in the order sent =====\n")
        f.write("\n".join(ordered) + "\n")
    sys.exit(status)


if __name__ == "__main__":
    main()
