#!/bin/bash
# Instructions a snapscale server executes per pgbench transaction, counted
# by callgrind: unlike tps on a shared VM, the count barely moves from run
# to run, so two builds can be compared to about one percent.
#
#   scripts/instructions-per-transaction.sh BINARY [PORT]
#
# Starts BINARY's `serve` under callgrind (instrumentation off), runs
# `pgbench -i -s 1` and a warm-up, then counts 3000 prepared select-only
# transactions and 1000 prepared tpcb-like ones (one client, no vacuum),
# and prints the instructions per transaction of each. Needs valgrind and
# pgbench. Takes about a minute.
set -euo pipefail
bin=$1
port=${2:-6099}
work=$(mktemp -d)
trap 'kill $vpid 2>/dev/null || true; rm -rf "$work"' EXIT
valgrind --tool=callgrind --callgrind-out-file="$work/cg.out" --instr-atstart=no \
    "$bin" serve --port "$port" --data-dir "$work/data" \
    --set fsync=off --set synchronous_commit=off >"$work/server.log" 2>&1 &
vpid=$!
for _ in $(seq 60); do pg_isready -h 127.0.0.1 -p "$port" -q && break; sleep 1; done
bench() { pgbench -h 127.0.0.1 -p "$port" -U postgres -M prepared -n -c 1 "$@" postgres >/dev/null 2>&1; }
pgbench -h 127.0.0.1 -p "$port" -U postgres -i -s 1 postgres >/dev/null 2>&1
bench -b select-only -t 200
callgrind_control -i on $vpid >/dev/null 2>&1
callgrind_control -z $vpid >/dev/null 2>&1
bench -b select-only -t 3000
callgrind_control -d select $vpid >/dev/null 2>&1
callgrind_control -z $vpid >/dev/null 2>&1
bench -b tpcb-like -t 1000
callgrind_control -d tpcb $vpid >/dev/null 2>&1
callgrind_control -i off $vpid >/dev/null 2>&1
summary() { grep -m1 '^summary' "$1" | awk '{print $2}'; }
echo "select-only: $(( $(summary "$work/cg.out.1") / 3000 )) instructions per transaction"
echo "tpcb-like:   $(( $(summary "$work/cg.out.2") / 1000 )) instructions per transaction"
