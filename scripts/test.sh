#!/usr/bin/env bash
# The whole test suite: the house rules (format, lints, docs, module
# layering), then unit, model (proptest), script, stress and integration
# tests of every crate, then the real-driver scenarios, then the loom models
# of the lock-free protocols.
set -euo pipefail
cd "$(dirname "$0")/.."

# House rules: formatting, lints as errors (with each concurrency crate's
# clippy.toml ban on direct std::sync primitives), warning-free docs, no
# import cycle between a crate's modules, the crate layers, and no SQLSTATE
# spelled as a string.
cargo fmt --all -- --check
cargo clippy --workspace --all-targets --locked -- -D warnings
RUSTDOCFLAGS="-D warnings" cargo doc --no-deps --workspace --locked --quiet
python3 scripts/module-cycles.py crates/*/src
# The crate graph is the architecture: each crate depends on its own layer
# and the one below only; every error names a SqlState variant, never a
# code spelled as a string.
python3 scripts/crate-layers.py
python3 scripts/sqlstate-literals.py crates src

cargo test --workspace --locked

# Real-driver scenarios (tests/drivers: psycopg 3, SQLAlchemy Core and ORM,
# asyncpg, node-postgres) against the server binary the tests just built, on
# a fresh data directory; a scenario whose client is not installed skips.
bash scripts/drivers.sh --bin target/debug/snapscale
# The same clients over TLS with sslmode=verify-full (a throwaway CA).
bash scripts/drivers.sh --bin target/debug/snapscale --tls

# PostgreSQL's own regression suite, statement by statement against its
# expected output: fails when a file's count of matching statements drops
# below tests/pg-regress/baseline.tsv (the ratchet), or on a crash, an
# internal error or a stall (skips, with a message, where psql or the
# PostgreSQL 15 sources cannot be had).
bash scripts/pg-regress.sh --bin target/debug/snapscale

# PostgreSQL's own isolation specs through its isolationtester: those in
# tests/pg-isolation/passing.txt must give PostgreSQL's transcripts (skips
# where isolationtester or the sources cannot be had).
bash scripts/pg-isolation.sh --bin target/debug/snapscale

# Loom needs the whole crate built with `--cfg loom`; a separate target
# directory keeps that build from invalidating the normal one.
# Preemption bound 2, as tokio and crossbeam run theirs. The release
# profile's whole-program optimisation (Cargo.toml) is for the server; the
# models only need optimised code, so they build without it.
RUSTFLAGS="--cfg loom" CARGO_TARGET_DIR=target/loom LOOM_MAX_PREEMPTIONS=2 \
    CARGO_PROFILE_RELEASE_LTO=false CARGO_PROFILE_RELEASE_CODEGEN_UNITS=16 \
    cargo test -p snapscale-txn -p snapscale-sinval -p snapscale-lock -p snapscale-storage --release --lib --locked loom_

# Miri checks the unsafe code (paged xid maps, the memo, row headers, the
# queue) for undefined behaviour through the crates' unit tests. It needs the
# nightly toolchain's miri component, which .ci/run installs when it can.
# The storage crate's table slots use crossbeam-epoch, whose internal list
# retags pointers in a way Stacked Borrows rejects (inside crossbeam-epoch,
# `Local::element_of`, not in our code); it is checked under Tree Borrows,
# the other crates under Stacked Borrows. Its leak check is off: the global
# epoch collector is a static that keeps each thread's registration and the
# garbage not yet collected when the test process exits (crossbeam's own
# Miri runs ignore leaks for the same reason).
if cargo +nightly miri --version >/dev/null 2>&1; then
    cargo +nightly miri test -p snapscale-txn -p snapscale-sinval --lib
    MIRIFLAGS="${MIRIFLAGS:-} -Zmiri-tree-borrows -Zmiri-ignore-leaks" cargo +nightly miri test -p snapscale-storage --lib
else
    echo "skipping Miri: the nightly toolchain's miri component is not installed"
fi
