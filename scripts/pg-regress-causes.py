#!/usr/bin/env python3
"""Why the statements of PostgreSQL 15's regression files still differ:
for each file named, its statements whose output is not PostgreSQL's,
grouped by a cause read from the two outputs, most frequent first.

    python3 scripts/pg-regress-causes.py [--results target/pg-regress/results] FILE...

Reads the outputs the last `scripts/pg-regress.sh` run left (its
`results` folder) and PostgreSQL's expected files, cut into statements as
the ratchet cuts them (`scripts/pg-regress.py`). The cause of a statement
is, in this order: the first error snapscale printed where PostgreSQL
printed none or another (quoted names folded to "X", so one refusal
groups); an error PostgreSQL printed that snapscale did not ("PostgreSQL
fails: …"); else the statement's first words and "output differs". A
closing note names the feature behind each group.
"""

import argparse
import collections
import importlib.util
import pathlib
import re

ROOT = pathlib.Path(__file__).resolve().parent.parent
spec = importlib.util.spec_from_file_location("pg_regress", ROOT / "scripts" / "pg-regress.py")
pg_regress = importlib.util.module_from_spec(spec)
spec.loader.exec_module(pg_regress)


def first_error(block):
    for line in block.split("\n"):
        if line.startswith("ERROR:"):
            return re.sub(r'"[^"]*"', '"X"', line[len("ERROR:"):].strip())
    return None


CREATES = re.compile(
    r"create\s+(?:or\s+replace\s+)?(?:(?:temp|temporary|unlogged|global|local)\s+)*"
    r"(?:table|view|materialized\s+view|sequence|type|domain)\s+(?:if\s+not\s+exists\s+)?"
    r"([\w.]+)",
    re.IGNORECASE,
)
MISSING = re.compile(r'^(?:relation|table|type|view) "([^"]+)" does not exist')


def cause(statement, expected, got, failed):
    """The statement's cause; `failed` maps the names of relations whose
    creation failed here to that failure's cause, so that what follows
    from it is grouped under it."""
    if got is None:
        return "its echo is missing from the output"
    ours_raw = next((l[len("ERROR:"):].strip() for l in got.split("\n") if l.startswith("ERROR:")), None)
    ours = first_error(got)
    theirs = first_error(expected)
    if ours and ours != theirs:
        m = MISSING.match(ours_raw or "")
        name = m.group(1).split(".")[-1].lower() if m else None
        if name in failed:
            return "follows from: " + failed[name]
        text = " ".join(t for _, t in statement.lines)
        created = CREATES.search(text)
        if created:
            failed[created.group(1).split(".")[-1].lower()] = ours
        return ours
    if theirs and theirs != ours:
        return "PostgreSQL fails: " + theirs
    words = " ".join(statement.first_line()[1].split()[:2]).upper()
    return f"{words} … output differs"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--results", default=str(ROOT / "target" / "pg-regress" / "results"))
    ap.add_argument("--regress", default=None, help="a PostgreSQL 15 tree's src/test/regress")
    ap.add_argument("--top", type=int, default=12, help="causes listed per file")
    ap.add_argument("files", nargs="+")
    a = ap.parse_args()
    regress = pathlib.Path(a.regress) if a.regress else next(
        (ROOT / "target" / "pg-regress").glob("postgresql-15*/src/test/regress")
    )
    for name in a.files:
        compared = pg_regress.Compared(regress, name)
        output = pg_regress.read_text(pathlib.Path(a.results) / f"{name}.out")
        matched, got = compared.matches(output)
        causes = collections.Counter()
        failed = {}
        for number, i in enumerate(compared.counted, 1):
            if number in matched:
                continue
            exp = next((e[i][0] for e in compared.expected if e[i] is not None), "")
            act = got[i][0] if got[i] is not None else None
            causes[cause(compared.statements[i], exp, act, failed)] += 1
        total = len(compared.counted)
        print(f"{name}: {len(matched)}/{total} match; {total - len(matched)} differ")
        for c, n in causes.most_common(a.top):
            print(f"  {n:5}  {c[:110]}")
        rest = sum(n for _, n in causes.most_common()[a.top:])
        if rest:
            print(f"  {rest:5}  (other causes)")


if __name__ == "__main__":
    main()
