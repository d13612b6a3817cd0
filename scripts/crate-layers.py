#!/usr/bin/env python3
"""Checks that each crate depends only on its own layer and the one below.

The layers, top to bottom (the architecture in README.md):

    server                                   the protocol
    sql                                      parse, bind, plan, execute
    engine, replication, values              the database under SQL
    storage, txn, lock, sinval               MVCC tables, the WAL device,
                                             the transaction core, locks,
                                             invalidations
    sync                                     std or loom primitives

A crate may depend on crates of its own layer and of the layer directly
below, never past it. `snapscale-sqlstate` sits below every layer, and any
crate may use it; the lab and the root binary may use any crate. Dev-
dependencies follow the same rule. Exits 1 on a violation.

    python3 scripts/crate-layers.py
"""
import os
import re
import sys

LAYERS = [["server"], ["sql"], ["engine", "replication", "values"], ["storage", "txn", "lock", "sinval"], ["sync"]]
EXEMPT_USERS = {"lab"}
ANYONE_MAY_USE = {"sqlstate"}

root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
layer_of = {c: i for i, layer in enumerate(LAYERS) for c in layer}
crates = sorted(d for d in os.listdir(os.path.join(root, "crates")) if os.path.isfile(os.path.join(root, "crates", d, "Cargo.toml")))
bad = 0
for crate in crates:
    if crate not in layer_of and crate not in EXEMPT_USERS and crate not in ANYONE_MAY_USE:
        print(f"crates/{crate}: not in any layer of scripts/crate-layers.py: place it")
        bad += 1
        continue
    text = open(os.path.join(root, "crates", crate, "Cargo.toml")).read()
    deps = set(re.findall(r"^snapscale-([a-z]+)(?:\.workspace| *=)", text, re.M))
    if crate in EXEMPT_USERS:
        continue
    for dep in sorted(deps):
        if dep in ANYONE_MAY_USE:
            continue
        if crate in ANYONE_MAY_USE:
            print(f"crates/{crate}: depends on snapscale-{dep}, but it must sit below every crate")
            bad += 1
            continue
        mine, theirs = layer_of[crate], layer_of.get(dep)
        if theirs is None:
            print(f"crates/{crate}: depends on snapscale-{dep}, which is in no layer")
            bad += 1
        elif theirs < mine:
            print(f"crates/{crate}: depends on snapscale-{dep}, a layer above it")
            bad += 1
        elif theirs > mine + 1:
            print(f"crates/{crate}: depends on snapscale-{dep}, past the layer below it")
            bad += 1
sys.exit(1 if bad else 0)
