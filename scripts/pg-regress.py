#!/usr/bin/env python3
"""PostgreSQL 15's regression suite against snapscale, statement by statement.

Runs every file of src/test/regress/sql (parallel_schedule order, one after
another, in one database) through psql the way pg_regress does, splits the
output and PostgreSQL's expected/ output into one block per statement, and
counts per file the statements whose block is byte-identical to PostgreSQL's.
tests/pg-regress/baseline.tsv holds those counts: a file whose count drops
below it fails the run; a count above it asks for the baseline to be raised
(--update-baseline) in the same commit. tests/pg-regress/README.md says what
a statement is, what is compared, and what is rewritten.

The older smoke checks stay: the server must answer `SELECT 1` after every
file, no file may run longer than two minutes, no result may carry an
internal error (XX000) and the server log no panic.

    python3 scripts/pg-regress.py --bin target/debug/snapscale --regress DIR
    python3 scripts/pg-regress.py ... --update-baseline [--runs 3]

Called by scripts/pg-regress.sh, which finds (or fetches) the sources.
Standard library only.
"""

import argparse
import bisect
import difflib
import os
import re
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from netutil import free_port

ROOT = Path(__file__).resolve().parent.parent
BASELINE = ROOT / "tests" / "pg-regress" / "baseline.tsv"
RESULTS = ROOT / "target" / "pg-regress" / "results"
FILE_TIMEOUT = 120
HEADER = ["file", "statements", "matching", "unstable", "matched"]

STATEMENT_TIMEOUT = 5
# A statement that matches but takes a quarter of the statement timeout or
# more is timing-dependent: --update-baseline leaves it out of the counts.
SLOW = STATEMENT_TIMEOUT / 4
# pg_regress's session settings (pg_regress.c, initialize_environment), which
# a server may refuse at startup and are probed one by one: environment
# variables, and options that go into PGOPTIONS. The statement timeout is
# ours: it keeps statements that run away on the regression tables (nested
# loops over tenk1) from taking the file's two minutes.
SESSION_SETTINGS = [
    ("PGDATESTYLE", "Postgres, MDY"),
    ("PGTZ", "America/Los_Angeles"),
    ("PGOPTIONS", "-c intervalstyle=postgres_verbose"),
    ("PGOPTIONS", f"-c statement_timeout={STATEMENT_TIMEOUT}s"),
]

# ---------------------------------------------------------------------------
# Splitting a .sql file into statements, as psql reads it.
# ---------------------------------------------------------------------------

IDENT = re.compile(r"[A-Za-z_\x80-\U0010ffff][A-Za-z_0-9$\x80-\U0010ffff]*")
NUMBER = re.compile(r"[0-9][0-9A-Za-z_.]*")
DOLLAR = re.compile(r"\$([A-Za-z_\x80-\U0010ffff][A-Za-z_0-9\x80-\U0010ffff]*)?\$")
PARAM = re.compile(r"\$[0-9]+")
PSQL_VAR = re.compile(r""":(['"])[A-Za-z0-9_]+\1""")
META = re.compile(r"\\([A-Za-z]*|.)")
COPY_IN = re.compile(r"^\s*copy\b.*\bfrom\s+std(in|out)\b", re.I | re.S)
META_COPY_IN = re.compile(r"\bfrom\s+(p?stdin|stdout)\b", re.I)
SET_STD = re.compile(
    r"^\s*set\s+(?:session\s+|local\s+)?standard_conforming_strings\s*(?:=|to)\s*'?(\w+)'?",
    re.I,
)
RESET_STD = re.compile(r"^\s*reset\s+(?:standard_conforming_strings|all)\b", re.I)
# Meta-commands that send (or discard) the query buffer.
SENDS_BUFFER = {"g", "gx", "gset", "gexec", "gdesc", "crosstabview", "watch", "r", "reset"}
# Identifiers whose initials mark CREATE [OR REPLACE] FUNCTION|PROCEDURE, whose
# BEGIN ... END body keeps semicolons inside the statement.
ROUTINE_WORDS = {"create", "function", "procedure", "or", "replace"}


