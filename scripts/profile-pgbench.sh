#!/bin/bash
# perf profile of a snapscale server under pgbench at 2 clients, scale 10,
# fsync and synchronous_commit off, and flame graphs of it:
#
#   scripts/profile-pgbench.sh BINARY OUT_PREFIX [PORT]
#
# For each of select-only and tpcb-like: a 5 s warm-up, then a 16 s
# `pgbench -M prepared -c 2 -j 2` during which `perf record -F 499
# --call-graph dwarf` samples the server for 8 s. Writes OUT_PREFIX-WORKLOAD
# .data, .folded and .svg (inferno: `cargo install inferno`). Needs perf and
# pgbench.
set -u
bin=$1; out=$2; port=${3:-6151}
work=$(mktemp -d)
"$bin" serve --port "$port" --data-dir "$work/data" --set fsync=off --set synchronous_commit=off >"$work/log" 2>&1 &
spid=$!
trap 'kill $spid 2>/dev/null; rm -rf "$work"' EXIT
for _ in $(seq 60); do pg_isready -h 127.0.0.1 -p "$port" -q && break; sleep 1; done
bench() { pgbench -h 127.0.0.1 -p "$port" -U postgres -M prepared -c 2 -j 2 "$@" postgres; }
pgbench -h 127.0.0.1 -p "$port" -U postgres -i -s 10 postgres >/dev/null 2>&1
for w in select-only tpcb-like; do
    bench -b "$w" -T 5 >/dev/null 2>&1
    bench -b "$w" -T 16 >"$out-$w.pgbench" 2>&1 &
    bpid=$!
    sleep 3
    perf record -F 499 --call-graph dwarf,16384 -p "$spid" -o "$out-$w.data" -- sleep 8 2>/dev/null
    wait $bpid
    grep tps "$out-$w.pgbench"
    perf script -i "$out-$w.data" 2>/dev/null | inferno-collapse-perf >"$out-$w.folded"
    inferno-flamegraph --minwidth 1 --title "snapscale, pgbench -M prepared -b $w -c 2 -j 2, scale 10, fsync off" \
        "$out-$w.folded" >"$out-$w.svg"
done
