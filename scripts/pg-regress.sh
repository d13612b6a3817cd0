#!/usr/bin/env bash
# PostgreSQL 15's regression suite (src/test/regress, parallel_schedule order)
# through psql against a fresh snapscale server, compared statement by
# statement with PostgreSQL's expected output: scripts/pg-regress.py counts
# per file the statements whose output is PostgreSQL's, and fails when a
# count drops below tests/pg-regress/baseline.tsv (tests/pg-regress/README.md).
# It also fails when the server goes down or stalls (it must answer
# `SELECT 1` after every file), on an internal error (XX000) or a panic in
# the server log, and when a file runs longer than two minutes.
#
#   bash scripts/pg-regress.sh --bin target/debug/snapscale
#   UPDATE_BASELINE=1 bash scripts/pg-regress.sh --bin target/debug/snapscale
#
# The sources come from $PG_REGRESS_DIR (a PostgreSQL 15 source tree's
# src/test/regress), else from Debian's postgresql-15 source package, fetched
# once into target/pg-regress (as root, with apt). Without either, or without
# psql or python3, it skips with a message.
set -uo pipefail
cd "$(dirname "$0")/.."

if ! command -v psql >/dev/null 2>&1; then
    echo "skipping PostgreSQL's regression suite: psql is not installed"
    exit 0
fi
if ! command -v python3 >/dev/null 2>&1; then
    echo "skipping PostgreSQL's regression suite: python3 is not installed"
    exit 0
fi

regress="${PG_REGRESS_DIR:-}"
if [ -z "$regress" ]; then
    cache="$PWD/target/pg-regress"
    tarball=$(ls "$cache"/postgresql-15_*.orig.tar.* 2>/dev/null | head -1)
    if [ -z "$tarball" ] && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
        mkdir -p "$cache"
        list=/etc/apt/sources.list.d/snapscale-pg-regress.sources
        printf 'Types: deb-src\nURIs: http://deb.debian.org/debian\nSuites: bookworm\nComponents: main\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n' > "$list"
        (apt-get update -qq >/dev/null 2>&1 && cd "$cache" && apt-get source --download-only -qq postgresql-15 >/dev/null 2>&1) \
            || echo "note: could not fetch the postgresql-15 source package"
        rm -f "$list"
        apt-get update -qq >/dev/null 2>&1 || true
        tarball=$(ls "$cache"/postgresql-15_*.orig.tar.* 2>/dev/null | head -1)
    fi
    if [ -n "$tarball" ]; then
        top=$(tar tf "$tarball" | head -1 | cut -d/ -f1)
        regress="$cache/$top/src/test/regress"
        # An extraction by an older script may lack expected/.
        if [ ! -d "$regress/expected" ] || [ ! -f "$regress/parallel_schedule" ]; then
            tar xf "$tarball" -C "$cache" "$top/src/test/regress/sql" "$top/src/test/regress/data" \
                "$top/src/test/regress/expected" "$top/src/test/regress/parallel_schedule" \
                "$top/src/test/regress/resultmap"
        fi
    else
        regress=$(ls -d "$cache"/postgresql-15*/src/test/regress 2>/dev/null | head -1)
    fi
fi
if [ -z "$regress" ] || [ ! -f "$regress/parallel_schedule" ] || [ ! -d "$regress/expected" ]; then
    echo "skipping PostgreSQL's regression suite: no source (set PG_REGRESS_DIR, or run as root with apt)"
    exit 0
fi

exec python3 scripts/pg-regress.py --regress "$regress" "$@"
