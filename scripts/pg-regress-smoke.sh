#!/usr/bin/env bash
# PostgreSQL's own regression SQL (src/test/regress/sql, in parallel_schedule
# order) through psql against a fresh snapscale server, as hostile input: most
# statements use what snapscale does not implement and fail, which is fine;
# what fails this script is the server going down or stalling (it must answer
# `SELECT 1` after every file), an internal error (XX000) or a file that runs
# longer than two minutes.
#
#   bash scripts/pg-regress-smoke.sh --bin target/debug/snapscale
#
# The SQL files come from $PG_REGRESS_DIR (a PostgreSQL 15 source tree's
# src/test/regress), else from Debian's postgresql-15 source package, fetched
# once into target/pg-regress (as root, with apt). Without either, or without
# psql, it skips with a message. COPY … FROM a server-side file becomes psql's
# \copy, since snapscale refuses server-side files.
set -uo pipefail
cd "$(dirname "$0")/.."

bin=target/debug/snapscale
while [ $# -gt 0 ]; do
    case "$1" in
        --bin) bin="$2"; shift 2 ;;
        *) echo "usage: $0 [--bin PATH]" >&2; exit 2 ;;
    esac
done

if ! command -v psql >/dev/null 2>&1; then
    echo "skipping PostgreSQL's regression SQL: psql is not installed"
    exit 0
fi

regress="${PG_REGRESS_DIR:-}"
if [ -z "$regress" ]; then
    cache="$PWD/target/pg-regress"
    regress=$(ls -d "$cache"/postgresql-15*/src/test/regress 2>/dev/null | head -1)
    if [ -z "$regress" ] && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
        mkdir -p "$cache"
        list=/etc/apt/sources.list.d/snapscale-pg-regress.sources
        printf 'Types: deb-src\nURIs: http://deb.debian.org/debian\nSuites: bookworm\nComponents: main\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n' > "$list"
        (apt-get update -qq >/dev/null 2>&1 && cd "$cache" && apt-get source --download-only -qq postgresql-15 >/dev/null 2>&1) \
            || echo "note: could not fetch the postgresql-15 source package"
        rm -f "$list"
        apt-get update -qq >/dev/null 2>&1 || true
        tarball=$(ls "$cache"/postgresql-15_*.orig.tar.* 2>/dev/null | head -1)
        if [ -n "$tarball" ]; then
            top=$(tar tf "$tarball" | head -1 | cut -d/ -f1)
            tar xf "$tarball" -C "$cache" "$top/src/test/regress/sql" "$top/src/test/regress/data" \
                "$top/src/test/regress/parallel_schedule"
            regress="$cache/$top/src/test/regress"
        fi
    fi
fi
if [ -z "$regress" ] || [ ! -f "$regress/parallel_schedule" ]; then
    echo "skipping PostgreSQL's regression SQL: no source (set PG_REGRESS_DIR, or run as root with apt)"
    exit 0
fi

work=$(mktemp -d)
trap 'kill "$server" 2>/dev/null; wait "$server" 2>/dev/null; rm -rf "$work"' EXIT
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
SNAPSCALE_LOG=warn "$bin" serve --port "$port" --data-dir "$work/data" > "$work/server.log" 2>&1 &
server=$!
for _ in $(seq 100); do
    psql -X -At -h 127.0.0.1 -p "$port" -U postgres -c 'SELECT 1' >/dev/null 2>&1 && break
    sleep 0.1
done

mkdir -p "$work/sql" "$work/out"
failed=0 files=0 errors=0
started=$(date +%s)
for name in $(grep '^test:' "$regress/parallel_schedule" | sed 's/^test://'); do
    [ -f "$regress/sql/$name.sql" ] || continue
    sed -E "s/^COPY ([a-z_0-9]+) FROM :'filename';/\\\\copy \\1 from :'filename'/" \
        "$regress/sql/$name.sql" > "$work/sql/$name.sql"
    timeout 120 psql -X -q -h 127.0.0.1 -p "$port" -U postgres -d postgres -v ON_ERROR_STOP=0 \
        -v abs_srcdir="$regress" -v abs_builddir="$work" -v libdir="$work" -v dlsuffix=.so \
        -f "$work/sql/$name.sql" > "$work/out/$name.out" 2>&1
    rc=$?
    files=$((files + 1))
    errors=$((errors + $(grep -c 'ERROR' "$work/out/$name.out")))
    if [ $rc = 124 ]; then
        echo "FAIL $name: still running after 120 s"
        failed=1
    fi
    if grep -q 'XX000\|internal error' "$work/out/$name.out"; then
        echo "FAIL $name: an internal error:"
        grep -m3 'XX000\|internal error' "$work/out/$name.out"
        failed=1
    fi
    if [ "$(timeout 30 psql -X -At -h 127.0.0.1 -p "$port" -U postgres -c 'SELECT 1' 2>&1)" != 1 ]; then
        echo "FAIL $name: the server did not answer SELECT 1 within 30 s afterwards"
        tail -20 "$work/server.log"
        exit 1
    fi
done
echo "PostgreSQL's regression SQL: $files files in $(( $(date +%s) - started )) s, $errors statements refused or failed, server up throughout"
if grep -q 'panicked' "$work/server.log"; then
    echo "FAIL: the server log has panics:"
    grep -m5 -A3 'panicked' "$work/server.log"
    failed=1
fi
exit $failed