class Lexer:
    """Tracks where psql's input lexer is, line by line: inside a string, a
    quoted identifier, a dollar quote or a block comment; parenthesis depth;
    BEGIN ... END depth of a routine body; and whether the query buffer holds
    anything. A line "ends" a statement when a semicolon outside all of those
    completes one, or when it holds a backslash meta-command."""

    def __init__(self):
        self.state = None  # None, "q" (plain string), "e" (E'' string), "d" ("ident"), "$", "c"
        self.tag = ""
        self.depth = 0  # comment nesting
        self.paren = 0
        self.begin = 0
        self.initials = []
        self.idents = 0
        self.std_strings = True
        self.code = []  # the statement's text, comments left out
        self.copies = 0  # COPY ... FROM STDIN among its parts joined by \;
        self.pending = False  # the query buffer holds something

    def in_quote(self):
        return self.state is not None

    def _reset_statement(self):
        self.paren = 0
        self.begin = 0
        self.initials = []
        self.idents = 0
        self.code = []
        self.copies = 0
        self.pending = False

    def _identifier(self, word):
        if self.idents == 0:
            self.initials = []
        if len(self.initials) == self.idents and self.idents < 4:
            low = word.lower()
            self.initials.append(low[0] if low in ROUTINE_WORDS else "")
        self.idents += 1
        w = (self.initials + ["", "", "", ""])[:4]
        routine = w[0] == "c" and (
            w[1] in ("f", "p") or (w[1] == "o" and w[2] == "r" and w[3] in ("f", "p"))
        )
        if routine and self.paren == 0:
            low = word.lower()
            if low == "begin":
                self.begin += 1
            elif low == "case" and self.begin >= 1:
                self.begin += 1
            elif low == "end" and self.begin > 0:
                self.begin -= 1

    def _part_done(self):
        """One statement of those a line joins with \; (or the last)."""
        text = "".join(self.code)
        self.code = []
        if COPY_IN.match(text):
            self.copies += 1
        m = SET_STD.match(text)
        if m:
            self.std_strings = m.group(1).lower() not in ("off", "false", "0", "no")
        elif RESET_STD.match(text):
            self.std_strings = True

    def _statement_done(self):
        self._part_done()
        copies = self.copies
        self._reset_statement()
        return copies

    def feed(self, line):
        """Returns (ended, copies): whether the line ends a statement (or is
        a meta-command), and how many blocks of COPY data follow it."""
        i, n = 0, len(line)
        ended, copies = False, 0
        while i < n:
            st = self.state
            c = line[i]
            if st == "c":
                if line.startswith("*/", i):
                    self.depth -= 1
                    i += 2
                    if self.depth == 0:
                        self.state = None
                elif line.startswith("/*", i):
                    self.depth += 1
                    i += 2
                else:
                    i += 1
                continue
            if st in ("q", "e"):
                if st == "e" and c == "\\":
                    self.code.append(line[i : i + 2])
                    i += 2
                elif c == "'":
                    if line.startswith("''", i):
                        self.code.append("''")
                        i += 2
                    else:
                        self.code.append(c)
                        self.state = None
                        i += 1
                else:
                    self.code.append(c)
                    i += 1
                continue
            if st == "d":
                if c == '"':
                    if line.startswith('""', i):
                        self.code.append('""')
                        i += 2
                        continue
                    self.state = None
                self.code.append(c)
                i += 1
                continue
            if st == "$":
                j = line.find(self.tag, i)
                if j < 0:
                    self.code.append(line[i:])
                    i = n
                else:
                    self.code.append(line[i : j + len(self.tag)])
                    i = j + len(self.tag)
                    self.state = None
                continue
            # Outside all quotes.
            if c in " \t\r\f\v":
                self.code.append(c)
                i += 1
                continue
            if line.startswith("--", i):
                break
            if line.startswith("/*", i):
                self.state, self.depth = "c", 1
                i += 2
                continue
            if c == "\\":
                if line.startswith("\\;", i) or line.startswith("\\:", i):
                    self.pending = True
                    if line[i + 1] == ";":
                        self.idents = 0
                        self._part_done()
                    else:
                        self.code.append(":")
                    i += 2
                    continue
                # A meta-command: it and its arguments take the rest of the line.
                name = META.match(line, i).group(1)
                if name in SENDS_BUFFER:
                    self._reset_statement()
                elif name == "copy" and META_COPY_IN.search(line, i):
                    copies += 1
                ended = True
                break
            self.pending = True
            m = IDENT.match(line, i)
            if m:
                word = m.group(0)
                low = word.lower()
                after = line[m.end() : m.end() + 2]
                if after[:1] == "'" and low in ("e", "b", "x", "n"):
                    self.state = "e" if low == "e" or (low == "n" and not self.std_strings) else "q"
                    self.code.append(line[i : m.end() + 1])
                    i = m.end() + 1
                    continue
                if low == "u" and after in ("&'", '&"'):
                    self.state = "q" if after == "&'" else "d"
                    self.code.append(line[i : m.end() + 2])
                    i = m.end() + 2
                    continue
                self._identifier(word)
                self.code.append(word)
                i = m.end()
                continue
            m = NUMBER.match(line, i) or PSQL_VAR.match(line, i) or PARAM.match(line, i)
            if m:
                self.code.append(m.group(0))
                i = m.end()
                continue
            if c == "$":
                m = DOLLAR.match(line, i)
                if m:
                    self.state, self.tag = "$", m.group(0)
                    self.code.append(m.group(0))
                    i = m.end()
                    continue
            if c == "'":
                self.state = "q" if self.std_strings else "e"
            elif c == '"':
                self.state = "d"
            elif c == "(":
                self.paren += 1
            elif c == ")":
                self.paren = max(0, self.paren - 1)
            elif c == ";" and self.paren == 0 and self.begin == 0:
                copies += self._statement_done()
                ended = True
                i += 1
                continue
            self.code.append(c)
            i += 1
        self.code.append("\n")
        return ended, copies


