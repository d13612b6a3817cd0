#!/usr/bin/env bash
# Real-driver scenarios (tests/drivers/): psycopg 3, SQLAlchemy 2 Core and
# ORM, asyncpg and node-postgres, each with its defaults, one scenario each.
#
#   scripts/drivers.sh                      build snapscale (release), start it on a
#                                           free port with a fresh data directory, run
#                                           the scenarios against it, stop it
#   scripts/drivers.sh --bin PATH           the same with an already built binary
#   scripts/drivers.sh --dsn "host=… port=… [user=…] [dbname=…] [password=…]"
#                                           run against any server (PostgreSQL 15 too)
#   --extra                                 also psycopg2, postgres.js, pgjdbc and pgx
#                                           (tests/drivers/extra/, checked by hand)
#   --only NAME[,NAME]                      only these scenarios
#   --tls                                   start snapscale with ssl = on and a certificate
#                                           of a throwaway CA (made with openssl), and have
#                                           every client connect with sslmode=verify-full
#
# A scenario whose client is not installed is SKIPPED with the reason (.ci/run
# installs the CI ones). Against the snapscale this script starts, a failing
# step listed in tests/drivers/expected-failures.txt is reported as XFAIL and
# does not fail the run; any other failing step does. With --dsn every step
# must pass. Exits non-zero if a scenario failed.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
DRV="$ROOT/tests/drivers"

dsn=""
bin=""
extra=0
only=""
tls=0
while [ $# -gt 0 ]; do
    case "$1" in
        --dsn) dsn="$2"; shift 2 ;;
        --bin) bin="$2"; shift 2 ;;
        --extra) extra=1; shift ;;
        --only) only=",$2,"; shift 2 ;;
        --tls) tls=1; shift ;;
        -h|--help) sed -n '2,24p' "$0"; exit 0 ;;
        *) echo "drivers.sh: unknown argument $1" >&2; exit 2 ;;
    esac
done

# The scenarios take the server from libpq's environment variables.
export PGUSER=postgres PGDATABASE=postgres
unset PGSERVICE PGOPTIONS 2>/dev/null || true
server_pid=""
data_dir=""
logs=""
cleanup() {
    if [ -n "$server_pid" ] && kill -0 "$server_pid" 2>/dev/null; then
        kill "$server_pid" 2>/dev/null || true
        for _ in $(seq 1 50); do kill -0 "$server_pid" 2>/dev/null || break; sleep 0.1; done
        kill -9 "$server_pid" 2>/dev/null || true
    fi
    if [ -n "$data_dir" ]; then rm -rf "$data_dir"; fi
    if [ -n "$logs" ]; then rm -rf "$logs"; fi
}
trap cleanup EXIT

if [ -n "$dsn" ]; then
    for kv in $dsn; do
        key=${kv%%=*}
        value=${kv#*=}
        case "$key" in
            host) export PGHOST="$value" ;;
            port) export PGPORT="$value" ;;
            user) export PGUSER="$value" ;;
            dbname) export PGDATABASE="$value" ;;
            password) export PGPASSWORD="$value" ;;
            *) echo "drivers.sh: unsupported DSN key $key" >&2; exit 2 ;;
        esac
    done
    target="the server at $dsn"
    strict=1
else
    if [ -z "$bin" ]; then
        cargo build --release --locked --quiet
        bin="$ROOT/target/release/snapscale"
    fi
    port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
    data_dir=$(mktemp -d /tmp/snapscale-drivers.XXXXXX)
    tls_flags=()
    if [ "$tls" = 1 ]; then
        if ! command -v openssl >/dev/null; then
            echo "SKIPPED the TLS driver scenarios: openssl is not installed"
            exit 0
        fi
        # A throwaway CA and a certificate for localhost (X.509 v3: rustls
        # refuses v1 certificates).
        t="$data_dir/tls"
        mkdir -p "$t"
        openssl req -x509 -newkey rsa:2048 -nodes -keyout "$t/ca.key" -out "$t/ca.crt" -days 2 \
            -subj "/CN=snapscale drivers CA" 2>/dev/null
        openssl req -newkey rsa:2048 -nodes -keyout "$t/server.key" -out "$t/server.csr" -subj "/CN=localhost" 2>/dev/null
        printf 'subjectAltName=DNS:localhost,IP:127.0.0.1\n' >"$t/ext"
        openssl x509 -req -in "$t/server.csr" -CA "$t/ca.crt" -CAkey "$t/ca.key" -CAcreateserial \
            -out "$t/server.crt" -days 2 -extfile "$t/ext" 2>/dev/null
        chmod 600 "$t/server.key"
        tls_flags=(--set ssl=on --set "ssl_cert_file=$t/server.crt" --set "ssl_key_file=$t/server.key")
        # libpq (psycopg, SQLAlchemy), asyncpg and node-postgres read these;
        # each refuses a server that does not answer with TLS and the CA's
        # certificate for the host it dialled.
        export PGSSLMODE=verify-full PGSSLROOTCERT="$t/ca.crt" NODE_EXTRA_CA_CERTS="$t/ca.crt"
    fi
    "$bin" serve --port "$port" --data-dir "$data_dir/data" "${tls_flags[@]}" >"$data_dir/server.log" 2>&1 &
    server_pid=$!
    up=0
    for _ in $(seq 1 100); do
        if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then up=1; break; fi
        kill -0 "$server_pid" 2>/dev/null || break
        sleep 0.1
    done
    if [ "$up" != 1 ]; then
        echo "drivers.sh: snapscale did not start on port $port:" >&2
        cat "$data_dir/server.log" >&2
        exit 1
    fi
    export PGHOST=127.0.0.1 PGPORT="$port"
    target="snapscale ($bin) on port $port"
    if [ "$tls" = 1 ]; then
        # verify-full checks the host name against the certificate.
        export PGHOST=localhost
        target="$target over TLS (sslmode=verify-full)"
    fi
    strict=0
