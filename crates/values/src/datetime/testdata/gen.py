#!/usr/bin/env python3
"""Regenerates the date/time test tables from a live PostgreSQL 15.

Usage: gen.py [dsn]   (default: host=/tmp port=5433 user=postgres)

input.tsv: type, DateStyle, IntervalStyle, TimeZone, input, result.
ops.tsv: operation, TimeZone, arguments (joined by " | "), result.
Fields escape backslash, tab and newline as \\\\, \\t, \\n. A result is
`ok <text>` or `err <sqlstate> <message> <hint>` (`\\N` for none). Inputs
that depend on the current time (now, today, ...) are left out.
"""
import os
import re
import sys

import psycopg2

DSN = sys.argv[1] if len(sys.argv) > 1 else "host=/tmp port=5433 user=postgres dbname=postgres"
HERE = os.path.dirname(os.path.abspath(__file__))
REGRESS = os.path.join(HERE, "../../../../../target/pg-regress/postgresql-15.18/src/test/regress/sql")
FILES = ["date.sql", "time.sql", "timetz.sql", "timestamp.sql", "timestamptz.sql", "interval.sql", "horology.sql"]

conn = psycopg2.connect(DSN)
conn.autocommit = True
cur = conn.cursor()


def esc(s):
    if s is None:
        return "\\N"
    return s.replace("\\", "\\\\").replace("\t", "\\t").replace("\n", "\\n")


def run(sql, args=()):
    try:
        cur.execute(sql, args)
        v = cur.fetchone()[0]
        if isinstance(v, bool):
            v = "t" if v else "f"
        return ["ok", esc(v)]
    except psycopg2.Error as e:
        d = e.diag
        return ["err", e.pgcode, esc(d.message_primary), esc(d.message_hint)]


def settings(ds, ist, tz):
    cur.execute("SET datestyle = %s", (ds,))
    cur.execute("SET intervalstyle = %s", (ist,))
    cur.execute("SET timezone = %s", (tz,))


TYPES = {
    "date": "date",
    "time": "time",
    "timetz": "timetz",
    "time with time zone": "timetz",
    "time without time zone": "time",
    "timestamp": "timestamp",
    "timestamp without time zone": "timestamp",
    "timestamptz": "timestamptz",
    "timestamp with time zone": "timestamptz",
    "interval": "interval",
}
TABLES = {"date_tbl": "date", "time_tbl": "time", "timetz_tbl": "timetz", "timestamp_tbl": "timestamp",
          "timestamptz_tbl": "timestamptz", "interval_tbl": "interval"}
VOLATILE = re.compile(r"now|today|tomorrow|yesterday|current", re.I)


