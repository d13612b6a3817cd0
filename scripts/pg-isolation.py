#!/usr/bin/env python3
"""PostgreSQL 15's isolation specs (src/test/isolation/specs) run by
PostgreSQL's own isolationtester against a fresh snapscale server, each
output compared byte for byte with PostgreSQL's expected/ transcript (or
one of its alternatives, expected/NAME_N.out), as pg_isolation_regress
compares them.

Specs listed in tests/pg-isolation/passing.txt must give PostgreSQL's
transcript: a difference fails the run, with the diff printed. With
--all, every spec is run and the ones that match are listed, so the list
can be raised.

    python3 scripts/pg-isolation.py --bin target/debug/snapscale --isolation DIR [--all]
"""

import argparse
import difflib
import os
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

TESTER = "/usr/lib/postgresql/15/lib/pgxs/src/test/isolation/isolationtester"


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_ready(port, proc, log):
    for _ in range(300):
        if proc.poll() is not None:
            sys.exit(f"the server exited at start-up; its log:\n{Path(log).read_text()}")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            time.sleep(0.1)
    sys.exit("the server did not start listening")


def expected_outputs(isolation, name):
    out = [isolation / "expected" / f"{name}.out"]
    out += sorted((isolation / "expected").glob(f"{name}_[0-9].out"))
    return [p for p in out if p.exists()]


def run_spec(port, isolation, name, timeout):
    spec = (isolation / "specs" / f"{name}.spec").read_text()
    conninfo = f"host=127.0.0.1 port={port} user=postgres dbname=postgres"
    try:
        # One stream, as pg_isolation_regress reads it (the tester's
        # notes on stderr come where it wrote them).
        done = subprocess.run(
            [TESTER, conninfo], input=spec, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
            text=True, timeout=timeout,
        )
        return done.stdout
    except subprocess.TimeoutExpired as e:
        out = e.stdout or ""
        if isinstance(out, bytes):
            out = out.decode(errors="replace")
        return out + f"\n(isolationtester timed out after {timeout} s)\n"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", required=True)
    ap.add_argument("--isolation", required=True, type=Path)
    ap.add_argument("--all", action="store_true")
    ap.add_argument("--list", default="tests/pg-isolation/passing.txt", type=Path)
    args = ap.parse_args()
    listed = [l.split("#")[0].strip() for l in args.list.read_text().splitlines()]
    listed = [l for l in listed if l]
    names = listed
    if args.all:
        names = sorted(p.stem for p in (args.isolation / "specs").glob("*.spec"))
    work = Path(tempfile.mkdtemp(prefix="snapscale-isolation-"))
    port = free_port()
    log = work / "server.log"
    proc = subprocess.Popen(
        [args.bin, "serve", "--port", str(port), "--data-dir", str(work / "data")],
        stdout=open(log, "wb"),
        stderr=subprocess.STDOUT,
        env=dict(os.environ, SNAPSCALE_LOG="warn"),
    )
    failed, matching = [], []
    try:
        wait_ready(port, proc, log)
        for name in names:
            got = run_spec(port, args.isolation, name, 180 if name in listed else 30)
            print(f"{name}: {'same' if any(w.read_text() == got for w in expected_outputs(args.isolation, name)) else 'differs'}", file=sys.stderr)
            wants = expected_outputs(args.isolation, name)
            same = any(w.read_text() == got for w in wants)
            if same:
                matching.append(name)
            elif name in listed:
                want = wants[0].read_text() if wants else ""
                diff = difflib.unified_diff(
                    want.splitlines(), got.splitlines(), "postgresql", "snapscale", lineterm=""
                )
                failed.append((name, "\n".join(list(diff)[:60])))
            if proc.poll() is not None:
                failed.append((name, "the server exited during this spec"))
                break
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
    text = log.read_text(errors="replace")
    if "panicked" in text:
        failed.append(("server log", "a panic:\n" + text[text.index("panicked") - 200:][:2000]))
    print(f"PostgreSQL's isolation specs: {len(matching)}/{len(names)} give PostgreSQL's transcript")
    if args.all:
        unlisted = [n for n in matching if n not in listed]
        if unlisted:
            print("matching but not listed in", args.list, ":", " ".join(unlisted))
    for name, why in failed:
        print(f"FAIL {name}:\n{why}")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
