#!/bin/bash
# Instructions a snapscale server executes per pgbench transaction, counted
# by callgrind: unlike tps on a shared VM, the count barely moves from run
# to run, so two builds can be compared to about one percent.
#
#   scripts/instructions-per-transaction.sh BINARY [PORT] [SCALE] [CLIENTS]
#
# Starts BINARY's `serve` under callgrind (instrumentation off), runs
# `pgbench -i -s SCALE` (1) and a warm-up, then counts 3000 prepared
# select-only transactions and 1000 prepared tpcb-like ones per client
# (CLIENTS clients, 1 by default; no vacuum before select-only, pgbench's
# default one before tpcb-like when CLIENTS > 1, as lab pgbench runs it),
# and prints the instructions per transaction of each. Needs valgrind and
# pgbench. Takes about a minute at scale 1, two at scale 10.
set -euo pipefail
bin=$1
port=${2:-6099}
scale=${3:-1}
clients=${4:-1}
work=$(mktemp -d)
# Waits for the server to exit, so that the next run can bind the port.
trap 'kill $vpid 2>/dev/null || true; wait $vpid 2>/dev/null || true; rm -rf "$work"' EXIT
valgrind --tool=callgrind --callgrind-out-file="$work/cg.out" --instr-atstart=no \
    "$bin" serve --port "$port" --data-dir "$work/data" \
    --set fsync=off --set synchronous_commit=off >"$work/server.log" 2>&1 &
vpid=$!
for _ in $(seq 60); do pg_isready -h 127.0.0.1 -p "$port" -q && break; sleep 1; done
bench() { pgbench -h 127.0.0.1 -p "$port" -U postgres -M prepared -c "$clients" -j "$clients" "$@" postgres >/dev/null 2>&1; }
# One client runs tpcb-like without pgbench's vacuum, as this script
# always has; several run it with it, as lab pgbench does.
vacuum=-n
[ "$clients" -gt 1 ] && vacuum=
pgbench -h 127.0.0.1 -p "$port" -U postgres -i -s "$scale" postgres >/dev/null 2>&1
bench -n -b select-only -t 200
[ "$clients" -gt 1 ] && bench -n -b tpcb-like -t 100
callgrind_control -i on $vpid >/dev/null 2>&1
callgrind_control -z $vpid >/dev/null 2>&1
bench -n -b select-only -t 3000
callgrind_control -d select $vpid >/dev/null 2>&1
callgrind_control -z $vpid >/dev/null 2>&1
bench $vacuum -b tpcb-like -t 1000
callgrind_control -d tpcb $vpid >/dev/null 2>&1
callgrind_control -i off $vpid >/dev/null 2>&1
summary() { grep -m1 '^summary' "$1" | awk '{print $2}'; }
echo "select-only: $(( $(summary "$work/cg.out.1") / (3000 * clients) )) instructions per transaction"
echo "tpcb-like:   $(( $(summary "$work/cg.out.2") / (1000 * clients) )) instructions per transaction"