def literals():
    found = {t: [] for t in set(TYPES.values())}
    seen = set()

    def add(t, s):
        if VOLATILE.search(s) or "\n" in s or (t, s) in seen:
            return
        seen.add((t, s))
        found[t].append(s)

    for f in FILES:
        text = open(os.path.join(REGRESS, f), encoding="utf-8").read()
        names = "|".join(sorted(TYPES, key=len, reverse=True))
        for m in re.finditer(r"\b(" + names + r")\s+'((?:[^']|'')*)'", text, re.I):
            add(TYPES[m.group(1).lower()], m.group(2).replace("''", "'"))
        for m in re.finditer(r"'((?:[^']|'')*)'\s*::\s*(" + names + r")\b", text, re.I):
            add(TYPES[m.group(2).lower()], m.group(1).replace("''", "'"))
        for m in re.finditer(r"INSERT INTO (\w+) VALUES \('((?:[^']|'')*)'\)", text, re.I):
            t = TABLES.get(m.group(1).lower())
            if t:
                add(t, m.group(2).replace("''", "'"))
    extra = {
        "date": ["1/8/1999", "January 8, 1999", "Jan-08-1999", "08-Jan-1999", "19990108", "990108", "1999.008",
                 "J2451187", "January 8, 99 BC", "99-Jan-08", "1999-Jan-08", "08-Jan-99", "Jan-08-99", "08 Jan 1999",
                 "1999 Jan 08", "1999-01-08", "1/18/1999", "18/1/1999", "1999-01-18", "epoch", "infinity", "-infinity",
                 "2000-02-30", "13/13/2000", "0000-01-01", "4714-11-24 BC", "4714-11-23 BC", "5874897-12-31",
                 "5874898-01-01", "", " ", "xyz", "1999-01-08 10:00", "Feb 29 2001", "1 2 3", "Wed Jan 01 2020",
                 "2020-01-01 bc", "200-01-01", "20-01-01", "1999.366", "2000.366", "99.008", "J", "j 2451187",
                 "1999 08 jan", "jan 1999 08", "2020-01-01 allballs", "99999-01-01", "-1999-01-01"],
        "timestamp": ["2020-01-01 24:00:00", "2020-01-01 23:59:60", "2020-01-01 23:59:60.5", "2020-01-01 25:00",
                      "2020-01-01T10:20:30.123456789", "Wed Jan 01 00:00:00 2020 PST", "01/01/2020 00:00:00 PST",
                      "01.01.2020 00:00:00 PST", "2020-01-01 12:00 am", "2020-01-01 12:00 pm", "2020-01-01 13:00 pm",
                      "20200101 102030", "20200101T102030", "y2001m02d04 h05mm06s07", "294276-12-31 23:59:59",
                      "294277-01-01", "4714-11-24 00:00 BC", "1999-01-08 04:05:06 America/New_York",
                      "1999-01-08 04:05:06 Mars/Phobos", "2020-01-01 10:00 +16", "2020-01-01 10:00 +15:59",
                      "2020-01-01 10:00 xyz", "epoch", "infinity", "-infinity", "J2451187.5", "2001-02-03 04:05:06.5 bc"],
        "timestamptz": ["2020-01-01 00:00:00", "2020-07-01 00:00:00", "2020-03-08 02:30:00", "2020-11-01 01:30:00",
                        "2020-01-01 00:00:00 UTC", "2020-01-01 00:00:00 Z", "2020-01-01T00:00:00Z",
                        "2020-01-01 00:00:00+05:30", "2020-01-01 00:00:00 Europe/Paris", "2020-07-01 00:00:00 CEST",
                        "2020-01-01 00:00:00 PST DST", "2020-01-01 00:00 MET DST", "1900-01-01 00:00", "1800-06-01 12:00",
                        "0001-01-01 00:00 BC", "epoch", "infinity", "-infinity", "2020-01-01 00:00 -1530",
                        "2020-01-01 00:00 +1600", "2020-01-01 00:00 GMT+8", "2020-01-01 00:00 America/Nowhere",
                        "2020-01-01 00:00 EST5EDT", "2000-01-01 00:00:00.5 -07", "20011225T040506.789-07"],
        "interval": ["1 year 2 months 3 days 4 hours 5 minutes 6 seconds", "@ 1 minute ago", "1-2", "-1-2", "1 2:03:04",
                     "-1 2:03:04", "-1 -2:03:04", "+1 -2:03:04", "P1Y2M3DT4H5M6S", "P0001-02-03T04:05:06", "P1.5Y",
                     "P00010203T040506", "PT1.5S", "P1W", "P-1Y-2M", "PT", "P", "1.5 years", "1.5 months", "1.5 weeks",
                     "1.5 days", "1.5 hours", "1 decade", "1 century", "1 millennium", "2 millennia", "1.5 centuries",
                     "1 mon 2 mons", "1 week 2 days", "10 seconds ago", "1 day ago", "-1 day +2 hours", "1:2:3.5",
                     "1:2", "1:2.5", "1 hour 2 minutes ago", "0", "0 seconds", "-0", "1.999999999 seconds",
                     "2147483647 days", "2147483648 days", "178956970 years", "178956971 years", "1e3 seconds",
                     "9223372036854775807 microseconds", "9223372036854775808 microseconds", "1 qtr", "1 ago",
                     "ago", "1 fortnight", "- 1 day", "+1 day", "1 day -1 second", "-2147483648 months",
                     "-2147483648 days -2147483648 months", "1 2", "1 day 2", "2 3:04", "1 year 1 day 00:00:00.000001",
                     "-1 year -1 day -00:00:00.000001", "1 year -1 day", "-1 year +1 day", "P1DT2H", "PT-1H",
                     "P-1DT-1H", "1:60", "24:00:00", "100:00:00", "-100:00:00", "1 hour 30", "2 weeks ago",
                     "1 microsecond", "1 millisecond", "1.5 ms", "0.5 us", "12345678901 seconds"],
        "time": ["04:05:06.789", "04:05:06", "04:05", "040506", "04:05 AM", "04:05 PM", "04:05:06 PST",
                 "2003-04-12 04:05:06 America/New_York", "24:00:00", "24:00:00.000001", "23:59:60", "23:59:60.5",
                 "allballs", "T040506", "10:20.5", "13:00 pm", "12:00 am", "25:00", "", "xyz", "11:59:59.9999999",
                 "1999-01-08 04:05:06"],
        "timetz": ["04:05:06.789-8", "04:05:06-08:00", "04:05-08:00", "040506-08", "04:05:06 PST",
                   "2003-04-12 04:05:06 America/New_York", "04:05:06 America/New_York", "24:00:00+01", "00:00+16",
                   "00:00+15:59", "10:00 EST", "10:00 zulu", "allballs", "10:00:00 GMT+3", "10:00:00 Z"],
    }
    for t, xs in extra.items():
        for s in xs:
            add(t, s)
    return found