class Statement:
    """Input lines that psql echoes up to and including the line that
    completes one statement (or holds a meta-command); comment lines before
    it belong to it. `counted` is false only for trailing comments."""

    def __init__(self, lines, echo, counted):
        self.lines = lines  # [(line number, text)]
        self.echo = echo  # echoed lines that are not empty
        self.counted = counted

    def first_line(self):
        for num, text in self.lines:
            stripped = text.strip()
            if stripped and not stripped.startswith("--"):
                return num, text
        return self.lines[0] if self.lines else (0, "")


SQL_LINE = re.compile(r"^[A-Za-z]+\b.*;\s*(--.*)?$")


def copy_data_at(source, k):
    """Whether COPY data (lines up to a `\\.` line) starts at line k. A COPY
    the server refuses reads none, and PostgreSQL's files give it none: the
    next line is then empty, a comment or another statement."""
    if k >= len(source) or "\\." not in source[k:]:
        return False
    line = source[k]
    if line == "":
        return source[k + 1 : k + 2] == ["\\."]
    return not (line.startswith("--") or SQL_LINE.match(line))


def split_statements(sql):
    lex = Lexer()
    statements = []
    lines, echo = [], []
    source = sql.split("\n")
    k = 0
    while k < len(source):
        num, line = k + 1, source[k]
        k += 1
        if line == "" and not lex.in_quote():
            continue  # psql neither echoes nor reads empty lines outside quotes
        lines.append((num, line))
        if line != "":
            echo.append(line)
        ended, copies = lex.feed(line)
        if ended:
            statements.append(Statement(lines, echo, True))
            lines, echo = [], []
            # COPY ... FROM STDIN data: read by the copy, not echoed.
            for _ in range(copies):
                if not copy_data_at(source, k):
                    break
                k = source.index("\\.", k) + 1
    if echo:
        statements.append(Statement(lines, echo, lex.pending))
    return statements


# ---------------------------------------------------------------------------
# Cutting an output into the statements' blocks.
# ---------------------------------------------------------------------------


