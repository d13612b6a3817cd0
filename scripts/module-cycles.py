#!/usr/bin/env python3
"""Reports import cycles between the top-level modules of a crate.

A module depends on another if its code (tests excluded) names
`crate::other`. A directory module counts as one module, its files together
(a parent and its children may refer to each other). Exits 1 on a cycle.

    python3 scripts/module-cycles.py crates/sql/src [crates/server/src ...]
"""
import os
import re
import sys


def top_modules(src):
    mods = {}
    for name in os.listdir(src):
        path = os.path.join(src, name)
        if name.endswith(".rs") and name not in ("lib.rs", "main.rs"):
            mods[name[:-3]] = [path]
        elif os.path.isdir(path):
            files = []
            for root, _, fs in os.walk(path):
                files += [os.path.join(root, f) for f in fs if f.endswith(".rs")]
            mods[name] = files
    return mods


def code_without_tests(text):
    cut = re.search(r"#\[cfg\(test\)\]\s*(pub(\([a-z]+\))?\s+)?mod tests", text)
    return text[: cut.start()] if cut else text


def graph(src):
    mods = top_modules(src)
    deps = {m: set() for m in mods}
    for m, files in mods.items():
        for f in files:
            text = code_without_tests(open(f).read())
            for other in re.findall(r"crate::([a-z_][a-z0-9_]*)", text):
                if other in mods and other != m:
                    deps[m].add(other)
            # `use crate::{a, b::c}` groups
            for group in re.findall(r"use crate::\{([^}]*)\}", text, re.S):
                for other in re.findall(r"(?:^|[,\s{])([a-z_][a-z0-9_]*)(?=::|\s*[,}]|$)", group):
                    if other in mods and other != m:
                        deps[m].add(other)
    return deps


def cycles(deps):
    found, state, stack = [], {}, []

    def visit(m):
        state[m] = 1
        stack.append(m)
        for d in sorted(deps[m]):
            if state.get(d) == 1:
                found.append(stack[stack.index(d):] + [d])
            elif d not in state:
                visit(d)
        stack.pop()
        state[m] = 2

    for m in sorted(deps):
        if m not in state:
            visit(m)
    return found


status = 0
for src in sys.argv[1:] or ["crates/sql/src"]:
    for c in cycles(graph(src)):
        print(f"{src}: import cycle: {' -> '.join(c)}")
        status = 1
sys.exit(status)