STYLES = ["ISO, MDY", "Postgres, MDY", "SQL, DMY", "German, DMY", "ISO, YMD", "Postgres, DMY", "SQL, MDY", "ISO, DMY"]
ISTYLES = ["postgres", "postgres_verbose", "sql_standard", "iso_8601"]
ZONES = ["PST8PDT", "UTC", "America/New_York", "Europe/Moscow", "Asia/Kolkata", "Australia/Lord_Howe", "America/Caracas"]


def gen_input():
    rows = []
    lits = literals()
    for t in ["date", "timestamp", "timestamptz", "time", "timetz", "interval"]:
        for s in lits[t]:
            if t == "interval":
                combos = [("ISO, MDY", i, "PST8PDT") for i in ISTYLES]
            elif t == "timestamptz":
                combos = [(d, "postgres", "PST8PDT") for d in STYLES] + \
                         [(d, "postgres", z) for z in ZONES[1:] for d in ("ISO, MDY", "Postgres, MDY", "SQL, DMY")]
            elif t in ("time", "timetz"):
                combos = [(d, "postgres", "PST8PDT") for d in ("ISO, MDY", "German, DMY", "SQL, YMD")]
            else:
                combos = [(d, "postgres", "PST8PDT") for d in STYLES]
            for ds, ist, tz in combos:
                settings(ds, ist, tz)
                rows.append([t, ds, ist, tz, esc(s)] + run("SELECT %s::" + t + "::text", (s,)))
    return rows