def align(out, statements):
    """Where each statement's echo is in the output lines: (first line, line
    after the last) or None. Every input line is echoed once and in order,
    but some may be missing (under `\\set ECHO none`, or read as COPY data
    after a COPY the server accepted and PostgreSQL refused): the echoes are
    placed in order so that as many as possible are found, which keeps a
    missing one from pulling the rest onto a later copy of the same text."""
    nonempty = [i for i, line in enumerate(out) if line != ""]
    where = {}
    for k, i in enumerate(nonempty):
        where.setdefault(out[i], []).append(k)
    # A longest chain of non-overlapping echoes, one per statement, in
    # statement order: ends[n] is the smallest end of a chain of n + 1.
    ends, tails = [], []
    for g, st in enumerate(statements):
        size = len(st.echo)
        updates = []
        for k in where.get(st.echo[0], ()):
            if k + size > len(nonempty):
                break
            if all(out[nonempty[k + t]] == st.echo[t] for t in range(1, size)):
                n = bisect.bisect_right(ends, k)
                updates.append((n, k + size, (g, k, k + size, tails[n - 1] if n else None)))
        for n, end, node in updates:
            if n == len(ends):
                ends.append(end)
                tails.append(node)
            elif end < ends[n]:
                ends[n] = end
                tails[n] = node
    spans = [None] * len(statements)
    node = tails[-1] if tails else None
    while node is not None:
        g, k, end, node = node
        spans[g] = [nonempty[k], nonempty[end - 1] + 1]
    return spans


def blocks(output, statements):
    """For each statement, its block of output (echo and result, up to the
    next statement's echo) and its result alone, or None where its echo is
    not in the output."""
    out = output.split("\n")
    if out and out[-1] == "":
        out.pop()
    spans = align(out, statements)
    found = [s for s in spans if s is not None]
    for a, b in zip(found, found[1:]):
        a.append(b[0])
    if found:
        found[-1].append(len(out))
    result = []
    for s in spans:
        if s is None:
            result.append(None)
        else:
            result.append(("\n".join(out[s[0] : s[2]]), "\n".join(out[s[1] : s[2]]), tuple(s)))
    return result


# ---------------------------------------------------------------------------
# Baseline.
# ---------------------------------------------------------------------------


def ranges(numbers):
    numbers = sorted(numbers)
    parts = []
    i = 0
    while i < len(numbers):
        j = i
        while j + 1 < len(numbers) and numbers[j + 1] == numbers[j] + 1:
            j += 1
        parts.append(str(numbers[i]) if i == j else f"{numbers[i]}-{numbers[j]}")
        i = j + 1
    return ",".join(parts) if parts else "-"


def parse_ranges(text):
    out = set()
    if text in ("", "-"):
        return out
    for part in text.split(","):
        a, _, b = part.partition("-")
        out.update(range(int(a), int(b or a) + 1))
    return out


def read_baseline(path):
    rows = {}
    if not path.exists():
        return rows
    for line in path.read_text().splitlines():
        if not line or line.startswith("#") or line.split("\t")[0] == HEADER[0]:
            continue
        f = line.split("\t")
        rows[f[0]] = {
            "statements": int(f[1]),
            "matching": int(f[2]),
            "unstable": parse_ranges(f[3] if len(f) > 3 else "-"),
            "matched": parse_ranges(f[4] if len(f) > 4 else "-"),
        }
    return rows


def write_baseline(path, names, results):
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = ["\t".join(HEADER)]
    for name in names:
        r = results[name]
        lines.append(
            "\t".join(
                [name, str(r["statements"]), str(len(r["matched"])), ranges(r["unstable"]), ranges(r["matched"])]
            )
        )
    path.write_text("\n".join(lines) + "\n")


# ---------------------------------------------------------------------------
# Running the suite.
# ---------------------------------------------------------------------------


def read_text(path):
    return path.read_bytes().decode("utf-8", "surrogateescape")


def schedule(regress):
    names = []
    for line in (regress / "parallel_schedule").read_text().splitlines():
        if line.startswith("test:"):
            names += [n for n in line[5:].split() if (regress / "sql" / f"{n}.sql").exists()]
    return names


