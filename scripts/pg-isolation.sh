#!/usr/bin/env bash
# PostgreSQL 15's isolation specs through PostgreSQL's own isolationtester
# (postgresql-client-15 ships it) against a fresh snapscale server: the
# specs in tests/pg-isolation/passing.txt must give PostgreSQL's
# transcripts (scripts/pg-isolation.py). The specs come from the same
# postgresql-15 source package scripts/pg-regress.sh fetches into
# target/pg-regress. Without isolationtester, python3 or the source, it
# skips with a message.
#
#   bash scripts/pg-isolation.sh --bin target/debug/snapscale [--all]
set -uo pipefail
cd "$(dirname "$0")/.."

tester=/usr/lib/postgresql/15/lib/pgxs/src/test/isolation/isolationtester
if [ ! -x "$tester" ]; then
    echo "skipping PostgreSQL's isolation specs: isolationtester is not installed (postgresql-client-15)"
    exit 0
fi
if ! command -v python3 >/dev/null 2>&1; then
    echo "skipping PostgreSQL's isolation specs: python3 is not installed"
    exit 0
fi
cache="$PWD/target/pg-regress"
tarball=$(ls "$cache"/postgresql-15_*.orig.tar.* 2>/dev/null | head -1)
if [ -z "$tarball" ]; then
    echo "skipping PostgreSQL's isolation specs: no source package (run scripts/pg-regress.sh first, as root with apt)"
    exit 0
fi
top=$(tar tf "$tarball" | head -1 | cut -d/ -f1)
isolation="$cache/$top/src/test/isolation"
if [ ! -d "$isolation/specs" ] || [ ! -d "$isolation/expected" ]; then
    tar xf "$tarball" -C "$cache" "$top/src/test/isolation/specs" "$top/src/test/isolation/expected"
fi
exec python3 scripts/pg-isolation.py --isolation "$isolation" "$@"