fi

echo "driver scenarios against $target"

# name | runner | working directory | file | what it needs (a command that must succeed)
scenarios=(
    "psycopg3|python3|$DRV|scenario_psycopg3.py|python3 -c 'import psycopg'"
    "sqlalchemy-core|python3|$DRV|scenario_sqlalchemy_core.py|python3 -c 'import sqlalchemy, psycopg'"
    "sqlalchemy-orm|python3|$DRV|scenario_sqlalchemy_orm.py|python3 -c 'import sqlalchemy, psycopg'"
    "asyncpg|python3|$DRV|scenario_asyncpg.py|python3 -c 'import asyncpg'"
    "node-pg|node|$DRV|scenario_pg.js|node -e \"require('pg'); require('pg-copy-streams')\""
)
if [ "$extra" = 1 ]; then
    jar=${PGJDBC_JAR:-/usr/share/java/postgresql.jar}
    scenarios+=(
        "psycopg2|python3|$DRV|extra/scenario_psycopg2.py|python3 -c 'import psycopg2'"
        "postgres.js|node|$DRV|extra/scenario_postgresjs.js|node -e \"require('postgres')\""
        "pgjdbc|java -cp $jar|$DRV/extra/pgjdbc|Scenario.java|test -f $jar && java -version"
        "pgx|env GO111MODULE=off GOPATH=${PGX_GOPATH:-/usr/share/gocode} GOCACHE=${GOCACHE:-/tmp/drivers-gocache} go run|$DRV/extra/pgx|main.go|test -d ${PGX_GOPATH:-/usr/share/gocode}/src/github.com/jackc/pgx/v4 && go version"
    )
fi

# expected failures: "scenario: step title" lines
expected_failures() {
    local name=$1
    [ -f "$DRV/expected-failures.txt" ] || return 0
    grep -v '^#' "$DRV/expected-failures.txt" | sed -n "s/^$name: //p"
}

logs=$(mktemp -d /tmp/drivers-logs.XXXXXX)
n_pass=0 n_fail=0 n_skip=0 n_xfail=0
summary=()
for entry in "${scenarios[@]}"; do
    IFS='|' read -r name runner dir file needs <<<"$entry"
    if [ -n "$only" ] && [[ "$only" != *",$name,"* ]]; then continue; fi
    echo
    if ! (cd "$dir" && eval "$needs") >/dev/null 2>&1; then
        reason="its client is not installed (needs: $needs; .ci/run installs it: pip install -r tests/drivers/requirements.txt, npm ci in tests/drivers)"
        echo "SKIPPED $name: $reason"
        summary+=("SKIPPED  $name: client not installed")
        n_skip=$((n_skip + 1))
        continue
    fi
    log="$logs/$name.log"
    start=$(date +%s)
    set +e
    (cd "$dir" && timeout 120 $runner "$file") 2>&1 | tee "$log"
    status=${PIPESTATUS[0]}
    set -e
    secs=$(( $(date +%s) - start ))
    if [ "$status" = 124 ]; then echo "FAIL $name: no result within 120 s (killed)" | tee -a "$log"; fi
    failed_steps=$(awk -F': ' '/^FAIL /{ sub(/^FAIL /, "", $1); print $1 }' "$log")
    unexpected=""
    xfail=0
    while IFS= read -r step; do
        [ -n "$step" ] || continue
        if [ "$strict" = 0 ] && expected_failures "$name" | grep -qxF -- "$step"; then
            xfail=$((xfail + 1))
        else
            unexpected+="$step | "
        fi
    done <<<"$failed_steps"
    if [ "$status" = 0 ]; then
        summary+=("PASS     $name (${secs}s)")
        n_pass=$((n_pass + 1))
    elif [ -z "$unexpected" ] && [ "$xfail" -gt 0 ] && [ "$status" = 1 ]; then
        summary+=("XFAIL    $name (${secs}s): $xfail step(s) listed in tests/drivers/expected-failures.txt")
        n_xfail=$((n_xfail + 1))
    else
        shown=${unexpected% | }
        summary+=("FAIL     $name (${secs}s, exit $status): ${shown:-no step result}")
        n_fail=$((n_fail + 1))
    fi
    if [ "$strict" = 0 ]; then
        while IFS= read -r step; do
            [ -n "$step" ] || continue
            if ! grep -qxF -- "$step" <<<"$failed_steps"; then
                summary+=("note     $name: '$step' passes now; remove it from tests/drivers/expected-failures.txt")
            fi
        done < <(expected_failures "$name")
    fi
done

echo
echo "driver scenarios against $target:"
for line in "${summary[@]}"; do echo "  $line"; done
if [ "$n_fail" -gt 0 ] && [ -n "$data_dir" ]; then
    echo "server log (last 40 lines):"
    tail -n 40 "$data_dir/server.log" | sed 's/^/  /'
fi
if [ "$n_xfail" -gt 0 ]; then
    echo "drivers: $n_xfail scenario(s) failed only in steps expected to fail today (XFAIL)"
fi
echo "drivers: $n_pass passed, $n_fail failed, $n_skip skipped"
[ "$n_fail" = 0 ]
