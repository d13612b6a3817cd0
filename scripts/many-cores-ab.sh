#!/usr/bin/env bash
# A/B of two snapscale builds against PostgreSQL 15 on a many-core machine,
# for the lent 16-core device (see ../shared/many-cores/README.md, whose
# bundle this reuses). Here, from the project's root:
#   bash ../shared/many-cores/make-bundle.sh              # .device/pg15.txz, .device/snapscale.xz (B)
#   xz -T2 -c OLD_BINARY > .device/snapscale-a.xz         # the build to compare against (A)
# There: bash scripts/many-cores-ab.sh  (about 4 minutes with the defaults)
# All three servers run side by side: PostgreSQL 15 (fsync, synchronous_commit
# and full_page_writes off, shared_buffers 4GB, data set ~160 MB) and both
# builds (fsync and synchronous_commit off), pgbench -M prepared at scale 10,
# -j up to the CPU count; each cell runs the three in turn, the order
# rotating from cell to cell. Rows go to $OUT/results.csv:
#   script,clients,round,server,tps,failed
# Variables: CLIENTS_S (select-only, default "1 16 64 256"), CLIENTS_T
# (tpcb-like, default "16 64"), ROUNDS (default 1), SECS (default 8).
set -u
OUT=${OUT:-/tmp/many-cores-ab}; mkdir -p "$OUT"
SECS=${SECS:-8}; ROUNDS=${ROUNDS:-1}
here=$(pwd); dev=$here/.device; W=/tmp/mcab; rm -rf $W; mkdir -p $W
T0=$(date +%s)
log() { echo "[$(( $(date +%s) - T0 ))s] $*" | tee -a "$OUT/log.txt"; }
{ nproc; lscpu | grep -E 'Model name|^CPU\(s\)|Thread|Socket|NUMA node\(s\)'; free -g | head -2; uname -r; } > "$OUT/machine.txt" 2>&1
python3 - "$dev" "$W" <<'PY'
import lzma, tarfile, sys, shutil
d, w = sys.argv[1], sys.argv[2]
tarfile.open(f"{d}/pg15.txz", "r:xz").extractall("/")
for src, dst in (("snapscale-a.xz", "snap-a"), ("snapscale.xz", "snap-b")):
    with lzma.open(f"{d}/{src}") as f, open(f"{w}/{dst}", "wb") as o: shutil.copyfileobj(f, o)
PY
chmod +x $W/snap-a $W/snap-b
id postgres >/dev/null 2>&1 || useradd -r -M -d /tmp postgres 2>/dev/null || echo "postgres:x:990:990::/tmp:/bin/sh" >> /etc/passwd
ulimit -n 200000 2>/dev/null
export PGHOST=127.0.0.1 PGUSER=postgres PGDATABASE=postgres PGSSLMODE=disable PGGSSENCMODE=disable
PGBIN=/usr/lib/postgresql/15/bin; L=/opt/pg15lib
pg()  { LD_LIBRARY_PATH=$L "$PGBIN/$@"; }
asp() { runuser -u postgres -- env LD_LIBRARY_PATH=$L "$@"; }
mkdir -p $W/pg && chown postgres $W/pg
TZ=UTC asp $PGBIN/initdb -D $W/pg/data -A trust -U postgres -E UTF8 --locale=C >$W/initdb.log 2>&1 || { log "initdb failed"; exit 3; }
asp $PGBIN/pg_ctl -D $W/pg/data -l $W/pg/log -w -t 120 start -o "-p 56301 -k /tmp -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=600 -c shared_buffers=4GB -c max_wal_size=10GB" >/dev/null 2>&1 || { log "PostgreSQL did not start"; exit 3; }
declare -A PORT=([pg15]=56301 [a]=56302 [b]=56303)
for s in a b; do
  $W/snap-$s serve --port ${PORT[$s]} --data-dir $W/snap-$s-data --max-connections 600 --set fsync=off --set synchronous_commit=off >$W/snap-$s.log 2>&1 &
done
for s in a b; do for i in $(seq 1 150); do pg pg_isready -h 127.0.0.1 -p ${PORT[$s]} -q && break; sleep 0.2; done; done
for s in pg15 a b; do pg pgbench -p ${PORT[$s]} -i -q -s 10 >$W/init-$s.log 2>&1 || { log "pgbench -i on $s failed"; tail -3 $W/init-$s.log; exit 3; }; done
log "set-up done on $(nproc) CPUs"
echo "script,clients,round,server,tps,failed" > "$OUT/results.csv"
cpus=$(nproc); n=0
bench() { # script clients round server
  local j=$(( $2 < cpus ? $2 : cpus )) out tps failed flag=""
  [ "$1" = select-only ] && flag=-S
  out=$(pg pgbench -n -p ${PORT[$4]} -M prepared $flag -c "$2" -j $j -T $SECS 2>&1)
  tps=$(echo "$out" | sed -n 's/^tps = \([0-9.]*\).*/\1/p'); failed=$(echo "$out" | sed -n 's/^number of failed transactions: \([0-9]*\).*/\1/p')
  echo "$1,$2,$3,$4,${tps:-NA},${failed:-NA}" >> "$OUT/results.csv"; log "$1 c=$2 r=$3 $4 tps=${tps:-NA}"
}
for r in $(seq "$ROUNDS"); do
  for spec in $(for c in ${CLIENTS_S:-1 16 64 256}; do echo select-only:$c; done; for c in ${CLIENTS_T:-16 64}; do echo tpcb-like:$c; done); do
    case $((n % 3)) in 0) order="pg15 a b";; 1) order="a b pg15";; 2) order="b pg15 a";; esac; n=$((n+1))
    for s in $order; do bench ${spec%%:*} ${spec##*:} $r $s; done
  done
done
for s in a b; do cp $W/snap-$s.log "$OUT/" 2>/dev/null; done
pkill -f "$W/snap-" ; asp $PGBIN/pg_ctl -D $W/pg/data stop -m immediate >/dev/null 2>&1
log done