def gen_ops():
    rows = []
    settings("ISO, MDY", "postgres", "PST8PDT")
    ts = ["2000-01-31 10:00:00", "2000-02-29 23:59:59.999999", "1999-12-31 00:00:00", "2001-03-31 12:00",
          "0001-01-31 00:00 BC", "294276-12-01 00:00", "4714-12-31 00:00 BC", "infinity", "-infinity"]
    ivs = ["1 mon", "-1 mon", "1 mon 1 day 1 hour", "1 year", "-1 year 2 days", "13 months", "30 days", "24 hours",
           "1 day -1 hour", "-1 day +25 hours", "11 months 29 days 23:59:59.999999", "2 mons -3 days 04:05:06",
           "1.5 months", "0", "1 mon -30 days", "-2147483648 months", "100000 years"]
    tzs = ["2020-01-31 10:00:00-08", "2020-03-07 02:30:00-08", "2020-03-08 01:30:00-08", "2020-10-31 01:30:00-07",
           "2020-11-01 01:30:00-07", "infinity"]
    factors = ["0", "1", "-1", "0.5", "1.5", "2", "3", "0.1", "1e-3", "7", "1e10", "-0.333333", "NaN"]
    for t in ts:
        for i in ivs:
            rows.append(["ts+iv", "PST8PDT", esc(t + " | " + i)] + run("SELECT (%s::timestamp + %s::interval)::text", (t, i)))
            rows.append(["ts-iv", "PST8PDT", esc(t + " | " + i)] + run("SELECT (%s::timestamp - %s::interval)::text", (t, i)))
    for z in ["PST8PDT", "Europe/London", "UTC"]:
        settings("ISO, MDY", "postgres", z)
        for t in tzs:
            for i in ivs[:12]:
                rows.append(["tz+iv", z, esc(t + " | " + i)] + run("SELECT (%s::timestamptz + %s::interval)::text", (t, i)))
                rows.append(["tz-iv", z, esc(t + " | " + i)] + run("SELECT (%s::timestamptz - %s::interval)::text", (t, i)))
    settings("ISO, MDY", "postgres", "PST8PDT")
    for i in ivs:
        for f in factors:
            rows.append(["iv*f", "PST8PDT", esc(i + " | " + f)] + run("SELECT (%s::interval * %s::float8)::text", (i, f)))
            rows.append(["iv/f", "PST8PDT", esc(i + " | " + f)] + run("SELECT (%s::interval / %s::float8)::text", (i, f)))
        for fn in ["justify_hours", "justify_days", "justify_interval"]:
            rows.append([fn, "PST8PDT", esc(i)] + run("SELECT " + fn + "(%s::interval)::text", (i,)))
        rows.append(["-iv", "PST8PDT", esc(i)] + run("SELECT (-%s::interval)::text", (i,)))
        for j in ivs:
            rows.append(["iv<=>iv", "PST8PDT", esc(i + " | " + j)] +
                        run("SELECT CASE WHEN %s::interval < %s::interval THEN '<' WHEN %s::interval = %s::interval THEN '=' ELSE '>' END",
                            (i, j, i, j)))
            rows.append(["iv+iv", "PST8PDT", esc(i + " | " + j)] + run("SELECT (%s::interval + %s::interval)::text", (i, j)))
    for a in ts[:7]:
        for b in ts[:7]:
            rows.append(["ts-ts", "PST8PDT", esc(a + " | " + b)] + run("SELECT (%s::timestamp - %s::timestamp)::text", (a, b)))
    tts = ["10:00:00+01", "09:00:00+00", "10:00:00+00", "00:00:00-15:59", "23:59:59+15", "24:00:00+00", "12:00:00-05:30"]
    for a in tts:
        for b in tts:
            rows.append(["ttz<=>ttz", "PST8PDT", esc(a + " | " + b)] +
                        run("SELECT CASE WHEN %s::timetz < %s::timetz THEN '<' WHEN %s::timetz = %s::timetz THEN '=' ELSE '>' END",
                            (a, b, a, b)))
    for s in ["12:34:56.789123", "12:34:56.5", "23:59:59.9999995", "23:59:59.5", "00:00:00.000001"]:
        for p in range(0, 7):
            rows.append(["time(p)", "PST8PDT", esc(s + " | " + str(p))] + run("SELECT %s::time(" + str(p) + ")::text", (s,)))
    return rows


def write(name, rows):
    with open(os.path.join(HERE, name), "w", encoding="utf-8") as f:
        for r in rows:
            f.write("\t".join(r) + "\n")


write("input.tsv", gen_input())
write("ops.tsv", gen_ops())