def rewrite_copies(sql, regress):
    """COPY t FROM :'filename'; with filename set from abs_srcdir's data/
    becomes psql's \\copy of that file: snapscale refuses server-side files,
    and later files need the tables that test_setup and others load. Returns
    the rewritten text and {rewritten line: original line}, so that the echo
    can be put back."""
    filename = None
    back = {}
    out = []
    for line in sql.split("\n"):
        m = re.fullmatch(r"\\set filename :abs_srcdir '(/data/[^']+)'", line)
        if m:
            filename = str(regress) + m.group(1)
        m = re.fullmatch(r"COPY ([a-z_0-9]+) FROM :'filename';", line)
        if m and filename:
            new = f"\\copy {m.group(1)} from '{filename}'"
            back[new] = line
            line = new
        out.append(line)
    return "\n".join(out), back


class Server:
    def __init__(self, binary, work):
        self.port = free_port()
        self.log = work / "server.log"
        env = dict(os.environ, SNAPSCALE_LOG="warn")
        self.proc = subprocess.Popen(
            [binary, "serve", "--port", str(self.port), "--data-dir", str(work / "data")],
            stdout=open(self.log, "wb"),
            stderr=subprocess.STDOUT,
            env=env,
        )

    def stop(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


def psql_env(base, settings, app):
    """pg_regress's environment with the given settings ([(variable, value)];
    PGOPTIONS values join)."""
    env = dict(base)
    for key in ("PGDATABASE", "PGSERVICE", "PGSERVICEFILE", "PGPASSFILE", "PGPASSWORD",
                "PGCLIENTENCODING", "PGOPTIONS", "PGTZ", "PGDATESTYLE",
                "LANGUAGE", "LC_ALL", "LC_CTYPE", "LC_COLLATE", "LC_NUMERIC", "LC_TIME", "LC_MONETARY"):
        env.pop(key, None)
    for key, value in settings:
        env[key] = f"{env[key]} {value}" if key in env else value
    # Messages in English as pg_regress has them; and a UTF-8 locale on every
    # machine, so that psql's client encoding (from the locale) is UTF8.
    env["LC_MESSAGES"] = "C"
    env["LANG"] = "C.UTF-8"
    env["PGAPPNAME"] = app
    return env


def psql_ok(server, env, db, timeout=30):
    try:
        r = subprocess.run(
            ["psql", "-X", "-At", "-h", "127.0.0.1", "-p", str(server.port), "-U", "postgres",
             "-d", db, "-c", "SELECT 1"],
            env=env, capture_output=True, text=True, timeout=timeout,
        )
    except subprocess.TimeoutExpired:
        return False, "no answer within 30 s"
    return r.stdout.strip() == "1", (r.stderr or r.stdout).strip()


def probe(server, base, notes):
    """pg_regress's settings, less those the server refuses at startup."""
    settings = list(SESSION_SETTINGS)
    ok, _ = psql_ok(server, psql_env(base, settings, "pg_regress"), "postgres")
    if ok:
        return settings
    for setting in SESSION_SETTINGS:
        ok, err = psql_ok(server, psql_env(base, [setting], "pg_regress"), "postgres")
        if not ok:
            settings.remove(setting)
            why = err.splitlines()[-1] if err else "?"
            why = why.split("FATAL:", 1)[-1].strip()
            notes.append(f"note: the server refuses {setting[0]}={setting[1]!r} ({why}); running without it")
    ok, err = psql_ok(server, psql_env(base, settings, "pg_regress"), "postgres")
    if not ok:
        notes.append(f"note: the server refuses pg_regress's settings together ({err}); running without any")
        settings = []
    return settings


def run_psql(args, sql, env, timeout):
    """psql reading `sql` on its standard input, stdout and stderr in one
    stream as pg_regress has them. Returns (output bytes, arrival time of each
    line, timed out)."""
    with tempfile.TemporaryFile() as f:
        f.write(sql)
        f.seek(0)
        proc = subprocess.Popen(args, stdin=f, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env)
        timer = threading.Timer(timeout, proc.kill)
        timer.start()
        chunks, times = [], []
        start = time.monotonic()
        for line in proc.stdout:
            chunks.append(line)
            times.append(time.monotonic() - start)
        proc.wait()
        timer.cancel()
        timed_out = time.monotonic() - start >= timeout and proc.returncode < 0
    return b"".join(chunks), times, timed_out


def run_suite(binary, regress, names, notes, keep=None):
    """One run: a fresh server, every file in order. Returns
    ({name: output}, {name: seconds}, failures)."""
    failures = []
    outputs, seconds = {}, {}
    with tempfile.TemporaryDirectory(prefix="pg-regress-") as tmp:
        work = Path(tmp)
        (work / "results").mkdir()
        server = Server(binary, work)
        try:
            base = dict(os.environ)
            env0 = psql_env(base, [], "pg_regress")
            for _ in range(100):
                if psql_ok(server, env0, "postgres", 5)[0]:
                    break
                time.sleep(0.1)
            else:
                failures.append("the server did not start: " + read_text(server.log)[-2000:])
                return outputs, seconds, failures
            settings = probe(server, base, notes)
            db = "regression"
            subprocess.run(
                ["psql", "-X", "-q", "-h", "127.0.0.1", "-p", str(server.port), "-U", "postgres",
                 "-d", "postgres", "-c", 'CREATE DATABASE "regression" TEMPLATE=template0'],
                env=psql_env(base, settings, "pg_regress"), capture_output=True, timeout=60,
            )
            if not psql_ok(server, psql_env(base, settings, "pg_regress"), db)[0]:
                notes.append("note: no database regression; running in postgres")
                db = "postgres"
            base.update(
                PG_ABS_SRCDIR=str(regress),
                PG_ABS_BUILDDIR=str(work),
                PG_LIBDIR=str(work),
                PG_DLSUFFIX=".so",
            )
            for name in names:
                sql, back = rewrite_copies(read_text(regress / "sql" / f"{name}.sql"), regress)
                env = psql_env(base, settings, f"pg_regress/{name}")
                started = time.monotonic()
                out, times, timed_out = run_psql(
                    ["psql", "-X", "-a", "-q", "-h", "127.0.0.1", "-p", str(server.port),
                     "-U", "postgres", "-d", db,
                     "-v", "HIDE_TABLEAM=on", "-v", "HIDE_TOAST_COMPRESSION=on"],
                    sql.encode("utf-8", "surrogateescape"), env, FILE_TIMEOUT,
                )
                if timed_out:
                    failures.append(f"{name}: still running after {FILE_TIMEOUT} s")
                seconds[name] = time.monotonic() - started
                text = out.decode("utf-8", "surrogateescape")
                if back:
                    text = "\n".join(back.get(line, line) for line in text.split("\n"))
                outputs[name] = (text, times)
                if keep is not None:
                    (keep / f"{name}.out").write_bytes(text.encode("utf-8", "surrogateescape"))
                ok, err = psql_ok(server, psql_env(base, settings, "pg_regress"), db)
                if not ok:
                    failures.append(
                        f"{name}: the server did not answer SELECT 1 within 30 s afterwards ({err})\n"
                        + "\n".join(read_text(server.log).splitlines()[-20:])
                    )
                    break
        finally:
            server.stop()
        log = read_text(server.log)
        panics = [i for i, line in enumerate(log.splitlines()) if "panicked" in line]
        if panics:
            lines = log.splitlines()
            failures.append(
                "the server log has panics:\n"
                + "\n".join("\n".join(lines[i : i + 4]) for i in panics[:5])
            )
    return outputs, seconds, failures


# ---------------------------------------------------------------------------
# Comparing.
# ---------------------------------------------------------------------------


def expected_files(regress, name):
    files = [regress / "expected" / f"{name}.out"]
    k = 1
    while (regress / "expected" / f"{name}_{k}.out").exists():
        files.append(regress / "expected" / f"{name}_{k}.out")
        k += 1
    return [f for f in files if f.exists()]


class Compared:
    def __init__(self, regress, name):
        self.name = name
        self.statements = split_statements(read_text(regress / "sql" / f"{name}.sql"))
        self.expected = [blocks(read_text(f), self.statements) for f in expected_files(regress, name)]
        # Statements PostgreSQL does not echo (under \set ECHO none, say)
        # cannot be compared, and are not counted.
        self.counted = [
            i
            for i, st in enumerate(self.statements)
            if st.counted and any(exp[i] is not None for exp in self.expected)
        ]

    def matches(self, output):
        """The numbers (1-based, counted statements only) of the statements
        whose block equals PostgreSQL's in some expected file, and each
        statement's result text (for the internal-error check)."""
        got = blocks(output, self.statements)
        matched = set()
        for number, i in enumerate(self.counted, 1):
            if got[i] is not None and any(exp[i] is not None and exp[i][0] == got[i][0] for exp in self.expected):
                matched.add(number)
        return matched, got

    def statement(self, number):
        return self.statements[self.counted[number - 1]]

    def describe(self, number, got):
        i = self.counted[number - 1]
        line, text = self.statements[i].first_line()
        exp = next((e[i][0] for e in self.expected if e[i] is not None), "")
        act = got[i][0] if got[i] is not None else "(its echo is missing from the output)"
        diff = list(difflib.unified_diff(exp.split("\n"), act.split("\n"), "expected", "snapscale", n=1, lineterm=""))
        if len(diff) > 16:
            diff = diff[:16] + [f"... ({len(diff) - 16} more diff lines)"]
        return f"  {self.name} #{number} (line {line}): {text.strip()[:100]}\n" + "\n".join(
            "    " + d for d in diff
        )


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--bin", default=str(ROOT / "target" / "debug" / "snapscale"))
    ap.add_argument("--regress", required=True, help="a PostgreSQL 15 tree's src/test/regress")
    ap.add_argument("--baseline", default=str(BASELINE))
    ap.add_argument("--update-baseline", action="store_true",
                    default=os.environ.get("UPDATE_BASELINE") == "1",
                    help="rewrite the baseline from this run (also UPDATE_BASELINE=1)")
    ap.add_argument("--runs", type=int, default=None,
                    help="runs of the whole suite (default 1, or 2 with --update-baseline); "
                         "a statement whose match differs between runs is unstable and never counted")
    ap.add_argument("--forget-unstable", action="store_true",
                    help="with --update-baseline: drop the baseline's unstable statements and detect them afresh")
    ap.add_argument("--even-if-failing", action="store_true",
                    help="with --update-baseline: write the baseline even though the server checks failed "
                         "(a known bug, fixed elsewhere); the run still fails")
    ap.add_argument("--slow", type=int, default=5, help="how many of the slowest statements to list")
    args = ap.parse_args()
    regress = Path(args.regress).resolve()
    baseline_path = Path(args.baseline)
    runs = args.runs or (2 if args.update_baseline else 1)

    version = subprocess.run(["psql", "--version"], capture_output=True, text=True).stdout.strip()
    m = re.search(r"\b(\d+)\.", version)
    compare = m is not None and m.group(1) == "15"

    names = schedule(regress)
    notes = []
    failures = []
    matched_runs = {n: [] for n in names}
    seconds = {}
    last_got = {}
    slow = {}
    canceled = [0] * runs
    compared = {n: Compared(regress, n) for n in names} if compare else {}
    RESULTS.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    for run in range(runs):
        run_notes = []
        outputs, secs, fails = run_suite(args.bin, regress, names, run_notes, keep=RESULTS)
        for note in run_notes:
            if note not in notes:
                notes.append(note)
                print(note)
        failures += fails
        for n, s in secs.items():
            seconds[n] = max(seconds.get(n, 0), s)
        for name in names:
            out, times = outputs.get(name, ("", []))
            if compare:
                c = compared[name]
                matched, got = c.matches(out)
                matched_runs[name].append(matched)
                last_got[name] = got
                results = "\n".join(g[1] for g in got if g is not None)
                for number, i in enumerate(c.counted, 1):
                    if got[i] is not None and got[i][2][2] < len(times):
                        took = times[got[i][2][2]] - times[got[i][2][1] - 1]
                        if took > slow.get((name, number), 0):
                            slow[(name, number)] = took
            else:
                results = out
            canceled[run] += results.count("canceling statement due to statement timeout")
            bad = [l for l in results.split("\n") if "XX000" in l or "internal error" in l]
            if bad:
                failures.append(f"{name}: an internal error:\n" + "\n".join(bad[:3]))
    elapsed = time.monotonic() - started

    slowest = sorted(seconds.items(), key=lambda kv: -kv[1])[:3]
    print(
        f"PostgreSQL's regression SQL: {len(names)} files, {runs} run(s) in {elapsed:.0f} s "
        f"(slowest: {', '.join(f'{n} {s:.0f} s' for n, s in slowest)}); "
        f"{max(canceled)} statements canceled after {STATEMENT_TIMEOUT} s"
    )
    for (name, number), took in sorted(slow.items(), key=lambda kv: -kv[1])[: args.slow]:
        if took >= 1:
            line, text = compared[name].statement(number).first_line()
            print(f"  slow: {name} #{number} (line {line}) {took:.1f} s: {text.strip()[:80]}")
    status = 1 if failures else 0
    for f in failures:
        print("FAIL " + f)

    if not compare:
        print(f"skipping the statement comparison: it needs psql 15 (found {version or 'none'})")
        return status

    baseline = read_baseline(baseline_path)
    results = {}
    for name in names:
        runs_ = matched_runs[name]
        stable = set.intersection(*runs_) if runs_ else set()
        ever = set.union(*runs_) if runs_ else set()
        old = baseline.get(name)
        if args.update_baseline:
            # Matched in one run and not in another, or close to the
            # statement timeout: left out of the counts from now on.
            unstable = (ever - stable) | {n for n in ever if slow.get((name, n), 0) >= SLOW}
            if old and not args.forget_unstable:
                unstable |= old["unstable"]
        else:
            unstable = old["unstable"] if old else set()
        results[name] = {
            "statements": len(compared[name].counted),
            "matched": stable - unstable,
            "unstable": unstable,
        }

    total = sum(r["statements"] for r in results.values())
    matching = sum(len(r["matched"]) for r in results.values())
    top = sorted(names, key=lambda n: -len(results[n]["matched"]))[:5]
    print(
        f"statements matching PostgreSQL 15's expected output: {matching}/{total} "
        f"({100 * matching / max(total, 1):.1f}%); most: "
        + ", ".join(f"{n} {len(results[n]['matched'])}/{results[n]['statements']}" for n in top)
    )
    print(f"outputs in {RESULTS.relative_to(ROOT) if RESULTS.is_relative_to(ROOT) else RESULTS}")

    if args.update_baseline:
        if failures and not args.even_if_failing:
            print("not writing the baseline: the run failed (--even-if-failing writes it all the same)")
            return 1
        write_baseline(baseline_path, names, results)
        was = sum(r["matching"] for r in baseline.values())
        print(f"wrote {baseline_path} ({matching} matching, was {was})")
        return status

    if not baseline:
        print(f"FAIL no baseline at {baseline_path}: run with --update-baseline")
        return 1
    raised, dropped, changed = [], [], []
    for name in names:
        r, old = results[name], baseline.get(name, {"matching": 0, "matched": set(), "statements": 0})
        count = len(r["matched"])
        if count < old["matching"]:
            dropped.append(name)
        elif count > old["matching"]:
            raised.append((name, old["matching"], count))
        elif r["matched"] != old["matched"] or r["statements"] != old["statements"]:
            changed.append(name)
    for name in dropped:
        old = baseline[name]
        lost = sorted(old["matched"] - results[name]["matched"])
        print(f"FAIL {name}: {len(results[name]['matched'])} statements match, the baseline has {old['matching']}; "
              f"no longer matching: {ranges(lost)}")
        for number in lost[:3]:
            print(compared[name].describe(number, last_got[name]))
        status = 1
    if raised:
        print("raise the baseline (UPDATE_BASELINE=1 bash scripts/pg-regress.sh) in this commit: "
              + ", ".join(f"{n} {a} -> {b}" for n, a, b in raised))
    if changed:
        print("note: the same counts from other statements (update the baseline to record them): "
              + ", ".join(changed))
    if not (dropped or raised or changed):
        print("the baseline holds")
    return status


if __name__ == "__main__":
    sys.exit(main())
