#!/bin/bash
# A/B of two snapscale builds under pgbench: ab-pgbench.sh BIN_A BIN_B [ROUNDS] [SECONDS]
# Each round runs a fresh server of each build in turn (fsync and
# synchronous_commit off, pgbench -i -s 10), then select-only and
# tpcb-like at 2 clients, prepared. Prints one line per build and round;
# compare within a round (the machine is shared).
set -u
a=$1 b=$2 rounds=${3:-3} seconds=${4:-15}
export PGHOST=127.0.0.1 PGPORT=${PGPORT:-5450} PGUSER=postgres
for r in $(seq "$rounds"); do
    for bin in "$a" "$b"; do
        d=$(mktemp -d /tmp/ab-pgbench.XXXXXX)
        "$bin" serve --port "$PGPORT" --data-dir "$d/data" --set fsync=off --set synchronous_commit=off \
            >"$d/log" 2>&1 &
        pid=$!
        for _ in $(seq 50); do psql -qAtc 'select 1' postgres >/dev/null 2>&1 && break; sleep 0.2; done
        pgbench -i -s 10 -q postgres >/dev/null 2>&1
        s=$(pgbench -n -M prepared -S -c 2 -j 2 -T "$seconds" postgres 2>/dev/null | grep -oP 'tps = \K[0-9.]+')
        t=$(pgbench -n -M prepared -c 2 -j 2 -T "$seconds" postgres 2>/dev/null | grep -oP 'tps = \K[0-9.]+')
        echo "round $r $bin select-only $s tpcb-like $t"
        kill "$pid"
        wait "$pid" 2>/dev/null
        rm -rf "$d"
    done
done
