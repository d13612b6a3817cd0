#!/usr/bin/env python3
"""Reports SQLSTATE codes spelled as string literals in non-test Rust source.

Every error names a `SqlState` variant; the one place codes are spelled is
the generated table (crates/sqlstate/src/codes.rs). A literal such as
"23505" anywhere else is a code that bypasses the type. Test code may
spell codes: files named tests.rs or *_tests.rs, `tests/` directories,
and what follows `#[cfg(test)] mod tests` in a file are skipped. Exits 1
on a finding.

    python3 scripts/sqlstate-literals.py crates src
"""
import os
import re
import sys

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
TABLE = os.path.join(ROOT, "crates", "sqlstate", "src", "codes.rs")
codes = set(re.findall(r'SqlState::[A-Z0-9_]+, "([0-9A-Z]{5})"', open(TABLE).read()))


def code_without_tests(text):
    cut = re.search(r"#\[cfg\(test\)\]\s*(pub(\([a-z]+\))?\s+)?mod tests", text)
    return text[: cut.start()] if cut else text


def is_test_file(path):
    name = os.path.basename(path)
    parts = path.split(os.sep)
    skipped = ("tests", "target")
    return name == "tests.rs" or name.endswith("_tests.rs") or any(p in parts for p in skipped)


found = 0
for top in sys.argv[1:] or ["crates", "src"]:
    for root, _, files in os.walk(top):
        for f in files:
            path = os.path.join(root, f)
            if not f.endswith(".rs") or is_test_file(path) or os.path.samefile(path, TABLE):
                continue
            text = code_without_tests(open(path).read())
            # Comments may name codes; blank whole-line comments, keeping
            # the line count.
            text = re.sub(r"(?m)^\s*//.*$", "", text)
            for m in re.finditer(r'"([0-9A-Z]{5})"', text):
                if m.group(1) in codes:
                    line = text.count("\n", 0, m.start()) + 1
                    print(f"{path}:{line}: SQLSTATE {m.group(1)} as a string: name its SqlState variant")
                    found += 1
sys.exit(1 if found else 0)
